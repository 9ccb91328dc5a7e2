"""The last check before a model directory is written: the function itself loads the staged directory, exactly as
it will in Lambda, and answers the validation samples through its own task. Its answers must be what the converted
model computes: a manifest the function would refuse, or read differently (labels in another order, a tensor
given the wrong role, quantization parameters misread), is never written."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from convert.errors import ConversionError
from convert.litert_model import LiteRTModel
from convert.samples import Samples
from function.errors import ServingError
from function.model.outputs import label_scores, probabilities
from function.catalog.registry import UnservableModel, open_model
from function.config import TaskLimits
from function.tasks.base import Result, Task
from function.tasks.classification import DEFAULT_THRESHOLD
from function.tasks.tensor import output_array
from function.tasks.text_embedding import decode_vector

CHECK_SAMPLES = 64
BATCH = 16
SCORE_TOLERANCE = 1e-5


def verify_with_function(staging: Path, model: LiteRTModel, validation: Samples) -> int:
    """Raises ConversionError("function_refuses") with the reason; returns how many samples were checked."""
    _, entry = open_model(staging, TaskLimits())
    if isinstance(entry, UnservableModel):
        raise _refused(f"it cannot serve the directory: {entry.reason}")
    task = entry
    count = min(validation.count, CHECK_SAMPLES)
    inputs = {name: array[:count] for name, array in validation.inputs.items()}
    try:
        results: list[Result] = []
        for start in range(0, count, BATCH):
            tensors = {spec.role: inputs[spec.name][start:start + BATCH] for spec in task.manifest.inputs}
            results += task.answer_tensors(tensors, {})
    except ServingError as error:
        raise _refused(f"it fails on the validation samples: {error.message}") from None
    invalid = [index for index, result in enumerate(results) if not task.is_valid_result(result, {})]
    if invalid:
        raise _refused(f"its answer to validation sample {invalid[0]} is not a valid {task.name} result")
    expected = model.predict_batches(inputs)
    for index, result in enumerate(results):
        problem = AGREES[task.name](task, result, {name: array[index] for name, array in expected.items()})
        if problem:
            raise _refused(f"on validation sample {index} it answers {problem}")
    return count


def _refused(problem: str) -> ConversionError:
    return ConversionError("function_refuses", f"the function would not serve this model as converted: {problem}")


def _values(task: Task, result: Result, expected: dict[str, np.ndarray]) -> str | None:
    """The outputs answered as values (an image regression model's, or those beside a classifier's labels)."""
    for spec in task.manifest.outputs:
        if spec.role == "scores":
            continue
        got = np.asarray(result["outputs"][spec.name], dtype=np.float64)
        if not np.allclose(got, expected[spec.name].reshape(-1), rtol=1e-5, atol=1e-6, equal_nan=True):
            return f"values {got[:3].tolist()} for output {spec.name!r} unlike the model's"
    return None


def _label(task: Task, result: Result, expected: dict[str, np.ndarray]) -> str | None:
    beside = _values(task, result, expected) if "outputs" in result else None
    if beside is not None:
        return beside
    if task.manifest.multi_label:
        return _labels(task, result, expected)
    scores = task.manifest.output_spec("scores")
    probs = probabilities(expected[scores.name][np.newaxis], task.manifest.output)[0]
    chosen = task.manifest.labels.index(result["label"])
    if probs[chosen] < probs.max() - SCORE_TOLERANCE or abs(probs[chosen] - result["score"]) > SCORE_TOLERANCE:
        best = task.manifest.labels[int(probs.argmax())]
        return f"{result['label']!r} ({result['score']}) where the model scores {best!r} at {probs.max():.6f}"
    return None


def _labels(task: Task, result: Result, expected: dict[str, np.ndarray]) -> str | None:
    """A multi-label answer: exactly the labels the converted model scores at or above the default threshold."""
    scores = label_scores(expected[task.manifest.output_spec("scores").name][np.newaxis], task.manifest.output)[0]
    want = {label: float(score) for label, score in zip(task.manifest.labels, scores)
            if score >= DEFAULT_THRESHOLD}
    got = {entry["label"]: entry["score"] for entry in result["labels"]}
    if set(got) != set(want) or any(abs(got[label] - want[label]) > SCORE_TOLERANCE for label in got):
        return f"labels {sorted(got)} where the model scores {sorted(want)} at or above {DEFAULT_THRESHOLD}"
    return None


def _vector(task: Task, result: Result, expected: dict[str, np.ndarray]) -> str | None:
    vector = decode_vector(result["embedding"]).astype(np.float64)
    want = expected[task.manifest.output_spec("embedding").name].astype(np.float64)
    cosine = float(vector @ want / max(np.linalg.norm(vector) * np.linalg.norm(want), 1e-12))
    return None if cosine > 0.9999 else f"a vector at cosine {cosine:.6f} to the model's"


def _tensors(task: Task, result: Result, expected: dict[str, np.ndarray]) -> str | None:
    for spec in task.manifest.outputs:
        got = output_array(result, spec)
        if not np.allclose(got, expected[spec.name], rtol=1e-5, atol=1e-6, equal_nan=True):
            return f"output {spec.name!r} unlike the model's"
    return None


AGREES: dict[str, Callable[[Task, Result, dict[str, np.ndarray]], str | None]] = {
    "image_classification": _label,
    "image_regression": _values,
    "text_classification": _label,
    "text_embedding": _vector,
    "tensor": _tensors,
}
