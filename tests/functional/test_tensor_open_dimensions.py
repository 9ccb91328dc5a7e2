"""Inputs open in the same dimension (minilm's input_ids and attention_mask, [batch, ?] each) sent with different
sizes there: refused with 400 invalid_shape before the interpreter on both tensor protocols. The interpreter could
not reshape them ("XNNPack delegate failed to reshape runtimeNode"): a 500 for the client's mistake, found by the
fuzz of every door."""
from __future__ import annotations

import pytest

from tests.support.function_fixtures import call, demo_models, registry, service  # noqa: F401

IDS, MASK = [101, 2307, 102], [1, 1]


@pytest.mark.parametrize("path, body", [
    ("/v2/models/minilm/infer", {"inputs": [
        {"name": "input_ids", "shape": [1, 3], "datatype": "INT32", "data": IDS},
        {"name": "attention_mask", "shape": [1, 2], "datatype": "INT32", "data": MASK}]}),
    ("/v1/models/minilm:predict", {"inputs": {"input_ids": [IDS], "attention_mask": [MASK]}}),
    ("/v1/models/minilm:predict", {"instances": [{"input_ids": IDS, "attention_mask": MASK}]}),
], ids=["v2", "tfserving-columns", "tfserving-rows"])
def test_inputs_open_in_one_dimension_with_different_sizes_are_a_400(service, path, body):  # noqa: F811
    status, answer = call(service, "POST", path, body)
    assert status == 400, answer
    message = answer["error"] if isinstance(answer["error"], str) else answer["error"]["message"]
    assert "both open in dimension 1" in message and "3 and 2" in message
    status, _ = call(service, "POST", "/v2/models/minilm/infer", {"inputs": [
        {"name": "input_ids", "shape": [1, 3], "datatype": "INT32", "data": IDS},
        {"name": "attention_mask", "shape": [1, 3], "datatype": "INT32", "data": [1, 1, 1]}]})
    assert status == 200  # the same sizes are answered
