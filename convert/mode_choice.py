"""The mode served when `convert` is given no --quantization: every mode converted, gated and timed, and the fastest
that qualifies chosen (docs/conversion.md, "How the default mode is chosen"): float32 by passing its gate, a
quantized mode by passing it with margin.

With margin means, on the gate's own figures (and the served gate's, with raw samples):
- every agreement figure a threshold applies to (top-1, label sets) has its 95% interval's lower bound at or above
  the threshold, so the samples show the threshold and not only touch it (convert/agreement_interval.py);
- every error a bound applies to is at most half that bound: the worst score difference on the raw samples, each
  output's relative error (tensor models), and the cosine's distance from 1 at worst and on average (embeddings).
Fastest is the lowest warm p50 invoke; modes within EQUALLY_FAST of it count as equally fast, and among those the
one that quantizes least (FIDELITY_ORDER) is served: a mode no faster than float32 buys nothing with its error.
float32, the unquantized conversion, qualifies by passing its gate: a quantized mode is worth serving only when it
is faster than float32, and one that only qualifies because its own threshold is lower (int8's 95%) must still beat
float32's speed. (A float32 verdict on too few samples is still reported and warned about, as for any mode.)
"""
from __future__ import annotations

from dataclasses import dataclass, field

from convert.agreement_interval import GATED_FIGURES, shortfall

EQUALLY_FAST = 0.10  # a p50 within 10% of the fastest: the difference is within a shared machine's noise
BASELINE = "float32"  # qualifies by passing its gate: the yardstick every quantized mode must beat on speed
FIDELITY_ORDER = ("float32", "float16", "mixed", "dynamic", "int8")  # least quantized first
MARGIN = 0.5  # an error may use at most half its bound


@dataclass
class Choice:
    mode: str | None  # None: no mode passed its gate
    reason: str
    others: dict[str, str] = field(default_factory=dict)  # mode -> why it was not chosen

    def as_dict(self) -> dict:
        return {"chosen": self.mode, "reason": self.reason, "others": self.others,
                "rule": f"the fastest (warm p50 invoke) of float32 (if it passes its gate) and the modes that pass "
                         f"their gate with margin; within {EQUALLY_FAST:.0%} of each other, the less quantized"}


def margin_problems(metrics: dict, prefix: str = "") -> list[str]:
    """Why one gate's metrics (and its "served" block) lack margin; [] when they have it."""
    problems: list[str] = []
    evidence = metrics.get("evidence")
    if evidence and evidence["figure"] in GATED_FIGURES:
        too_few = shortfall(metrics)
        if too_few is not None:
            problems.append(f"{prefix}not enough samples: {too_few}")
        elif not evidence["lower_bound_clears"]:
            low = metrics["intervals"][evidence["figure"]]["low"]
            problems.append(f"{prefix}{evidence['figure'].replace('_', ' ')} 95% CI lower bound {low:.2%} is below "
                            f"the {evidence['threshold']:.1%} threshold")
    bound = metrics.get("score_bound")
    if bound is not None and metrics.get("max_score_diff") is not None and metrics["max_score_diff"] > bound * MARGIN:
        problems.append(f"{prefix}scores up to {metrics['max_score_diff']:.4f} off, over half the {bound:g} bound")
    tolerance = (metrics.get("tolerance") or {}).get("max_rel_error")
    for name, errors in (metrics.get("outputs") or {}).items():
        if tolerance is not None and errors.get("max_rel_error", 0) > tolerance * MARGIN:
            problems.append(f"{prefix}output '{name}' off by {errors['max_rel_error']:.2g} of its range, over half "
                            f"the {tolerance:g} tolerance")
    thresholds = metrics.get("thresholds") or {}
    for key in ("min_cosine", "mean_cosine"):
        if key in thresholds and metrics.get(key) is not None and (
                1.0 - metrics[key] > (1.0 - thresholds[key]) * MARGIN):
            problems.append(f"{prefix}{key.replace('_', ' ')} {metrics[key]:.6f}, less than halfway from "
                            f"{thresholds[key]} to 1")
    served = metrics.get("served")
    if isinstance(served, dict) and served.get("checked", True):
        problems += margin_problems(served, "served: ")
    return problems


def choose(rows: list) -> Choice:
    """`rows`: the report's rows (mode, passed, error, fidelity, p50_ms), one per mode tried."""
    passed = [row for row in rows if row.passed and row.p50_ms is not None]
    others = {row.mode: f"gate FAIL: {row.error}" for row in rows if not row.passed}
    lacking = {row.mode: margin_problems(row.fidelity or {}) for row in passed if row.mode != BASELINE}
    qualified = [row for row in passed if not lacking.get(row.mode)]
    for row in passed:
        if lacking.get(row.mode):
            others[row.mode] = "passes, without margin: " + "; ".join(lacking[row.mode])
    if not qualified:
        if not passed:
            return Choice(None, "no mode passes its gate", _ordered(others))
        chosen = min(passed, key=lambda row: row.p50_ms)
        others.pop(chosen.mode)
        return Choice(chosen.mode, f"no mode passes its gate with margin and {BASELINE} does not pass: the fastest "
                      f"mode that passes is served", _ordered(others))
    fastest = min(row.p50_ms for row in qualified)
    tied = [row for row in qualified if row.p50_ms <= fastest * (1 + EQUALLY_FAST)]
    chosen = min(tied, key=lambda row: FIDELITY_ORDER.index(row.mode))
    for row in qualified:
        if row is not chosen:
            as_fast = " (as fast: the less quantized mode is served)" if any(row is t for t in tied) else ""
            others[row.mode] = f"qualifies, p50 {row.p50_ms:.3g} ms{as_fast}"
    kind = "the unquantized conversion" if chosen.mode == BASELINE else "passes its gate with margin"
    reason = f"the fastest qualifying mode ({kind}), p50 {chosen.p50_ms:.3g} ms"
    if len(tied) > 1:
        reason += f"; {len(tied) - 1} other qualifying mode(s) within {EQUALLY_FAST:.0%} of it quantize more"
    return Choice(chosen.mode, reason, _ordered(others))


def _ordered(others: dict[str, str]) -> dict[str, str]:
    return {mode: others[mode] for mode in FIDELITY_ORDER if mode in others}


def choice_text(choice: dict) -> str:
    """report.json's "choice" as lines for report.md and the terminal."""
    lines = [f"Served mode chosen by measurement: **{choice['chosen']}**, {choice['reason']}."]
    lines += [f"- {mode}: {why}" for mode, why in choice.get("others", {}).items()]
    return "\n".join(lines) + "\n"
