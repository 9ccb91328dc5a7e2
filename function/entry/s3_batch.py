"""S3 Batch Operations jobs (LambdaInvoke): `{"invocationSchemaVersion", "invocationId", "job", "tasks": [...]}`.

Schema 1.0 names each task's bucket by ARN (`s3BucketArn`) and runs the default: classify with the default image
model. Schema 2.0 names it `s3Bucket` and may carry the job's `userArguments`, all strings: `task` (classify,
sentiment, embed), `model`, and `options` as a JSON object's text. Keys arrive URL-encoded, as the job's manifest
holds them. Each task is answered by function/bulk.py, exactly as a Distributed Map item would be (the same
result file, the same cache), and gets the `resultCode` S3 Batch Operations reads:

- answered: `Succeeded`, resultString the label and score (`tabby 0.912`) or the embedding's size;
- refused (the object is not an image, is missing...), or job arguments that cannot be acted on:
  `PermanentFailure`, resultString the error code and its sentence;
- not finished (S3 throttling or a 5xx, the model unavailable): `TemporaryFailure`, which the job retries.

The job's completion report keeps each resultString.
"""
from __future__ import annotations

import json
import time
from urllib.parse import unquote_plus

from function import recorder
from function.async_routes import ANSWERED, NOT_FINISHED, REFUSED
from function.bulk import (BatchNotFinished, InvalidBatchInput, Item, Outcome, Run, answer_items, malformed_item,
                           object_item, run_of)
from function.service import Service

RESULT_CODES = {ANSWERED: "Succeeded", REFUSED: "PermanentFailure", NOT_FINISHED: "TemporaryFailure"}
MAX_RESULT_STRING_CHARS = 200  # a short line of the completion report, not the answer (that is the result file)


def handle(service: Service, event: dict, lambda_request_id: str) -> dict:
    started, version = time.perf_counter(), event.get("invocationSchemaVersion")
    tasks = event.get("tasks") if isinstance(event.get("tasks"), list) else []
    try:
        run = run_of(service, *_job_arguments(event, version), (service.settings.results_bucket or "",
                                                                 service.settings.results_prefix))
    except (InvalidBatchInput, BatchNotFinished) as exc:
        code = "PermanentFailure" if isinstance(exc, InvalidBatchInput) else "TemporaryFailure"
        results = [_result(task, code, f"{type(exc).__name__}: {exc}") for task in tasks]
        recorder.record_escape(service, "s3_batch_operations", exc, started, lambda_request_id)  # a job's line
    else:
        items = [_item(run, task, version) for task in tasks]
        outcomes = answer_items(service, run, items, "s3_batch_operations", lambda_request_id)
        results = [_result(task, RESULT_CODES[o.status], _result_string(o)) for task, o in zip(tasks, outcomes)]
    return {"invocationSchemaVersion": version, "treatMissingKeysAs": "PermanentFailure",
            "invocationId": event.get("invocationId"), "results": results}


def _job_arguments(event: dict, version: object) -> tuple[object, object, object]:
    """(task, model, options) from schema 2.0's userArguments; schema 1.0 runs the defaults."""
    if version not in ("1.0", "2.0"):
        raise InvalidBatchInput(f"invocationSchemaVersion {version!r} is not 1.0 or 2.0")
    job = event.get("job") if isinstance(event.get("job"), dict) else {}
    arguments = job.get("userArguments") if version == "2.0" else None
    arguments = arguments if isinstance(arguments, dict) else {}
    options = arguments.get("options", "{}")
    try:
        options = json.loads(options) if isinstance(options, str) else options
    except ValueError as exc:
        raise InvalidBatchInput(f"userArguments.options is not JSON: {exc}") from exc
    except RecursionError as exc:
        raise InvalidBatchInput("userArguments.options nests too deeply") from exc
    return arguments.get("task", "classify"), arguments.get("model", ""), options


def _item(run: Run, task: object, version: str) -> Item:
    if not isinstance(task, dict):
        return malformed_item("a task", "is not an object")
    key, bucket = task.get("s3Key"), task.get("s3Bucket") if version == "2.0" else task.get("s3BucketArn")
    if not isinstance(key, str) or not key or not isinstance(bucket, str) or not bucket:
        return malformed_item(str(task.get("taskId")), "names no s3Key and bucket")
    version_id = task.get("s3VersionId")
    return object_item(run, bucket.rsplit(":", 1)[-1], unquote_plus(key),
                       version_id=version_id if isinstance(version_id, str) and version_id else None)


def _result(task: object, code: str, result_string: str) -> dict:
    task_id = task.get("taskId") if isinstance(task, dict) else None
    return {"taskId": task_id, "resultCode": code, "resultString": result_string[:MAX_RESULT_STRING_CHARS]}


def _result_string(outcome: Outcome) -> str:
    return outcome.line if outcome.status == ANSWERED else f"{outcome.code}: {outcome.message}"
