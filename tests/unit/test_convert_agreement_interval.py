"""The 95% Wilson interval of an agreement figure and the rule that refuses a verdict too few samples rest on."""
from __future__ import annotations

import pytest

from convert.agreement_interval import (annotate, interval_text, samples_needed, shortfall, too_few, too_few_text,
                                        wilson_interval)


def test_the_interval_matches_the_wilson_formula_for_a_textbook_case():
    low, high = wilson_interval(46, 48)  # 95.8%
    assert low == pytest.approx(0.8602, abs=1e-4) and high == pytest.approx(0.9885, abs=1e-4)


def test_all_agreeing_reaches_1_and_none_agreeing_reaches_0_with_a_real_width():
    low, high = wilson_interval(48, 48)
    assert high == 1.0 and low == pytest.approx(48 / (48 + 1.959964 ** 2))
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and 0.25 < high < 0.3


def test_tiny_and_empty_sample_sets_say_almost_nothing():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    low, high = wilson_interval(1, 1)
    assert high == 1.0 and low < 0.25
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


@pytest.mark.parametrize(("threshold", "needed"), [(0.95, 73), (0.98, 189), (0.99, 381)])
def test_samples_needed_is_the_fewest_whose_all_agreeing_interval_clears_the_threshold(threshold, needed):
    assert samples_needed(threshold) == needed
    assert wilson_interval(needed, needed)[0] >= threshold > wilson_interval(needed - 1, needed - 1)[0]
    assert too_few(needed - 1, threshold) and not too_few(needed, threshold)


def test_a_threshold_of_1_is_every_sample_and_is_not_held_to_the_rule():
    assert samples_needed(1.0) is None and not too_few(3, 1.0)


def test_48_samples_cannot_show_99_percent_and_the_message_says_how_many_can():
    assert too_few_text(48, 0.99) == ("48 samples cannot show >= 99.0% agreement at 95% confidence: give at least "
                                      "381")


def test_annotate_adds_each_figure_interval_and_the_verdict_evidence():
    metrics = annotate({"samples": 48, "top1_agreement": 1.0, "threshold": 0.99})
    assert metrics["intervals"]["top1_agreement"]["agreeing"] == 48
    assert metrics["evidence"] == {"figure": "top1_agreement", "threshold": 0.99, "samples_needed": 381,
                                   "enough_samples": False, "lower_bound_clears": False}
    assert shortfall(metrics).startswith("48 samples cannot show >= 99.0% agreement")
    assert interval_text(metrics, "top1_agreement") == " (95% CI 92.6%-100.0%)"
    enough = annotate({"samples": 400, "top1_agreement": 0.995, "threshold": 0.98})
    assert shortfall(enough) is None and enough["evidence"]["lower_bound_clears"]


def test_the_served_gate_records_give_the_score_bound_and_cosine_counts():
    records = [{"index": i, "agrees": True, "max_score_diff": 0.2 if i == 0 else 0.01} for i in range(10)]
    metrics = annotate({"samples": 10, "top1_agreement": 1.0, "threshold": 0.98, "score_bound": 0.1}, records)
    assert metrics["intervals"]["score_within_bound_rate"]["agreeing"] == 9
    cosines = [{"index": i, "agrees": i > 0, "cosine": 0.5 if i == 0 else 0.999} for i in range(4)]
    metrics = annotate({"samples": 4, "min_cosine": 0.5, "mean_cosine": 0.87}, cosines)
    assert metrics["intervals"]["cosine_pass_rate"]["agreeing"] == 3 and "evidence" not in metrics
