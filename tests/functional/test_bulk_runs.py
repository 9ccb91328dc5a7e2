"""Bulk runs with the real function: the bulk-inference state machine's definition played against moto's S3 over HTTP
(tests/support/step_functions.py), each batch handed to function.entry.handle_event in-process as Lambda would hand
it, and S3 Batch Operations invocations in both schema versions. S3 is reached through a proxy that answers
SlowDown on cue (kit/s3_proxy.py): the one fault moto cannot cause."""
from __future__ import annotations

import hashlib
import io
import json

import numpy as np
import pytest
from PIL import Image

from function.cache.memory import MemoryResultStore
from function.config import ServiceSettings
from function.entry import handle_event
from function.service import Service
from tests.support.aws_fixtures import aws, aws_environment, buckets  # noqa: F401
from tests.support.bulk_definition import EXAMPLE_SUBSTITUTIONS, substituted
from tests.support.function_fixtures import call, demo_models, registry  # noqa: F401
from kit.s3_proxy import S3Proxy
from tests.support.step_functions import StateMachineRehearsal

pytestmark = pytest.mark.slow
PREFIX, RESULTS = "archive/", "predictions/"
CLIENT_ATTEMPTS = 3  # the function's S3 client tries a throttled request this often before giving up on it


def digit_pngs(count: int) -> list[tuple[bytes, int]]:
    """sklearn's 8x8 digits as the grey PNGs the digits model was trained on (0..16 scaled to 0..255), labelled."""
    from sklearn.datasets import load_digits  # noqa: PLC0415

    digits = load_digits()
    pngs = []
    for image, target in zip(digits.images[:count], digits.target[:count]):
        buffer = io.BytesIO()
        Image.fromarray(np.round(image * 255.0 / 16.0).astype(np.uint8), mode="L").save(buffer, format="PNG")
        pngs.append((buffer.getvalue(), int(target)))
    return pngs


@pytest.fixture()
def proxy(aws_environment, monkeypatch):  # noqa: F811
    with S3Proxy(aws_environment.endpoint) as running:
        monkeypatch.setenv("AWS_ENDPOINT_URL_S3", running.url)  # the function's S3 calls go through it
        yield running


@pytest.fixture()
def bulk_service(registry, buckets, proxy):  # noqa: F811
    settings = ServiceSettings.from_env({}, model_dir=registry.model_dir, results_bucket=buckets[1],
                                        results_prefix=RESULTS, default_image_model="digits")
    return Service(settings, MemoryResultStore(max_items=10_000, ttl_seconds=3600), registry)


@pytest.fixture()
def computed(registry, monkeypatch):  # noqa: F811
    """Every input the digits and sentiment models actually computed (a result cache hit computes nothing)."""
    seen: list = []
    for name in ("digits", "sentiment"):
        task = registry.task(name)
        original = task.predict

        def counting(items, options, timings, original=original):
            results = original(items, options, timings)  # a refused batch raises first: nothing was computed
            seen.extend(items)
            return results
        monkeypatch.setattr(task, "predict", counting)
    return seen


def rehearsal(aws, buckets, service, before_invoke=None) -> StateMachineRehearsal:  # noqa: F811
    definition = substituted({**EXAMPLE_SUBSTITUTIONS, "InputBucket": buckets[0], "ResultsBucket": buckets[1],
                              "ResultsPrefix": RESULTS})

    def invoke(function_name, event):
        if before_invoke:
            before_invoke()
        return handle_event(service, event, None)
    return StateMachineRehearsal(definition, aws.s3, invoke)


def written_report(aws, execution) -> dict[str, list[dict]]:  # noqa: F811
    details = execution.output["ResultWriterDetails"]
    manifest = aws.read_json(details["Bucket"], details["Key"])
    return {status: [record for entry in files for record in aws.read_json(details["Bucket"], entry["Key"])]
            for status, files in manifest["ResultFiles"].items()}


def result_keys(aws, bucket: str) -> list[str]:  # noqa: F811
    keys = []
    for page in aws.s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=RESULTS):
        keys += [entry["Key"] for entry in page.get("Contents", [])]
    return keys


def test_a_thousand_objects_each_end_with_one_result_and_the_report_lists_exactly_the_bad_ones(
        aws, buckets, bulk_service, proxy, computed):  # noqa: F811
    source, results = buckets
    pngs = digit_pngs(960)
    objects = {f"{PREFIX}{index:04d}.png": data for index, (data, _) in enumerate(pngs)}
    labels = {f"{PREFIX}{index:04d}.png": target for index, (_, target) in enumerate(pngs)}
    for index in range(40):  # the same bytes again under other keys
        objects[f"{PREFIX}copies/{index:02d}.png"] = pngs[index * 7][0]
        labels[f"{PREFIX}copies/{index:02d}.png"] = pngs[index * 7][1]
    corrupt = {f"{PREFIX}corrupt/truncated.png": pngs[0][0][:40], f"{PREFIX}corrupt/notes.png": b"not an image",
               f"{PREFIX}corrupt/empty.png": b"", f"{PREFIX}corrupt/pdf.png": b"%PDF-1.7 a document"}
    objects.update(corrupt)
    missing = f"{PREFIX}0500.png"  # listed, then deleted before its batch reads it
    throttled = f"{PREFIX}0123.png"
    for key, data in objects.items():
        aws.s3.put_object(Bucket=source, Key=key, Body=data)
    assert len(objects) >= 1000
    proxy.slow_down("GET", f"/{source}/{throttled}", times=CLIENT_ATTEMPTS)  # more than the client's own retries

    def delete_the_missing_one_once():
        if missing in objects:
            aws.s3.delete_object(Bucket=source, Key=missing)
            del objects[missing]
    machine = rehearsal(aws, buckets, bulk_service, before_invoke=delete_the_missing_one_once)
    execution = machine.start_execution({"batchSize": 50, "options": {"top_k": 2}})

    assert execution.status == "SUCCEEDED", execution.cause
    every_key = set(labels) | set(corrupt)
    assert sorted(result_keys(aws, results)) == sorted(f"{RESULTS}{source}/{key}.json" for key in every_key)
    (run,) = execution.map_runs
    retried = [child for child in run.children if child.attempts != ["ok"]]
    assert [child.attempts for child in retried] == [["BatchNotFinished", "ok"]]
    assert throttled in {item["Key"] for item in retried[0].input["Items"]}
    assert proxy.refused == [("GET", f"/{source}/{throttled}")] * CLIENT_ATTEMPTS

    report = written_report(aws, execution)
    assert report["FAILED"] == []
    summaries = [json.loads(record["Output"]) for record in report["SUCCEEDED"]]
    failed = {entry["item"]: entry["code"] for s in summaries for entry in s["failed"]}
    assert failed == {**dict.fromkeys(corrupt, "unsupported_image"), missing: "object_not_found"}
    assert sum(s["answered"] for s in summaries) == len(every_key) - len(failed)
    assert all(len(record["Output"]) < 256 * 1024 for record in report["SUCCEEDED"])

    distinct_images = {data for key, data in objects.items() if key not in corrupt}
    assert len(computed) == len(distinct_images)  # duplicates, and the retried batch's answered items, from the cache
    reported = {entry["item"]: entry["label"] for s in summaries for entry in s["answers"]}
    assert set(reported) == set(labels) - {missing}
    right = sum(label == str(labels[key]) for key, label in reported.items())
    assert right / len(reported) >= 0.9  # real inference by the real model, not a stand-in
    answers = {key: aws.read_json(results, f"{RESULTS}{source}/{key}.json") for key in list(reported)[::97]}
    assert all(answer["predictions"][0]["label"] == reported[key] and len(answer["predictions"][0]["top_k"]) == 2
               for key, answer in answers.items())
    assert aws.read_json(results, f"{RESULTS}{source}/{missing}.json")["error"]["code"] == "object_not_found"
    corrupt_answer = aws.read_json(results, f"{RESULTS}{source}/{PREFIX}corrupt/notes.png.json")
    assert corrupt_answer["error"]["code"] == "unsupported_image"
    status, http_answer = call(bulk_service, "POST", "/classify", objects[f"{PREFIX}0007.png"], "image/png",
                               binary=True)
    assert status == 200 and http_answer["predictions"][0]["label"] == reported[f"{PREFIX}0007.png"]


def test_rows_of_texts_and_of_object_keys_answered_for_a_text_task(aws, buckets, bulk_service, computed):  # noqa: F811
    source, results = buckets
    aws.s3.put_object(Bucket=source, Key=f"{PREFIX}reviews/good.txt", Body="What a wonderful film.".encode())
    aws.s3.put_object(Bucket=source, Key=f"{PREFIX}reviews/latin1.txt", Body="Tr\xe8s mauvais".encode("latin-1"))
    rows = [{"text": "Loved every minute of it.", "id": "r/1"}, {"text": "Loved every minute of it.", "id": "r/2"},
            {"text": "Dreadful, I walked out."}, {"text": "   "}, {"text": "fine", "id": "../escape"},
            {"s3Key": f"{PREFIX}reviews/good.txt"}, {"s3Key": f"{PREFIX}reviews/latin1.txt"}, {"neither": 1}]
    aws.s3.put_object(Bucket=source, Key=f"{PREFIX}rows.jsonl", Body="\n".join(map(json.dumps, rows)).encode())
    execution = rehearsal(aws, buckets, bulk_service).start_execution(
        {"itemsKey": f"{PREFIX}rows.jsonl", "task": "sentiment", "batchSize": 4})
    assert execution.status == "SUCCEEDED", execution.cause
    summaries = [json.loads(r["Output"]) for r in written_report(aws, execution)["SUCCEEDED"]]
    failed = {entry["item"]: entry["code"] for s in summaries for entry in s["failed"]}
    assert failed == {"texts/" + hashlib.sha256(b"   ").hexdigest(): "empty_text",
                      "../escape": "invalid_item", f"{PREFIX}reviews/latin1.txt": "unreadable_text",
                      "Items[3]": "invalid_item"}
    loved = aws.read_json(results, f"{RESULTS}r/1.json")
    assert loved["model"] == "sentiment" and loved == aws.read_json(results, f"{RESULTS}r/2.json")
    assert aws.read_json(results, f"{RESULTS}{source}/{PREFIX}reviews/good.txt.json")["predictions"][0]["label"]
    assert sorted(computed) == sorted(["Loved every minute of it.", "Dreadful, I walked out.",
                                       "What a wonderful film."])  # the duplicate text once


@pytest.mark.parametrize("run_input, problem", [
    ({"task": "paint"}, "task must be one of"),
    ({"model": "no-such-model"}, "model_not_found"),
    ({"model": "sentiment"}, "wrong_model_task"),
    ({"options": {"topk": 3}}, "not options of classify"),
    ({"options": {"top_k": 0}}, "top_k"),
], ids=["task", "model", "wrong-task", "unknown-option", "bad-option"])
def test_a_run_input_the_function_cannot_act_on_fails_its_batches_without_retries(aws, buckets, bulk_service,  # noqa: F811
                                                                                  run_input, problem):
    aws.s3.put_object(Bucket=buckets[0], Key=f"{PREFIX}a.png", Body=digit_pngs(1)[0][0])
    execution = rehearsal(aws, buckets, bulk_service).start_execution(run_input)
    assert (execution.status, execution.error) == ("FAILED", "States.ExceedToleratedFailureThreshold")
    (child,) = execution.map_runs[0].children
    assert child.attempts == ["InvalidBatchInput"] and problem in child.cause
    assert result_keys(aws, buckets[1]) == []


def test_results_meant_for_another_bucket_are_refused(aws, buckets, bulk_service):  # noqa: F811
    event = {"Items": [{"Key": f"{PREFIX}a.png"}],
             "BatchInput": {"task": "classify", "bucket": buckets[0], "results": {"bucket": "elsewhere",
                                                                                    "prefix": RESULTS}}}
    with pytest.raises(Exception, match="results go to") as raised:
        handle_event(bulk_service, event, None)
    assert type(raised.value).__name__ == "InvalidBatchInput"


# ---- S3 Batch Operations ------------------------------------------------------------------------------------

def batch_operations_event(version: str, bucket: str, keys: list[tuple[str, str | None]],
                           user_arguments: dict | None = None) -> dict:
    """A LambdaInvoke invocation as S3 Batch Operations sends it; keys URL-encoded, as a CSV manifest holds them."""
    from urllib.parse import quote_plus  # noqa: PLC0415

    job = {"id": "job-7"}
    if version == "2.0":
        job["userArguments"] = user_arguments or {}
    tasks = []
    for index, (key, version_id) in enumerate(keys):
        task = {"taskId": f"task-{index}", "s3Key": quote_plus(key, safe="/"), "s3VersionId": version_id}
        task.update({"s3Bucket": bucket} if version == "2.0" else {"s3BucketArn": f"arn:aws:s3:::{bucket}"})
        tasks.append(task)
    return {"invocationSchemaVersion": version, "invocationId": "invocation-1", "job": job, "tasks": tasks}


def test_schema_1_0_tasks_are_answered_with_the_default_model_and_a_result_code_each(aws, buckets,  # noqa: F811
                                                                                  bulk_service):
    source, results = buckets
    (png, target), = digit_pngs(1)
    aws.s3.put_object(Bucket=source, Key=f"{PREFIX}my digit.png", Body=png)
    aws.s3.put_object(Bucket=source, Key=f"{PREFIX}broken.png", Body=b"GIF89a then nothing")
    event = batch_operations_event("1.0", source, [(f"{PREFIX}my digit.png", None), (f"{PREFIX}broken.png", None),
                                                   (f"{PREFIX}gone.png", None)])
    answer = handle_event(bulk_service, event, None)
    assert {k: answer[k] for k in ("invocationSchemaVersion", "treatMissingKeysAs", "invocationId")} == {
        "invocationSchemaVersion": "1.0", "treatMissingKeysAs": "PermanentFailure", "invocationId": "invocation-1"}
    succeeded, broken, gone = answer["results"]
    written = aws.read_json(results, f"{RESULTS}{source}/{PREFIX}my digit.png.json")["predictions"][0]
    assert succeeded == {"taskId": "task-0", "resultCode": "Succeeded",
                         "resultString": f"{written['label']} {written['score']:.3f}"}
    assert written["label"] == str(target) and written["label"] == succeeded["resultString"].split()[0]
    assert (broken["resultCode"], broken["resultString"].split(":")[0]) == ("PermanentFailure", "unsupported_image")
    assert (gone["resultCode"], gone["resultString"].split(":")[0]) == ("PermanentFailure", "object_not_found")
    assert aws.read_json(results, f"{RESULTS}{source}/{PREFIX}gone.png.json")["error"]["code"] == "object_not_found"


def test_schema_2_0_user_arguments_pick_the_task_model_and_options_and_a_version(aws, buckets,  # noqa: F811
                                                                              bulk_service):
    source, results = buckets
    aws.s3.put_bucket_versioning(Bucket=source, VersioningConfiguration={"Status": "Enabled"})
    first = aws.s3.put_object(Bucket=source, Key=f"{PREFIX}review.txt", Body=b"An absolute delight.")["VersionId"]
    aws.s3.put_object(Bucket=source, Key=f"{PREFIX}review.txt", Body=b"Awful. Avoid.")
    event = batch_operations_event("2.0", source, [(f"{PREFIX}review.txt", first), (f"{PREFIX}review.txt", "nope")],
                                   {"task": "sentiment", "model": "sentiment", "options": "{}"})
    named_version, no_such_version = handle_event(bulk_service, event, None)["results"]
    status, http_answer = call(bulk_service, "POST", "/sentiment", {"text": "An absolute delight."})
    assert named_version["resultCode"] == "Succeeded"
    assert named_version["resultString"].split()[0] == http_answer["predictions"][0]["label"]
    assert http_answer["predictions"][0]["cached"] is True  # the job computed that version's text
    assert (no_such_version["resultCode"], no_such_version["resultString"].split(":")[0]) == (
        "PermanentFailure", "object_not_found")
    (png, _), = digit_pngs(1)
    aws.s3.put_object(Bucket=source, Key=f"{PREFIX}d.png", Body=png)
    ranked = handle_event(bulk_service, batch_operations_event(
        "2.0", source, [(f"{PREFIX}d.png", None)], {"options": "{\"top_k\": 3}"}), None)["results"]
    assert ranked[0]["resultCode"] == "Succeeded"
    assert len(aws.read_json(results, f"{RESULTS}{source}/{PREFIX}d.png.json")["predictions"][0]["top_k"]) == 3


def test_schema_2_0_throttling_is_a_temporary_failure_and_bad_arguments_a_permanent_one(aws, buckets,  # noqa: F811
                                                                                      bulk_service, proxy):
    source, results = buckets
    (png, _), = digit_pngs(1)
    aws.s3.put_object(Bucket=source, Key=f"{PREFIX}d.png", Body=png)
    proxy.slow_down("GET", f"/{source}/{PREFIX}d.png", times=CLIENT_ATTEMPTS)
    event = batch_operations_event("2.0", source, [(f"{PREFIX}d.png", None)])
    (throttled,) = handle_event(bulk_service, event, None)["results"]
    assert (throttled["resultCode"], throttled["resultString"].split(":")[0]) == ("TemporaryFailure", "SlowDown")
    assert result_keys(aws, results) == []  # nothing written for a task S3 will retry
    (retried,) = handle_event(bulk_service, event, None)["results"]  # as the job retries it
    assert retried["resultCode"] == "Succeeded"
    for arguments, problem in (({"task": "paint"}, "task must be one of"), ({"options": "{not json"}, "not JSON"),
                               ({"model": "minilm"}, "wrong_model_task")):
        (refused,) = handle_event(bulk_service, batch_operations_event("2.0", source, [(f"{PREFIX}d.png", None)],
                                                                       arguments), None)["results"]
        assert refused["resultCode"] == "PermanentFailure" and "InvalidBatchInput" in refused["resultString"]
        assert problem in refused["resultString"]
