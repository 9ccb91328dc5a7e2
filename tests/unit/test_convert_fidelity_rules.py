"""How each gate reads outputs: top-1 for classifiers, cosine for embeddings, error per output for tensors."""
from __future__ import annotations

import numpy as np
import pytest

from convert.fidelity.classification import THRESHOLDS, Top1Gate, agreeing, guess_output_kind, top1
from convert.fidelity.embedding import MEAN_COSINE, MIN_COSINE, CosineGate, cosine_similarities
from convert.fidelity.tensor import TOLERANCES, TensorErrorGate, output_errors
from convert.quantize import MODES
from convert.samples import Samples


def samples(count: int, labels=None) -> Samples:
    return Samples(inputs={"x": np.zeros((count, 1), np.float32)}, labels=labels, source="test.npz")


# ---- classification ----------------------------------------------------------------------------------------------

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
    assert tuple(THRESHOLDS) == MODES
    assert THRESHOLDS["float32"] >= THRESHOLDS["float16"] >= THRESHOLDS["dynamic"] >= THRESHOLDS["int8"] >= 0.9
    assert THRESHOLDS["mixed"] == THRESHOLDS["dynamic"]  # the same kernels on the layers it quantizes


def test_a_class_the_savedmodel_ties_with_its_top1_counts_as_agreement():
    reference = np.array([[0.4000, 0.3995, 0.2005],   # a near-tie: picking class 1 is not a regression
                          [0.5000, 0.3000, 0.2000]])  # a clear winner: picking class 1 is a disagreement
    expected = top1(reference, "probabilities")
    assert agreeing(reference, np.array([1, 1]), expected, "probabilities").tolist() == [True, False]


def test_ties_are_judged_on_probabilities_even_for_logit_outputs():
    logits = np.log(np.array([[0.4000, 0.3995, 0.2005], [0.5, 0.3, 0.2]]))
    assert agreeing(logits, np.array([1, 1]), np.array([0, 0]), "logits").tolist() == [True, False]


def test_a_binary_output_has_no_ties_to_forgive():
    reference = np.array([[0.5004], [0.9]])
    assert agreeing(reference, np.array([0, 1]), np.array([1, 1]), "probabilities").tolist() == [False, True]


def test_top1_gate_verdict_metrics_and_advice():
    reference = {"s": np.eye(4, dtype=np.float32)}
    flipped = {"s": np.eye(4, dtype=np.float32)[[0, 1, 2, 0]]}
    result = Top1Gate("s", "probabilities").judge(reference, flipped, samples(4, np.array([0, 1, 2, 3])), "int8")
    assert not result.passed and result.metrics["top1_agreement"] == 0.75 and result.metrics["threshold"] == 0.95
    assert result.metrics["accuracy"] == 0.75 and result.metrics["reference_accuracy"] == 1.0
    assert result.error("int8").message == ("the converted int8 model agrees with the SavedModel on 75.0% of top-1 "
                                            "predictions, below the 95% threshold: give int8 more representative "
                                            "inputs with --representative FILE.npz, or use dynamic or float16")
    assert Top1Gate("s", "probabilities", threshold=0.7).judge(reference, flipped, samples(4), "int8").passed


# ---- embeddings --------------------------------------------------------------------------------------------------

def test_cosine_ignores_length_and_handles_zero_vectors():
    reference = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
    converted = np.array([[3.0, 0.0], [2.0, 0.0], [0.0, 0.0], [1.0, 0.0], [-1.0, -1.0]])
    assert cosine_similarities(reference, converted).tolist() == pytest.approx([1.0, 0.0, 1.0, 0.0, -1.0])


def test_cosine_gate_needs_both_the_worst_and_the_mean_sample():
    rng = np.random.default_rng(0)
    reference = rng.normal(size=(100, 16)).astype(np.float32)
    gate = CosineGate("e")
    close = gate.judge({"e": reference}, {"e": reference * 1.5 + 1e-4}, samples(100), "float16")
    assert close.passed and close.metrics["min_cosine"] > 0.9999
    assert close.metrics["thresholds"] == {"min_cosine": MIN_COSINE, "mean_cosine": MEAN_COSINE}
    one_bad = reference.copy()
    one_bad[7] = rng.normal(size=16)  # one sample pointing elsewhere: the mean hides it, the minimum does not
    result = gate.judge({"e": reference}, {"e": one_bad}, samples(100), "dynamic")
    assert not result.passed and result.metrics["mean_cosine"] > 0.98
    message = result.error("dynamic").message
    assert message.startswith("the converted dynamic model has a cosine similarity to the SavedModel below 0.99 on "
                              "sample 7 (") and "below 0.999 on average (0.9" in message
    assert message.endswith("use mixed (int8 weights only on the layers the gate allows), float16 or float32")
    float16 = gate.judge({"e": reference}, {"e": one_bad}, samples(100), "float16").error("float16").message
    assert float16.endswith("use float32") and "float16 or" not in float16  # never the mode that just failed
    slightly_off = gate.judge({"e": reference}, {"e": reference + rng.normal(size=reference.shape) * 0.05},
                              samples(100), "dynamic")  # every sample a little off: the mean fails, not the minimum
    assert not slightly_off.passed and slightly_off.metrics["min_cosine"] >= MIN_COSINE
    assert slightly_off.problem.startswith("has a cosine similarity to the SavedModel below 0.999 on average (0.99")


def test_nan_fails_every_gate_before_any_measure():
    reference = {"o": np.ones((3, 2), np.float32)}
    broken = {"o": np.array([[1, 1], [np.nan, 1], [1, 1]], np.float32)}
    for gate in (Top1Gate("o", "logits"), CosineGate("o"), TensorErrorGate(["o"])):
        result = gate.judge(reference, broken, samples(3), "float16")
        assert not result.passed and result.problem == "outputs NaN/Inf on 1 of 3 validation inputs"


# ---- tensors -----------------------------------------------------------------------------------------------------

def test_relative_error_is_relative_to_the_outputs_range_not_to_each_value():
    reference = np.array([[-100.0], [0.001], [50.0]])
    errors = output_errors(reference, reference + np.array([[0.0], [0.5], [0.0]]))
    assert errors == {"max_abs_error": 0.5, "max_rel_error": 0.005, "reference_max_abs": 100.0}
    assert output_errors(np.zeros((2, 1)), np.zeros((2, 1)))["max_rel_error"] == 0.0
    assert output_errors(np.zeros((2, 1)), np.ones((2, 1)))["max_rel_error"] == float("inf")


def test_tolerances_loosen_with_quantization():
    assert tuple(TOLERANCES) == MODES
    assert TOLERANCES["float32"] <= TOLERANCES["float16"] <= TOLERANCES["dynamic"] <= TOLERANCES["int8"] <= 0.1


def test_tensor_gate_checks_every_output_and_int8_says_why_it_fails():
    reference = {"price": np.array([[100.0], [300.0]]), "flag": np.array([[0.2], [0.9]])}
    converted = {"price": np.array([[100.0], [345.0]]), "flag": np.array([[0.2], [0.9]])}
    gate = TensorErrorGate(["price", "flag"])
    result = gate.judge(reference, converted, samples(2), "int8")
    assert not result.passed and result.metrics["outputs"]["price"]["max_rel_error"] == 0.15
    assert result.metrics["outputs"]["flag"]["max_abs_error"] == 0.0
    message = result.error("int8").message
    assert message.startswith("the converted int8 model differs from the SavedModel on output 'price' by up to 15.00% "
                              "of its range (max abs error 45), above the 10.00% tolerance: full-integer int8 rounds")
    assert "its error grows with that range" in message
    assert [column.header for column in gate.columns] == ["price max abs error", "price max rel error",
                                                          "flag max abs error", "flag max rel error"]
    assert [column.cell(result.metrics) for column in gate.columns] == ["45", "0.15", "0", "0"]
