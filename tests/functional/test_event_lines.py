"""One recorder for every door's line (function/recorder.py): whatever door a container's first event comes through
(HTTP, the warm-up, an upload, SQS, Distributed Map, S3 Batch Operations, or an event its adapter cannot act on),
that event's line says cold_start and is a valid EMF document that counts it; the next event's does not. Error lines
publish their stage times; text models' lines publish their token count. Against moto's S3 over HTTP."""
from __future__ import annotations

import json
import logging

import pytest

from function.config import MetricsSettings
from function.entry import handle_event
from function.log import JsonLineFormatter
from tests.functional.test_door_properties import PNGS
from tests.support import emf
from kit.aws_events import s3_object_created, sqs_batch
from tests.support.aws_fixtures import aws, aws_environment  # noqa: F401
from kit.events import EVENT_BUILDERS
from tests.support.function_fixtures import demo_models, make_service, registry  # noqa: F401

pytestmark = pytest.mark.slow
NAMESPACE = "event-lines"
RESULTS = "predictions/"


def lines_of(caplog) -> list[dict]:
    """Every line the function wrote, as the JSON the Lambda log stream holds."""
    formatter = JsonLineFormatter()
    return [json.loads(formatter.format(record)) for record in caplog.records if record.name == "function"]


def http(path: str, body=None, method: str = "POST") -> dict:
    return EVENT_BUILDERS["2.0"](method, path, body, "application/json", False)


def first_events(aws, source: str, results: str) -> dict:  # noqa: F811
    aws.s3.put_object(Bucket=source, Key="uploads/0.png", Body=PNGS[0])
    aws.s3.put_object(Bucket=source, Key="t.txt", Body=b"What a wonderful film.")
    batch_input = {"task": "sentiment", "model": "", "options": {}, "bucket": source,
                   "results": {"bucket": results, "prefix": RESULTS}}
    return {
        "http": http("/sentiment", {"text": "Loved it."}),
        "warmup": {"warmup": True},
        "upload": s3_object_created(source, "uploads/0.png", len(PNGS[0])),
        "sqs": sqs_batch([{"messageId": "m-1", "body": json.dumps({"route": "/sentiment", "text": "Fine."})}]),
        "distributed_map": {"Items": [{"Key": "t.txt"}], "BatchInput": batch_input},
        "s3_batch_operations": {"invocationSchemaVersion": "2.0", "invocationId": "i", "job": {
            "id": "j", "userArguments": {"task": "sentiment"}}, "tasks": [
            {"taskId": "t0", "s3Bucket": source, "s3Key": "t.txt", "s3VersionId": None}]},
        "invalid_batch_input": {"Items": [{"Key": "t.txt"}], "BatchInput": {**batch_input, "task": ["sentiment"]}},
    }


@pytest.mark.parametrize("door", ["http", "warmup", "upload", "sqs", "distributed_map", "s3_batch_operations",
                                  "invalid_batch_input"])
def test_a_containers_first_event_through_any_door_has_one_cold_start_line_with_its_metrics(
        registry, aws_environment, caplog, door):  # noqa: F811
    source, results = aws_environment.bucket(), aws_environment.bucket()
    service = make_service(registry, metrics=MetricsSettings(namespace=NAMESPACE), results_bucket=results,
                           results_prefix=RESULTS, default_image_model="digits", uploads_prefix="uploads/")
    with caplog.at_level(logging.INFO, logger="function"):
        try:
            handle_event(service, first_events(aws_environment, source, results)[door], None)
        except Exception as exc:  # noqa: BLE001
            assert door == "invalid_batch_input" and type(exc).__name__ == "InvalidBatchInput", exc
        first = len(lines_of(caplog))
        handle_event(service, http("/health", method="GET"), None)
    lines = [line for line in lines_of(caplog) if "_aws" in line]  # the events' lines (not SQS's own notes)
    assert len(lines_of(caplog)) > first
    cold = [line for line in lines if line["cold_start"]]
    assert len(cold) == 1 and cold[0] is lines[0], [line["msg"] if "msg" in line else line for line in lines]
    assert lines[-1]["route"] == "/health" and lines[-1]["cold_start"] is False
    document = emf.validate(json.dumps(lines[0]))
    assert emf.metric_values(document)["cold_starts"] == 1
    assert "total" in document["timings_ms"]
    if door == "invalid_batch_input":
        assert (document["route"], document["status"], document["error_code"]) == (
            "event:distributed_map", 400, "InvalidBatchInput")


def test_an_error_line_publishes_its_stage_times(registry, caplog):  # noqa: F811
    service = make_service(registry, metrics=MetricsSettings(namespace=NAMESPACE))
    with caplog.at_level(logging.INFO, logger="function"):
        handle_event(service, http("/sentiment", {"text": "   "}), None)
    (line,) = lines_of(caplog)
    assert line["error_code"] == "empty_text" and "parse" in line["timings_ms"]
    points = {(point.name, point.dimensions) for point in emf.datapoints(emf.validate(json.dumps(line)))}
    assert ("parse_ms", (("route", "/sentiment"), ("error_code", "empty_text"))) in points


@pytest.mark.parametrize("path, body", [("/embed", {"texts": ["a cat", "a dog on a mat"]}),
                                        ("/sentiment", {"text": "What a wonderful film."})])
def test_a_text_models_line_publishes_its_token_count(registry, caplog, path, body):  # noqa: F811
    service = make_service(registry, metrics=MetricsSettings(namespace=NAMESPACE))
    with caplog.at_level(logging.INFO, logger="function"):
        handle_event(service, http(path, body), None)
    (line,) = lines_of(caplog)
    assert isinstance(line["tokens"], int) and line["tokens"] > 0
    points = {point.name: point for point in emf.datapoints(emf.validate(json.dumps(line)))}
    assert points["tokens"].values == (line["tokens"],)
    assert dict(points["tokens"].dimensions) == {"model": line["model"], "model_version": line["model_version"]}
