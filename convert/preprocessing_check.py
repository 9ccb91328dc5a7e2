"""Is the sidecar's image preprocessing the pipeline that made `expected`? Two checks on the raw samples, before any
mode but float32 is converted:

- a `keras_applications` preset must feed the model exactly what the installed Keras's `<module>.preprocess_input`
  gives for the same resized pixels (the preset table in convert/keras_applications.py is checked, not trusted);
- when the float32 model, served, disagrees with `expected` (top-1 or scores), the usual slips are tried in its
  place one at a time (another divisor, mean/std added or dropped, RGB for BGR, the other resize method, EXIF
  orientation the other way when raw samples carry the tag: convert/exif_check.py), then the
  keras.applications modes (caffe, tf, torch, none), and a refusal names the fields and values that match.
"""
from __future__ import annotations

import json

import numpy as np

from convert import keras_applications
from convert.errors import ConversionError
from convert.exif_check import exif_changes
from convert.fidelity.base import GateResult
from convert.fidelity.classification import guess_output_kind
from convert.litert_model import LiteRTModel
from convert.served_gate import ServedGate, worst_text
from convert.tasks.image import RESIZE_METHODS
from function.config import DEFAULT_MAX_IMAGE_PIXELS
from function.preprocessing.image import ImagePreprocessor

MODE_WORDS = {"caffe": "BGR, minus the ImageNet mean, no scaling", "tf": "RGB, / 127.5 - 1",
              "torch": "RGB, / 255, minus the ImageNet mean, over its std",
              "none": "RGB pixels 0..255 as they are (the model rescales itself)"}


def check_output(gate: ServedGate) -> None:
    """A classifier's declared `output` against `expected`, the model's own outputs: values outside [0, 1] are not
    probabilities; rows of several units, each in [0, 1] and summing to 1 on every sample, are a softmax's, not
    logits (the function would put them through a second softmax and flatten every score)."""
    output, served = gate.served.output_kind, gate.served
    if output not in OTHER_OUTPUT:
        return
    flat = gate.raw.expected.reshape(len(gate.raw.expected), -1)
    if output == "probabilities" and ((flat < 0) | (flat > 1)).any():
        raise ConversionError("output_mismatch", f"sidecar.json: \"output\" is \"probabilities\" but expected "
                              f"holds values from {flat.min():.4g} to {flat.max():.4g}, outside [0, 1]: the model "
                              "outputs logits: write \"output\": \"logits\"")
    if (output == "logits" and flat.shape[1] > 1 and not served.sidecar.multi_label
            and guess_output_kind(flat) == "probabilities"):
        raise ConversionError("output_mismatch", f"sidecar.json: \"output\" is \"logits\" but expected's "
                              f"{len(flat)} rows are probabilities (each value in [0, 1], every row summing to 1): "
                              "the model ends in softmax: write \"output\": \"probabilities\"")


def check_preset(gate: ServedGate, preprocessing: dict) -> int:
    """Raises ConversionError("preset_mismatch") unless the function's pixels equal Keras's preprocess_input on
    every raw image; returns how many were compared (0 when this Keras lacks the module)."""
    module = preprocessing.get("keras_applications")
    preprocess_input = keras_applications.keras_preprocess(module) if module else None
    if preprocess_input is None or gate.raw.kind != "image":
        return 0
    served = ImagePreprocessor(preprocessing, DEFAULT_MAX_IMAGE_PIXELS)
    plain = ImagePreprocessor({**preprocessing, **keras_applications.MODES["none"]}, DEFAULT_MAX_IMAGE_PIXELS)
    for index, item in enumerate(gate.raw.items):
        image = served.decode(item.data, item.where)
        ours = served.to_array(image)
        theirs = preprocess_input(plain.to_array(image)[np.newaxis].copy())[0]
        if not np.array_equal(ours, np.asarray(theirs, dtype=np.float32)):
            worst = float(np.max(np.abs(ours - np.asarray(theirs, dtype=np.float32))))
            raise ConversionError("preset_mismatch", f"sidecar.json: \"preprocessing.keras_applications\" is "
                                  f"\"{module}\", but on raw sample {index} the function's pixels differ from "
                                  f"keras.applications.{module}.preprocess_input by up to {worst:.3g}: this is a "
                                  "convert bug; give color_mode, divisor, mean and std yourself and report it")
    return len(gate.raw.items)


def describe(preprocessing: dict) -> str:
    if preprocessing.get("type") != "image":
        return ", ".join(f"{key} {value}" for key, value in preprocessing.items() if key != "type")
    mode = keras_applications.mode_of(preprocessing)
    if mode is not None:
        return f"{mode} preprocessing ({MODE_WORDS[mode]})"
    return (f"{preprocessing['color_mode']}, / {preprocessing['divisor']:g}, mean {preprocessing['mean']}, "
            f"std {preprocessing['std']}, resize {preprocessing['resize']}")


# One field changed at a time: the usual slips (a divisor forgotten, the ImageNet mean/std left out or added, BGR
# for RGB, the resize of keras.utils.load_img); a keras.applications mode changes several at once.
DIVISORS = (1.0, 127.5, 255.0)
IMAGENET = {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}
SWAPPED = {"RGB": "BGR", "BGR": "RGB"}
OTHER_OUTPUT = {"logits": "probabilities", "probabilities": "logits"}  # a classifier's sidecar "output", declared wrong


def _field_changes(declared: dict) -> list[dict]:
    """Sidecar fields to try in place of the declared ones, each a small dict of the fields it changes."""
    changes: list[dict] = [{"divisor": divisor} for divisor in DIVISORS if divisor != declared["divisor"]]
    channels = len(declared["mean"])
    plain = {"mean": [0.0] * channels, "std": [1.0] * channels}
    if declared["mean"] != plain["mean"] or declared["std"] != plain["std"]:
        changes.append(plain)
    if channels == 3 and (declared["mean"], declared["std"]) != (IMAGENET["mean"], IMAGENET["std"]):
        changes += [{**IMAGENET, "divisor": divisor} for divisor in dict.fromkeys((declared["divisor"], 255.0))]
    if declared["color_mode"] in SWAPPED:
        changes.append({"color_mode": SWAPPED[declared["color_mode"]], "mean": declared["mean"][::-1],
                        "std": declared["std"][::-1]})
    changes += [{"resize": method} for method in RESIZE_METHODS if method != declared["resize"]]
    unique = []
    for change in changes:
        if change not in unique and any(declared.get(key) != value for key, value in change.items()):
            unique.append(change)
    return unique


def _fix(declared: dict, change: dict) -> str:
    """The sidecar fields to set, as JSON: "preprocessing.divisor": 255."""
    fields = [f"\"preprocessing.{key}\": {json.dumps(value)}" for key, value in change.items()
              if declared.get(key) != value]
    return ", ".join(fields)


def _rank(result: GateResult) -> tuple[float, float]:
    """Higher agreement first, then the smaller score difference."""
    agreement = result.metrics.get("top1_agreement") or result.metrics.get("label_set_agreement") or 0.0
    return -agreement, result.metrics.get("max_score_diff") or 0.0


def _best(matches: list[tuple[str, GateResult]]) -> tuple[str, GateResult]:
    return min(matches, key=lambda match: _rank(match[1]))


def field_match(gate: ServedGate, content: bytes, model: LiteRTModel, declared: dict
                ) -> tuple[str, dict, GateResult] | None:
    """The best single slip undone (the fields to set, as JSON; the preprocessing with them; the gate's result) under
    which the float32 model, served, passes; None when none does."""
    fields = []
    for change in _field_changes(declared) + exif_changes(gate.raw.items, declared):
        candidate = {key: value for key, value in {**declared, **change}.items() if key != "keras_applications"}
        result = gate.judge(content, model, "float32", candidate)
        if result.passed:
            fields.append((_fix(declared, change), candidate, result))
    if not fields:
        return None
    fix, candidate, result = min(fields, key=lambda match: _rank(match[2]))
    return fix, candidate, result


def matching_preprocessing(gate: ServedGate, content: bytes, model: LiteRTModel, declared: dict
                           ) -> tuple[str, dict, GateResult] | None:
    """For a sidecar convert inferred: the preprocessing that makes the served float32 model answer as expected,
    from the declared (guessed) one with one slip undone, or a keras.applications mode; None when nothing does."""
    found = field_match(gate, content, model, declared)
    if found is not None or declared["color_mode"] == "L":
        return found
    matches = []
    for mode, mode_fields in keras_applications.MODES.items():
        candidate = {**declared, **mode_fields}
        result = gate.judge(content, model, "float32", candidate)
        if result.passed:
            matches.append((f"{mode} preprocessing ({MODE_WORDS[mode]})", candidate, result))
    return min(matches, key=lambda match: _rank(match[2])) if matches else None


def diagnose(gate: ServedGate, content: bytes, model: LiteRTModel, declared: dict, failed: GateResult
             ) -> ConversionError:
    """Why the float32 model, served, disagrees with expected: the fields (or known mode) that match, named."""
    output = gate.served.output_kind
    if output in OTHER_OUTPUT:
        try:
            flipped = gate.judge(content, model, "float32", output_kind=OTHER_OUTPUT[output])
        except ConversionError:  # the function would not serve it read that way: not the cause
            flipped = None
        if flipped is not None and flipped.passed:
            return ConversionError("output_mismatch", f"sidecar.json: \"output\" is \"{output}\" but on the "
                                   f"{gate.raw.count} raw samples the float32 model, served, {failed.problem}; read "
                                   f"as {OTHER_OUTPUT[output]} its answers match expected ({flipped.summary}): write "
                                   f"\"output\": \"{OTHER_OUTPUT[output]}\"")
    if gate.raw.kind == "columns":  # the preprocessing is the model's own layers, not a sidecar's
        return ConversionError("served_disagrees", f"on the {gate.raw.count} raw rows the float32 model, served from "
                               f"raw values through its lookup and normalization layers' preprocessing, "
                               f"{failed.problem}{worst_text(failed.metrics)}: check that expected is this model's "
                               "model.predict on the same raw rows (or leave it out: convert fills it)")
    opening = (f"sidecar.json: \"preprocessing\" ({describe(declared)}) is not how expected was made: on the "
               f"{gate.raw.count} raw samples the float32 model, served, {failed.problem}")
    if gate.raw.kind != "image":
        return ConversionError("served_disagrees", f"{opening}{worst_text(failed.metrics)}: make the sidecar's "
                               "preprocessing what your pipeline does (docs/model-format.md), or check that expected "
                               "comes from this model")
    found = field_match(gate, content, model, declared)
    if found is not None:
        fix, _, result = found
        return ConversionError("preprocessing_mismatch", f"{opening}; your model's answers match it with {fix} "
                               f"({result.summary}): set {fix} in sidecar.json")
    matches = []
    if declared["color_mode"] != "L":  # the known modes are all 3-channel
        for mode, mode_fields in keras_applications.MODES.items():
            candidate = {key: value for key, value in {**declared, **mode_fields}.items()
                         if key != "keras_applications"}
            if keras_applications.mode_of(declared) == mode:
                continue
            result = gate.judge(content, model, "float32", candidate)
            if result.passed:
                matches.append((mode, result))
    if not matches:
        tried = ("; no single field (divisor, mean and std, colour order, resize, EXIF) and none of the "
                 "keras.applications modes (caffe, tf, torch, none) matches either" if declared["color_mode"] != "L"
                 else "; no single field (divisor, mean and std, resize, EXIF) matches either")
        return ConversionError("served_disagrees", f"{opening}{worst_text(failed.metrics)}{tried}: make the "
                               "sidecar's preprocessing what your pipeline does (docs/model-format.md), or check "
                               "that expected comes from this model")
    mode, result = _best(matches)
    modules = keras_applications.modules_of(mode)
    others = f" (or any of {', '.join(modules[1:])})" if len(modules) > 1 else ""
    instead = "" if "keras_applications" in declared else " in place of color_mode, divisor, mean and std"
    return ConversionError("preprocessing_mismatch", f"{opening}; your model's answers match {mode} preprocessing "
                           f"({MODE_WORDS[mode]}; {result.summary}): set \"preprocessing.keras_applications\": "
                           f"\"{modules[0]}\"{others}{instead}")
