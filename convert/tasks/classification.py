"""Image and text classification: one output of class scores, one label per class, the top-1 agreement gate."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from convert.fidelity.classification import Top1Gate
from convert.fidelity.multi_label import MultiLabelGate
from convert.saved_model_inspect import SavedModelInfo, TensorInfo
from convert.sidecar_fields import choice, flag, require, role_map, strings
from convert.tasks.base import Binding, TaskFields, TaskKind, bind_roles, describe, mismatch, single_output
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
        return TaskFields(labels=labels, output=output, preprocessing=preprocessing, inputs=inputs,
                          multi_label=multi_label)

    def parse_preprocessing(self, value, directory: Path) -> dict:
        raise NotImplementedError

    def check_inputs(self, preprocessing: dict, info: SavedModelInfo, roles: dict[str, str]) -> None:
        raise NotImplementedError

    def bind(self, sidecar, info: SavedModelInfo) -> Binding:
        roles = bind_roles(sidecar.inputs, info, self.name)
        ordered = {role: roles[role] for role in (*self.roles[0], *self.roles[1]) if role in roles}
        self.check_inputs(sidecar.preprocessing, info, ordered)
        output = single_output(info, self.name, "use \"task\": \"tensor\" to serve every output")
        check_scores(sidecar.labels, info.outputs[output], sidecar.multi_label)
        return Binding(inputs=ordered, outputs={SCORES: output})

    def gate(self, sidecar, binding: Binding, min_agreement: float | None, reference) -> Top1Gate | MultiLabelGate:
        if sidecar.multi_label:
            return MultiLabelGate(binding.outputs[SCORES], sidecar.output, min_agreement)
        return Top1Gate(binding.outputs[SCORES], sidecar.output, min_agreement)


class ImageClassification(Classification):
    name = "image_classification"
    roles = (("image",), ())

    def parse_preprocessing(self, value, directory: Path) -> dict:
        return parse_image_preprocessing(value, self.name)

    def check_inputs(self, preprocessing: dict, info: SavedModelInfo, roles: dict[str, str]) -> None:
        check_image_input(preprocessing, info.inputs[roles["image"]], self.name)


class TextClassification(Classification):
    name = "text_classification"
    roles = (TEXT_ROLES[:1], TEXT_ROLES[1:])  # input_ids; attention_mask optional

    def parse_preprocessing(self, value, directory: Path) -> dict:
        return parse_text_preprocessing(value, directory, self.name)

    def check_inputs(self, preprocessing: dict, info: SavedModelInfo, roles: dict[str, str]) -> None:
        check_token_inputs(preprocessing, info, roles)
