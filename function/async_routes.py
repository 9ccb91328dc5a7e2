"""What every asynchronous door (SQS, S3 uploads, Distributed Map, S3 Batch Operations) shares: the routes it may
call, taken from the router's own table, and the one vocabulary its items end in.

An item ends in one of three outcomes, whatever door it came through, as a batch processor's records do:

- ANSWERED: the route's answer, written where that door writes answers;
- REFUSED: the item itself is at fault (a client error, a permanent S3 refusal): its error code and body are
  written, and trying again would give the same refusal;
- NOT_FINISHED: for a reason that may pass (S3's 5xx or throttling, a dropped connection, the model unavailable):
  the door asks its engine to deliver the item again.

`outcome_of` decides which, for every door, from the error that stopped an item. The doors only translate the
outcome into what their event source reads (an SQS partial batch response, a Batch Operations result code, a Step
Functions retry, an upload's tags).

A door's `task` or SQS `route` names one of ASYNC_ROUTES; its task kind and its answer's shape are the router's
route module's own (TASK, answer), so the HTTP answer and a door's result file are one thing.
"""
from __future__ import annotations

import http.client
import importlib
from collections.abc import Callable
from dataclasses import dataclass

from function.errors import ServingError, quoted, refuse
from function.http_errors import status_of
from function.router import API

ANSWERED, REFUSED, NOT_FINISHED = "answered", "refused", "not_finished"
OUTCOMES = (ANSWERED, REFUSED, NOT_FINISHED)
TRANSIENT = (OSError, http.client.HTTPException)  # a connection refused, dropped or timed out


def outcome_of(exc: BaseException) -> str:
    """REFUSED or NOT_FINISHED for the error that stopped an item (a bug of ours is NOT_FINISHED: its retry may
    find it fixed, and the engine's own limit ends it)."""
    from function.aws.s3 import S3Error  # noqa: PLC0415  (the S3 client only where an S3 error can happen)

    if isinstance(exc, ServingError):
        return NOT_FINISHED if status_of(exc) >= 500 else REFUSED
    if isinstance(exc, S3Error):
        return NOT_FINISHED if exc.transient else REFUSED
    return NOT_FINISHED


@dataclass(frozen=True)
class AsyncRoute:
    name: str  # what a bulk run's `task` says
    path: str  # the router's path, which an SQS message's "route" says
    kind: str  # the task kind the route answers with (its module's TASK)
    takes: str  # "image" or "text"
    options: Callable[[dict], dict]  # a run's options, checked as the route checks its body's, as the task takes them
    answer: Callable[..., dict]  # (prediction, options) -> the route's JSON answer for it


def _checked(name: str, takes: str, allowed: frozenset[str]) -> Callable[[dict], dict]:
    def check(options: dict) -> dict:
        from function.routes import inputs  # noqa: PLC0415  (the routes' own option checks)

        unknown = sorted(set(options) - allowed)
        if unknown:
            raise refuse("invalid_field", f"options {quoted(unknown[0])}{' and more' if len(unknown) > 1 else ''} "
                         f"are not options of {name} (it takes {', '.join(sorted(allowed)) or 'none'}).")
        checked = dict(inputs.threshold_option(options))
        if "top_k" in allowed:  # as the route's own default: images their top 5, texts their best label only
            from function.tasks.image_classification import DEFAULT_TOP_K  # noqa: PLC0415

            checked.update(inputs.top_k_option(options, DEFAULT_TOP_K if takes == "image" else None))
        if "normalize" in allowed:
            normalize = options.get("normalize", True)
            if not isinstance(normalize, bool):
                raise refuse("invalid_field", "'normalize' must be true or false.", param="normalize")
            checked["normalize"] = normalize
        return checked
    return check


def _route(name: str, path: str, takes: str, allowed: frozenset[str]) -> AsyncRoute:
    """The async route at `path`: it must be a POST route of the router's API table."""
    route = API.routes[path]["POST"]  # a KeyError here is a table out of step with the router: caught by tests
    module = importlib.import_module(f"function.routes.{route.module}")
    kind = module.TASK
    if name == "embed":
        def answer(prediction, options):
            return module.answer(prediction, options.get("normalize", True))
    else:
        def answer(prediction, options):
            return module.answer(prediction)
    return AsyncRoute(name, path, kind, takes, _checked(name, takes, allowed), answer)


_TABLE = (("classify", "/classify", "image", frozenset({"top_k", "threshold"})),
          ("classify-text", "/classify-text", "text", frozenset({"top_k", "threshold"})),
          ("sentiment", "/sentiment", "text", frozenset({"top_k", "threshold"})),  # /classify-text's first name
          ("embed", "/embed", "text", frozenset({"normalize"})))
ROUTE_NAMES = tuple(name for name, *_ in _TABLE)
ROUTE_PATHS = tuple(path for _, path, *_ in _TABLE)
_routes: dict[str, AsyncRoute] = {}


def async_route(name: str) -> AsyncRoute:
    """The route a door's `task` names (one of ROUTE_NAMES), built on first use (route modules load lazily)."""
    found = _routes.get(name)
    if found is None:
        (entry,) = [entry for entry in _TABLE if entry[0] == name]
        found = _routes[name] = _route(*entry)
    return found


def task_options(options: dict) -> dict:
    """The options a task's `predict` takes (normalize is the answer's, not the model's)."""
    return {key: value for key, value in options.items() if key != "normalize"}


def summary_of(prediction) -> dict:
    """What a report line says of a one-input Prediction, as the task class that answered it says it (Task.summary:
    a label and score, labels, an embedding's size)."""
    (result,) = prediction.results
    return prediction.task.summary(result)
