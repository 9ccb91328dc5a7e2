"""The fidelity gate: the converted model must answer like the SavedModel on the same inputs, or it is not written."""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from convert.errors import ConversionError, first_line
from convert.quiet import import_tensorflow
from convert.litert_model import VARIABLE_OPS, LiteRTModel
from convert.samples import Samples
from function.models.outputs import probabilities

# Lowest top-1 agreement with the SavedModel each mode may have (docs/conversion.md says why).
THRESHOLDS = {"float32": 0.99, "float16": 0.99, "dynamic": 0.98, "int8": 0.95}
REFERENCE_BATCH = 64
# Two classes the SavedModel itself scores within this much probability are a tie: picking either is agreement.
# (EfficientNet-Lite0 float16 "disagreed" once in 105 photos on a 0.0002 margin; that is noise, not a regression.)
TIE_TOLERANCE = 1e-3


@dataclass
class FidelityResult:
    samples: int
    top1_agreement: float
    max_abs_diff: float | None
    accuracy: float | None
    reference_accuracy: float | None
    threshold: float
    passed: bool
    problem: str | None = None  # why it failed, as a sentence

    def as_manifest(self) -> dict:
        fields = asdict(self)
        fields.pop("problem")
        return fields


def top1(outputs: np.ndarray, output_kind: str) -> np.ndarray:
    """Predicted class per sample; a single unit is binary (sigmoid probability > 0.5, or logit > 0)."""
    flat = outputs.reshape(len(outputs), -1)
    if flat.shape[1] == 1:
        return (flat[:, 0] > (0.5 if output_kind == "probabilities" else 0.0)).astype(np.int64)
    return flat.argmax(axis=1)


def agreeing(reference: np.ndarray, predicted: np.ndarray, expected: np.ndarray, output_kind: str) -> np.ndarray:
    """Per sample: the converted model picks the SavedModel's top-1, or a class the SavedModel ties with it."""
    if reference.reshape(len(reference), -1).shape[1] == 1:
        return predicted == expected
    flat = probabilities(reference, output_kind)  # the function's own reading of the outputs
    rows = np.arange(len(flat))
    return (predicted == expected) | (flat[rows, predicted] >= flat[rows, expected] - TIE_TOLERANCE)


def reference_outputs(function, samples: Samples) -> dict[str, np.ndarray]:
    """The SavedModel's own answers, in batches so large validation sets stay small in memory."""
    tf = import_tensorflow()
    chunks = []
    for start in range(0, samples.count, REFERENCE_BATCH):
        batch = {name: tf.constant(array[start:start + REFERENCE_BATCH]) for name, array in samples.inputs.items()}
        try:
            result = function(**batch)
        except Exception as error:  # noqa: BLE001  (TF raises many types; all mean these inputs do not fit)
            raise ConversionError("reference_failed", f"the SavedModel itself fails on the validation inputs "
                                  f"({samples.source}): {first_line(error)}") from None
        chunks.append({name: np.asarray(tensor, dtype=np.float32) for name, tensor in result.items()})
    outputs = {name: np.concatenate([chunk[name] for chunk in chunks]) for name in chunks[0]}
    broken = [name for name, array in outputs.items() if not np.isfinite(array).all()]
    if broken:
        raise ConversionError("reference_failed", f"the SavedModel itself outputs NaN/Inf ({', '.join(broken)}) on "
                              f"{samples.source}: fix the model or its validation inputs before converting")
    return outputs


def guess_output_kind(outputs: np.ndarray) -> str:
    """Without a sidecar: rows of values in [0, 1] summing to 1 (or a single unit in [0, 1]) are probabilities."""
    flat = outputs.reshape(len(outputs), -1)
    in_unit_range = bool(((flat >= 0) & (flat <= 1)).all())
    if in_unit_range and (flat.shape[1] == 1 or np.allclose(flat.sum(axis=1), 1.0, atol=1e-3)):
        return "probabilities"
    return "logits"


def measure(reference: dict[str, np.ndarray], model: LiteRTModel, samples: Samples, mode: str, output_kind: str,
            primary_output: str, threshold: float | None = None) -> FidelityResult:
    """Agreement on the primary output's top-1, worst difference over every output, accuracy where labels exist."""
    try:
        converted = model.predict_batches(samples.inputs)
    except (RuntimeError, ValueError) as error:
        raise ConversionError("converted_model_failed",
                              f"LiteRT cannot run the converted {mode} model: {first_line(error)}") from None
    threshold = THRESHOLDS[mode] if threshold is None else threshold
    finite_rows = np.all([np.isfinite(array.reshape(len(array), -1)).all(axis=1) for array in converted.values()],
                         axis=0)
    nonfinite = int((~finite_rows).sum())
    predicted = top1(np.nan_to_num(converted[primary_output]), output_kind)
    expected = top1(reference[primary_output], output_kind)
    agreement = float(np.mean(agreeing(reference[primary_output], predicted, expected, output_kind)))
    max_abs_diff = None
    if nonfinite == 0:
        max_abs_diff = float(max(np.max(np.abs(converted[name] - reference[name])) for name in reference))
    accuracy = reference_accuracy = None
    if samples.labels is not None:
        accuracy = float(np.mean(predicted == samples.labels))
        reference_accuracy = float(np.mean(expected == samples.labels))
    problem = None
    if nonfinite:
        problem = f"outputs NaN/Inf on {nonfinite} of {samples.count} validation inputs"
    elif agreement < threshold:
        problem = (f"agrees with the SavedModel on {agreement:.1%} of top-1 predictions, "
                   f"below the {threshold:.0%} threshold")
    return FidelityResult(samples=samples.count, top1_agreement=round(agreement, 6),
                          max_abs_diff=None if max_abs_diff is None else round(max_abs_diff, 6),
                          accuracy=None if accuracy is None else round(accuracy, 6),
                          reference_accuracy=None if reference_accuracy is None else round(reference_accuracy, 6),
                          threshold=threshold, passed=problem is None, problem=problem)


def gate_error(result: FidelityResult, model: LiteRTModel, mode: str) -> ConversionError | None:
    """Why the gate rejects the model, with advice, or None. Uninitialised-variable ops fail it whatever the numbers."""
    if VARIABLE_OPS & model.op_names():
        symptom = f" and {result.problem}" if result.problem else ""
        return ConversionError("weightless_export", f"the converted model has no weights (it reads uninitialised "
                               f"variables){symptom}: the SavedModel was written with tf.saved_model.save(); "
                               "export the Keras model with model.export(DIR)")
    if result.passed:
        return None
    if result.max_abs_diff is None:
        advice = ("try float32 or float16; if the SavedModel came from tf.saved_model.save(), "
                  "export it with model.export(DIR)")
    elif mode == "int8":
        advice = "give int8 more representative inputs with --representative FILE.npz, or use dynamic or float16"
    else:
        advice = "use a milder mode (float16 or float32)"
    return ConversionError("fidelity_failed", f"the converted {mode} model {result.problem}: {advice}")
