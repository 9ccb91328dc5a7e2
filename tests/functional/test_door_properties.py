"""Every door, over mixed valid and invalid items and every task kind (image classification, multi-label image
classification, text classification, text embedding): every item ends answered or refused with a code, nothing
escapes the handler, nothing is lost, no result overwrites another's. Against moto's S3 over HTTP.

The doors: HTTP (Service.handle through the Lambda contract), SQS, S3 uploads (a /classify with the default image
model: the image kinds only), Step Functions Distributed Map and S3 Batch Operations. Each example builds its own
objects under a fresh prefix, so examples never share a result key either."""
from __future__ import annotations

import base64
import io
import json
import shutil
import uuid
from pathlib import Path
from urllib.parse import quote_plus

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from function.catalog.registry import ModelRegistry
from function.entry import handle_event
from kit.aws_events import s3_object_created, sqs_batch
from kit.aws_server import aws_in_this_process
from kit.events import EVENT_BUILDERS
from tests.support.function_fixtures import demo_models, make_service  # noqa: F401
from tests.support.model_copies import multi_label_copy

pytestmark = pytest.mark.slow
RESULTS = "predictions/"
EXAMPLES = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# (door task, HTTP route, model, what it takes): every task kind, the multi-label one included.
KINDS = {
    "image": ("classify", "/classify", "digits", "image"),
    "multi_label": ("classify", "/classify", "digit_tags", "image"),
    "text_classification": ("classify-text", "/classify-text", "sentiment", "text"),
    "sentiment": ("sentiment", "/sentiment", "sentiment", "text"),
    "embedding": ("embed", "/embed", "minilm", "text"),
}
TEXTS = ["What a wonderful film.", "Dull and far too long.", "ok", "Ça va, merci ☕"]


def _digit_pngs() -> list[bytes]:
    from sklearn.datasets import load_digits  # noqa: PLC0415

    pngs = []
    for image in load_digits().images[:4]:
        buffer = io.BytesIO()
        Image.fromarray(np.round(image * 255.0 / 16.0).astype(np.uint8), mode="L").save(buffer, format="PNG")
        pngs.append(buffer.getvalue())
    return pngs


PNGS = _digit_pngs()

# An item: (what it is, the bytes of its object or the text of its row). Valid ones are answered, the others refused.
image_items = st.one_of(
    st.tuples(st.just("object"), st.sampled_from(PNGS)),
    st.tuples(st.just("object"), st.binary(max_size=40)),  # not an image
    st.tuples(st.just("object"), st.sampled_from([b"\x89PNG\r\n\x1a\n" + b"\0" * 30, "tr\u00e8s".encode()])),
    st.tuples(st.just("missing"), st.none()),
    st.tuples(st.just("row"), st.sampled_from(TEXTS)),  # a text where an image is due
)
text_items = st.one_of(
    st.tuples(st.just("object"), st.sampled_from([t.encode() for t in TEXTS])),
    st.tuples(st.just("object"), st.sampled_from([b"\xff\xfe\xfa", b"", b"   "])),  # not UTF-8, empty, blank
    st.tuples(st.just("row"), st.sampled_from(TEXTS)),
    st.tuples(st.just("row"), st.one_of(st.text(max_size=12), st.none(), st.integers(), st.lists(st.none(),
                                                                                               max_size=2))),
    st.tuples(st.just("missing"), st.none()),
)


def items_for(kind: str):
    return st.lists(image_items if KINDS[kind][3] == "image" else text_items, min_size=1, max_size=6)


@pytest.fixture(scope="module")
def door_env(demo_models, tmp_path_factory):  # noqa: F811
    """(the S3 server, the service, its results bucket): digits, `digit_tags` (digits served multi-label),
    sentiment and minilm."""
    root = tmp_path_factory.mktemp("property_models")
    shutil.copytree(demo_models / "digits", root / "digits")
    multi_label_copy(demo_models / "digits", root, "digit_tags")
    for name in ("sentiment", "minilm"):
        (root / name).symlink_to(Path(demo_models / name).resolve())
    with aws_in_this_process() as (aws, _):
        results = aws.bucket()
        services = {model: make_service(ModelRegistry(root), results_bucket=results, results_prefix=RESULTS,
                                        default_image_model=model, uploads_prefix="uploads/")
                    for model in ("digits", "digit_tags")}
        yield aws, services, results


def put_items(aws, bucket: str, prefix: str, items: list) -> list:
    """Each object item put under its own key; (kind, key or text) per item."""
    placed = []
    for index, (what, value) in enumerate(items):
        key = f"{prefix}{index}.bin"
        if what == "object":
            aws.s3.put_object(Bucket=bucket, Key=key, Body=value)
        placed.append((what, key if what != "row" else value))
    return placed


def assert_answer_or_refusal(body: object, kind: str) -> str:
    """'answered' or the refusal's code; anything else fails."""
    assert isinstance(body, dict), body
    if "error" in body:
        code = body["error"]["code"]
        assert isinstance(code, str) and code, body
        return code
    if KINDS[kind][3] == "image":
        (prediction,) = body["predictions"]
        assert ("labels" in prediction) == (kind == "multi_label"), body
    elif kind == "embedding":
        (embedding,) = body["embeddings"]
        assert len(embedding["embedding"]) == body["dimensions"]
    else:
        (prediction,) = body["predictions"]
        assert prediction["label"]
    return "answered"


def valid_text(value: object) -> bool:
    return isinstance(value, str) and bool(value) and not value.isspace()


def expected_refusal(kind: str, what: str, value: object) -> bool:
    """Whether an item a bulk door or an upload reads must be refused (the valid ones must be answered)."""
    if what == "missing":
        return True
    if KINDS[kind][3] == "image":
        return what == "row" or value not in PNGS
    if what == "object":
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            return True
    return not valid_text(value)


def refused_as_sent(kind: str, item: tuple) -> bool:
    """Whether the request `message_body` makes of `item` must be refused."""
    if item[0] == "missing":
        return True
    if KINDS[kind][3] == "image":
        return item[1] not in PNGS
    return not valid_text(sent_text(item[1]))


def sent_text(value: object) -> object:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def written(aws, bucket: str, key: str) -> dict | None:
    """The result file at `key`, or None when there is none."""
    try:
        return aws.read_json(bucket, key)
    except aws.s3.exceptions.NoSuchKey:
        return None


# ---- Distributed Map ----------------------------------------------------------------------------------------------

@EXAMPLES
@given(kind=st.sampled_from(sorted(KINDS)), items=st.data())
def test_distributed_map_ends_every_item_answered_or_refused(door_env, kind, items):
    aws, services, results = door_env
    task, _, model, _ = KINDS[kind]
    drawn = items.draw(items_for(kind))
    source, prefix = aws.bucket(), f"{uuid.uuid4().hex}/"
    placed = put_items(aws, source, prefix, drawn)
    event_items, names, result_keys = [], [], []
    for index, (what, value) in enumerate(placed):
        if what == "row":
            event_items.append({"text": value, "id": f"{prefix}row{index}"})
            names.append(f"{prefix}row{index}")
            result_keys.append(f"{RESULTS}{prefix}row{index}.json")
        else:
            event_items.append({"Key": value})
            names.append(value)
            result_keys.append(f"{RESULTS}{source}/{value}.json")  # an object's: its bucket is part of it
    event = {"Items": event_items, "BatchInput": {"task": task, "model": model, "options": {}, "bucket": source,
                                                  "results": {"bucket": results, "prefix": RESULTS}}}
    summary = handle_event(services["digits"], event, None)
    assert summary["answered"] + summary["refused"] == len(drawn)  # nothing lost, nothing left unfinished
    failed = {entry["item"]: entry["code"] for entry in summary["failed"]}
    answered = [entry["item"] for entry in summary["answers"]]
    assert sorted([*failed, *answered]) == sorted(names)  # one outcome per item
    for name, result_key, (what, value) in zip(names, result_keys, drawn):
        outcome = assert_answer_or_refusal(written(aws, results, result_key), kind)
        assert outcome == failed.get(name, "answered")  # its own file holds its own outcome
        assert (outcome != "answered") == expected_refusal(kind, what, value), (what, value, outcome)


# ---- S3 Batch Operations ----------------------------------------------------------------------------------------

@EXAMPLES
@given(kind=st.sampled_from(sorted(KINDS)), items=st.data())
def test_s3_batch_operations_ends_every_task_answered_or_refused(door_env, kind, items):
    aws, services, results = door_env
    task, _, model, _ = KINDS[kind]
    drawn = [item for item in items.draw(items_for(kind)) if item[0] != "row"] or [("missing", None)]
    first, second, prefix = aws.bucket(), aws.bucket(), f"{uuid.uuid4().hex}/"
    # The same keys in two buckets, with other contents in the second: neither's result may overwrite the other's.
    placed = put_items(aws, first, prefix, drawn)
    swapped = list(reversed(drawn))
    put_items(aws, second, prefix, swapped)
    tasks = [(first, key, item) for (_, key), item in zip(placed, drawn)]
    tasks += [(second, key, item) for (_, key), item in zip(placed, swapped)]
    event = {"invocationSchemaVersion": "2.0", "invocationId": "inv", "job": {"id": "job", "userArguments": {
        "task": task, "model": model, "options": "{}"}},
        "tasks": [{"taskId": f"t{i}", "s3Bucket": bucket, "s3Key": quote_plus(key, safe="/"), "s3VersionId": None}
                  for i, (bucket, key, _) in enumerate(tasks)]}
    answer = handle_event(services["digits"], event, None)
    assert [r["taskId"] for r in answer["results"]] == [f"t{i}" for i in range(len(tasks))]
    for result, (bucket, key, (what, value)) in zip(answer["results"], tasks):
        assert result["resultCode"] in ("Succeeded", "PermanentFailure"), result
        outcome = assert_answer_or_refusal(written(aws, results, f"{RESULTS}{bucket}/{key}.json"), kind)
        assert (outcome == "answered") == (result["resultCode"] == "Succeeded")
        if outcome != "answered":
            assert result["resultString"].startswith(f"{outcome}:")
        assert (outcome != "answered") == expected_refusal(kind, what, value), (what, value, outcome)


# ---- S3 uploads ---------------------------------------------------------------------------------------------------

@EXAMPLES
@given(kind=st.sampled_from(["image", "multi_label"]), items=st.data())
def test_uploads_end_every_object_classified_or_refused(door_env, kind, items):
    aws, services, results = door_env
    drawn = [item for item in items.draw(items_for(kind)) if item[0] == "object"] or [("object", b"")]
    source, prefix = aws.bucket(), f"uploads/{uuid.uuid4().hex}/"
    placed = put_items(aws, source, prefix, drawn)
    event = {"Records": [s3_object_created(source, key, len(value))["Records"][0]
                         for (_, key), (_, value) in zip(placed, drawn)]}
    outcomes = handle_event(services[KINDS[kind][2]], event, None)["uploads"]
    assert [o["key"] for o in outcomes] == [key for _, key in placed]
    for outcome, (_, key), (what, value) in zip(outcomes, placed, drawn):
        assert outcome["outcome"] in ("classified", "refused"), outcome
        code = assert_answer_or_refusal(written(aws, results, f"{RESULTS}{source}/{key}.json"), kind)
        assert (code == "answered") == (outcome["outcome"] == "classified")
        assert code == outcome.get("error_code", "answered")
        tags = aws.tags(source, key)
        assert ("error" in tags) == (code != "answered")
        assert (code != "answered") == expected_refusal(kind, what, value)


# ---- SQS -------------------------------------------------------------------------------------------------------

def message_body(kind: str, item: tuple, model: str) -> str:
    """The message an HTTP client's body would be (plus its route), or a malformed one for a missing item."""
    what, value = item
    route = KINDS[kind][1]
    if what == "missing":
        return "not json {"
    if KINDS[kind][3] == "image":
        image = value if isinstance(value, bytes) else str(value).encode()
        return json.dumps({"route": route, "model": model, "image": base64.b64encode(image).decode()})
    return json.dumps({"route": route, "model": model, "text": sent_text(value)})


@EXAMPLES
@given(kind=st.sampled_from(sorted(KINDS)), items=st.data())
def test_sqs_acknowledges_every_message_answered_or_refused(door_env, kind, items):
    aws, services, results = door_env
    model = KINDS[kind][2]
    drawn = items.draw(items_for(kind))
    prefix = uuid.uuid4().hex
    messages = [{"messageId": f"{prefix}-{i}", "body": message_body(kind, item, model)}
                for i, item in enumerate(drawn)]
    answer = handle_event(services["digits"], sqs_batch(messages), None)
    assert answer == {"batchItemFailures": []}
    for message, (what, value) in zip(messages, drawn):
        code = assert_answer_or_refusal(written(aws, results, f"{RESULTS}{message['messageId']}.json"), kind)
        assert code != "invalid_json" or what == "missing"
        assert (code != "answered") == refused_as_sent(kind, (what, value)), (what, value, code)


# ---- HTTP ------------------------------------------------------------------------------------------------------

@EXAMPLES
@given(kind=st.sampled_from(sorted(KINDS)), items=st.data())
def test_http_answers_every_request_or_refuses_it_with_a_code(door_env, kind, items):
    _, services, _ = door_env
    model = KINDS[kind][2]
    for item in items.draw(items_for(kind)):
        body = message_body(kind, item, model)
        payload = json.loads(body) if item[0] != "missing" else None
        route = payload.pop("route") if payload else KINDS[kind][1]
        raw = json.dumps(payload) if payload is not None else body
        result = handle_event(services["digits"], EVENT_BUILDERS["2.0"]("POST", route, raw, "application/json",
                                                                         False), None)
        status, answer = result["statusCode"], json.loads(result["body"])
        code = assert_answer_or_refusal(answer, kind)
        assert (status == 200) == (code == "answered") and status < 500, (status, answer)
        assert (code != "answered") == refused_as_sent(kind, item), (item, answer)
