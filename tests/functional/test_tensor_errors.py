"""Every malformed tensor request gets a clear 4xx in its protocol's own error shape, {"error": "<sentence>"}, that
names what is wrong (the input, the shape it takes, what arrived), and the service keeps serving after it."""
from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from function.entry import handle_event
from kit.events import http_api_event
from tests.support.function_fixtures import call, demo_models  # noqa: F401
from tests.support.tensor_fixtures import tensor_model_dir, tensor_registry, tensor_service  # noqa: F401

SERUM = [157.0, 93.2, 38.0, 4.0, 4.86, 87.0]
ROW = {"vitals": [59.0, 32.1, 101.0], "sex": 2, "serum": SERUM}


def row(**changes) -> dict:
    return {**ROW, **changes}


def v2(**changes) -> dict:
    inputs = {"vitals": {"name": "vitals", "shape": [1, 3], "datatype": "FP32", "data": ROW["vitals"]},
              "sex": {"name": "sex", "shape": [1], "datatype": "INT32", "data": [2]},
              "serum": {"name": "serum", "shape": [1, 6], "datatype": "FP32", "data": SERUM}}
    for name, change in changes.items():  # None drops a whole input; a None value drops that key
        inputs[name] = None if change is None else {
            key: value for key, value in {**inputs[name], **change}.items() if value is not None}
    return {"inputs": [tensor for tensor in inputs.values() if tensor is not None]}


PREDICT = "/v1/models/tabular:predict"
INFER = "/v2/models/tabular/infer"

# (path, body, status, fragments the message must contain)
CASES = {
    # TensorFlow Serving
    "tf-unknown-model": ("/v1/models/nope:predict", {"instances": [ROW]}, 404, ["nope", "tabular"]),
    "tf-unknown-version": ("/v1/models/tabular/versions/7:predict", {"instances": [ROW]}, 404, ["version 7"]),
    "tf-not-json": (PREDICT, "{broken", 400, ["not valid JSON"]),
    "tf-not-an-object": (PREDICT, [ROW], 400, ["JSON object"]),
    "tf-neither-format": (PREDICT, {"rows": [ROW]}, 400, ["'instances'", "'inputs'"]),
    "tf-both-formats": (PREDICT, {"instances": [ROW], "inputs": ROW}, 400, ["exactly one"]),
    "tf-other-signature": (PREDICT, {"signature_name": "classify", "instances": [ROW]}, 400,
                           ["classify", "serving_default"]),
    "tf-instances-not-a-list": (PREDICT, {"instances": ROW}, 400, ["'instances' must be a list"]),
    "tf-empty-instances": (PREDICT, {"instances": []}, 400, ["no instances"]),
    "tf-plain-list-for-three-inputs": (PREDICT, {"instances": [[1, 2, 3]]}, 400, ["3 inputs", "vitals"]),
    "tf-missing-input": (PREDICT, {"instances": [{"vitals": [1, 2, 3], "sex": 1}]}, 400, ["serum"]),
    "tf-unknown-input": (PREDICT, {"instances": [row(extra=1)]}, 400, ["extra"]),
    "tf-short-row": (PREDICT, {"instances": [row(vitals=[59.0, 32.1])]}, 400,
                     ["'vitals'", "[3]", "'instances[0].vitals'", "[2]"]),
    "tf-second-row-wrong": (PREDICT, {"instances": [ROW, row(serum=SERUM[:5])]}, 400,
                            ["'serum'", "[6]", "'instances[1].serum'", "[5]"]),
    "tf-rank": (PREDICT, {"instances": [row(vitals=[[59.0, 32.1, 101.0]])]}, 400, ["'vitals'", "[3]", "[1, 3]"]),
    "tf-scalar-where-vector": (PREDICT, {"instances": [row(vitals=59.0)]}, 400, ["'vitals'", "[3]", "[]"]),
    "tf-ragged": (PREDICT, {"instances": [row(serum=[[1, 2], [3]])]}, 400, ["'serum'", "differ in length"]),
    "tf-string-number": (PREDICT, {"instances": [row(vitals=[59, "32.1", 101])]}, 400, ["'vitals'", "'32.1'"]),
    "tf-null": (PREDICT, {"instances": [row(vitals=[59, None, 101])]}, 400, ["'vitals'", "null"]),
    "tf-b64-for-a-number-input": (PREDICT, {"instances": [row(vitals={"b64": "AAAA"})]}, 400,
                                  ["'vitals'", "float32", "b64", "string"]),
    "tf-fraction-for-an-int-input": (PREDICT, {"instances": [row(sex=1.5)]}, 400, ["'sex'", "int32", "1.5"]),
    "tf-int-out-of-range": (PREDICT, {"instances": [row(sex=2 ** 31)]}, 400, ["'sex'", "2147483648"]),
    "tf-float-out-of-range": (PREDICT, {"instances": [row(serum=[1e39] * 6)]}, 400, ["'serum'", "1e+39"]),
    "tf-columnar-batch-mismatch": (PREDICT, {"inputs": {"vitals": [ROW["vitals"]] * 2, "sex": [1],
                                                         "serum": [SERUM] * 2}}, 400, ["vitals", "sex", "batch"]),
    "tf-columnar-missing": (PREDICT, {"inputs": {"vitals": [ROW["vitals"]]}}, 400, ["sex", "serum"]),
    "tf-columnar-plain-for-three-inputs": (PREDICT, {"inputs": [[1, 2, 3]]}, 400, ["3 inputs"]),
    "tf-columnar-unbatched": (PREDICT, {"inputs": {"vitals": ROW["vitals"], "sex": [2], "serum": [SERUM]}}, 400,
                              ["'vitals'", "[batch, 3]", "[3]"]),
    "tf-too-many-instances": (PREDICT, {"instances": [ROW] * 257}, 413, ["257", "256"]),
    # Open Inference Protocol v2
    "v2-unknown-model": ("/v2/models/nope/infer", v2(), 404, ["nope"]),
    "v2-unknown-version": ("/v2/models/tabular/versions/3/infer", v2(), 404, ["version '3'"]),
    "v2-no-inputs": (INFER, {"inputs": []}, 400, ["'inputs'"]),
    "v2-unknown-input": (INFER, v2(vitals={"name": "vital"}), 400, ["'vital'", "vitals"]),
    "v2-missing-input": (INFER, v2(sex=None), 400, ["sex"]),
    "v2-duplicate-input": (INFER, {"inputs": v2()["inputs"] + [v2()["inputs"][0]]}, 400, ["vitals", "second time"]),
    "v2-wrong-datatype": (INFER, v2(vitals={"datatype": "INT32"}), 400, ["vitals", "FP32", "INT32"]),
    "v2-wrong-shape": (INFER, v2(vitals={"shape": [1, 4]}), 400, ["'vitals'", "[batch, 3]", "[1, 4]"]),
    "v2-wrong-rank": (INFER, v2(sex={"shape": [1, 1]}), 400, ["'sex'", "[batch]", "[1, 1]"]),
    "v2-data-count": (INFER, v2(vitals={"data": [1.0, 2.0]}), 400, ["vitals", "2 values", "[1, 3]", "3"]),
    "v2-data-nesting": (INFER, v2(serum={"shape": [2, 6], "data": [SERUM[:4]] * 3}), 400, ["serum", "[3, 4]"]),
    "v2-strings": (INFER, v2(vitals={"data": ["a", "b", "c"]}), 400, ["'vitals'", "string"]),
    "v2-fraction-for-int": (INFER, v2(sex={"data": [2.5]}), 400, ["'sex'", "int32"]),
    "v2-no-data": (INFER, v2(vitals={"data": None}), 400, ["vitals", "no 'data'"]),
    "v2-data-not-a-list": (INFER, v2(sex={"data": 2}), 400, ["(sex).data must be a list"]),
    "v2-shape-not-ints": (INFER, v2(vitals={"shape": [1, "3"]}), 400, ["shape"]),
    "v2-batch-mismatch": (INFER, v2(sex={"shape": [2], "data": [1, 2]}), 400, ["first dimensions", "sex"]),
    "v2-empty-batch": (INFER, v2(vitals={"shape": [0, 3], "data": []}, sex={"shape": [0], "data": []},
                                 serum={"shape": [0, 6], "data": []}), 400, ["no instances"]),
    "v2-unknown-output": (INFER, {**v2(), "outputs": [{"name": "score"}]}, 400, ["'score'", "progression"]),
    "v2-classification": (INFER, {**v2(), "outputs": [{"name": "risk", "parameters": {"classification": 2}}]}, 400,
                          ["classification"]),
    "v2-shared-memory": (INFER, v2(vitals={"parameters": {"shared_memory_region": "r"}}), 400, ["shared memory"]),
    "v2-binary-without-bytes": (INFER, v2(vitals={"data": None, "parameters": {"binary_data_size": 12}}), 400,
                                ["12 bytes", "0 are left"]),
    "v2-binary-wrong-size": (INFER, v2(vitals={"data": None, "parameters": {"binary_data_size": 8}}), 400,
                             ["binary_data_size", "12 bytes"]),
    "v2-id-not-string": (INFER, {**v2(), "id": 7}, 400, ["'id'"]),
    "v2-binary-flag-not-bool": (INFER, {**v2(), "parameters": {"binary_data_output": "yes"}}, 400,
                                ["binary_data_output"]),
}


@pytest.mark.parametrize("case", CASES)
def test_malformed_tensor_request(tensor_service, case):
    path, body, status, fragments = CASES[case]
    got_status, got = call(tensor_service, "POST", path, body)
    assert got_status == status, got
    assert set(got) == {"error"} and isinstance(got["error"], str)
    for fragment in fragments:
        assert fragment in got["error"], (fragment, got["error"])
    assert call(tensor_service, "POST", PREDICT, {"instances": [ROW]})[0] == 200


def _binary(service, header_length: str, body: bytes, encoding: str | None = None) -> tuple[int, dict]:
    event = http_api_event("POST", INFER, body, content_type="application/octet-stream")
    event["headers"]["inference-header-content-length"] = header_length
    if encoding:
        event["headers"]["content-encoding"] = encoding
    result = handle_event(service, event, None)
    return result["statusCode"], json.loads(result["body"])


@pytest.mark.parametrize("header_length,tail,status,fragment", [
    ("many", b"", 400, "Inference-Header-Content-Length"),
    ("100000", b"", 400, "Inference-Header-Content-Length"),
    ("0", b"", 400, "Inference-Header-Content-Length"),
    ("", b"\0" * 4, 400, "4 bytes of binary data"),  # bytes nobody declared
])
def test_malformed_binary_tensor_data(tensor_service, header_length, tail, status, fragment):
    head = json.dumps(v2()).encode()
    got_status, got = _binary(tensor_service, header_length or str(len(head)), head + tail)
    assert got_status == status and fragment in got["error"], got


def test_compressed_bodies_are_refused_by_name(tensor_service):
    status, got = _binary(tensor_service, "10", b"\x1f\x8b" + b"\0" * 20, encoding="gzip")
    assert status == 415 and "gzip" in got["error"]


@pytest.mark.parametrize("method,path,status", [
    ("GET", "/v1/models/nope", 404), ("GET", "/v1/models/nope/metadata", 404), ("GET", "/v2/models/nope", 404),
    ("GET", "/v2/models/nope/ready", 404), ("GET", "/v2/models/tabular/infer", 405),
    # TF Serving answers a path or method it does not serve with 400 (tests/functional/test_tfserving_paths.py).
    ("POST", "/v1/models/tabular", 400), ("POST", "/v1/models/tabular:classify", 400),
])
def test_wrong_paths_and_methods_answer_in_the_protocol_shape(tensor_service, method, path, status):
    got_status, got = call(tensor_service, method, path, {} if method == "POST" else None)
    assert got_status == status and set(got) == {"error"} and isinstance(got["error"], str)


# ---- generated requests: near-valid tensors, mutated; never a 5xx, always the protocol's error shape -------------

numbers = st.one_of(st.integers(-(2 ** 65), 2 ** 65), st.floats(allow_nan=True, allow_infinity=True), st.booleans())
leaves = st.one_of(numbers, st.none(), st.text(max_size=3), st.just({"b64": "AAAA"}))
tensors = st.recursive(leaves, lambda inner: st.lists(inner, max_size=7), max_leaves=30)
names = st.sampled_from(["vitals", "sex", "serum", "risk", ""])
v2_inputs = st.fixed_dictionaries(
    {"name": names, "shape": st.one_of(st.lists(st.integers(-1, 7), max_size=3), tensors),
     "datatype": st.sampled_from(["FP32", "INT32", "FP64", "BOOL", "BYTES", "fp32"]), "data": tensors},
    optional={"parameters": st.dictionaries(st.sampled_from(["binary_data_size", "shared_memory_region", "x"]),
                                            numbers, max_size=2)})
v2_bodies = st.fixed_dictionaries({"inputs": st.lists(v2_inputs, max_size=4)},
                                  optional={"id": st.one_of(st.text(max_size=5), numbers),
                                            "outputs": st.lists(st.fixed_dictionaries({"name": names}), max_size=3),
                                            "parameters": st.dictionaries(st.just("binary_data_output"), numbers)})
rows = st.fixed_dictionaries({}, optional={"vitals": tensors, "sex": tensors, "serum": tensors, "x": tensors})
tf_bodies = st.one_of(st.fixed_dictionaries({"instances": st.one_of(st.lists(rows, max_size=3), tensors)}),
                      st.fixed_dictionaries({"inputs": st.one_of(rows, tensors)},
                                            optional={"signature_name": st.one_of(st.text(max_size=5), numbers)}))
# TENSOR_PROPERTY_EXAMPLES (default 300, ~30 s) for a longer hunt.
GENERATED = settings(max_examples=int(os.environ.get("TENSOR_PROPERTY_EXAMPLES", "300")), deadline=None,
                     derandomize=True, database=None, suppress_health_check=list(HealthCheck))


@GENERATED
@given(body=st.one_of(v2_bodies.map(lambda body: (INFER, body)), tf_bodies.map(lambda body: (PREDICT, body))))
def test_generated_tensor_requests_never_fail_the_server(tensor_service, body):
    path, payload = body
    status, got = call(tensor_service, "POST", path, payload)
    assert status in (200, 400, 413), (status, got)
    if status != 200:
        assert set(got) == {"error"} and isinstance(got["error"], str) and got["error"]
