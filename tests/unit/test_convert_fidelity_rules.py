"""How the gate reads outputs: top-1 for multi-class and binary heads, and the probabilities/logits guess."""
from __future__ import annotations

import numpy as np

from convert.fidelity import THRESHOLDS, guess_output_kind, top1


def test_top1_of_a_multiclass_head_is_the_argmax():
    assert top1(np.array([[0.1, 0.7, 0.2], [0.5, 0.2, 0.3]]), "probabilities").tolist() == [1, 0]


def test_single_unit_heads_are_binary_at_the_right_cut():
    assert top1(np.array([[0.4], [0.6]]), "probabilities").tolist() == [0, 1]
    assert top1(np.array([[-0.1], [0.3]]), "logits").tolist() == [0, 1]


def test_output_kind_guess():
    assert guess_output_kind(np.array([[0.2, 0.8], [0.5, 0.5]])) == "probabilities"
    assert guess_output_kind(np.array([[0.9], [0.1]])) == "probabilities"
    assert guess_output_kind(np.array([[2.0, -1.0]])) == "logits"
    assert guess_output_kind(np.array([[0.2, 0.2]])) == "logits"


def test_thresholds_cover_every_mode_and_loosen_with_quantization():
    assert list(THRESHOLDS) == ["float32", "float16", "dynamic", "int8"]
    assert THRESHOLDS["float32"] >= THRESHOLDS["float16"] >= THRESHOLDS["dynamic"] >= THRESHOLDS["int8"] >= 0.9


def test_a_class_the_savedmodel_ties_with_its_top1_counts_as_agreement():
    from convert.fidelity import agreeing

    reference = np.array([[0.4000, 0.3995, 0.2005],   # a near-tie: picking class 1 is not a regression
                          [0.5000, 0.3000, 0.2000]])  # a clear winner: picking class 1 is a disagreement
    predicted = np.array([1, 1])
    expected = top1(reference, "probabilities")
    assert agreeing(reference, predicted, expected, "probabilities").tolist() == [True, False]


def test_ties_are_judged_on_probabilities_even_for_logit_outputs():
    from convert.fidelity import agreeing

    logits = np.log(np.array([[0.4000, 0.3995, 0.2005], [0.5, 0.3, 0.2]]))
    assert agreeing(logits, np.array([1, 1]), np.array([0, 0]), "logits").tolist() == [True, False]


def test_a_binary_output_has_no_ties_to_forgive():
    from convert.fidelity import agreeing

    reference = np.array([[0.5004], [0.9]])
    assert agreeing(reference, np.array([0, 1]), np.array([1, 1]), "probabilities").tolist() == [False, True]
