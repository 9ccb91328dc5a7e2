"""What classifiers share: labels that fit the scores output, and the multi-label answer (every label at or above a
threshold, each scored on its own). An image classifier's other outputs are answered beside its labels as values
(function/tasks/values.py)."""
from __future__ import annotations

import numpy as np

from function.errors import quoted, refuse
from function.model.outputs import is_label_score, label_scores, labels_at_or_above, probabilities, ranked
from function.tasks.base import Result, Task

DEFAULT_THRESHOLD = 0.5  # a sigmoid unit's own decision boundary


def check_labels(task: Task) -> None:
    """A classifier's labels fit its scores output: one per unit (two for a single softmax-free sigmoid unit,
    unless the model is multi-label, where each unit is one label's own yes/no)."""
    manifest = task.manifest
    task.require(manifest.output in ("probabilities", "logits"),
                 f"output must be probabilities or logits, not {manifest.output!r}")
    task.require(bool(manifest.labels), "a classifier needs labels")
    scores = manifest.output_spec("scores")
    task.require(scores is not None, "a classifier needs an output with role 'scores'")
    task.require(len(manifest.outputs) == 1 or task.answers_values,
                 f"a {task.name} model has one output; {len(manifest.outputs)} would leave all but 'scores' "
                 "unanswered: serve the model with task tensor")
    units = int(np.prod(scores.shape[1:])) if len(scores.shape) > 1 else 1
    wanted = units if manifest.multi_label or units > 1 else 2
    task.require(len(manifest.labels) == wanted, f"{len(manifest.labels)} labels for an output of {units} unit(s)")


def threshold_of(task: Task, options: dict) -> float:
    """The request's threshold (the route checked it is a number in [0, 1]), which only a multi-label model has."""
    if not task.manifest.multi_label:
        if "threshold" in options:
            raise refuse("invalid_field", f"'threshold' applies to multi-label models; model "
                         f"{quoted(task.manifest.name)} answers with its one most likely label.", param="threshold")
        return DEFAULT_THRESHOLD
    return float(options.get("threshold", DEFAULT_THRESHOLD))


def multi_label_results(task: Task, scores: np.ndarray, options: dict) -> list[Result]:
    threshold = threshold_of(task, options)
    return [{"labels": labels_at_or_above(row, task.manifest.labels, threshold)}
            for row in label_scores(scores, task.manifest.output)]


def is_multi_label_result(task: Task, result: object, options: dict) -> bool:
    """{"labels": [{label, score}, ...]}: distinct labels of this model, each at or above the threshold, best first."""
    if not isinstance(result, dict) or set(result) != {"labels"} or not isinstance(result["labels"], list):
        return False
    entries, labels = result["labels"], frozenset(task.manifest.labels)
    threshold = threshold_of(task, options)
    scores = [entry.get("score") for entry in entries if is_label_score(entry, labels)]
    return (len(scores) == len(entries) and len({entry["label"] for entry in entries}) == len(entries)
            and all(score >= threshold for score in scores) and scores == sorted(scores, reverse=True))



def ranked_count(top_k: int | None, labels: tuple[str, ...]) -> int:
    """How many labels a top_k ranking holds: top_k (None: every label), capped at the model's labels."""
    return len(labels) if top_k is None else min(int(top_k), len(labels))


def ranked_results(task: Task, scores: np.ndarray, top_k: int) -> list[Result]:
    """Each row's best label and score, and its top_k labels ranked, best first."""
    manifest = task.manifest
    results = []
    for row in probabilities(scores, manifest.output):
        best = ranked(row, manifest.labels, top_k)
        results.append({"label": best[0]["label"], "score": best[0]["score"], "top_k": best})
    return results


def is_ranked_result(task: Task, result: object, top_k: int) -> bool:
    """{"label", "score", "top_k": [top_k {label, score}]}, the best of the ranking first."""
    labels = frozenset(task.manifest.labels)
    if not is_label_score(result, labels) or set(result) != {"label", "score", "top_k"}:
        return False
    ranking = result["top_k"]
    return (isinstance(ranking, list) and len(ranking) == top_k and all(is_label_score(entry, labels)
                                                                        for entry in ranking)
            and ranking[0] == {"label": result["label"], "score": result["score"]})
