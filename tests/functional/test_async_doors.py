"""The asynchronous doors (Distributed Map, S3 Batch Operations, S3 uploads) take every task kind the HTTP path
takes, a multi-label model included, and end each item answered or refused with its code, never an escape: against
moto's S3 over HTTP, reached through a proxy that plays the refusals moto cannot (kit/s3_proxy.py)."""
from __future__ import annotations

import base64
import io
import json
import logging
import shutil
from pathlib import Path
from urllib.parse import quote, quote_plus

import numpy as np
import pytest
from PIL import Image

from function.catalog.registry import ModelRegistry
from function.entry import handle_event
from kit.aws_events import s3_object_created, sqs_batch
from tests.support.aws_fixtures import aws, aws_environment, buckets  # noqa: F401
from tests.support.function_fixtures import call, demo_models, make_service  # noqa: F401
from tests.support.model_copies import multi_label_copy
from kit.s3_proxy import S3Proxy

pytestmark = pytest.mark.slow
RESULTS = "predictions/"
DEEP = 50_000  # past Python's recursion limit: json.loads and repr of it raise RecursionError


def digit_pngs(count: int) -> list[bytes]:
    """sklearn's 8x8 digits as the grey PNGs the digits model was trained on."""
    from sklearn.datasets import load_digits  # noqa: PLC0415

    pngs = []
    for image in load_digits().images[:count]:
        buffer = io.BytesIO()
        Image.fromarray(np.round(image * 255.0 / 16.0).astype(np.uint8), mode="L").save(buffer, format="PNG")
        pngs.append(buffer.getvalue())
    return pngs


@pytest.fixture(scope="module")
def door_registry(demo_models, tmp_path_factory) -> ModelRegistry:  # noqa: F811
    """digits, `digit_tags` (the digits model served as multi-label: each unit its own label's score) and
    sentiment."""
    root = tmp_path_factory.mktemp("door_models")
    shutil.copytree(demo_models / "digits", root / "digits")
    multi_label_copy(demo_models / "digits", root, "digit_tags")
    (root / "sentiment").symlink_to(Path(demo_models / "sentiment").resolve())
    return ModelRegistry(root)


@pytest.fixture()
def proxy(aws_environment, monkeypatch):  # noqa: F811
    with S3Proxy(aws_environment.endpoint) as running:
        monkeypatch.setenv("AWS_ENDPOINT_URL_S3", running.url)
        yield running


@pytest.fixture()
def door_service(door_registry, buckets, proxy):
    return make_service(door_registry, results_bucket=buckets[1], results_prefix=RESULTS,
                        default_image_model="digit_tags", uploads_prefix="uploads/")


def map_batch(bucket: str, items: list, results_bucket: str, **batch_input) -> dict:
    return {"Items": items, "BatchInput": {"task": "classify", "model": "", "options": {}, "bucket": bucket,
                                           "results": {"bucket": results_bucket, "prefix": RESULTS}, **batch_input}}


def batch_operations(tasks: list[tuple[str, str, str | None]], **user_arguments) -> dict:
    """A schema 2.0 invocation for (bucket, key, version) tasks."""
    return {"invocationSchemaVersion": "2.0", "invocationId": "inv-1",
            "job": {"id": "job-1", "userArguments": user_arguments},
            "tasks": [{"taskId": f"t{i}", "s3Bucket": bucket, "s3Key": quote_plus(key, safe="/"), "s3VersionId": v}
                      for i, (bucket, key, v) in enumerate(tasks)]}


def http_labels(service, png: bytes, threshold: float) -> list[str]:
    status, answer = call(service, "POST", "/classify", {"image": base64.b64encode(png).decode(),
                                                         "model": "digit_tags", "threshold": threshold})
    assert status == 200, answer
    return [entry["label"] for entry in answer["predictions"][0]["labels"]]


# ---- case 1: a multi-label model through every door ------------------------------------------------------------

def test_a_multi_label_model_answers_a_distributed_map_batch_as_classify_would(aws, buckets, door_service):  # noqa: F811
    source, results = buckets
    pngs = digit_pngs(3)
    for index, png in enumerate(pngs):
        aws.s3.put_object(Bucket=source, Key=f"d/{index}.png", Body=png)
    event = map_batch(source, [{"Key": f"d/{i}.png"} for i in range(3)], results, model="digit_tags",
                      options={"threshold": 0.01})
    summary = handle_event(door_service, event, None)
    assert (summary["answered"], summary["refused"]) == (3, 0)
    for index, png in enumerate(pngs):
        expected = http_labels(door_service, png, 0.01)
        assert summary["answers"][index] == {"item": f"d/{index}.png", "labels": expected}
        written = aws.read_json(results, f"{RESULTS}{source}/d/{index}.png.json")["predictions"][0]
        assert [entry["label"] for entry in written["labels"]] == expected


def test_a_multi_label_model_answers_s3_batch_operations_tasks(aws, buckets, door_service):  # noqa: F811
    source, results = buckets
    (png,) = digit_pngs(1)
    aws.s3.put_object(Bucket=source, Key="d/0.png", Body=png)
    (result,) = handle_event(door_service, batch_operations([(source, "d/0.png", None)], model="digit_tags",
                                                            options='{"threshold": 0.2}'), None)["results"]
    assert result["resultCode"] == "Succeeded"
    assert result["resultString"] == "labels: " + (" ".join(http_labels(door_service, png, 0.2)) or "none")
    assert "labels" in aws.read_json(results, f"{RESULTS}{source}/d/0.png.json")["predictions"][0]


def test_an_upload_to_a_multi_label_default_model_is_tagged_with_its_labels(aws, buckets, door_service):  # noqa: F811
    source, results = buckets
    (png,) = digit_pngs(1)
    aws.s3.put_object(Bucket=source, Key="uploads/0.png", Body=png)
    outcome = handle_event(door_service, s3_object_created(source, "uploads/0.png", len(png)), None)
    expected = http_labels(door_service, png, 0.5)  # the route's default threshold
    assert outcome["uploads"] == [{"key": "uploads/0.png", "outcome": "classified", "labels": expected}]
    tags = aws.tags(source, "uploads/0.png")
    assert tags["labels"] == "/".join(expected) and "label" not in tags and tags["model_version"]
    assert "labels" in aws.read_json(results, f"{RESULTS}{source}/uploads/0.png.json")["predictions"][0]


def test_a_multi_label_model_answers_an_sqs_message_as_classify_would(aws, buckets, door_service):  # noqa: F811
    results = buckets[1]
    (png,) = digit_pngs(1)
    body = {"route": "/classify", "id": "tags/0", "image": base64.b64encode(png).decode(), "threshold": 0.2}
    answer = handle_event(door_service, sqs_batch([{"messageId": "m-1", "body": json.dumps(body)}]), None)
    assert answer == {"batchItemFailures": []}
    written = aws.read_json(results, f"{RESULTS}tags/0.json")["predictions"][0]
    assert [entry["label"] for entry in written["labels"]] == http_labels(door_service, png, 0.2)


def test_a_threshold_for_a_single_label_model_is_a_run_the_function_cannot_act_on(aws, buckets,  # noqa: F811
                                                                                 door_service):
    with pytest.raises(Exception, match="threshold") as raised:
        handle_event(door_service, map_batch(buckets[0], [{"Key": "a.png"}], buckets[1], model="digits",
                                             options={"threshold": 0.3}), None)
    assert type(raised.value).__name__ == "InvalidBatchInput"


# ---- case 2: result keys that cannot collide -------------------------------------------------------------------

def test_batch_operations_results_of_one_key_in_two_buckets_or_two_versions_never_overwrite(aws, buckets,  # noqa: F811
                                                                                             door_service):
    first, results = buckets
    second = aws.bucket()
    pngs = digit_pngs(4)
    aws.s3.put_object(Bucket=first, Key="same.png", Body=pngs[0])
    aws.s3.put_object(Bucket=second, Key="same.png", Body=pngs[1])
    aws.s3.put_bucket_versioning(Bucket=second, VersioningConfiguration={"Status": "Enabled"})
    old = aws.s3.put_object(Bucket=second, Key="v.png", Body=pngs[2])["VersionId"]
    new = aws.s3.put_object(Bucket=second, Key="v.png", Body=pngs[3])["VersionId"]
    tasks = [(first, "same.png", None), (second, "same.png", None), (second, "v.png", old), (second, "v.png", new)]
    answer = handle_event(door_service, batch_operations(tasks, model="digits"), None)
    assert [r["resultCode"] for r in answer["results"]] == ["Succeeded"] * 4
    keys = [f"{RESULTS}{first}/same.png.json", f"{RESULTS}{second}/same.png.json",
            f"{RESULTS}{second}@{quote(old, safe='')}/v.png.json",
            f"{RESULTS}{second}@{quote(new, safe='')}/v.png.json"]
    labels = [aws.read_json(results, key)["predictions"][0]["label"] for key in keys]
    assert labels == [r["resultString"].split()[0] for r in answer["results"]]
    assert labels == ["0", "1", "2", "3"]  # each result file holds its own object's answer


def test_an_upload_and_bulk_runs_of_one_key_in_two_buckets_never_overwrite(aws, buckets, door_service):  # noqa: F811
    """Every door that answers an object writes it to the one object result key (function/door_s3.py): an upload,
    a job's tasks of the same key in other buckets or of a bucket named like the upload's prefix, and a Distributed
    Map item whose key is the upload's result path, each keep their own answer."""
    source, results = buckets
    other, named_like_the_prefix = aws.bucket(), aws.bucket()
    pngs = digit_pngs(3)
    aws.s3.put_object(Bucket=other, Key="uploads/0.png", Body=pngs[1])
    aws.s3.put_object(Bucket=named_like_the_prefix, Key="0.png", Body=pngs[2])
    tasks = [(other, "uploads/0.png", None), (named_like_the_prefix, "0.png", None)]
    answer = handle_event(door_service, batch_operations(tasks, model="digits"), None)
    assert [r["resultCode"] for r in answer["results"]] == ["Succeeded"] * 2
    aws.s3.put_object(Bucket=source, Key="uploads/0.png", Body=pngs[0])
    outcome = handle_event(door_service, s3_object_created(source, "uploads/0.png", len(pngs[0])), None)
    assert outcome["uploads"][0]["outcome"] == "classified"
    upload_answer = aws.read_json(results, f"{RESULTS}{source}/uploads/0.png.json")
    assert upload_answer["model"] == "digit_tags" and "labels" in upload_answer["predictions"][0]  # its default
    assert [aws.read_json(results, f"{RESULTS}{bucket}/{key}.json")["predictions"][0]["label"]
            for bucket, key, _ in tasks] == ["1", "2"]  # untouched by the upload
    # A Distributed Map run over a bucket holding a key named like the upload's result path.
    aws.s3.put_object(Bucket=other, Key=f"{source}/uploads/0.png", Body=pngs[2])
    summary = handle_event(door_service, map_batch(other, [{"Key": f"{source}/uploads/0.png"}], results,
                                                   model="digits"), None)
    assert summary["answered"] == 1
    assert aws.read_json(results, f"{RESULTS}{source}/uploads/0.png.json") == upload_answer  # still the upload's
    assert aws.read_json(results, f"{RESULTS}{other}/{source}/uploads/0.png.json")["predictions"][0]["label"] == "2"


def test_a_result_key_over_s3s_limit_is_that_tasks_permanent_failure(aws, buckets, door_service):  # noqa: F811
    source, results = buckets
    key = "k" * 1000 + ".png"
    aws.s3.put_object(Bucket=source, Key=key, Body=digit_pngs(1)[0])
    (result,) = handle_event(door_service, batch_operations([(source, key, None)], model="digits"), None)["results"]
    assert (result["resultCode"], result["resultString"].split(":")[0]) == ("PermanentFailure", "invalid_item")


# ---- case 3: a row whose text is not a string ------------------------------------------------------------------

def test_rows_whose_text_is_not_a_string_are_refused_alone(aws, buckets, door_service):  # noqa: F811
    source, results = buckets
    items = [{"text": None}, {"text": 7}, {"text": ["a", "list"]}, {"text": {"a": 1}, "id": "named"},
             {"text": "Loved every minute of it.", "id": "good"}]
    summary = handle_event(door_service, map_batch(source, items, results, task="sentiment"), None)
    assert summary["answered"] == 1 and summary["answers"][0]["item"] == "good"
    assert {entry["item"]: entry["code"] for entry in summary["failed"]} == {
        "Items[0]": "invalid_item", "Items[1]": "invalid_item", "Items[2]": "invalid_item", "named": "invalid_item"}
    assert aws.read_json(results, f"{RESULTS}good.json")["predictions"][0]["label"]


# ---- case 4: run settings of the wrong shape -------------------------------------------------------------------

def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("batch_input, problem", [
    ({"task": ["classify"]}, "task must be one of"),
    ({"task": nested(DEEP)}, "task must be one of"),
    ({"options": nested(DEEP)}, "options must be a JSON object"),
    ({"options": {"top_k": nested(DEEP)}}, "top_k"),
    ({"options": {"deep": nested(DEEP)}}, "not options of classify"),
    ({"model": nested(DEEP)}, "'model' must be"),
], ids=["task-list", "task-deep", "options-deep", "option-value-deep", "unknown-option-deep", "model-deep"])
def test_batch_input_of_the_wrong_shape_is_invalid_batch_input_never_a_type_or_recursion_error(
        buckets, door_service, batch_input, problem):
    with pytest.raises(Exception, match=problem) as raised:
        handle_event(door_service, map_batch(buckets[0], [{"Key": "a.png"}], buckets[1], **batch_input), None)
    assert type(raised.value).__name__ == "InvalidBatchInput"


@pytest.mark.parametrize("arguments, problem", [
    ({"options": "[" * DEEP + "]" * DEEP}, "nests too deeply"),
    ({"task": ["sentiment"]}, "task must be one of"),
    ({"options": '{"threshold": "high"}', "model": "digit_tags"}, "threshold"),
], ids=["options-deep", "task-list", "bad-threshold"])
def test_batch_operations_arguments_of_the_wrong_shape_are_a_permanent_failure(aws, buckets, door_service,  # noqa: F811
                                                                              arguments, problem):
    aws.s3.put_object(Bucket=buckets[0], Key="a.png", Body=digit_pngs(1)[0])
    (result,) = handle_event(door_service, batch_operations([(buckets[0], "a.png", None)], **arguments),
                             None)["results"]
    assert result["resultCode"] == "PermanentFailure" and problem in result["resultString"]


# ---- case 5: S3 refusing a write for good ----------------------------------------------------------------------

def test_a_result_write_s3_refuses_for_good_is_a_permanent_failure_not_a_retry(aws, buckets, door_service,  # noqa: F811
                                                                               proxy):
    source, results = buckets
    pngs = digit_pngs(2)
    for index, png in enumerate(pngs):
        aws.s3.put_object(Bucket=source, Key=f"{index}.png", Body=png)
    proxy.deny("PUT", f"/{results}/{RESULTS}{source}/0.png.json", times=10)
    denied, written = handle_event(door_service, batch_operations([(source, "0.png", None), (source, "1.png", None)],
                                                                  model="digits"), None)["results"]
    assert (denied["resultCode"], denied["resultString"].split(":")[0]) == ("PermanentFailure", "AccessDenied")
    assert written["resultCode"] == "Succeeded"
    proxy.deny("PUT", f"/{results}/{RESULTS}{source}/0.png.json", times=10)
    summary = handle_event(door_service, map_batch(source, [{"Key": "0.png"}, {"Key": "1.png"}], results,
                                                   model="digits"), None)  # no BatchNotFinished
    assert [(entry["item"], entry["code"]) for entry in summary["failed"]] == [("0.png", "AccessDenied")]
    assert summary["answered"] == 1


def test_an_uploads_result_write_s3_refuses_for_good_is_logged_and_not_retried(aws, buckets, door_service,  # noqa: F811
                                                                              proxy, caplog):
    source, results = buckets
    (png,) = digit_pngs(1)
    aws.s3.put_object(Bucket=source, Key="uploads/0.png", Body=png)
    proxy.deny("PUT", f"/{results}/{RESULTS}{source}/uploads/0.png.json", times=10)
    with caplog.at_level(logging.INFO, logger="function"):
        outcome = handle_event(door_service, s3_object_created(source, "uploads/0.png", len(png)), None)  # no raise
    (reported,) = outcome["uploads"]
    assert (reported["outcome"], reported["error_code"]) == ("refused_by_s3", "AccessDenied")
    (line,) = [r for r in caplog.records if r.getMessage() == "s3 upload"]
    assert line.levelno == logging.ERROR and line.fields["error_code"] == "AccessDenied"
    assert aws.keys(results) == []


def test_an_sqs_answer_s3_refuses_for_good_is_logged_with_its_code(aws, buckets, door_service, proxy,  # noqa: F811
                                                                      caplog):
    results = buckets[1]
    body = {"route": "/classify", "id": "denied", "image": base64.b64encode(digit_pngs(1)[0]).decode(),
            "model": "digits"}
    proxy.deny("PUT", f"/{results}/{RESULTS}denied.json", times=10)
    with caplog.at_level(logging.INFO, logger="function"):
        answer = handle_event(door_service, sqs_batch([{"messageId": "m-1", "body": json.dumps(body)}]), None)
    assert answer == {"batchItemFailures": [{"itemIdentifier": "m-1"}]}  # kept: the dead-letter queue, in the end
    (line,) = [r for r in caplog.records if r.getMessage().startswith("sqs result refused by S3")]
    assert line.levelno == logging.ERROR and line.fields["error_code"] == "AccessDenied"


# ---- case 11: an upload event whose size is no integer -----------------------------------------------------------

@pytest.mark.parametrize("size", [float("inf"), float("nan"), 1e300, "12", True, None, [3]],
                         ids=["infinity", "nan", "huge-float", "text", "bool", "null", "list"])
def test_an_upload_whose_size_is_not_an_integer_is_read_and_checked_by_its_own_length(aws, buckets,  # noqa: F811
                                                                                       door_service, size):
    source, results = buckets
    (png,) = digit_pngs(1)
    aws.s3.put_object(Bucket=source, Key="uploads/s.png", Body=png)
    event = s3_object_created(source, "uploads/s.png", len(png))
    event["Records"][0]["s3"]["object"]["size"] = size
    (outcome,) = handle_event(door_service, event, None)["uploads"]
    assert outcome["outcome"] == "classified"


# ---- case 12: a bulk batch's line is an event's line ------------------------------------------------------------

@pytest.mark.parametrize("door", ["distributed_map", "s3_batch_operations"])
def test_a_containers_first_event_as_a_batch_reports_its_cold_start_and_its_metrics(aws, buckets, door_service,  # noqa: F811
                                                                                    door, caplog):
    source, results = buckets
    aws.s3.put_object(Bucket=source, Key="t.txt", Body=b"What a wonderful film.")
    event = (map_batch(source, [{"Key": "t.txt"}], results, task="sentiment") if door == "distributed_map"
             else batch_operations([(source, "t.txt", None)], task="sentiment"))
    with caplog.at_level(logging.INFO, logger="function"):
        handle_event(door_service, event, None)
        call(door_service, "GET", "/health")
    (batch,) = [record.fields for record in caplog.records if record.getMessage() == "bulk batch"]
    (http,) = [record.fields for record in caplog.records if record.getMessage() == "request"]
    assert (batch["cold_start"], http["cold_start"]) == (True, False)  # the batch was the container's first event
    assert batch["route"] == f"bulk:{door}" and batch["status"] == 200
    metrics = json.loads(str(batch["_aws"]))["CloudWatchMetrics"]
    names = {metric["Name"] for directive in metrics for metric in directive["Metrics"]}
    assert {"cold_starts", "requests", "total_ms", "invoke_ms", "batch"} <= names  # the stages are metrics too
    assert batch["cold_starts"] == 1 and batch["batch"] == 1
