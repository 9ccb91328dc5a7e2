"""Property-based fuzz of every asynchronous door: SQS batches, S3 uploads, Distributed Map batches and S3 Batch
Operations invocations, each built valid and then mutated at any depth (fields of any type, deleted, nested deeply,
keys and buckets of any text), against moto's S3 over HTTP. Whatever arrives: nothing escapes the handler but the
errors its engine is documented to read (InvalidBatchInput for a Distributed Map batch it cannot act on), no line is
a bug's (ERROR, a traceback) and no line or answer says a status >= 500. (The HTTP door has its own fuzz:
test_handler_properties.py.)

DOOR_FUZZ_EXAMPLES examples per door (default 300); set it higher for a longer hunt.
"""
from __future__ import annotations

import base64
import json
import logging
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from function.entry import handle_event
from tests.functional.test_door_properties import PNGS, RESULTS, door_env  # noqa: F401
from tests.functional.test_handler_properties import json_values, mutate
from kit.aws_events import s3_object_created, sqs_batch
from tests.support.function_fixtures import demo_models  # noqa: F401

pytestmark = pytest.mark.slow
EXAMPLES = int(os.environ.get("DOOR_FUZZ_EXAMPLES", "300"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))
TASKS = ["classify", "classify-text", "sentiment", "embed"]
MODELS = ["", "digits", "digit_tags", "sentiment", "minilm", "nowhere"]
ROUTES = ["/classify", "/classify-text", "/sentiment", "/embed", "/tokenize", "/nowhere"]
DOCUMENTED = {"distributed_map": {"InvalidBatchInput"}}  # what an engine reads from a raise; nothing else may
SOURCE = "fuzz-source"  # made once, holding one image and one text


def keys() -> st.SearchStrategy:
    return st.one_of(st.sampled_from(["d/0.png", "t.txt", "uploads/0.png", "missing.png", RESULTS + "x.json"]),
                     st.text(max_size=30))


@st.composite
def map_batches(draw) -> dict:
    items = draw(st.lists(st.one_of(
        st.builds(lambda key, size: {"Key": key, "Size": size}, keys(), st.one_of(st.integers(), json_values)),
        st.builds(lambda key: {"s3Key": key}, keys()),
        st.builds(lambda text, item_id: {"text": text, "id": item_id}, json_values, st.one_of(st.none(), keys())),
        json_values), max_size=4))
    batch_input = {"task": draw(st.sampled_from(TASKS)), "model": draw(st.sampled_from(MODELS)),
                   "options": draw(st.one_of(st.just({}), st.dictionaries(
                       st.sampled_from(["top_k", "threshold", "normalize", "x"]), json_values, max_size=2))),
                   "bucket": SOURCE, "results": {"bucket": "RESULTS_BUCKET", "prefix": RESULTS}}
    return mutate({"Items": items, "BatchInput": batch_input}, draw)


@st.composite
def batch_operations(draw) -> dict:
    tasks = [{"taskId": f"t{i}", "s3Bucket": draw(st.one_of(st.just(SOURCE), st.text(max_size=20))),
              "s3Key": draw(keys()), "s3VersionId": draw(st.one_of(st.none(), st.text(max_size=10)))}
             for i in range(draw(st.integers(0, 3)))]
    arguments = {"task": draw(st.sampled_from(TASKS)), "model": draw(st.sampled_from(MODELS)),
                 "options": draw(st.one_of(st.just("{}"), json_values.map(json.dumps), st.text(max_size=20)))}
    event = {"invocationSchemaVersion": draw(st.sampled_from(["1.0", "2.0"])), "invocationId": "inv",
             "job": {"id": "job", "userArguments": arguments}, "tasks": tasks}
    return mutate(event, draw)


@st.composite
def uploads(draw) -> dict:
    records = [s3_object_created(draw(st.one_of(st.just(SOURCE), st.text(max_size=20))), draw(keys()),
                                 draw(st.integers(-1, 10**9)))["Records"][0] for _ in range(draw(st.integers(1, 3)))]
    return mutate({"Records": records}, draw)


@st.composite
def sqs_events(draw) -> dict:
    messages = []
    for index in range(draw(st.integers(1, 3))):
        body = {"route": draw(st.sampled_from(ROUTES)), "model": draw(st.sampled_from(MODELS))}
        body.update(draw(st.dictionaries(st.sampled_from(["text", "texts", "image", "id", "top_k", "threshold"]),
                                         json_values, max_size=3)))
        if draw(st.booleans()):
            body["image"] = base64.b64encode(PNGS[0]).decode()
        text = draw(st.one_of(st.just(json.dumps(body)), st.text(max_size=30), json_values.map(json.dumps)))
        messages.append({"messageId": f"m-{index}", "body": text})
    return mutate(sqs_batch(messages), draw)


@pytest.fixture(scope="module")
def fuzzed(door_env):  # noqa: F811
    aws, services, results = door_env
    if SOURCE not in [bucket["Name"] for bucket in aws.s3.list_buckets()["Buckets"]]:
        aws.s3.create_bucket(Bucket=SOURCE)
    for key, body in (("d/0.png", PNGS[0]), ("uploads/0.png", PNGS[1]), ("t.txt", b"What a wonderful film.")):
        aws.s3.put_object(Bucket=SOURCE, Key=key, Body=body)
    return services["digit_tags"], results


def survives(service, results: str, door: str, event: dict) -> None:
    """The handler's answer, or a documented raise; no bug's line, no status >= 500."""
    text = json.dumps(event, default=str).replace("RESULTS_BUCKET", results)
    try:
        event = json.loads(text)
    except RecursionError:  # a mutation nested past what json round-trips: send it as it is
        pass
    records: list[logging.LogRecord] = []
    handler = _Collect(records)
    logger = logging.getLogger("function")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        handle_event(service, event, None)
    except Exception as exc:  # noqa: BLE001
        assert type(exc).__name__ in DOCUMENTED.get(door, set()), f"{type(exc).__name__}: {exc}"
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert records or door == "sqs", "an event without a line"  # an SQS batch of records it drops: their lines
    for record in records:
        fields = getattr(record, "fields", {}) or {}
        assert record.levelno < logging.ERROR or record.getMessage().startswith("sqs record dropped"), (
            record.getMessage(), fields)
        status = fields.get("status")
        assert not (isinstance(status, int) and status >= 500), (record.getMessage(), fields)


class _Collect(logging.Handler):
    def __init__(self, records: list) -> None:
        super().__init__(logging.DEBUG)
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@SETTINGS
@given(event=map_batches())
def test_distributed_map_fuzz(fuzzed, event):
    survives(*fuzzed, "distributed_map", event)


@SETTINGS
@given(event=batch_operations())
def test_s3_batch_operations_fuzz(fuzzed, event):
    survives(*fuzzed, "s3_batch_operations", event)


@SETTINGS
@given(event=uploads())
def test_upload_fuzz(fuzzed, event):
    survives(*fuzzed, "s3", event)


@SETTINGS
@given(event=sqs_events())
def test_sqs_fuzz(fuzzed, event):
    survives(*fuzzed, "sqs", event)
