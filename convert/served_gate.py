"""The served gate: the converted model, answering raw samples the way a request is answered, must agree with the
answers the user's own pipeline gives for them (`expected`, convert/raw_samples.py).

The tensor gates (convert/fidelity/) hold the converted model against the SavedModel on inputs that are already
preprocessed; nothing there checks the decode, colour, resize and normalise steps (or the tokenizer) that every real
request goes through, and a mismatch there would be served silently. Here each mode's model is written into a
temporary model directory and the function's own task answers every raw sample through `task.predict`: its own
decode, EXIF, colour, resize and normalise or tokenize code, LiteRT, its own postprocess.

How an answer is compared with `expected` is the task's (MEASURES): top-1 for classifiers (a class `expected` scores
within 0.001 of its own top-1 counts as agreeing, as in the tensor gate), label sets for multi-label classifiers
(each label's decision at the default threshold, near-ties agreeing either way), then every score the answer shows
(asked for all of them) within the mode's SCORE_BOUNDS of expected's; cosine for embeddings. Values (an image
regression model's outputs, or the outputs an image classifier answers beside its labels) are held against
expected's (`expected`, or `expected_<output name>` for a model with several outputs) as the tensor gate holds
outputs: the largest difference relative to the output's range, within the mode's TOLERANCES. Each raw sample's
record (index, served vs expected, agrees, max_score_diff or cosine) is kept on the result (`per_sample`), the worst
few in its metrics (`worst`, report.json); docs/conversion.md has their shape.
"""
from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from convert import manifest as manifest_file
from convert.errors import ConversionError
from convert.fidelity.base import Column, GateResult, cell, rounded
from convert.fidelity.classification import SCORE_BOUNDS, THRESHOLDS, agreeing, top1
from convert.fidelity.embedding import MEAN_COSINE, MIN_COSINE, cosine_similarities
from convert.fidelity.multi_label import decisions_agree
from convert.input_bounds import input_bounds
from convert.litert_model import LiteRTModel
from convert.progress import progress
from convert.quiet import quiet_native_stderr
from convert.raw_samples import RawSamples
from convert.served_columns import measure_columns
from convert.served_values import expected_values, measure_values
from convert.sidecar import Sidecar
from convert.tasks.base import Binding
from function.errors import ServingError
from function.log import Timings
from function.model.outputs import label_scores, probabilities
from function.catalog.registry import UnservableModel, open_model
from function.config import TaskLimits
from function.tasks.base import Result, Task
from function.tasks.classification import DEFAULT_THRESHOLD
from function.preprocessing.columns import is_columns
from function.tasks.text_embedding import decode_vector

BATCH = 16
NOT_CHECKED = ("the served path (the function's decode, resize and normalise, or its tokenizer) was not checked: "
               "the validation file holds only preprocessed tensors; add raw samples and your model's answers for "
               "them (raw_images or raw_texts + expected, docs/model-format.md)")


@dataclass(frozen=True)
class Served:
    """What a manifest needs besides the model itself, and the raw samples to answer."""
    name: str
    sidecar: Sidecar
    binding: Binding
    output_kind: str | None
    raw: RawSamples


WORST_SAMPLES = 5  # the samples report.json and a refusal list, worst first


def answer_options(task: Task) -> dict:
    """The request options that make the answer show every score it can: all labels of an image classifier
    (top_k), every label of a multi-label one (threshold 0)."""
    if task.name not in ("image_classification", "text_classification"):
        return {}
    if task.manifest.multi_label:
        return {"threshold": 0.0}
    return {"top_k": len(task.manifest.labels)} if task.name == "image_classification" else {}


def shown_scores(task: Task, results: list[Result]) -> np.ndarray:
    """(samples, labels): each score an answer shows, NaN where it shows none (a text classifier shows its label's)."""
    labels = list(task.manifest.labels)
    scores = np.full((len(results), len(labels)), np.nan)
    for row, result in enumerate(results):
        for entry in result.get("top_k") or result.get("labels") or [result]:
            scores[row, labels.index(entry["label"])] = entry["score"]
    return scores


def expected_scores(task: Task, expected: np.ndarray) -> np.ndarray:
    """expected as the scores the function would show for it (softmax of logits, [1-p, p] for one unit)."""
    if task.manifest.multi_label:
        return label_scores(expected, task.manifest.output)
    return probabilities(expected, task.manifest.output)


def _scores_text(labels: list[str], scores: np.ndarray) -> dict[str, float]:
    """The three best scores of one row as {label: score} (NaN: not shown)."""
    order = [int(i) for i in np.argsort(-np.nan_to_num(scores, nan=-1.0), kind="stable")[:3] if not np.isnan(scores[i])]
    return {labels[i]: round(float(scores[i]), 4) for i in order}


def per_sample_classes(task: Task, results: list[Result], expected: np.ndarray, agree: np.ndarray
                       ) -> tuple[list[dict], np.ndarray]:
    """One record per raw sample (index, served and expected answers, agreement, score difference) and the score
    differences themselves."""
    labels = list(task.manifest.labels)
    served, wanted = shown_scores(task, results), expected_scores(task, expected)
    shown = ~np.isnan(served)
    differences = np.where(shown, np.abs(np.nan_to_num(served) - wanted), 0.0).max(axis=1)
    records = []
    for index, result in enumerate(results):
        if task.manifest.multi_label:
            served_label = [entry["label"] for entry in result["labels"] if entry["score"] >= DEFAULT_THRESHOLD]
            expected_label = [label for label, score in zip(labels, wanted[index]) if score >= DEFAULT_THRESHOLD]
        else:
            served_label, expected_label = result["label"], labels[int(np.argmax(wanted[index]))]
        records.append({"index": index, "agrees": bool(agree[index]),
                        "max_score_diff": round(float(differences[index]), 6),
                        "served": {"label": served_label, "scores": _scores_text(labels, served[index])},
                        "expected": {"label": expected_label, "scores": _scores_text(labels, wanted[index])}})
    return records, differences


def worst(records: list[dict], key: str = "max_score_diff") -> list[dict]:
    """The WORST_SAMPLES records that disagree first, then by the largest score difference."""
    return sorted(records, key=lambda record: (record["agrees"], -record[key]))[:WORST_SAMPLES]


def _measure_label_sets(task: Task, results: list[Result], expected: np.ndarray, threshold: float
                        ) -> tuple[dict, str | None]:
    """A multi-label classifier: the served label set of each raw sample against `expected`'s decisions at the
    default threshold (a label `expected` scores within the tie tolerance of it agrees either way)."""
    labels = list(task.manifest.labels)
    wanted = label_scores(expected, task.manifest.output)
    served = np.zeros_like(wanted, dtype=bool)
    for row, result in enumerate(results):
        served[row, [labels.index(entry["label"]) for entry in result["labels"]  # asked with threshold 0: all
                     if entry["score"] >= DEFAULT_THRESHOLD]] = True
    agree = decisions_agree(wanted, served)
    sets = agree.all(axis=1)
    agreement = float(np.mean(sets))
    metrics = {"samples": len(results), "label_set_agreement": rounded(agreement),
               "decision_agreement": rounded(float(np.mean(agree))), "threshold": threshold}
    metrics["per_sample"] = sets
    if agreement >= threshold:
        return metrics, None
    first = int(np.argmin(sets))
    shown = [entry["label"] for entry in results[first]["labels"] if entry["score"] >= DEFAULT_THRESHOLD]
    return metrics, (f"agrees with expected on {agreement:.1%} of label sets, below the {threshold:.0%} threshold "
                     f"(raw sample {first}: served {shown}, "
                     f"expected {[label for label, on in zip(labels, wanted[first] >= DEFAULT_THRESHOLD) if on]})")


def _measure_classes(task: Task, results: list[Result], expected: np.ndarray, threshold: float, mode: str
                     ) -> tuple[dict, str | None]:
    """A classifier: top-1 (or label sets for a multi-label one), then every score the answer shows against
    expected's, within the mode's SCORE_BOUNDS."""
    measure = _measure_label_sets if task.manifest.multi_label else _measure_top1
    metrics, problem = measure(task, results, expected, threshold)
    records, differences = per_sample_classes(task, results, expected, metrics.pop("per_sample"))
    bound = SCORE_BOUNDS[mode]
    largest = float(differences.max())
    metrics.update(max_score_diff=rounded(largest), score_bound=bound, worst=worst(records))
    metrics["per_sample"] = records
    if problem is None and largest > bound:
        first = records[int(differences.argmax())]
        problem = (f"shows scores up to {largest:.4f} away from expected's, above the {bound:g} bound for {mode} "
                   f"(raw sample {first['index']}: served {first['served']['scores']}, expected "
                   f"{first['expected']['scores']})")
    return metrics, problem


def _measure_top1(task: Task, results: list[Result], expected: np.ndarray, threshold: float) -> tuple[dict, str | None]:
    labels = list(task.manifest.labels)
    output_kind = task.manifest.output
    flat = expected.reshape(len(expected), -1)
    # For one sigmoid unit, labels[1] is "above the cut": a label's index is the binary class top1() gives.
    predicted = np.array([labels.index(result["label"]) for result in results])
    wanted = top1(flat, output_kind)
    agree = agreeing(flat, predicted, wanted, output_kind)
    agreement = float(np.mean(agree))
    metrics = {"samples": len(results), "top1_agreement": rounded(agreement), "threshold": threshold}
    metrics["per_sample"] = agree
    if agreement >= threshold:
        return metrics, None
    first = int(np.argmin(agree))
    return metrics, (f"agrees with expected on {agreement:.1%} of top-1 answers, below the {threshold:.0%} "
                     f"threshold (raw sample {first}: served {results[first]['label']!r}, expected "
                     f"{labels[int(wanted[first])]!r})")


def _measure_cosine(task: Task, results: list[Result], expected: np.ndarray, threshold: float | None, mode: str
                    ) -> tuple[dict, str | None]:
    vectors = np.stack([decode_vector(result["embedding"]) for result in results])
    cosines = cosine_similarities(expected, vectors)
    lowest, mean = float(cosines.min()), float(cosines.mean())
    records = [{"index": index, "agrees": bool(cosine >= MIN_COSINE), "cosine": round(float(cosine), 6)}
               for index, cosine in enumerate(cosines)]
    metrics = {"samples": len(results), "min_cosine": rounded(lowest), "mean_cosine": rounded(mean),
               "thresholds": {"min_cosine": MIN_COSINE, "mean_cosine": MEAN_COSINE},
               "worst": sorted(records, key=lambda record: record["cosine"])[:WORST_SAMPLES], "per_sample": records}
    if metrics["min_cosine"] >= MIN_COSINE and metrics["mean_cosine"] >= MEAN_COSINE:
        return metrics, None
    return metrics, (f"has a cosine similarity to expected of {lowest:.6f} at worst (raw sample "
                     f"{int(cosines.argmin())}) and {mean:.6f} on average, below {MIN_COSINE} / {MEAN_COSINE}")


def _measure_regression(results: list[Result], expected: dict[str, np.ndarray], mode: str) -> tuple[dict, str | None]:
    """An image regression model: every output's values (convert/served_values.py)."""
    metrics, records, problem = measure_values(results, expected, mode)
    return {"samples": len(results), **metrics, "worst": worst(records, "max_value_error"),
            "per_sample": records}, problem


def _with_beside(task: Task, results: list[Result], expected: dict[str, np.ndarray], metrics: dict,
                 problem: str | None, mode: str) -> tuple[dict, str | None]:
    """A classifier's measures with the values it answers beside its labels held against expected's too."""
    values, records, values_problem = measure_values(results, expected, mode)
    for record, value in zip(metrics["per_sample"], records):
        record["agrees"] = record["agrees"] and value["agrees"]
        record["max_value_error"] = value["max_value_error"]
        record["served"]["outputs"] = value["served"]["outputs"]
        record["expected"]["outputs"] = value["expected"]["outputs"]
    metrics.update(values)
    metrics["worst"] = worst(metrics["per_sample"])
    return metrics, problem or values_problem


# task name -> how served results are held against `expected`: (metrics, problem or None).
MEASURES: dict[str, Callable[[Task, list[Result], np.ndarray, float | None, str], tuple[dict, str | None]]] = {
    "image_classification": _measure_classes,
    "text_classification": _measure_classes,
    "text_embedding": _measure_cosine,
    "tensor": measure_columns,  # a structured model's raw columns (convert/served_columns.py)
}

def _largest_value_error(served: dict) -> float:
    return max((errors["max_rel_error"] for errors in served.get("outputs", {}).values()), default=0.0)


def served_cell(metrics: dict) -> str:
    served = metrics.get("served")
    if not served or not served.get("checked", True):
        return "not checked"
    scores = f", scores within {served['max_score_diff']:.4f}" if served.get("max_score_diff") is not None else ""
    if "outputs" in served:  # values, alone or beside the labels
        scores += f", values within {_largest_value_error(served):.2%} of their range"
    if "top1_agreement" in served:
        return cell(served["top1_agreement"], ".2%") + scores
    if "label_set_agreement" in served:
        return f"{cell(served['label_set_agreement'], '.2%')} of label sets{scores}"
    if "outputs" in served:
        return scores.removeprefix(", ")
    return f"min cos {served['min_cosine']:.4f}"


SERVED_COLUMN = Column("served on raw samples", served_cell)


class ServedGate:
    def __init__(self, served: Served, min_agreement: float | None) -> None:
        if served.sidecar.task not in (*MEASURES, "image_regression") or (
                served.sidecar.task == "tensor" and not is_columns(served.sidecar.preprocessing)):
            raise ConversionError("bad_samples", f"{served.raw.source}: raw samples are for image and text models "
                                  "(and the raw_<column> rows of a structured .keras model's lookup layers); "
                                  f"a {served.sidecar.task} model's clients send its tensors: give inputs_<name> "
                                  "arrays only")
        self.served = served
        self.min_agreement = min_agreement
        self.expected_values = expected_values(served.sidecar.task, served.binding, served.raw)
        self._bounds: dict[int, dict] = {}  # hash of a model's bytes -> its input bounds, as its manifest has them

    @property
    def raw(self) -> RawSamples:
        return self.served.raw

    def bounds(self, content: bytes) -> dict:
        key = hash(content)
        if key not in self._bounds:
            self._bounds[key] = input_bounds(content)
        return self._bounds[key]

    @contextmanager
    def function_task(self, content: bytes, model: LiteRTModel, mode: str,
                      preprocessing: dict | None = None, output_kind: str | None = None) -> Iterator[Task]:
        """The function's own task for this model, from a model directory written as convert writes one."""
        served = self.served
        data = manifest_file.build_manifest(
            name=served.name, sidecar=served.sidecar, output_kind=output_kind or served.output_kind,
            binding=served.binding,
            content=content, model=model, mode=mode, saved_model_digest="", converter="", fidelity={},
            bounds=self.bounds(content))
        if preprocessing is not None:
            data["preprocessing"] = preprocessing
        with tempfile.TemporaryDirectory(prefix="convert-served-") as scratch:
            directory = Path(scratch)
            manifest_file.write_model_files(directory, content, data, served.sidecar)
            _, task = open_model(directory, TaskLimits())
            if isinstance(task, UnservableModel):
                raise ConversionError("function_refuses", f"the function would not serve this model as converted: "
                                      f"{task.reason}")
            yield task

    def answers(self, task: Task) -> list[Result]:
        results: list[Result] = []
        items = self.raw.items
        options = answer_options(task)
        with progress().step("raw samples through the function", total=len(items)) as step:
            for start in range(0, len(items), BATCH):
                try:
                    with quiet_native_stderr():  # LiteRT's "Created XNNPACK delegate" line on the first invoke
                        results += task.predict(items[start:start + BATCH], options, Timings())
                except ServingError as error:
                    raise ConversionError("bad_samples", f"{self.raw.source}: the function refuses raw sample "
                                          f"{start}-{start + BATCH - 1}: {error.message}") from None
                step.advance(len(items[start:start + BATCH]))
        return results

    def model_inputs(self, content: bytes, model: LiteRTModel, items: list | None = None) -> dict[str, np.ndarray]:
        """signature input name -> the tensors the function makes of the raw samples, or of `items` (int8
        calibration from raw samples): one batch, so one length."""
        with self.function_task(content, model, "float32") as task:
            batch = task.preprocess(self.raw.items if items is None else items, Timings())
        return {self.served.binding.inputs[role]: array for role, array in batch.tensors.items()}

    def threshold(self, mode: str) -> float:
        return self.min_agreement if self.min_agreement is not None else THRESHOLDS[mode]

    def judge(self, content: bytes, model: LiteRTModel, mode: str, preprocessing: dict | None = None,
              output_kind: str | None = None) -> GateResult:
        """The served answers against expected; `preprocessing` or `output_kind` in place of the sidecar's (what
        the diagnosis of a failed float32 check tries)."""
        with self.function_task(content, model, mode, preprocessing, output_kind) as task:
            results = self.answers(task)
            if task.name == "image_regression":
                metrics, problem = _measure_regression(results, self.expected_values, mode)
            else:
                metrics, problem = MEASURES[task.name](task, results, self.raw.expected, self.threshold(mode), mode)
                if self.expected_values:
                    metrics, problem = _with_beside(task, results, self.expected_values, metrics, problem, mode)
        per_sample = metrics.pop("per_sample")
        summary = f"served on {self.raw.count} raw samples: " + served_cell({"served": metrics})
        if problem is None:
            return GateResult(True, metrics, summary, per_sample=per_sample)
        return GateResult(False, metrics, summary, problem,
                          "the sidecar's preprocessing is not the pipeline that made expected, or this mode loses "
                          "too much: check \"preprocessing\" (docs/model-format.md), or use a milder mode",
                          per_sample=per_sample)


def worst_text(metrics: dict) -> str:
    """The worst samples in one clause: "; worst raw samples: 12 (served '3' {...}, expected '5' {...}), ..."."""
    described = []
    for record in metrics.get("worst", [])[:3]:
        if "cosine" in record:
            described.append(f"{record['index']} (cosine {record['cosine']:.4f})")
        elif "scores" not in record["served"]:
            described.append(f"{record['index']} (served {record['served']['outputs']}, expected "
                             f"{record['expected']['outputs']})")
        else:
            described.append(f"{record['index']} (served {record['served']['scores']}, expected "
                             f"{record['expected']['scores']})")
    return f"; worst raw samples: {', '.join(described)}" if described else ""


def served_error(mode: str, result: GateResult) -> ConversionError:
    return ConversionError("served_disagrees", f"the converted {mode} model, answering the raw samples as a request "
                           f"is answered, {result.problem}{worst_text(result.metrics)}: {result.advice}")
