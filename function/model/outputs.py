"""Classifier outputs -> probabilities -> ranked labels, and the check that a stored ranking is one of ours."""
from __future__ import annotations

import math

import numpy as np


def probabilities(raw: np.ndarray, output: str) -> np.ndarray:
    """(batch, classes) probabilities from a model whose manifest says `output` ("probabilities" or "logits").
    A one-unit output is binary: P(labels[1]), so it becomes [1-p, p]. convert's fidelity gate uses it too."""
    raw = raw.reshape(raw.shape[0], -1).astype(np.float64)
    if raw.shape[1] == 1:
        p = 1.0 / (1.0 + np.exp(-raw)) if output == "logits" else raw
        return np.concatenate([1.0 - p, p], axis=1)
    if output == "logits":
        shifted = np.exp(raw - raw.max(axis=1, keepdims=True))
        return shifted / shifted.sum(axis=1, keepdims=True)
    return raw


def most_likely(raw: np.ndarray, output: str, labels: tuple[str, ...]) -> list[dict]:
    """Each row's most likely {label, score}: the argmax of `probabilities`, the first label on a tie. A one-unit
    output is read as Python floats rather than built into [1-p, p] rows: numpy calls, not arithmetic, are what a
    row costs here."""
    raw = raw.reshape(raw.shape[0], -1)
    if raw.shape[1] == 1:
        p = raw.astype(np.float64)
        if output == "logits":
            p = 1.0 / (1.0 + np.exp(-p))
        results = []
        for positive in p.ravel().tolist():
            negative = 1.0 - positive
            best = 1 if positive > negative else 0
            results.append({"label": labels[best], "score": round(positive if best else negative, 6)})
        return results
    probs = probabilities(raw, output)
    return [{"label": labels[best], "score": round(row[best], 6)}
            for best, row in zip(probs.argmax(axis=1).tolist(), probs.tolist())]


def label_scores(raw: np.ndarray, output: str) -> np.ndarray:
    """(batch, labels) scores of a multi-label model, each label on its own: its sigmoid unit's probability
    (`output` "probabilities"), or the sigmoid of its logit. convert's fidelity gate uses it too."""
    raw = raw.reshape(raw.shape[0], -1).astype(np.float64)
    return 1.0 / (1.0 + np.exp(-raw)) if output == "logits" else raw


def labels_at_or_above(scores: np.ndarray, labels: tuple[str, ...], threshold: float) -> list[dict]:
    """The {label, score} of one row's labels scoring at least `threshold`, best first (ties in label order)."""
    order = np.argsort(-scores, kind="stable")
    return [{"label": labels[i], "score": round(float(scores[i]), 6)} for i in order if scores[i] >= threshold]


def ranked(probs: np.ndarray, labels: tuple[str, ...], top_k: int) -> list[dict]:
    """The top_k {label, score} of one row, best first; ties keep label order so answers are reproducible."""
    order = np.argsort(-probs, kind="stable")[:top_k]
    return [{"label": labels[i], "score": round(float(probs[i]), 6)} for i in order]


def is_label_score(value: object, labels: frozenset[str]) -> bool:
    """{"label": one of labels, "score": a finite number in [0, 1]} and nothing else is missing."""
    if not isinstance(value, dict) or value.get("label") not in labels:
        return False
    score = value.get("score")
    return isinstance(score, (int, float)) and not isinstance(score, bool) and math.isfinite(score) \
        and 0.0 <= score <= 1.0
