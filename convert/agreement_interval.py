"""How far an agreement figure measured on N samples can be trusted: its 95% Wilson score interval, and whether N is
enough for the gate's threshold to be shown at all.

An agreement figure is a count of samples out of N (top-1 agreement, label-set agreement, samples whose cosine
clears the gate's minimum, samples whose every shown score is within the mode's bound). On 48 samples, 100% agreement
only says the true rate is above 92.6% with 95% confidence: a gate of 99% cannot be shown by 48 samples, however
they come out. The Wilson interval is used because it stays inside [0, 1] and is sound at 0 and N agreeing, where
the normal approximation gives a zero-width interval.

The verdict rule (docs/conversion.md): a gate with a rate threshold below 1 (top-1 or label-set agreement) whose
samples are too few for the interval's lower bound to reach the threshold even if every sample agreed gets the
verdict "not enough samples", with the count that would do. A threshold of 1 (every sample) is a statement about
these samples only and is not held to this rule, nor are the bounds on a worst sample (min cosine, max score error).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

Z_95 = 1.959964  # the two-sided 95% quantile of the standard normal distribution
CONFIDENCE = 0.95

# metric key -> what it counts, for the figures whose counts the gates report as a rate over "samples".
RATE_FIGURES = {
    "top1_agreement": "top-1 agreement",
    "label_set_agreement": "label-set agreement",
    "cosine_pass_rate": "samples with cosine >= the minimum",
    "score_within_bound_rate": "samples with every score within the bound",
}
# The figures a gate holds to a threshold below 1 (metrics["threshold"]): the verdict rule applies to these.
GATED_FIGURES = ("top1_agreement", "label_set_agreement")


def wilson_interval(agreeing: int, samples: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of agreeing/samples; (0, 1) for no samples (nothing is known)."""
    if samples <= 0:
        return 0.0, 1.0
    if not 0 <= agreeing <= samples:
        raise ValueError(f"{agreeing} agreeing of {samples} samples")
    rate = agreeing / samples
    spread = z * z / samples
    centre = (rate + spread / 2) / (1 + spread)
    half = z * math.sqrt(rate * (1 - rate) / samples + spread / (4 * samples)) / (1 + spread)
    low = 0.0 if agreeing == 0 else max(0.0, centre - half)
    high = 1.0 if agreeing == samples else min(1.0, centre + half)
    return low, high


def samples_needed(threshold: float, z: float = Z_95) -> int | None:
    """The fewest samples whose interval, all agreeing, has its lower bound at or above `threshold`; None for a
    threshold of 1 or more (no count shows it)."""
    if threshold >= 1.0:
        return None
    if threshold <= 0.0:
        return 1
    needed = max(1, math.ceil(threshold * z * z / (1.0 - threshold)))  # n / (n + z^2) >= threshold
    while wilson_interval(needed, needed, z)[0] < threshold:  # float rounding at the boundary
        needed += 1
    while needed > 1 and wilson_interval(needed - 1, needed - 1, z)[0] >= threshold:
        needed -= 1
    return needed


def too_few(samples: int, threshold: float) -> bool:
    """True when `samples` cannot show `threshold` at 95% confidence even if every one agreed."""
    needed = samples_needed(threshold)
    return needed is not None and samples < needed


def too_few_text(samples: int, threshold: float) -> str:
    return (f"{samples} samples cannot show >= {threshold:.1%} agreement at {CONFIDENCE:.0%} confidence: give at "
            f"least {samples_needed(threshold)}")


@dataclass(frozen=True)
class Interval:
    figure: str  # the metric key, e.g. "top1_agreement"
    agreeing: int
    samples: int
    low: float
    high: float

    def as_dict(self) -> dict:
        return {"agreeing": self.agreeing, "samples": self.samples, "low": round(self.low, 6),
                "high": round(self.high, 6), "confidence": CONFIDENCE}


def interval_of(figure: str, rate: float, samples: int) -> Interval:
    """A rate the gates report rounded to 6 digits, turned back into its count (exact for up to ~10^5 samples)."""
    agreeing = min(samples, max(0, round(rate * samples)))
    return Interval(figure, agreeing, samples, *wilson_interval(agreeing, samples))


def annotate(metrics: dict, per_sample: list[dict] | None = None) -> dict:
    """Add "intervals" (figure -> its interval) and, for a gated figure, "evidence" (the verdict rule's answer) to
    one gate's metrics, in place; `per_sample`: the served gate's records, which give the cosine and score-bound
    counts. Returns the metrics."""
    samples = metrics.get("samples")
    if not samples:
        return metrics
    rates = {key: metrics[key] for key in RATE_FIGURES if metrics.get(key) is not None}
    if per_sample is not None and "cosine" in (per_sample[0] if per_sample else {}):
        rates["cosine_pass_rate"] = sum(record["agrees"] for record in per_sample) / len(per_sample)
    if per_sample is not None and per_sample and "max_score_diff" in per_sample[0] and "score_bound" in metrics:
        within = sum(record["max_score_diff"] <= metrics["score_bound"] for record in per_sample)
        rates["score_within_bound_rate"] = within / len(per_sample)
    metrics["intervals"] = {key: interval_of(key, rate, samples).as_dict() for key, rate in rates.items()}
    gated = next((key for key in GATED_FIGURES if key in rates), None)
    threshold = metrics.get("threshold")
    if gated is not None and isinstance(threshold, float | int):
        interval = metrics["intervals"][gated]
        metrics["evidence"] = {"figure": gated, "threshold": threshold, "samples_needed": samples_needed(threshold),
                               "enough_samples": not too_few(samples, threshold),
                               "lower_bound_clears": interval["low"] >= threshold}
    return metrics


def interval_text(metrics: dict, figure: str) -> str:
    """" (95% CI 97.1-100%)" for a figure with an interval in these metrics, else ""."""
    interval = (metrics.get("intervals") or {}).get(figure)
    if interval is None:
        return ""
    return f" (95% CI {interval['low']:.1%}-{interval['high']:.1%})"


def shortfall(metrics: dict) -> str | None:
    """The verdict rule's refusal for one gate's metrics, or None when its samples are enough (or it has no rate
    threshold below 1)."""
    evidence = metrics.get("evidence")
    if not evidence or evidence["enough_samples"]:
        return None
    return too_few_text(metrics["samples"], evidence["threshold"])


SHORT_NAMES = {"top1_agreement": "top-1", "label_set_agreement": "label sets", "cosine_pass_rate": "cosine ok",
               "score_within_bound_rate": "scores in bound"}


def intervals_cell(fidelity: dict | None) -> str:
    """A report row's intervals in one cell: "top-1 99.1-100%; served top-1 92.6-100%, scores in bound 92.6-100%"."""
    if not fidelity:
        return "-"
    parts = []
    for prefix, metrics in (("", fidelity), ("served ", fidelity.get("served"))):
        if not isinstance(metrics, dict) or not metrics.get("intervals"):
            continue
        parts.append(prefix + ", ".join(f"{SHORT_NAMES.get(key, key)} {value['low']:.1%}-{value['high']:.1%}"
                                        for key, value in metrics["intervals"].items()))
    return "; ".join(parts) or "-"
