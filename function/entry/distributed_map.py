"""Step Functions Distributed Map batches: `{"Items": [...], "BatchInput": {...}}` from the bulk-inference state
machine (deploy/bulk-inference.asl.json, docs/events.md "Bulk runs").

BatchInput says what to do: `task` (classify, sentiment, embed), `model` ("" for the task's default), `options`,
the `bucket` the items are in and `results` ({"bucket", "prefix"}: must be this function's own). An item is what
the Map's ItemReader read: an object listed under the prefix (`Key`, `Size`...), or a JSON Lines / CSV row naming
one (`s3Key`) or carrying a `text` (and an optional `id`). Every item is answered by function/bulk.py; then:

- every item answered or refused: the answer is a summary under Step Functions' 256 KB limit (counts, every refused
  item with its code, each answer's label and score), the full answers being the result files;
- some item not finished: BatchNotFinished is raised after the others are written, the Retry policy runs the batch
  again and what was answered comes back from the result cache;
- BatchInput that cannot be acted on: InvalidBatchInput, which the state machine does not retry.
"""
from __future__ import annotations

import json

from function.async_routes import ANSWERED, NOT_FINISHED, REFUSED
from function.bulk import (BatchNotFinished, InvalidBatchInput, Item, Outcome, Run, answer_items, malformed_item,
                           object_item, run_of, text_item)
from function.service import Service

# What the answer may take of Step Functions' 256 KB: the rest is the Task state's envelope and some margin.
SUMMARY_BUDGET_BYTES = 200_000
MAX_MESSAGE_CHARS = 200


def handle(service: Service, event: dict, lambda_request_id: str) -> dict:
    run, bucket = run_of_batch(service, event["BatchInput"])
    items = [item_of(run, bucket, value, index) for index, value in enumerate(event["Items"])]
    outcomes = answer_items(service, run, items, "distributed_map", lambda_request_id)
    unfinished = [o for o in outcomes if o.status == NOT_FINISHED]
    if unfinished:
        raise BatchNotFinished(f"{len(unfinished)} of {len(outcomes)} items not finished, to be tried again: "
                               + "; ".join(f"{o.item.name}: {o.code}" for o in unfinished)[:1000])
    return summary(run, outcomes)


def run_of_batch(service: Service, batch_input: dict) -> tuple[Run, str]:
    """The run BatchInput describes, and the bucket its items are in."""
    results = batch_input.get("results")
    if not isinstance(results, dict):
        raise InvalidBatchInput("BatchInput.results must be {\"bucket\", \"prefix\"}")
    bucket = batch_input.get("bucket")
    if not isinstance(bucket, str) or not bucket:
        raise InvalidBatchInput("BatchInput.bucket must name the bucket the items are in")
    run = run_of(service, batch_input.get("task", "classify"), batch_input.get("model", ""),
                 batch_input.get("options", {}), (results.get("bucket"), results.get("prefix")))
    return run, bucket


def item_of(run: Run, bucket: str, value: object, index: int) -> Item:
    """An object the ItemReader listed (`Key`) or a row's `s3Key` becomes an object item; a row's `text` a text
    item; anything else is refused as that item's failure."""
    if isinstance(value, dict):
        key = value.get("Key", value.get("s3Key"))
        if isinstance(key, str) and key:
            size = value.get("Size")
            return object_item(run, bucket, key, size=size if isinstance(size, int) else None)
        if "text" in value:
            return text_item(run, value["text"], value.get("id"), f"Items[{index}]")
    return malformed_item(f"Items[{index}]", "names no object (Key or s3Key) and carries no text")


def summary(run: Run, outcomes: list[Outcome]) -> dict:
    """Counts, every refused item with its code, each answer's label and score; cut to fit SUMMARY_BUDGET_BYTES:
    first the answers go, then the messages, then refused items past what fits (the result files keep them all)."""
    answered = [o for o in outcomes if o.status == ANSWERED]
    refused = [o for o in outcomes if o.status == REFUSED]
    answer = {"answered": len(answered), "refused": len(refused),
              "results": {"bucket": run.results_bucket, "prefix": run.results_prefix},
              "failed": [{"item": o.item.name, "code": o.code, "message": o.message[:MAX_MESSAGE_CHARS]}
                         for o in refused],
              "answers": [{"item": o.item.name, **o.summary} for o in answered]}
    if _size(answer) > SUMMARY_BUDGET_BYTES:
        answer["answers_omitted"] = len(answer.pop("answers"))
    if _size(answer) > SUMMARY_BUDGET_BYTES:
        answer["failed"] = [{"item": f["item"], "code": f["code"]} for f in answer["failed"]]
    while _size(answer) > SUMMARY_BUDGET_BYTES:
        kept = len(answer["failed"]) // 2
        answer["failed_omitted"] = answer.get("failed_omitted", 0) + len(answer["failed"]) - kept
        answer["failed"] = answer["failed"][:kept]
    return answer


def _size(value: dict) -> int:
    return len(json.dumps(value).encode("utf-8"))
