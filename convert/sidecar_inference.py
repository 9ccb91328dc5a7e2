"""The sidecar inferred from the model itself and the files beside it, so that a `.keras` file with a validation.npz
of raw samples + expected converts without one (docs/model-format.md, "What convert infers").

- name: the file's stem (or the SavedModel directory's name);
- task, output and multi_label: from the model's last layer (softmax -> probabilities of one class; sigmoid -> one
  unit binary, several units multi-label; linear -> logits for a text classifier, `image_regression` for an image
  model, `tensor` for anything else; a pooling layer last -> an embedding) and its input (a TextVectorization layer
  -> a text model, a float (N, height, width, channels) input -> an image model);
- class_output (an image model with several outputs): the one output that ends in softmax or sigmoid is the class
  head, the others are answered beside its labels as values; every output linear -> `image_regression`; more than
  one class head -> `tensor`, until the sidecar names one;
- labels: a labels.txt beside the model (one per line, in output order), else a string `labels` array in
  validation.npz, else the class indices;
- preprocessing (image): size and colour mode from the input; a Rescaling or Normalization layer inside the model
  means pixels go in as they are (0..255); without one the pipeline that made `expected` is found on the raw samples
  at conversion time (convert/preprocessing_check.py) and written into the manifest;
- inputs: the one input's name; validation: the validation.npz beside the model.

A field the user's sidecar gives overrides the inferred one (a given "preprocessing" is taken whole). Every problem
found is reported together, not one per run.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from convert.errors import ConversionError
from convert.npz_reader import array_names, read_arrays
from convert.sidecar import SCHEMA
from convert.sidecar_fields import NAME_PATTERN

LABELS_FILE = "labels.txt"
VALIDATION_FILE = "validation.npz"
PREPROCESSING_LAYERS = ("Rescaling", "Normalization")
POOLING_LAYERS = ("GlobalAveragePooling1D", "GlobalMaxPooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling2D")
# Pixels for an image model without its own rescaling, until the raw samples say otherwise: / 255 is the most
# common training pipeline (keras.io's), and convert tries the others against expected.
GUESSED_DIVISOR = 255.0


@dataclass(frozen=True)
class ModelFacts:
    """What the inference reads from a model: its inputs and outputs and the layers that decide the task."""
    inputs: dict[str, tuple[tuple[int | None, ...], str]]  # name -> (shape, dtype)
    outputs: int
    units: int | None  # the one output's width
    activation: str | None  # the last layer's: softmax, sigmoid, linear; None when unknown
    last_layer: str  # its class name
    text: bool  # a TextVectorization layer reads the input
    rescales: str | None  # the name of a Rescaling / Normalization layer inside the model
    # Each output's name (as served) -> (its activation, its width); what picks the class head of several outputs.
    heads: dict[str, tuple[str | None, int | None]] = field(default_factory=dict)


@dataclass
class Inference:
    data: dict  # the sidecar: inferred fields, the given ones over them
    reasons: dict[str, str] = field(default_factory=dict)  # field -> what it was inferred from
    settle_preprocessing: bool = False  # image preprocessing to find on the raw samples at conversion
    problems: list[str] = field(default_factory=list)

    def describe(self) -> list[str]:
        return [f"{key}: {reason}" for key, reason in self.reasons.items()]


def _all_layers(model) -> list:
    """Every layer, nested models' (a keras.applications base) included, in order."""
    layers = []
    for layer in getattr(model, "layers", []):
        layers.append(layer)
        if hasattr(layer, "layers"):
            layers += _all_layers(layer)
    return layers


def _activation(layer) -> str | None:
    kind = type(layer).__name__
    if kind == "Softmax":
        return "softmax"
    activation = getattr(layer, "activation", None)
    if activation is None:
        return "linear" if kind in ("Dense", "EinsumDense") else None
    return getattr(activation, "__name__", None)


def keras_facts(model) -> ModelFacts:
    layers = _all_layers(model)
    last = model.layers[-1]
    while hasattr(last, "layers") and last.layers:  # a nested model (keras.io's end-to-end text model): its last
        last = last.layers[-1]
    rescales = next((layer.name for layer in layers if type(layer).__name__ in PREPROCESSING_LAYERS), None)
    inputs = {tensor.name: (tuple(tensor.shape), str(tensor.dtype)) for tensor in model.inputs}
    width = model.outputs[0].shape[-1] if len(model.outputs) == 1 else None
    heads = {}
    if len(model.outputs) > 1:  # served by the model's output names (convert/inference_mode.py exports them so)
        for name, tensor in zip(model.output_names, model.outputs):
            history = getattr(tensor, "_keras_history", None)
            layer = getattr(history, "operation", None)
            heads[name] = (_activation(layer) if layer is not None else None,
                           tensor.shape[-1] if len(tensor.shape) == 2 else None)
    return ModelFacts(inputs=inputs, outputs=len(model.outputs), units=width, activation=_activation(last),
                      last_layer=type(last).__name__, rescales=rescales,
                      text=any(type(layer).__name__ == "TextVectorization" for layer in layers), heads=heads)


def _activation_from_expected(folder: Path, units: int | None, key: str = "expected") -> str | None:
    """Without the layers (a SavedModel): rows of `expected` (or `expected_<output>`) in [0, 1] summing to 1 are a
    softmax's, one unit in [0, 1] a sigmoid's, anything else linear; None without them. One of several outputs
    (`expected_<output>`) whose units all lie in [0, 1] without summing to 1 may be sigmoids or values: None, which
    leaves the class head for the sidecar to name."""
    from convert.fidelity.classification import guess_output_kind  # noqa: PLC0415

    path = folder / VALIDATION_FILE
    if not path.is_file():
        return None
    expected = read_arrays(path, (key,)).get(key)
    if expected is None or not len(expected) or not np.issubdtype(expected.dtype, np.number):
        return None
    if guess_output_kind(expected) != "probabilities":
        in_unit_range = bool(((expected >= 0) & (expected <= 1)).all())
        return None if key != "expected" and in_unit_range else "linear"
    return "sigmoid" if units == 1 else "softmax"


def signature_facts(info, folder: Path) -> ModelFacts:
    """A SavedModel's facts from its serving signature (convert/saved_model_inspect.SavedModelInfo) and the
    `expected` beside it; whether it rescales inside is unknown, so an image preprocessing is found on the raw
    samples."""
    inputs = {name: (tuple(spec.shape), spec.dtype) for name, spec in info.inputs.items()}
    units = None
    if len(info.outputs) == 1:
        shape = next(iter(info.outputs.values())).shape
        units = shape[-1] if len(shape) == 2 else None
    heads = {}
    if len(info.outputs) > 1:
        for name, spec in info.outputs.items():
            width = spec.shape[-1] if len(spec.shape) == 2 else None
            heads[name] = (_activation_from_expected(folder, width, f"expected_{name}"), width)
    return ModelFacts(inputs=inputs, outputs=len(info.outputs), units=units,
                      activation=_activation_from_expected(folder, units), last_layer="signature output", text=False,
                      rescales=None, heads=heads)


def has_raw_samples(folder: Path) -> bool:
    """A validation.npz with raw samples and expected: enough to infer and check a SavedModel's sidecar."""
    path = folder / VALIDATION_FILE
    if not path.is_file():
        return False
    names = array_names(path)
    return (any(key == "expected" or key.startswith("expected_") for key in names)
            and any(key in names for key in ("raw_images", "raw_texts")))


def served_name_of(stem: str) -> str:
    """A name the function serves (letters, digits, '.', '_', '-'), from a file or directory name."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-._")[:64] or "model"
    return name if NAME_PATTERN.fullmatch(name) else f"m{name}"[:64]


def _labels(folder: Path, count: int, inference: Inference) -> list[str]:
    path = folder / LABELS_FILE
    if path.is_file():
        labels = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        if len(labels) != count:
            inference.problems.append(f"{path.name} has {len(labels)} labels but the model's output needs {count} "
                                      "(one per line, in output order; a one-unit sigmoid needs two: for 0, for 1)")
        inference.reasons["labels"] = f"{path.name} beside the model ({len(labels)} lines)"
        return labels
    samples = folder / VALIDATION_FILE
    if samples.is_file():
        names = read_arrays(samples, ("labels",)).get("labels")
        if names is not None and names.dtype.kind == "U" and names.ndim == 1 and len(names) == count:
            inference.reasons["labels"] = f"the string array 'labels' of {samples.name}"
            return [str(name) for name in names]
    inference.reasons["labels"] = (f"the class indices 0..{count - 1} (no {LABELS_FILE} beside the model: write one "
                                   "label per line to name them)")
    return [str(index) for index in range(count)]


CLASS_ACTIVATIONS = ("softmax", "sigmoid")
AMBIGUOUS_HEADS = ("no one class head (softmax or sigmoid) among them: write a sidecar with \"task\": "
                   "\"image_classification\" and \"class_output\": the output the labels score (the others are "
                   "answered beside them as values), or \"task\": \"tensor\" (docs/model-format.md)")


def _heads_task(facts: ModelFacts) -> tuple[str, str | None, bool, str, str | None]:
    """An image model with several outputs: one class head (softmax or sigmoid) and values beside it, or values
    only (image_regression); several class heads are ambiguous (tensor, until the sidecar names one)."""
    listed = ", ".join(f"'{name}' ({activation or 'activation unknown'}, {width} unit(s))"
                       for name, (activation, width) in facts.heads.items())
    classes = [name for name, (activation, width) in facts.heads.items() if activation in CLASS_ACTIVATIONS and width]
    if len(classes) == 1:
        (name,) = classes
        activation, width = facts.heads[name]
        return ("image_classification", "probabilities", activation == "sigmoid" and width > 1,
                f"a float (N, height, width, channels) input and {len(facts.heads)} outputs ({listed}): '{name}' "
                "ends in " + activation + ", the others are answered beside its labels as values", name)
    if not classes and all(activation == "linear" for activation, _ in facts.heads.values()):
        return "image_regression", None, False, f"an image input and {len(facts.heads)} linear outputs ({listed})", None
    return "tensor", None, False, f"{facts.outputs} outputs ({listed}): {AMBIGUOUS_HEADS}", None


def _task(facts: ModelFacts) -> tuple[str, str | None, bool, str, str | None]:
    """(task, output kind, multi_label, why, class output: None unless it is one of several)."""
    activation, units = facts.activation, facts.units
    ending = f"the last layer ({facts.last_layer}, activation {activation}, {units} unit(s))"
    image_input = len(facts.inputs) == 1 and len(next(iter(facts.inputs.values()))[0]) == 4
    if facts.outputs > 1 and image_input and not facts.text and facts.heads:
        return _heads_task(facts)
    if facts.outputs != 1 or units is None:
        return "tensor", None, False, f"{facts.outputs} outputs: each served as a tensor", None
    if facts.text:
        if facts.last_layer in POOLING_LAYERS:
            return "text_embedding", None, False, f"a TextVectorization input and a pooled vector out ({ending})", None
        if activation in CLASS_ACTIVATIONS:
            return ("text_classification", "probabilities", activation == "sigmoid" and units > 1,
                    f"a TextVectorization input and {ending}", None)
        return "text_classification", "logits", False, f"a TextVectorization input and {ending}: logits", None
    if image_input and activation in CLASS_ACTIVATIONS:
        return ("image_classification", "probabilities", activation == "sigmoid" and units > 1,
                f"a float (N, height, width, channels) input and {ending}", None)
    if image_input and activation == "linear" and facts.last_layer not in POOLING_LAYERS:
        return ("image_regression", None, False, f"a float (N, height, width, channels) input and {ending}: values "
                "(a classifier that outputs logits: write \"task\": \"image_classification\", \"output\": "
                "\"logits\" and its labels)", None)
    return "tensor", None, False, f"{ending}: values, served as a tensor", None


def infer(facts: ModelFacts, folder: Path, stem: str) -> Inference:
    """The sidecar for a model whose files (labels.txt, validation.npz) are in `folder`."""
    inference = Inference(data={"schema": SCHEMA, "name": served_name_of(stem)})
    inference.reasons["name"] = f"the file name {stem!r}"
    task, output, multi_label, why, class_output = _task(facts)
    inference.data["task"] = task
    inference.reasons["task"] = why
    if why.endswith(AMBIGUOUS_HEADS):  # an image model's heads convert cannot tell apart: its raw samples need a task
        inference.problems.append(why)
    if task.endswith("classification"):
        activation, units = facts.heads[class_output] if class_output else (facts.activation, facts.units)
        count = 2 if units == 1 and not multi_label else int(units)
        inference.data["labels"] = _labels(folder, count, inference)
        inference.data["output"] = output
        inference.reasons["output"] = (f"activation {activation} (output '{class_output}')" if class_output
                                       else f"activation {facts.activation} (last layer {facts.last_layer})")
        if class_output:
            inference.data["class_output"] = class_output
            inference.reasons["class_output"] = f"the one output of {len(facts.heads)} that ends in {activation}"
        if multi_label:
            inference.data["multi_label"] = True
            inference.reasons["multi_label"] = f"{units} sigmoid units: each label on its own"
    if task in ("image_classification", "image_regression"):
        (name, (shape, _)), = facts.inputs.items()
        height, width, channels = shape[1:]
        preprocessing = {"type": "image", "color_mode": "L" if channels == 1 else "RGB", "size": [height, width]}
        if facts.rescales is not None:
            inference.reasons["preprocessing"] = (f"{preprocessing['color_mode']} {height}x{width} from the input; "
                                                  f"layer '{facts.rescales}' inside the model rescales, so pixels "
                                                  "go in as they are (0..255)")
        else:
            preprocessing["divisor"] = GUESSED_DIVISOR
            inference.settle_preprocessing = True
            inference.reasons["preprocessing"] = (f"{preprocessing['color_mode']} {height}x{width} from the input; "
                                                  "no Rescaling/Normalization inside the model: divisor, mean, std "
                                                  "and colour order are found on the raw samples against expected")
        inference.data["preprocessing"] = preprocessing
        inference.data["inputs"] = {"image": name}
        inference.reasons["inputs"] = f"the model's one input '{name}'"
    elif task == "tensor":
        inference.data["inputs"] = list(facts.inputs)
        inference.reasons["inputs"] = "the model's inputs in order"
    if (folder / VALIDATION_FILE).is_file():
        inference.data["validation"] = {"samples": VALIDATION_FILE}
        inference.reasons["validation"] = f"{VALIDATION_FILE} beside the model"
    else:
        inference.problems.append(f"no {VALIDATION_FILE} beside the model in {folder}: save raw samples and your "
                                  "model's answers for them (raw_images or raw_texts + expected, docs/model-format.md)")
    return inference


KEPT_FOR_ANOTHER_TASK = ("schema", "name", "validation")


def with_given(inference: Inference, given: dict) -> Inference:
    """The user's own fields over the inferred ones; a given "preprocessing" is taken whole, a given task keeps
    only the inferred fields every task has. A declared "output" that the model's last activation contradicts is
    a problem (a sigmoid model declared as logits would label every input alike)."""
    if "task" in given and given["task"] != inference.data.get("task"):
        inference.data = {key: value for key, value in inference.data.items() if key in KEPT_FOR_ANOTHER_TASK}
        inference.settle_preprocessing = False
    inferred_output = inference.data.get("output")
    if given.get("output") in ("logits", "probabilities") and inferred_output and given["output"] != inferred_output:
        inference.problems.append(f"\"output\" is \"{given['output']}\" but the model ends in "
                                  f"{inference.reasons['output']}: write \"output\": \"{inferred_output}\"")
    if "task" in given:  # the task convert could not infer, given
        inference.problems = [problem for problem in inference.problems if not problem.endswith(AMBIGUOUS_HEADS)]
    for key, value in given.items():
        inference.data[key] = value
        inference.reasons[key] = "given in the sidecar"
        if key == "preprocessing":
            inference.settle_preprocessing = False
        if key == "validation":
            inference.problems = [problem for problem in inference.problems if VALIDATION_FILE not in problem]
        if key == "labels":
            inference.problems = [problem for problem in inference.problems if LABELS_FILE not in problem]
    return inference


def check(inference: Inference) -> None:
    """Every problem found, in one refusal."""
    if inference.problems:
        count = len(inference.problems)
        raise ConversionError("cannot_infer", f"{count} problem{'s' if count > 1 else ''} to fix before convert can "
                              f"infer the sidecar: " + "; ".join(f"({index}) {problem}" for index, problem in
                                                                  enumerate(inference.problems, 1)))
