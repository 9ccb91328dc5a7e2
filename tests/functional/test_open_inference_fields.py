"""Every Open Inference Protocol header and body field is type-checked before use: a name that is a list or an
object, an Inference-Header-Content-Length that is not a small ASCII number (5,000 nines, "²", Arabic-Indic
digits), any generated header value or field: a 4xx in the protocol's shape, never a 5xx."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from function.entry import handle_event
from kit.events import http_api_event
from tests.support.function_fixtures import call, demo_models  # noqa: F401
from tests.support.tensor_fixtures import tensor_model_dir, tensor_registry, tensor_service  # noqa: F401

INFER = "/v2/models/tabular/infer"
BODY = {"inputs": [{"name": "vitals", "shape": [1, 3], "datatype": "FP32", "data": [59.0, 32.1, 101.0]},
                   {"name": "sex", "shape": [1], "datatype": "INT32", "data": [2]},
                   {"name": "serum", "shape": [1, 6], "datatype": "FP32",
                    "data": [157.0, 93.2, 38.0, 4.0, 4.86, 87.0]}]}


def binary_request(service, header_length: str, body: bytes) -> tuple[int, dict]:
    event = http_api_event("POST", INFER, body, content_type="application/octet-stream")
    event["headers"]["inference-header-content-length"] = header_length
    result = handle_event(service, event, None)
    if not result["headers"]["content-type"].startswith("application/json"):  # a binary answer: only 200 has one
        return result["statusCode"], {}
    return result["statusCode"], json.loads(result["body"])


@pytest.mark.parametrize("name", [["risk"], {"risk": 1}, 7, None, True, "risk\n" * 50])
def test_an_output_name_that_is_not_a_known_string_is_refused(tensor_service, name):
    status, got = call(tensor_service, "POST", INFER, {**BODY, "outputs": [{"name": name}]})
    assert status == 400 and set(got) == {"error"}, got
    assert len(got["error"]) < 300 and "\n" not in got["error"]  # quoted, escaped and capped, never raw


@pytest.mark.parametrize("name", [["vitals"], {"vitals": 1}])
def test_an_input_name_that_is_a_list_or_object_is_refused(tensor_service, name):
    body = {"inputs": [{**BODY["inputs"][0], "name": name}, *BODY["inputs"][1:]]}
    status, got = call(tensor_service, "POST", INFER, body)
    assert status == 400 and set(got) == {"error"}, got


@pytest.mark.parametrize("header_length", ["9" * 5000, "²", "⁵", "١٢٣", "٣", "+10", "-10", "1_0", "0x10", "1e2",
                                           " ", "10 10", "\t"])
def test_a_header_length_that_is_not_a_small_ascii_number_is_refused(tensor_service, header_length):
    head = json.dumps(BODY).encode()
    status, got = binary_request(tensor_service, header_length, head)
    assert status == 400 and "Inference-Header-Content-Length" in got["error"], got
    assert len(got["error"]) < 300


def test_arabic_indic_digits_are_not_read_as_the_length(tensor_service):
    head = json.dumps(BODY).encode()
    arabic = str(len(head)).translate(str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩"))
    assert binary_request(tensor_service, arabic, head)[0] == 400
    assert binary_request(tensor_service, str(len(head)), head)[0] == 200


@settings(max_examples=300, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(header_length=st.one_of(st.text(max_size=12), st.integers(-10, 10 ** 6).map(str),
                               st.text("0123456789²⁵١٢٣۴ ", max_size=30)))
def test_generated_header_lengths_never_fail_the_server(tensor_service, header_length):
    head = json.dumps(BODY).encode()
    status, got = binary_request(tensor_service, header_length, head + b"\0" * 4)
    assert status == 400, (status, got)  # no length can account for the 4 undeclared bytes
    assert set(got) == {"error"} and got["error"]


leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=4), st.lists(st.integers(), max_size=2),
                 st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


@settings(max_examples=300, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(field=st.sampled_from(["id", "outputs", "parameters", "inputs", "name", "shape", "datatype", "data",
                              "input_parameters", "output_name", "output_parameters"]), value=leaf)
def test_every_field_of_any_type_gets_a_4xx(tensor_service, field, value):
    body = json.loads(json.dumps(BODY))
    if field in ("id", "outputs", "parameters", "inputs"):
        body[field] = value
    elif field.startswith("output_"):
        body["outputs"] = [{field.removeprefix("output_"): value}]
    else:
        body["inputs"][0][field.removeprefix("input_")] = value
    status, got = call(tensor_service, "POST", INFER, body)
    assert status in (200, 400), (status, got)
    if status == 400:
        assert set(got) == {"error"} and got["error"]
