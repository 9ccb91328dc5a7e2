"""SQS batches, against moto's SQS and S3 over HTTP: every message is answered through the HTTP routes and its
answer written to S3; a poison message is answered with its error and acknowledged; only a transient failure is
reported in batchItemFailures, and it, alone, ends in the dead-letter queue."""
from __future__ import annotations

import json
import shutil

import pytest

from function.entry import handle_event
from function.catalog.registry import ModelRegistry
from kit.aws_events import sqs_batch
from tests.support.aws_fixtures import aws, aws_environment  # noqa: F401
from tests.support.function_fixtures import call, demo_models, make_service  # noqa: F401
from kit.photos import b64, encode, photo

MAX_RECEIVES = 2


@pytest.fixture(scope="module")
def models(demo_models, tmp_path_factory):  # noqa: F811
    """The demo's digits and sentiment, and "broken": a model whose file does not load (503 model_unavailable)."""
    root = tmp_path_factory.mktemp("models")
    for name in ("digits", "sentiment"):
        shutil.copytree(demo_models / name, root / name)
    shutil.copytree(demo_models / "digits", root / "broken")
    manifest = json.loads((root / "broken" / "manifest.json").read_text())
    (root / "broken" / "manifest.json").write_text(json.dumps({**manifest, "name": "broken"}))
    (root / "broken" / "model.tflite").write_bytes(b"truncated in transit")
    return ModelRegistry(root)


@pytest.fixture()
def results(aws_environment) -> str:  # noqa: F811
    return aws_environment.bucket()


@pytest.fixture()
def service(models, results):
    return make_service(models, default_image_model="digits", results_bucket=results, results_prefix="out/")


def digit_png() -> str:
    return b64(encode(photo("camera").resize((8, 8)), "PNG"))


GOOD = {"route": "/sentiment", "text": "What a wonderful, moving film.", "id": "reviews/1"}
POISON = "this is not JSON {"
CLIENT_ERROR = {"route": "/classify", "image": "@@@ not base64 @@@", "id": "bad-image"}
TRANSIENT = {"route": "/classify", "model": "broken", "image": None, "id": "needs-broken"}


def messages() -> list[dict]:
    transient = {**TRANSIENT, "image": digit_png()}
    return [{"messageId": f"m{i}", "body": body if isinstance(body, str) else json.dumps(body)}
            for i, body in enumerate([GOOD, POISON, CLIENT_ERROR, transient])]


def test_only_the_transient_failure_is_reported_and_every_other_answer_is_written(aws, service, results):  # noqa: F811
    answer = handle_event(service, sqs_batch(messages()), None)
    assert answer == {"batchItemFailures": [{"itemIdentifier": "m3"}]}
    assert aws.keys(results) == ["out/bad-image.json", "out/m1.json", "out/reviews/1.json"]
    status, http_answer = call(service, "POST", "/sentiment", {k: v for k, v in GOOD.items() if k not in (
        "route", "id")})
    written = aws.read_json(results, "out/reviews/1.json")
    assert written["predictions"][0]["label"] == "positive" == http_answer["predictions"][0]["label"]
    assert aws.read_json(results, "out/m1.json")["error"]["code"] == "invalid_json"
    assert aws.read_json(results, "out/bad-image.json")["error"]["code"] == "invalid_base64"


@pytest.mark.parametrize("body, code", [
    ({"route": "/tokenize", "text": "hi"}, "invalid_route"),
    ({"text": "no route"}, "invalid_route"),
    ({"route": "/sentiment", "text": "hi", "id": "../escape"}, "invalid_id"),
    ({"route": "/sentiment", "text": "hi", "id": 7}, "invalid_id"),
    ({"route": "/sentiment", "texts": []}, "empty_batch"),
    (["route", "/sentiment"], "invalid_json"),
], ids=["route-not-offered", "no-route", "id-climbs", "id-not-text", "route-refuses", "not-an-object"])
def test_a_malformed_message_is_answered_under_its_message_id_and_acknowledged(aws, service,  # noqa: F811
                                                                               results, body, code):
    answer = handle_event(service, sqs_batch([{"messageId": "bad", "body": json.dumps(body)}]), None)
    assert answer == {"batchItemFailures": []}
    assert aws.read_json(results, "out/bad.json")["error"]["code"] == code


def test_a_result_that_cannot_be_written_is_delivered_again(aws, models, results):  # noqa: F811
    service = make_service(models, results_bucket="no-such-bucket-anywhere", results_prefix="out/")
    answer = handle_event(service, sqs_batch([{"messageId": "m", "body": json.dumps(GOOD)}]), None)
    assert answer == {"batchItemFailures": [{"itemIdentifier": "m"}]}


def test_through_a_real_queue_only_the_transient_message_reaches_the_dead_letter_queue(aws, service,  # noqa: F811
                                                                                       results):
    """Lambda's SQS poller, played by the test: receive a batch, invoke, delete what the answer does not list."""
    dead_letters = aws.sqs.create_queue(QueueName=f"dlq-{results}")["QueueUrl"]
    dlq_arn = aws.sqs.get_queue_attributes(QueueUrl=dead_letters, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"]
    queue = aws.sqs.create_queue(QueueName=f"requests-{results}", Attributes={
        "VisibilityTimeout": "0",  # a failed message is visible again at once, instead of after 6x the timeout
        "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(MAX_RECEIVES)})})[
        "QueueUrl"]
    for message in messages():
        aws.sqs.send_message(QueueUrl=queue, MessageBody=message["body"])
    invocations = 0
    for _ in range(10):  # bounded: 4 messages, 2 receives at most each
        received = aws.sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, AttributeNames=["All"]).get(
            "Messages", [])
        if not received:
            break
        invocations += 1
        failed = {f["itemIdentifier"] for f in handle_event(service, sqs_batch(received), None)["batchItemFailures"]}
        for message in received:
            if message["MessageId"] not in failed:
                aws.sqs.delete_message(QueueUrl=queue, ReceiptHandle=message["ReceiptHandle"])
    assert invocations == MAX_RECEIVES
    dead = aws.sqs.receive_message(QueueUrl=dead_letters, MaxNumberOfMessages=10).get("Messages", [])
    assert [json.loads(m["Body"])["id"] for m in dead] == ["needs-broken"]
    written = aws.keys(results)
    assert "out/reviews/1.json" in written and "out/bad-image.json" in written and len(written) == 3
