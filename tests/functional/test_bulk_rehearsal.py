"""The rehearsal of the bulk-inference state machine (tests/support/step_functions.py) plays the definition as Step
Functions would, against moto's S3 over HTTP: a stand-in worker here, so that what is checked is the definition
and its player (batching, retries, the failure threshold, ResultWriter's files), not the function."""
from __future__ import annotations

import json

import pytest

from tests.support.aws_fixtures import aws, buckets  # noqa: F401
from tests.support.bulk_definition import EXAMPLE_SUBSTITUTIONS, substituted
from tests.support.step_functions import LambdaServiceError, StateMachineRehearsal

pytestmark = pytest.mark.slow


class BatchNotFinished(RuntimeError):
    """Named as the function's transient error is: the definition retries it by this name."""


class InvalidBatchInput(ValueError):
    pass


def rehearsal(aws, buckets, worker) -> StateMachineRehearsal:  # noqa: F811
    source, results = buckets
    definition = substituted({**EXAMPLE_SUBSTITUTIONS, "InputBucket": source, "ResultsBucket": results})
    return StateMachineRehearsal(definition, aws.s3, worker)


def put_objects(aws, bucket: str, count: int, prefix: str = "archive/") -> list[str]:  # noqa: F811
    keys = [f"{prefix}{index:04d}.png" for index in range(count)]
    for key in keys:
        aws.s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    return keys


def report(aws, execution) -> dict[str, list[dict]]:  # noqa: F811
    """What ResultWriter wrote, by status, read back through its manifest."""
    details = execution.output["ResultWriterDetails"]
    manifest = aws.read_json(details["Bucket"], details["Key"])
    return {status: [record for entry in files for record in aws.read_json(details["Bucket"], entry["Key"])]
            for status, files in manifest["ResultFiles"].items()}


def test_a_prefix_is_listed_batched_and_every_batch_reported(aws, buckets):  # noqa: F811
    keys = put_objects(aws, buckets[0], 23)
    put_objects(aws, buckets[0], 3, prefix="elsewhere/")  # outside the run's prefix
    events = []

    def worker(function_name, event):
        events.append(event)
        return {"keys": [item["Key"] for item in event["Items"]]}
    execution = rehearsal(aws, buckets, worker).start_execution({"batchSize": 5, "options": {"top_k": 2}})
    assert execution.status == "SUCCEEDED", execution.cause
    assert [len(event["Items"]) for event in events] == [5, 5, 5, 5, 3]
    assert [item["Key"] for event in events for item in event["Items"]] == keys
    assert set(events[0]["Items"][0]) == {"Etag", "Key", "LastModified", "Size", "StorageClass"}
    assert events[0]["BatchInput"] == {"task": "classify", "model": "", "options": {"top_k": 2},
                                       "bucket": buckets[0], "results": {"bucket": buckets[1],
                                                                         "prefix": "predictions/"}}
    (run,) = execution.map_runs
    assert run.max_concurrency == 100 and run.tolerated_failure_percentage == 5  # the deploy's defaults
    written = report(aws, execution)
    assert [json.loads(r["Output"])["keys"] for r in written["SUCCEEDED"]] == [
        [item["Key"] for item in event["Items"]] for event in events]
    assert written["FAILED"] == [] and execution.output["ResultWriterDetails"]["Key"].startswith(
        "bulk-reports/step-functions/")


def test_rows_of_a_json_lines_or_csv_file_become_the_items(aws, buckets):  # noqa: F811
    aws.s3.put_object(Bucket=buckets[0], Key="archive/texts.jsonl",
                      Body=b'{"text": "Loved it.", "id": "r/1"}\n{"s3Key": "archive/a.txt"}\n')
    aws.s3.put_object(Bucket=buckets[0], Key="archive/texts.csv", Body=b'id,text\nr/2,"Never, ever again."\n')
    seen = []
    machine = rehearsal(aws, buckets, lambda name, event: seen.append(event["Items"]) or {})
    for key in ("archive/texts.jsonl", "archive/texts.csv"):
        assert machine.start_execution({"itemsKey": key, "task": "sentiment"}).status == "SUCCEEDED"
    assert seen == [[{"text": "Loved it.", "id": "r/1"}, {"s3Key": "archive/a.txt"}],
                    [{"id": "r/2", "text": "Never, ever again."}]]
    assert [run.state for run in machine.execution.map_runs] == ["RowsOfCsv"]


def test_the_functions_transient_error_and_lambda_throttling_are_retried_until_they_pass(aws, buckets):  # noqa: F811
    put_objects(aws, buckets[0], 4)
    failures = iter([BatchNotFinished("S3 SlowDown on archive/0001.png"),
                     LambdaServiceError("Lambda.TooManyRequestsException")])

    def worker(function_name, event):
        failure = next(failures, None) if event["Items"][0]["Key"] == "archive/0002.png" else None
        if failure:
            raise failure
        return {"done": len(event["Items"])}
    execution = rehearsal(aws, buckets, worker).start_execution({"batchSize": 2})
    assert execution.status == "SUCCEEDED", execution.cause
    (run,) = execution.map_runs
    assert [child.attempts for child in run.children] == [
        ["ok"], ["BatchNotFinished", "Lambda.TooManyRequestsException", "ok"]]
    assert len(execution.retry_waits) == 2 and all(0 <= wait <= 60 for wait in execution.retry_waits)


def test_a_batch_failing_past_its_retries_fails_the_run_past_the_tolerated_percentage(aws, buckets):  # noqa: F811
    put_objects(aws, buckets[0], 10)

    def worker(function_name, event):
        if event["Items"][0]["Key"] == "archive/0000.png":
            raise BatchNotFinished("never passes")
        return {}
    machine = rehearsal(aws, buckets, worker)
    tolerated = machine.start_execution({"batchSize": 1, "toleratedFailurePercentage": 10})
    assert tolerated.status == "SUCCEEDED"  # 1 of 10 batches is 10%: not more than tolerated
    (failed,) = tolerated.map_runs[0].failed
    assert failed.attempts == ["BatchNotFinished"] * 6  # the first try and the 5 retries
    written = report(aws, tolerated)
    assert [json.loads(r["Input"])["Items"][0]["Key"] for r in written["FAILED"]] == ["archive/0000.png"]
    assert written["FAILED"][0]["Error"] == "BatchNotFinished"
    strict = machine.start_execution({"batchSize": 1, "toleratedFailurePercentage": 0})
    assert (strict.status, strict.error) == ("FAILED", "States.ExceedToleratedFailureThreshold")


def test_an_error_the_definition_does_not_retry_fails_its_batch_at_once(aws, buckets):  # noqa: F811
    put_objects(aws, buckets[0], 3)

    def worker(function_name, event):
        raise InvalidBatchInput("no such task")
    execution = rehearsal(aws, buckets, worker).start_execution({"task": "paint"})
    assert (execution.status, execution.error) == ("FAILED", "States.ExceedToleratedFailureThreshold")
    assert [child.attempts for child in execution.map_runs[0].children] == [["InvalidBatchInput"]]


def test_an_answer_over_256_kb_fails_the_batch_as_step_functions_would(aws, buckets):  # noqa: F811
    put_objects(aws, buckets[0], 1)
    execution = rehearsal(aws, buckets, lambda name, event: {"blob": "x" * 300_000}).start_execution({})
    (child,) = execution.map_runs[0].children
    assert (child.status, child.error) == ("FAILED", "States.DataLimitExceeded")
