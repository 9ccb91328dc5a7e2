"""Request body parsing: every client mistake is a stable 400/413 code, every accepted spelling decodes."""
from __future__ import annotations

import base64

import pytest

from function.errors import ServingError
from function.http_errors import status_of
from function.events import Request
from function.routes import inputs

DATA = bytes(range(200))
STANDARD = base64.b64encode(DATA).decode()


@pytest.mark.parametrize("text", [
    STANDARD,
    "data:image/jpeg;base64," + STANDARD,
    "DATA:image/png;charset=binary;base64," + STANDARD,
    base64.urlsafe_b64encode(DATA).decode(),
    STANDARD.rstrip("="),
    "\n".join(STANDARD[i:i + 76] for i in range(0, len(STANDARD), 76)),  # `base64` CLI output
])
def test_base64_spellings_decode_to_the_same_bytes(text):
    assert inputs.decode_base64(text, "image") == DATA


@pytest.mark.parametrize("text", ["not base64 at all!", "", "data:image/png;base64,", "é" * 8])
def test_invalid_base64_is_400(text):
    with pytest.raises(ServingError) as caught:
        inputs.decode_base64(text, "images[2]")
    assert (status_of(caught.value), caught.value.code) == (400, "invalid_base64")
    assert "images[2]" in caught.value.message


def _request(body: bytes, content_type: str = "application/json") -> Request:
    return Request("POST", "/x", {"content-type": content_type}, body)


@pytest.mark.parametrize("body,code", [
    (b"", "invalid_json"),
    (b"{not json", "invalid_json"),
    (b"[1, 2]", "invalid_json"),
    (b"\xff\xfe", "invalid_json"),
])
def test_bad_json_is_400(body, code):
    with pytest.raises(ServingError) as caught:
        inputs.json_object(_request(body))
    assert (status_of(caught.value), caught.value.code) == (400, code)


def test_json_detection():
    assert inputs.is_json(_request(b"{}", "application/json"))
    assert inputs.is_json(_request(b'  {"image": "x"}', "application/x-www-form-urlencoded"))
    assert not inputs.is_json(_request(b"\xff\xd8\xff\xe0", "image/jpeg"))


@pytest.mark.parametrize("body,status,code", [
    ({}, 400, "missing_field"),
    ({"text": "a", "texts": ["b"]}, 400, "missing_field"),
    ({"texts": "a"}, 400, "invalid_field"),
    ({"texts": []}, 400, "empty_batch"),
    ({"texts": ["a", 3]}, 400, "invalid_field"),
    ({"text": None}, 400, "invalid_field"),
    ({"texts": ["a"] * 5}, 413, "batch_too_large"),
])
def test_one_or_many_errors(body, status, code):
    with pytest.raises(ServingError) as caught:
        inputs.one_or_many(body, "text", "texts", str, "string", max_batch=4)
    assert (status_of(caught.value), caught.value.code) == (status, code)


def test_one_or_many_keeps_order():
    assert inputs.one_or_many({"texts": ["b", "a", "c"]}, "text", "texts", str, "string", 4) == ["b", "a", "c"]
    assert inputs.one_or_many({"text": "solo"}, "text", "texts", str, "string", 4) == ["solo"]


@pytest.mark.parametrize("value", [0, -1, "5", "ALL", 2.5, True, None])
def test_top_k_must_be_a_positive_integer_or_all(value):
    with pytest.raises(ServingError) as caught:
        inputs.top_k_option({"top_k": value}, 5)
    assert caught.value.code == "invalid_field"


def test_top_k_all_and_defaults():
    assert inputs.top_k_option({"top_k": "all"}, 5) == {"top_k": None}
    assert inputs.top_k_option({"top_k": 3}, None) == {"top_k": 3}
    assert inputs.top_k_option({}, 5) == {"top_k": 5}
    assert inputs.top_k_option({}, None) == {}


def test_only_the_fields_a_route_reads():
    inputs.only_fields({"text": "hi", "model": "m"}, frozenset({"text", "texts", "model"}))
    with pytest.raises(ServingError) as caught:
        inputs.only_fields({"text": "hi", "top_k": 3}, frozenset({"text", "texts", "model"}))
    assert (status_of(caught.value), caught.value.code, caught.value.param) == (400, "unknown_field", "top_k")
    assert "'top_k'" in caught.value.message and "model, text, texts" in caught.value.message


def test_query_options_for_raw_bodies():
    assert inputs.query_options({"model": "digits", "top_k": "3", "other": "x"}) == {"model": "digits", "top_k": 3}


def test_body_limit():
    with pytest.raises(ServingError) as caught:
        inputs.check_body_size(_request(b"x" * 11), 10)
    assert (status_of(caught.value), caught.value.code) == (413, "body_too_large")
    inputs.check_body_size(_request(b"x" * 10), 10)
