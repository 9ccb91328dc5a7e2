"""Embedding gate: each converted vector must point where the SavedModel's points (cosine similarity per sample).

Cosine is what users of embeddings compute (the function L2-normalises by default, so a dot product of two answers
is their cosine); a vector's length is normalised away and does not matter. The same bounds hold in every mode:
retrieval does not get more forgiving because the model got smaller.
"""
from __future__ import annotations

import numpy as np

from convert.fidelity.base import (NONFINITE_ADVICE, Column, GateResult, cell, milder_mode_advice, nonfinite_problem,
                                   nonfinite_rows, rounded)
from convert.samples import Samples

MIN_COSINE = 0.99  # the worst sample
MEAN_COSINE = 0.999  # on average


def cosine_similarities(reference: np.ndarray, converted: np.ndarray) -> np.ndarray:
    """Per row; two zero vectors agree (1.0), a zero vector against a non-zero one does not (0.0)."""
    wanted = reference.reshape(len(reference), -1).astype(np.float64)
    got = converted.reshape(len(converted), -1).astype(np.float64)
    norms = np.linalg.norm(wanted, axis=1) * np.linalg.norm(got, axis=1)
    dots = np.sum(wanted * got, axis=1)
    both_zero = (np.linalg.norm(wanted, axis=1) == 0) & (np.linalg.norm(got, axis=1) == 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        cosines = np.where(norms > 0, dots / np.where(norms > 0, norms, 1.0), 0.0)
    return np.where(both_zero, 1.0, np.clip(cosines, -1.0, 1.0))


class CosineGate:
    columns = (
        Column("min cosine", lambda metrics: cell(metrics.get("min_cosine"), ".6f")),
        Column("mean cosine", lambda metrics: cell(metrics.get("mean_cosine"), ".6f")),
        Column("max abs diff", lambda metrics: cell(metrics.get("max_abs_diff"), ".2g")),
    )

    def __init__(self, output: str) -> None:
        self.output = output  # the signature output holding the embedding

    def judge(self, reference, converted, samples: Samples, mode: str) -> GateResult:
        wanted, got = reference[self.output], converted[self.output]
        nonfinite = nonfinite_rows([got])
        metrics = {"samples": samples.count, "min_cosine": None, "mean_cosine": None, "max_abs_diff": None,
                   "thresholds": {"min_cosine": MIN_COSINE, "mean_cosine": MEAN_COSINE}}
        if nonfinite:
            return GateResult(False, metrics, "NaN/Inf outputs", nonfinite_problem(nonfinite, samples),
                              NONFINITE_ADVICE)
        cosines = cosine_similarities(wanted, got)
        lowest, mean = float(cosines.min()), float(cosines.mean())
        metrics.update(min_cosine=rounded(lowest), mean_cosine=rounded(mean),
                       max_abs_diff=rounded(np.max(np.abs(got - wanted))),
                       cosine_pass_rate=rounded(np.mean(cosines >= MIN_COSINE)))  # its interval: agreement_interval
        summary = f"cosine min {lowest:.5f}, mean {mean:.5f}"
        # Compare the rounded numbers the manifest records, so that a reader can check the verdict from them.
        short = []
        if metrics["min_cosine"] < MIN_COSINE:
            short.append(f"below {MIN_COSINE} on sample {int(cosines.argmin())} ({lowest:.6f})")
        if metrics["mean_cosine"] < MEAN_COSINE:
            short.append(f"below {MEAN_COSINE} on average ({mean:.6f})")
        if short:
            problem = f"has a cosine similarity to the SavedModel {' and '.join(short)}"
            advice = ("full-integer int8 rounds every activation to 256 levels; give it more representative inputs "
                      "with --representative FILE.npz, or use dynamic or float16") if mode == "int8" else (
                milder_mode_advice(mode))
            return GateResult(False, metrics, summary, problem, advice)
        return GateResult(True, metrics, summary)
