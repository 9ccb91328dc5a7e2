"""Which task convert infers for an image model's outputs (convert/sidecar_inference.py), and the values the function
answers beside a classifier's labels or for an image regression model (function/tasks/values.py), without TensorFlow:
facts and specs written by hand."""
from __future__ import annotations

import numpy as np
import pytest

from convert.sidecar_inference import ModelFacts, infer
from function.model.manifest import TensorSpec
from function.tasks.values import is_values, value_rows

IMAGE = {"pixels": ((None, 8, 8, 1), "float32")}


def facts(heads: dict, inputs: dict = IMAGE, text: bool = False) -> ModelFacts:
    return ModelFacts(inputs=inputs, outputs=len(heads), units=None, activation=None, last_layer="Dense", text=text,
                      rescales="rescaling", heads=heads)


def inferred(tmp_path, model_facts: ModelFacts):
    np.savez(tmp_path / "validation.npz", expected=np.zeros((2, 1), np.float32))
    return infer(model_facts, tmp_path, "digits_ink")


def test_one_softmax_head_among_linear_ones_is_the_class_output(tmp_path):
    inference = inferred(tmp_path, facts({"digit": ("softmax", 10), "ink": ("linear", 1), "size": ("linear", 2)}))
    data = inference.data
    assert (data["task"], data["class_output"], data["output"], len(data["labels"])) == (
        "image_classification", "digit", "probabilities", 10)
    assert "multi_label" not in data and not inference.problems
    assert inference.reasons["class_output"] == "the one output of 3 that ends in softmax"


def test_one_sigmoid_head_of_several_units_is_multi_label(tmp_path):
    data = inferred(tmp_path, facts({"tags": ("sigmoid", 3), "ink": ("linear", 1)})).data
    assert (data["class_output"], data["multi_label"], len(data["labels"])) == ("tags", True, 3)


def test_linear_heads_only_are_image_regression(tmp_path):
    inference = inferred(tmp_path, facts({"ink": ("linear", 1), "digit": ("linear", 1)}))
    assert inference.data["task"] == "image_regression" and "labels" not in inference.data
    assert inference.data["inputs"] == {"image": "pixels"} and not inference.problems


def test_one_linear_output_on_an_image_is_image_regression(tmp_path):
    single = ModelFacts(inputs=IMAGE, outputs=1, units=1, activation="linear", last_layer="Dense", text=False,
                        rescales="rescaling")
    inference = inferred(tmp_path, single)
    assert inference.data["task"] == "image_regression"
    assert "\"output\": \"logits\"" in inference.reasons["task"]  # a logits classifier is told what to write


@pytest.mark.parametrize("heads", [{"a": ("softmax", 3), "b": ("sigmoid", 2)}, {"a": (None, 3), "b": ("linear", 1)}])
def test_no_single_class_head_is_a_problem_naming_class_output(heads, tmp_path):
    inference = inferred(tmp_path, facts(heads))
    assert inference.data["task"] == "tensor"
    (problem,) = inference.problems
    assert "no one class head (softmax or sigmoid) among them" in problem and "\"class_output\"" in problem


def test_several_outputs_on_feature_inputs_stay_tensor(tmp_path):
    inference = inferred(tmp_path, facts({"a": ("softmax", 3), "b": ("linear", 1)},
                                         inputs={"features": ((None, 4), "float32")}))
    assert inference.data["task"] == "tensor" and not inference.problems


SPECS = (TensorSpec("ink", (1, 1), "float32", None, None, "ink"),
         TensorSpec("box", (1, 2, 2), "float32", None, None, "box"))


def test_values_are_each_instances_outputs_flattened_by_name():
    outputs = {"ink": np.array([[0.5], [1.5]], np.float32), "box": np.arange(8, dtype=np.float32).reshape(2, 2, 2)}
    rows = value_rows(outputs, SPECS)
    assert rows == [{"ink": [0.5], "box": [0.0, 1.0, 2.0, 3.0]}, {"ink": [1.5], "box": [4.0, 5.0, 6.0, 7.0]}]
    assert all(is_values(row, SPECS) for row in rows)


@pytest.mark.parametrize("stored", [
    {"ink": [0.5]},  # an output missing
    {"ink": [0.5], "box": [0.0, 1.0, 2.0]},  # a value missing
    {"ink": [0.5], "box": [0.0, 1.0, 2.0, float("nan")]},  # not finite
    {"ink": [True], "box": [0.0, 1.0, 2.0, 3.0]},  # not a number
    {"ink": 0.5, "box": [0.0, 1.0, 2.0, 3.0]},  # not a list
    {"ink": [0.5], "box": [0.0, 1.0, 2.0, 3.0], "extra": [1.0]},  # an output the model does not have
])
def test_a_stored_answer_unlike_the_models_values_is_not_one(stored):
    assert not is_values(stored, SPECS)
