"""The side-by-side table of `python -m bench.compare_revisions`: its cells, its ratios and their spread."""
from __future__ import annotations

import pytest

from bench.revision_table import Metric, paired_ratios, render


def test_ratio_is_the_median_of_the_paired_rounds_with_their_spread_and_the_medians_ratio():
    metric = Metric("cold start", base=[100.0, 200.0, 110.0, 90.0], head=[110.0, 180.0, 121.0, 108.0], digits=0)
    assert paired_ratios(metric.base, metric.head) == pytest.approx([1.1, 0.9, 1.1, 1.2])
    # per-round ratios' median 1.1, nearest-rank quartiles 0.9 and 1.1; medians 105 and 115.5
    assert metric.ratio() == "**1.10x** (IQR 0.90-1.10); medians 1.10x, +10 ms"
    # the machine was slow in rounds 3-5 and HEAD alone caught round 3: the medians' ratio jumps, the paired one not
    bursty = Metric("warm", base=[4.0, 4.0, 4.0, 8.0, 8.0], head=[4.4, 4.4, 8.8, 8.8, 8.8])
    assert bursty.ratio() == "**1.10x** (IQR 1.10-1.10); medians 2.20x, +4.8 ms"
    assert metric.cell(metric.base) == "105 ms (min-max 90-200, n=4)"


def test_a_count_prints_as_an_integer_and_a_constant_has_no_spread():
    metric = Metric("modules at init", base=[41.0, 41.0], head=[29.0, 29.0], unit="")
    assert metric.cell(metric.base) == "41" and metric.cell(metric.head) == "29"
    assert metric.ratio() == "**0.71x** (-12)"
    lines = Metric("lines", base=[6711], head=[5980], unit="")
    assert lines.cell(lines.base) == "6,711" and lines.ratio() == "**0.89x** (-731)"


def test_an_overhead_is_compared_by_its_per_round_difference_not_a_ratio():
    overhead = Metric("warm overhead", base=[0.40, -0.10, 0.50, 0.30, 0.20], head=[0.45, 0.00, 0.40, 0.60, 0.20],
                      digits=2, difference=True)
    # per round +0.05, +0.10, -0.10, +0.30, 0: median +0.05, nearest-rank quartiles 0 and +0.10
    assert overhead.ratio() == "**+0.05 ms** (IQR +0.00 to +0.10) per round"
    with pytest.raises(ValueError, match="unpaired"):
        Metric("warm overhead", [0.1], [0.1, 0.2], difference=True).ratio()


def test_unpaired_rounds_are_refused_and_a_single_value_pairs_with_every_round():
    with pytest.raises(ValueError, match="unpaired"):
        paired_ratios([1.0, 2.0], [1.0, 2.0, 3.0])
    assert paired_ratios([2.0], [1.0, 4.0]) == [0.5, 2.0]


def test_render_is_one_markdown_row_per_metric_under_both_labels():
    document = render([Metric("warm p50", [2.0, 2.0], [3.0, 3.0], digits=2), Metric("missing", [], [1.0])],
                      "9e5352c", "working tree (abc1234)")
    assert document.splitlines() == [
        "| what | BASE 9e5352c | HEAD working tree (abc1234) | HEAD/BASE |",
        "|---|---|---|---|",
        "| warm p50 | 2.00 ms | 3.00 ms | **1.50x** (+1.00 ms) |",
        "| missing | - | 1.0 ms | - |",
    ]
