"""The one answering core of the asynchronous doors (S3 uploads, Distributed Map, S3 Batch Operations): a route, a
model (or none: the route's default), options and inputs in; per input, one `Answer` in the doors' vocabulary
(function/async_routes.py) out. SQS messages are HTTP requests and go through Service.handle, the HTTP core.

What an HTTP route does through RouteContext, this does once for every door: the model resolved as a request's
"model" would be (`ask`), the options checked as the route checks its body's, the inputs answered through the
result cache and the canary (inference.routed_results: each input gets the version it would get alone), and each
input's answer the route's own JSON for that one input, or its refusal's error body and code. A door only reads its
event into inputs (an input it could not read is passed as the ServingError that refused it) and turns the answers
into what its event source expects.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from function.async_routes import (ANSWERED, NOT_FINISHED, REFUSED, AsyncRoute, async_route, outcome_of, summary_of,
                                   task_options)
from function.errors import ServingError
from function.http_errors import api_error_body, status_of
from function.inference import Prediction, routed_results
from function.log import Timings
from function.routes.context import RouteContext
from function.tasks.base import Task

if TYPE_CHECKING:
    from function.service import Service


@dataclass(frozen=True)
class Question:
    """What every input of a run is asked: the route, the model's task, the options as the route checked them."""
    route: AsyncRoute
    task: Task
    options: dict


@dataclass
class Answer:
    status: str  # ANSWERED, REFUSED or NOT_FINISHED
    code: str = ""
    message: str = ""
    summary: dict = field(default_factory=dict)  # an answer's label and score, its labels, or an embedding's size
    body: dict | None = None  # the route's answer for the input, or its error body
    http_status: int = 200  # the status an HTTP client would have had
    error: BaseException | None = None  # what stopped a refused or unfinished input
    line: str = ""  # the answer's summary as a short line (Task.summary_line), or the refusal's code and sentence


def ask(service: "Service", route: str, model: object, options: dict) -> Question:
    """The route `route` names (one of async_routes.ROUTE_NAMES), the task of `model` ("" or None: the route's
    default model) and `options`, checked as an HTTP request's would be; the ServingError an HTTP client would get
    otherwise."""
    chosen = async_route(route)
    checked = chosen.options(options)
    task = RouteContext(None, service.settings, service.registry, service.store).task(
        {} if model in (None, "") else {"model": model}, chosen.kind)
    task.cache_options(task_options(checked))  # refuses what the model does not take (a threshold...)
    return Question(chosen, task, checked)


def refusal(exc: Exception) -> Answer:
    """The Answer for an input `exc` stopped: REFUSED with its error body, or NOT_FINISHED (an S3 error or a
    dropped connection that may pass, the model unavailable)."""
    if not isinstance(exc, ServingError):
        return Answer(NOT_FINISHED, getattr(exc, "code", type(exc).__name__), str(exc), error=exc)
    if outcome_of(exc) == NOT_FINISHED:
        return Answer(NOT_FINISHED, exc.code, exc.message, error=exc)
    status = status_of(exc)
    return Answer(REFUSED, exc.code, exc.message, body=api_error_body(exc, status), http_status=status, error=exc)


def answer(service: "Service", question: Question, inputs: Sequence[object], timings: Timings,
           fields: dict) -> list[Answer]:
    """One Answer per input, in order. An input that is an exception (a ServingError, or an S3 or connection error
    that may pass) is what stopped its reading: `refusal` says its Answer. The others go to the
    task as one batch; when that batch is refused, each goes alone, so that the refusal (a corrupt image among good
    ones) lands on the input it belongs to. `fields` gets the batch's log fields (model, cache counts, tokens)."""
    answers: list[Answer | None] = [refusal(item) if isinstance(item, Exception) else None for item in inputs]
    indexes = [index for index, found in enumerate(answers) if found is None]
    for index, found in _predictions(service, question, [inputs[i] for i in indexes], timings, fields).items():
        answers[indexes[index]] = refusal(found) if isinstance(found, ServingError) else _answered(question, found)
    return answers


def _answered(question: Question, prediction: Prediction) -> Answer:
    summary = summary_of(prediction)
    return Answer(ANSWERED, summary=summary, body=question.route.answer(prediction, question.options),
                  line=prediction.task.summary_line(summary))


def answers_to(service: "Service", route: str, model: object, options: dict, inputs: Sequence[object],
               timings: Timings, fields: dict) -> list[Answer]:
    """`ask` then `answer`: a question the route refuses is the refusal of every input that was read."""
    try:
        question = ask(service, route, model, options)
    except ServingError as exc:
        return [refusal(item if isinstance(item, Exception) else exc) for item in inputs]
    return answer(service, question, inputs, timings, fields)


def _predictions(service: "Service", question: Question, inputs: list[object], timings: Timings,
                 fields: dict) -> dict[int, Prediction | ServingError]:
    """Position -> the input's Prediction (a batch of one), or the error that refused it."""
    if not inputs:
        return {}
    options = task_options(question.options)
    try:
        prediction = routed_results(service.registry, question.task, service.store, inputs, options, timings, fields)
        return {position: Prediction([result], [cached], prediction.task_of(position))
                for position, (result, cached) in enumerate(zip(prediction.results, prediction.cached))}
    except ServingError as exc:
        if outcome_of(exc) == NOT_FINISHED or len(inputs) == 1:
            return dict.fromkeys(range(len(inputs)), exc)
    found: dict[int, Prediction | ServingError] = {}
    for position, item in enumerate(inputs):
        try:
            found[position] = routed_results(service.registry, question.task, service.store, [item], options,
                                             timings, {})
        except ServingError as exc:
            found[position] = exc
    return found
