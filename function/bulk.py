"""Bulk runs' items, answered as every other entry point answers them: the core under the Step Functions
Distributed Map worker (entry/distributed_map.py) and the S3 Batch Operations worker (entry/s3_batch.py).

A `Run` says what to do with every item: the route (one of function/async_routes.py's, which the router's table
gives), its model and its options, checked once per batch as an HTTP request's would be. An `Item` names an S3
object (its bytes are the image, or the text in UTF-8) or carries a text.
Per batch: every object is read by the doors' one reader (function/door_s3.py: within MAX_BODY_BYTES), what was
read is answered by the doors' one answering core (function/answering.py: the result cache, so duplicates, reruns
and retried batches are computed once, and the canary), and each item's answer, the route's own JSON for that one
input, is written by the doors' one writer to its result key (an object's: its bucket and version are part of it,
`object_item`). This module only turns items into inputs and answers into outcomes. Each item ends as one
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

from function import answering
from function.answering import Answer, Question
from function.async_routes import NOT_FINISHED, OUTCOMES, ROUTE_NAMES, TRANSIENT, AsyncRoute, outcome_of
from function.aws.s3 import S3Error
from function.cache.keys import digest_text
from function.errors import ServingError, quoted, refuse
from function.log import Timings
from function import door_s3, recorder
from function.routes import text
from function.service import Service
from function.tasks.base import Task
from function.tasks.image_classification import ImageInput

log = logging.getLogger("function")



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

    @property
    def question(self) -> Question:
        return Question(self.route, self.task, self.options)


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
    line: str = ""  # an answer's summary as its task says it in a line

    @classmethod
    def of(cls, item: Item, answer: Answer) -> "Outcome":
        return cls(item, answer.status, answer.code, answer.message, answer.summary, answer.body, answer.http_status,
                   answer.line)


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
    try:
        question = answering.ask(service, route, model, options)
    except ServingError as exc:
        if outcome_of(exc) == NOT_FINISHED:
            raise BatchNotFinished(f"{exc.code}: {exc.message}") from exc
        raise InvalidBatchInput(f"{exc.code}: {exc.message}") from exc
    return Run(question.route, question.task, question.options, settings.results_bucket, settings.results_prefix)


def object_item(run: Run, bucket: str, key: str, version_id: str | None = None, size: int | None = None) -> Item:
    """An item naming an object. Its answer goes to its object_result_key (function/door_s3.py), which no other
    object shares, whichever door reads it."""
    result_key = door_s3.object_result_key(run.results_prefix, bucket, key, version_id)
    item = Item(key, bucket=bucket, key=key, version_id=version_id, size=size, result_key=result_key)
    if bucket == run.results_bucket and key.startswith(run.results_prefix):
        return _malformed(item, "is under the results prefix: the function never answers its own results")
    if not door_s3.fits(item.result_key):
        return _malformed(item, f"would have a result key over S3's {door_s3.MAX_KEY_BYTES} bytes")
    return item


def text_item(run: Run, text_value: object, item_id: object = None, row: str = "a row") -> Item:
    """A row that carries its text; its answer goes to <prefix><id>.json, or <prefix>texts/<sha256>.json. A text
    that is not a string is that row's refusal (`row` names it when it has no usable id)."""
    if item_id is not None and item_id != "" and not door_s3.is_result_id(item_id):
        name = item_id[:door_s3.MAX_ID_CHARS] if isinstance(item_id, str) else quoted(item_id)
        return malformed_item(name, "has an id that cannot name a result key: up to 512 "
                              "letters, digits or !_.*'()- characters, in '/'-separated parts that are not '.' "
                              "or '..'")
    if not isinstance(text_value, str):  # refused, and its refusal written when it has an id to name it by
        problem = refuse("invalid_item", f"The item {item_id or row} has a text that is {quoted(text_value)}, "
                         "not a string.")
        return Item(item_id or row, problem=problem, result_key=door_s3.named_result_key(run.results_prefix, item_id)
                    if item_id else "")
    if item_id is None or item_id == "":
        name = f"texts/{digest_text(text_value)}" if text.is_unicode(text_value) else "texts/invalid"
        item = Item(name, text=text_value, result_key=door_s3.named_result_key(run.results_prefix, name))
    else:
        item = Item(item_id, text=text_value, result_key=door_s3.named_result_key(run.results_prefix, item_id))
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
    inputs: list[object] = []  # per item, what the task takes, or the error that refused or stopped its reading
    with timings.stage("read"):
        for item in items:
            try:
                inputs.append(_read_input(service, run, item))
            except (ServingError, S3Error, *TRANSIENT) as exc:  # a refusal, or what may pass (door_s3.read_object)
                inputs.append(exc)
    answers = answering.answer(service, run.question, inputs, timings, fields)
    outcomes = [Outcome.of(item, found) for item, found in zip(items, answers)]
    with timings.stage("write"):
        for outcome in outcomes:
            if outcome.status != NOT_FINISHED and outcome.item.result_key:
                _write(service, run, outcome)
    counts = {status: sum(o.status == status for o in outcomes) for status in OUTCOMES}
    # As an HTTP request's line: a route, the status a client would have seen for the batch (500 while some item is
    # not finished), the container's cold start when this is its first event, and the EMF block that makes the line
    # the batch's metrics (stage times and the token count included).
    fields.update(route=f"bulk:{engine}", engine=engine, items=len(items), **counts,
                  status=500 if counts[NOT_FINISHED] else 200)
    recorder.record(service, "bulk batch", fields, started, timings, lambda_request_id)
    return outcomes


def _read_input(service: Service, run: Run, item: Item) -> object:
    """What the task takes for the item: an ImageInput, or a text."""
    if item.problem:
        raise item.problem
    data = None if item.text is not None else door_s3.read_object(service, item.bucket, item.key, item.version_id,
                                                                  item.size).body
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


def _write(service: Service, run: Run, outcome: Outcome) -> None:
    """The item's answer or error body to its result key, by the doors' one writer: a write S3 refuses for good
    refuses the item with S3's code, since a retry would be refused alike; any other failure leaves it not
    finished."""
    failure = door_s3.write_result(service, run.results_bucket, outcome.item.result_key,
                                   door_s3.json_result(outcome.http_status, outcome.body))
    if failure is not None:
        outcome.status, outcome.code, outcome.message = failure.status, failure.code, failure.message
