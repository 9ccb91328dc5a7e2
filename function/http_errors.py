"""The HTTP edge of every error: one table from domain error to status, and the body shapes of the protocols.

This API answers `{"error": {"code", "message"}}`. The compatibility routes answer in their upstream protocol's
own shape: OpenAI `{"error": {"message", "type", "param", "code"}}`, TensorFlow Serving and the Open Inference
Protocol `{"error": "<message>"}`. Which group of routes takes which shape: function/router.py.
"""
from __future__ import annotations

from collections.abc import Callable

from function.errors import (InvalidInput, MethodNotAllowed, ModelNotFound, ModelUnavailable, ObjectNotFound,
                             PayloadTooLarge, RouteNotFound, ServingError, UnsupportedEvent, UnsupportedMedia,
                             WrongTask, refuse)
from function.responses import Response, json_response

STATUS: dict[type[ServingError], int] = {
    InvalidInput: 400,
    WrongTask: 400,
    UnsupportedEvent: 400,
    ModelNotFound: 404,
    RouteNotFound: 404,
    ObjectNotFound: 404,
    MethodNotAllowed: 405,
    PayloadTooLarge: 413,
    UnsupportedMedia: 415,
    ModelUnavailable: 503,
}
INTERNAL_ERROR = refuse("internal_error", "The server failed to answer; the error was logged.")

ErrorBody = Callable[[ServingError, int], object]


def status_of(error: ServingError) -> int:
    return status_of_kind(type(error))


def status_of_kind(kind: type[ServingError]) -> int:
    for base in kind.__mro__:
        if base in STATUS:
            return STATUS[base]
    return 500


def api_error_body(error: ServingError, status: int) -> object:
    return {"error": {"code": error.code, "message": error.message}}


def openai_error_body(error: ServingError, status: int) -> object:
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return {"error": {"message": error.message, "type": kind, "param": error.param, "code": error.code}}


def message_error_body(error: ServingError, status: int) -> object:
    return {"error": error.message}


def error_response(error: ServingError, error_body: ErrorBody = api_error_body) -> Response:
    status = status_of(error)
    headers = {"allow": ", ".join(error.allowed)} if isinstance(error, MethodNotAllowed) else None
    return json_response(status, error_body(error, status), headers)


def internal_error_response(error_body: ErrorBody = api_error_body) -> Response:
    # Never leak internals: the traceback goes to the log, the client gets a stable code.
    return error_response(INTERNAL_ERROR, error_body)
