"""The mode served without --quantization: the fastest that passes its gate with margin, float32 when none has it."""
from __future__ import annotations

from convert.agreement_interval import annotate
from convert.mode_choice import choice_text, choose, margin_problems
from convert.report import ReportRow


def classifier(samples: int, agreeing: int, threshold: float, score_diff: float = 0.0, bound: float = 0.1) -> dict:
    records = [{"index": i, "agrees": i < agreeing, "max_score_diff": score_diff} for i in range(samples)]
    served = annotate({"samples": samples, "top1_agreement": agreeing / samples, "threshold": threshold,
                       "max_score_diff": score_diff, "score_bound": bound}, records)
    return {**annotate({"samples": samples, "top1_agreement": agreeing / samples, "threshold": threshold}),
            "served": served}


def row(mode: str, p50: float, fidelity: dict, passed: bool = True) -> ReportRow:
    return ReportRow(mode=mode, passed=passed, fidelity=fidelity, p50_ms=p50, error=None if passed else "agrees less")


def test_the_fastest_mode_with_margin_is_chosen_and_the_others_say_why_not():
    choice = choose([row("float32", 10.0, classifier(500, 500, 0.99)),
                     row("float16", 9.9, classifier(500, 500, 0.99)),
                     row("dynamic", 6.0, classifier(500, 496, 0.98)),  # 99.2%: passes, CI low 97.96% < 98%
                     row("int8", 4.0, classifier(500, 480, 0.95), passed=False),
                     row("mixed", 7.0, classifier(500, 500, 0.98))])
    assert choice.mode == "mixed"
    assert choice.others["dynamic"].startswith("passes, without margin: top1 agreement 95% CI lower bound 97.96%")
    assert choice.others["int8"] == "gate FAIL: agrees less"
    assert choice.others["float16"] == "qualifies, p50 9.9 ms"
    assert list(choice.others) == ["float32", "float16", "dynamic", "int8"]  # least quantized first
    assert "**mixed**" in choice_text(choice.as_dict())


def test_modes_as_fast_as_float32_lose_to_it():
    choice = choose([row("float32", 10.0, classifier(500, 500, 0.99)), row("dynamic", 9.5, classifier(500, 500, 0.98))])
    assert choice.mode == "float32" and "as fast" in choice.others["dynamic"]


def test_a_score_error_over_half_its_bound_has_no_margin():
    assert margin_problems(classifier(500, 500, 0.98, score_diff=0.06)) == [
        "served: scores up to 0.0600 off, over half the 0.1 bound"]
    assert margin_problems(classifier(500, 500, 0.98, score_diff=0.05)) == []


def test_tensor_and_cosine_errors_need_half_their_bounds():
    tensor = {"samples": 50, "outputs": {"price": {"max_rel_error": 0.06}}, "tolerance": {"max_rel_error": 0.1}}
    assert margin_problems(tensor) == ["output 'price' off by 0.06 of its range, over half the 0.1 tolerance"]
    cosine = {"samples": 50, "min_cosine": 0.994, "mean_cosine": 0.9996,
              "thresholds": {"min_cosine": 0.99, "mean_cosine": 0.999}}
    assert margin_problems(cosine) == ["min cosine 0.994000, less than halfway from 0.99 to 1"]


def test_too_few_samples_leave_no_quantized_mode_with_margin_and_float32_is_served():
    choice = choose([row("float32", 10.0, classifier(48, 48, 0.99)), row("dynamic", 5.0, classifier(48, 48, 0.98))])
    assert choice.mode == "float32" and choice.reason.startswith("the fastest qualifying mode (the unquantized")
    assert choice.others["dynamic"] == ("passes, without margin: not enough samples: 48 samples cannot show >= 98.0% "
                                        "agreement at 95% confidence: give at least 189; served: not enough samples: "
                                        "48 samples cannot show >= 98.0% agreement at 95% confidence: give at least "
                                        "189")


def test_a_mode_that_qualifies_only_by_its_lower_threshold_must_still_beat_float32():
    choice = choose([row("float32", 1.0, classifier(100, 100, 0.99)), row("int8", 2.4, classifier(100, 100, 0.95))])
    assert choice.mode == "float32" and choice.others == {"int8": "qualifies, p50 2.4 ms"}


def test_no_passing_mode_is_no_choice():
    assert choose([row("float32", 1.0, classifier(500, 400, 0.99), passed=False)]).mode is None
