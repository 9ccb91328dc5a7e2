"""Bulk runs' items, answered as every other entry point answers them: the core under the Step Functions
Distributed Map worker (entry/distributed_map.py) and the S3 Batch Operations worker (entry/s3_batch.py).

A `Run` says what to do with every item: the route (one of function/async_routes.py's, which the router's table
gives), its model and its options, checked once per batch as an HTTP request's would be. An `Item` names an S3
object (its bytes are the image, or the text in UTF-8) or carries a text.
Per batch: every object is read (within MAX_BODY_BYTES), what was read is answered through the result cache as one
batch (inference.cached_results: duplicates, reruns and retried batches are computed once), and each item's
answer, the route's own JSON for that one input, is written to its result key (`object_item`). Each item ends as one
`Outcome`, in the doors' one vocabulary (function/async_routes.py):

- answered: its answer written;
- refused: the item itself is at fault (not an image, not UTF-8, no such object...): its error body is written to
  its result key, since trying again would give the same refusal; S3 refusing that write for good refuses it too;
- not finished: for a reason that may pass (S3 throttling or a 5xx after the client's own retries, the model
  unavailable, a failed write): the engine's retry runs it again.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import quote

from function.async_routes import (ANSWERED, NOT_FINISHED, OUTCOMES, REFUSED, ROUTE_NAMES, TRANSIENT, AsyncRoute,
                                   async_route, outcome_of, summary_of, task_options)
from function.aws.s3 import ObjectTooLarge, S3Error
from function.cache.keys import digest_text
from function.errors import ServingError, body_too_large, quoted, refuse
from function.http_errors import api_error_body, status_of
from function.inference import Prediction, routed_results
from function.log import Timings
from function.metrics import metric_fields
from function.responses import json_response
from function.routes import text
from function.routes.context import RouteContext
from function.service import Service
from function.tasks.base import Task
from function.tasks.image_classification import ImageInput

log = logging.getLogger("function")

MAX_KEY_BYTES = 1024  # S3's limit on a key
MISSING_OBJECT_CODES = frozenset({"NoSuchKey", "NoSuchVersion"})


class InvalidBatchInput(ValueError):
    """The run's settings cannot be acted on (an unknown route or model, options the route refuses, results meant
    for another place): every item would fail alike, so the engines must not retry. Its class name is the error
    Step Functions reports."""


class BatchNotFinished(RuntimeError):
    """Some items failed for a reason that may pass; the others are answered. Raised once the whole batch has been
    tried, so that the engine runs it again (the state machine's Retry matches this class name)."""


@dataclass(frozen=True)
class Run:
    route: AsyncRoute
    task: Task
    options: dict  # the run's options, checked as the route checks a request's
    results_bucket: str
    results_prefix: str


@dataclass(frozen=True)
class Item:
    name: str  # what the report calls it: the object's key, or a text row's id
    bucket: str = ""
    key: str = ""  # the object, when the item names one
    version_id: str | None = None
    size: int | None = None  # as the engine listed it, when it did
    text: str | None = None  # a text row's text
    problem: ServingError | None = None  # the item is malformed: refused unread
    result_key: str = ""


@dataclass
class Outcome:
    item: Item
    status: str  # "answered", "refused" or "not_finished"
    code: str = ""
    message: str = ""
    summary: dict = field(default_factory=dict)  # an answer's label and score, or an embedding's size
    body: dict | None = None  # what its result key gets: the route's answer or error body
    http_status: int = 200  # the status an HTTP client would have had


def run_of(service: Service, route: object, model: object, options: object, results: tuple[str, str]) -> Run:
    """The run's settings, checked as an HTTP request's would be (the route's options, the model through the same
    resolution as RouteContext.task): InvalidBatchInput when they cannot be acted on; BatchNotFinished when the
    model cannot load now."""
    settings = service.settings
    if not isinstance(route, str) or route not in ROUTE_NAMES:
        raise InvalidBatchInput(f"task must be one of {', '.join(ROUTE_NAMES)}, not {quoted(route)}")
    if not isinstance(options, dict):
        raise InvalidBatchInput(f"options must be a JSON object, not {quoted(options)}")
    if not settings.results_bucket:
        raise InvalidBatchInput("RESULTS_BUCKET is not set: a bulk run has nowhere to write its answers")
    if results != (settings.results_bucket, settings.results_prefix):
        raise InvalidBatchInput(f"results go to s3://{settings.results_bucket}/{settings.results_prefix}, not "
                                f"s3://{quoted(results[0])}/{quoted(results[1])}")
    chosen = async_route(route)
    try:
        checked = chosen.options(options)
        task = RouteContext(None, settings, service.registry, service.store).task(
            {} if model in (None, "") else {"model": model}, chosen.kind)
        task.cache_options(task_options(checked))  # refuses what the model does not take (a threshold...)
    except ServingError as exc:
        if outcome_of(exc) == NOT_FINISHED:
            raise BatchNotFinished(f"{exc.code}: {exc.message}") from exc
        raise InvalidBatchInput(f"{exc.code}: {exc.message}") from exc
    return Run(chosen, task, checked, settings.results_bucket, settings.results_prefix)


def object_item(run: Run, bucket: str, key: str, version_id: str | None = None, size: int | None = None,
                by_source: bool = False) -> Item:
    """An item naming an object. Its answer goes to <prefix><key>.json (a run reads one bucket), or, `by_source`
    (a job whose tasks name any bucket and version), <prefix><bucket>/<key>.json and, for a version,
    <prefix><bucket>@<version, %-quoted>/<key>.json: a bucket name has no "@" and no "/", a quoted version no "/",
    so two objects never share a result key."""
    source = bucket + (f"@{quote(version_id, safe='')}" if version_id else "") + "/" if by_source else ""
    item = Item(key, bucket=bucket, key=key, version_id=version_id, size=size,
                result_key=f"{run.results_prefix}{source}{key}.json")
    if bucket == run.results_bucket and key.startswith(run.results_prefix):
        return _malformed(item, "is under the results prefix: the function never answers its own results")
    if len(item.result_key.encode("utf-8")) > MAX_KEY_BYTES:
        return _malformed(item, f"would have a result key over S3's {MAX_KEY_BYTES} bytes")
    return item


def text_item(run: Run, text_value: object, item_id: object = None, row: str = "a row") -> Item:
    """A row that carries its text; its answer goes to <prefix><id>.json, or <prefix>texts/<sha256>.json. A text
    that is not a string is that row's refusal (`row` names it when it has no usable id)."""
    from function.entry.sqs_batch import MAX_ID_CHARS, RESULT_ID  # noqa: PLC0415  (one rule for ids as S3 keys)

    if item_id is not None and item_id != "" and (
            not isinstance(item_id, str) or len(item_id) > MAX_ID_CHARS or not RESULT_ID.fullmatch(item_id)):
        name = item_id[:MAX_ID_CHARS] if isinstance(item_id, str) else quoted(item_id)
        return malformed_item(name, "has an id that cannot name a result key: up to 512 "
                              "letters, digits or !_.*'()- characters, in '/'-separated parts that are not '.' "
                              "or '..'")
    if not isinstance(text_value, str):  # refused, and its refusal written when it has an id to name it by
        problem = refuse("invalid_item", f"The item {item_id or row} has a text that is {quoted(text_value)}, "
                         "not a string.")
        return Item(item_id or row, problem=problem, result_key=f"{run.results_prefix}{item_id}.json" if item_id
                    else "")
    if item_id is None or item_id == "":
        name = f"texts/{digest_text(text_value)}" if text.is_unicode(text_value) else "texts/invalid"
        item = Item(name, text=text_value, result_key=f"{run.results_prefix}{name}.json")
    else:
        item = Item(item_id, text=text_value, result_key=f"{run.results_prefix}{item_id}.json")
    if run.route.takes == "image":  # its refusal is written where its answer would have been
        return Item(item.name, result_key=item.result_key, problem=refuse(
            "invalid_item", f"The item {item.name} carries a text, but {run.route.name} takes images: name an "
            "object with s3Key."))
    return item


def malformed_item(name: str, problem: str) -> Item:
    return Item(name, problem=refuse("invalid_item", f"The item {name} {problem}."))


def _malformed(item: Item, problem: str) -> Item:
    return Item(item.name, problem=refuse("invalid_item", f"The item {item.name} {problem}."))


def answer_items(service: Service, run: Run, items: Sequence[Item], engine: str,
                 lambda_request_id: str = "") -> list[Outcome]:
    """One Outcome per item, in order; every answer and refusal is written before this returns."""
    started, timings, fields = time.perf_counter(), Timings(), {}
    outcomes: list[Outcome | None] = [None] * len(items)
    inputs: dict[int, object] = {}
    with timings.stage("read"):
        for index, item in enumerate(items):
            try:
                inputs[index] = _read_input(service, run, item)
            except ServingError as exc:
                outcomes[index] = _refused(item, exc)
            except S3Error as exc:
                outcomes[index] = _s3_failure(item, exc)
            except TRANSIENT as exc:
                outcomes[index] = Outcome(item, NOT_FINISHED, type(exc).__name__, str(exc))
    for index, answer in _answers(service, run, inputs, timings, fields).items():
        outcomes[index] = (_refused(items[index], answer) if isinstance(answer, ServingError)
                           else Outcome(items[index], ANSWERED, summary=summary_of(answer),
                                        body=run.route.answer(answer, run.options)))
    with timings.stage("write"):
        for outcome in outcomes:
            if outcome.status != NOT_FINISHED and outcome.item.result_key:
                _write(service, run, outcome)
    counts = {status: sum(o.status == status for o in outcomes) for status in OUTCOMES}
    # As an HTTP request's line: a route, the status a client would have seen for the batch (500 while some item is
    # not finished), the container's cold start when this is its first event, and the EMF block that makes the line
    # the batch's metrics (stage times and the token count included).
    fields.update(lambda_request_id=lambda_request_id, route=f"bulk:{engine}", engine=engine, items=len(items),
                  **counts, status=500 if counts[NOT_FINISHED] else 200, cold_start=service.first_call(),
                  timings_ms={**timings.as_dict(), "total": round((time.perf_counter() - started) * 1000.0, 3)})
    fields.update(metric_fields(fields, service.settings.metrics))
    log.info("bulk batch", extra={"fields": fields})
    return outcomes


def _read_input(service: Service, run: Run, item: Item) -> object:
    """What the task takes for the item: an ImageInput, or a text."""
    if item.problem:
        raise item.problem
    limit = service.settings.max_body_bytes
    if item.text is not None:
        data = None
    else:
        if item.size is not None and item.size > limit:
            raise body_too_large(item.size, limit)
        try:
            data = service.s3().get_object(item.bucket, item.key, max_bytes=limit, version_id=item.version_id).body
        except ObjectTooLarge as exc:
            raise body_too_large(exc.size, exc.limit) from exc
    if run.route.takes == "image":
        return ImageInput(data, f"s3://{item.bucket}/{item.key}")
    where = f"the text of {item.name}"
    if data is not None:
        try:
            item_text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise refuse("unreadable_text", f"s3://{item.bucket}/{item.key} is not UTF-8 text.") from exc
    else:
        item_text = item.text
    if not isinstance(item_text, str):
        raise refuse("invalid_item", f"The item {item.name}'s text is not a string.")
    text.check_text(item_text, where, service.settings.max_text_chars)
    return item_text


def _answers(service: Service, run: Run, inputs: dict[int, object], timings: Timings,
             fields: dict) -> dict[int, Prediction | ServingError]:
    """Index -> the item's Prediction (a batch of one), or the error that refused it. The inputs go to the task as
    one batch; when that batch is refused, each input goes alone, so that the refusal (a corrupt image among good
    ones) lands on the item it belongs to."""
    if not inputs:
        return {}
    indexes = list(inputs)
    try:
        prediction = routed_results(service.registry, run.task, service.store, [inputs[i] for i in indexes],
                                    task_options(run.options), timings, fields)
        return {index: Prediction([result], [cached], prediction.task_of(position))
                for position, (index, result, cached) in enumerate(zip(indexes, prediction.results, prediction.cached))}
    except ServingError as exc:
        if outcome_of(exc) == NOT_FINISHED or len(indexes) == 1:
            return dict.fromkeys(indexes, exc)
    answers: dict[int, Prediction | ServingError] = {}
    for index in indexes:
        try:
            answers[index] = routed_results(service.registry, run.task, service.store, [inputs[index]],
                                            task_options(run.options),
                                            timings, {})
        except ServingError as exc:
            answers[index] = exc
    return answers


def _refused(item: Item, exc: ServingError) -> Outcome:
    if outcome_of(exc) == NOT_FINISHED:  # the model unavailable: another try may find it loaded
        return Outcome(item, NOT_FINISHED, exc.code, exc.message)
    status = status_of(exc)
    return Outcome(item, REFUSED, exc.code, exc.message, body=api_error_body(exc, status), http_status=status)


def _s3_failure(item: Item, exc: S3Error) -> Outcome:
    if exc.code in MISSING_OBJECT_CODES:
        what = f"version {item.version_id} of " if item.version_id else ""
        return _refused(item, refuse("object_not_found", f"There is no {what}s3://{item.bucket}/{item.key}."))
    if outcome_of(exc) == NOT_FINISHED:
        return Outcome(item, NOT_FINISHED, exc.code, str(exc))
    return _refused(item, refuse("object_unreadable", f"S3 refused to read s3://{item.bucket}/{item.key}: "
                                 f"{exc.code} (HTTP {exc.status})."))


def _write(service: Service, run: Run, outcome: Outcome) -> None:
    """The item's answer or error body to its result key. A write S3 refuses for good (access denied, a key it
    will not take) refuses the item with S3's code, since a retry would be refused alike; any other failure leaves
    it not finished."""
    response = json_response(outcome.http_status, outcome.body)
    try:
        service.s3().put_object(run.results_bucket, outcome.item.result_key, response.body,
                                response.headers["content-type"])
    except (S3Error, *TRANSIENT) as exc:
        outcome.status, outcome.code = outcome_of(exc), getattr(exc, "code", type(exc).__name__)
        outcome.message = f"its result was not written: {exc}"
