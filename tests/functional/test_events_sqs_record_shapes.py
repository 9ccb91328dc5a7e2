"""Property-based: whatever shape an SQS batch's records take (not objects, no messageId, bodies that are not JSON,
JSON that is not an object, objects of random fields), the handler returns a partial batch response and never
raises; every reported itemIdentifier is a messageId of the batch; a well-formed message beside them is answered
and written. Against moto's S3 over HTTP.

`make test` runs SQS_PROPERTY_EXAMPLES examples (default 300); set it higher for a longer hunt.
"""
from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from function.entry import handle_event
from kit.aws_server import aws_in_this_process
from tests.support.aws_fixtures import aws, aws_environment  # noqa: F401
from tests.support.function_fixtures import assert_healthy, demo_models, make_service, registry  # noqa: F401

EXAMPLES = int(os.environ.get("SQS_PROPERTY_EXAMPLES", "300"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))
GOOD = {"messageId": "good-1", "eventSource": "aws:sqs",
        "body": json.dumps({"route": "/sentiment", "text": "A wonderful film.", "id": "reviews/good"})}

text = st.text(alphabet=st.characters(codec=None), max_size=30)  # lone surrogates, NUL, U+2028 included
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True), text)
json_values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                            st.dictionaries(text, inner, max_size=3)), max_leaves=8)
message_fields = st.dictionaries(st.sampled_from(["route", "id", "text", "texts", "image", "model", "top_k"]),
                                 st.one_of(json_values, st.sampled_from(["/sentiment", "/embed", "/classify"])),
                                 max_size=4)
bodies = st.one_of(
    text,  # not JSON, mostly
    json_values.map(lambda value: json.dumps(value, allow_nan=True)),  # JSON, rarely an object
    message_fields.map(json.dumps),  # objects with the fields a message uses
    json_values,  # not even a string
)
message_ids = st.one_of(st.uuids().map(str), text, json_values)
records = st.one_of(
    json_values,  # a record that is not an object at all
    st.fixed_dictionaries({"messageId": message_ids, "body": bodies, "eventSource": st.just("aws:sqs")}),
    st.fixed_dictionaries({}, optional={"messageId": message_ids, "body": bodies}),
)


@pytest.fixture(scope="module")
def sqs_service(registry):  # noqa: F811
    with aws_in_this_process() as (aws, _):  # module-scoped: a test's monkeypatch cannot set these
        yield aws, make_service(registry, results_bucket=aws.bucket(), results_prefix="out/")


def test_records_that_are_not_messages_never_escape_nor_fail_the_batch(sqs_service):
    aws, service = sqs_service
    event = {"Records": [GOOD, ["a", "list"], "a string", 5, None, {"messageId": "no-body"},
                         {"messageId": "m-list", "body": "[1, 2]"}, {"messageId": "m-null", "body": "null"},
                         {"messageId": "m-bad-json", "body": "{not json"}, {"messageId": "m-number", "body": 7}]}
    assert handle_event(service, event, None) == {"batchItemFailures": []}
    assert aws.read_json(service.settings.results_bucket, "out/reviews/good.json")["predictions"]
    for message_id in ("no-body", "m-list", "m-null", "m-bad-json", "m-number"):  # answered with their error
        answer = aws.read_json(service.settings.results_bucket, f"out/{message_id}.json")
        assert answer["error"]["code"] == "invalid_json"


@SETTINGS
@given(st.lists(records, max_size=4))
def test_any_record_shape_gives_a_partial_batch_response(sqs_service, others):
    aws, service = sqs_service
    event = {"Records": [GOOD, *others]}
    result = handle_event(service, event, None)  # never raises
    ids = {record.get("messageId") for record in event["Records"]
           if isinstance(record, dict) and isinstance(record.get("messageId"), str)}
    assert set(result) == {"batchItemFailures"}
    for failure in result["batchItemFailures"]:
        assert isinstance(failure["itemIdentifier"], str) and failure["itemIdentifier"] in ids
    assert {"itemIdentifier": "good-1"} not in result["batchItemFailures"]
    assert_healthy(service)
