"""report.samples.npz: the scores a classifier's answers carry, a round trip without pickle, and which points the
report page's scatter draws."""
from __future__ import annotations

import numpy as np

from convert.report_samples import ReportSamples, read, scores, write
from convert.report_svg import MAX_POINTS, scatter, scatter_points


def test_logits_become_the_scores_the_answers_carry():
    logits = np.array([[2.0, 0.0, -1.0]], np.float32)
    softmax = np.exp(logits) / np.exp(logits).sum()
    assert np.allclose(scores(logits, "logits", multi_label=False), softmax)
    assert np.allclose(scores(logits, "logits", multi_label=True), 1 / (1 + np.exp(-logits)))
    assert np.allclose(scores(logits, "probabilities", multi_label=False), logits)


def test_one_sigmoid_unit_becomes_the_two_labels_scores():
    assert np.allclose(scores(np.array([[0.8], [0.1]]), "probabilities", multi_label=False), [[0.2, 0.8], [0.9, 0.1]])
    assert np.allclose(scores(np.array([[0.0]]), "logits", multi_label=False), [[0.5, 0.5]])


def test_samples_round_trip(tmp_path):
    thumbnails = [np.full((8, 6, 1), 7, np.uint8), np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)]
    samples = ReportSamples("raw", ["int8", "float32"], np.eye(2, 3, dtype=np.float32),
                            {"int8": np.ones((2, 3), np.float32), "float32": np.zeros((2, 3), np.float32)}, 5,
                            labels=["a", "b", "c"], texts=None, thumbnails=thumbnails)
    write(tmp_path, samples)
    back = read(tmp_path)
    assert (back.comparison, back.modes, back.total, back.labels) == ("raw", ["int8", "float32"], 5, ["a", "b", "c"])
    assert np.array_equal(back.expected, samples.expected) and np.array_equal(back.served["int8"], np.ones((2, 3)))
    assert all(np.array_equal(a, b) for a, b in zip(back.thumbnails, thumbnails)) and back.texts is None
    assert read(tmp_path / "elsewhere") is None


def test_a_classifiers_scatter_marks_the_samples_whose_top_label_moved():
    expected = np.array([[0.7, 0.2, 0.1], [0.4, 0.35, 0.25]], np.float32)
    served = np.array([[0.69, 0.21, 0.1], [0.3, 0.45, 0.25]], np.float32)
    x, y, kind = scatter_points(expected, served, labelled=True)
    assert list(kind) == [1, 0, 0, 2, 0, 0]  # each sample's top score first; the second sample's top-1 moved
    assert x[3] == np.float32(0.4) and y[3] == np.float32(0.3)
    svg = scatter(expected, served, True, "expected", "served", "int8")
    assert svg.startswith('<svg class="scatter"') and svg.count("<circle") == 6


def test_a_large_scatter_is_thinned_but_keeps_every_marked_point():
    rng = np.random.default_rng(0)
    expected = rng.random((3000, 10)).astype(np.float32)
    served = expected[:, ::-1].copy()  # every top label moves
    x, _, kind = scatter_points(expected, served, labelled=True)
    assert (kind == 2).sum() == 3000 and MAX_POINTS <= len(x) < 3000 * 5
    x, _, _ = scatter_points(expected, expected, labelled=False)
    assert len(x) == MAX_POINTS
