"""Image and text classification: one output of class scores, one label per class, the top-1 agreement gate. An
image classifier may have more outputs (a value head beside the class head): "class_output" names the one its labels
score, the others are answered beside the labels as values and gated as tensors (convert/fidelity/beside.py)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from convert.fidelity.beside import BesideGate
from convert.fidelity.classification import Top1Gate
from convert.fidelity.multi_label import MultiLabelGate
from convert.saved_model_inspect import SavedModelInfo, TensorInfo
from convert.sidecar_fields import choice, flag, require, role_map, strings, text
from convert.tasks.base import Binding, TaskFields, TaskKind, bind_roles, describe, mismatch, names, single_output
from convert.tasks.image import check_image_input, parse_image_preprocessing
from convert.tasks.text import ROLES as TEXT_ROLES
from convert.tasks.text import check_token_inputs, parse_text_preprocessing

OUTPUT_KINDS = ("probabilities", "logits")
SCORES = "scores"  # the role of the one output a classifier serves


def check_scores(labels: list[str], tensor: TensorInfo, multi_label: bool = False) -> None:
    """One label per output unit; a single unit is binary (sigmoid P(labels[1])), so it needs two, unless the
    model is multi-label (each unit one label's own yes/no)."""
    if not tensor.is_float:
        raise mismatch("task", f"is a classification task but output {describe(tensor)} is not float scores",
                       "use \"task\": \"tensor\" to serve it as it is")
    if any(dim is None for dim in tensor.shape[1:]):
        raise mismatch("labels", f"cannot be matched to output {describe(tensor)}, whose width is open",
                       "export the model with a fixed number of classes")
    units = int(np.prod(tensor.shape[1:], dtype=np.int64))
    expected = 2 if units == 1 and not multi_label else units
    if len(labels) != expected:
        why = ("a 1-unit output is binary: the label for 0, then the label for 1" if expected == 2 and units == 1
               else "one per unit, in output order")
        count = f"{len(labels)} label{'' if len(labels) == 1 else 's'}"
        raise mismatch("labels", f"has {count} but output '{tensor.name}' has {units} unit(s)",
                       f"give {expected} labels ({why})")


class Classification(TaskKind):
    uses_min_agreement = True
    unused_keys = {"outputs": "a classifier serves its one output of class scores"}
    roles: tuple[tuple[str, ...], tuple[str, ...]]  # required, optional

    def parse_fields(self, data: dict, directory: Path) -> TaskFields:
        labels = strings(require(data, "labels"), "labels", "one per output class, in output order")
        output = choice(require(data, "output"), "output", OUTPUT_KINDS)
        preprocessing = self.parse_preprocessing(require(data, "preprocessing"), directory)
        required, optional = self.roles
        inputs = role_map(require(data, "inputs"), "inputs", required, optional)
        multi_label = flag(data.get("multi_label", False), "multi_label")
        class_output = text(data["class_output"], "class_output") if "class_output" in data else None
        return TaskFields(labels=labels, output=output, preprocessing=preprocessing, inputs=inputs,
                          multi_label=multi_label, class_output=class_output)

    def parse_preprocessing(self, value, directory: Path) -> dict:
        raise NotImplementedError

    def check_inputs(self, preprocessing: dict, info: SavedModelInfo, roles: dict[str, str]) -> None:
        raise NotImplementedError

    def bind(self, sidecar, info: SavedModelInfo) -> Binding:
        roles = bind_roles(sidecar.inputs, info, self.name)
        ordered = {role: roles[role] for role in (*self.roles[0], *self.roles[1]) if role in roles}
        self.check_inputs(sidecar.preprocessing, info, ordered)
        output, beside = self.class_output(sidecar, info)
        check_scores(sidecar.labels, info.outputs[output], sidecar.multi_label)
        return Binding(inputs=ordered, outputs={SCORES: output, **{name: name for name in beside}})

    def class_output(self, sidecar, info: SavedModelInfo) -> tuple[str, list[str]]:
        """The output the labels score, and the outputs answered beside it (none: a text classifier has one)."""
        return single_output(info, self.name, "use \"task\": \"tensor\" to serve every output"), []

    def gate(self, sidecar, binding: Binding, min_agreement: float | None,
             reference) -> Top1Gate | MultiLabelGate | BesideGate:
        if sidecar.multi_label:
            gate = MultiLabelGate(binding.outputs[SCORES], sidecar.output, min_agreement)
        else:
            gate = Top1Gate(binding.outputs[SCORES], sidecar.output, min_agreement)
        beside = [name for role, name in binding.outputs.items() if role != SCORES]
        return BesideGate(gate, beside) if beside else gate


class ImageClassification(Classification):
    name = "image_classification"
    roles = (("image",), ())

    def parse_preprocessing(self, value, directory: Path) -> dict:
        return parse_image_preprocessing(value, self.name)

    def check_inputs(self, preprocessing: dict, info: SavedModelInfo, roles: dict[str, str]) -> None:
        check_image_input(preprocessing, info.inputs[roles["image"]], self.name)

    def class_output(self, sidecar, info: SavedModelInfo) -> tuple[str, list[str]]:
        """The sidecar's "class_output" names the output the labels score when there are several; each other output is
        answered beside the labels, by its own name (so none may take the class output's role name, "scores")."""
        outputs = list(info.outputs)
        chosen = sidecar.class_output
        if chosen is None and len(outputs) == 1:
            return outputs[0], []
        if chosen is None:
            raise mismatch("class_output", f"is missing, and the signature has {len(outputs)} outputs "
                           f"({names(outputs)})", "name the one the labels score (\"class_output\": \"<output>\"; "
                           "the others are answered beside the labels as values), or use \"task\": \"tensor\"")
        if chosen not in info.outputs:
            raise mismatch("class_output", f"names '{chosen}', which the serving signature does not have",
                           f"use one of its outputs: {names(outputs)}")
        beside = sorted(name for name in outputs if name != chosen)
        if SCORES in beside:
            raise mismatch("class_output", f"is '{chosen}', so output '{SCORES}' would be answered beside the labels, "
                           f"but '{SCORES}' is the class output's own name in the manifest",
                           f"export the model with another name for output '{SCORES}'")
        return chosen, beside


class TextClassification(Classification):
    name = "text_classification"
    unused_keys = {**Classification.unused_keys, "class_output": "a text classifier serves its one output"}
    roles = (TEXT_ROLES[:1], TEXT_ROLES[1:])  # input_ids; attention_mask optional

    def parse_preprocessing(self, value, directory: Path) -> dict:
        return parse_text_preprocessing(value, directory, self.name)

    def check_inputs(self, preprocessing: dict, info: SavedModelInfo, roles: dict[str, str]) -> None:
        check_token_inputs(preprocessing, info, roles)
