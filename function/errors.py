"""The one place that builds error responses: a stable machine-readable code, a sentence, an HTTP status."""
from __future__ import annotations

from function.events import Response, json_response


class ApiError(Exception):
    """Anything the client can act on. Raised anywhere, turned into a response only by `error_response`."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}


def bad_request(code: str, message: str) -> ApiError:
    return ApiError(400, code, message)


def not_found(code: str, message: str) -> ApiError:
    return ApiError(404, code, message)


def too_large(code: str, message: str) -> ApiError:
    return ApiError(413, code, message)


def body_too_large(size: int, limit: int) -> ApiError:
    return too_large("body_too_large", f"The request body is {size} bytes; the limit is {limit} bytes.")


def unsupported_media(code: str, message: str) -> ApiError:
    return ApiError(415, code, message)


def method_not_allowed(method: str, path: str, allowed: list[str]) -> ApiError:
    return ApiError(405, "method_not_allowed", f"{method} is not allowed on {path}; use {', '.join(allowed)}.",
                    headers={"allow": ", ".join(allowed)})


def error_response(error: ApiError) -> Response:
    return json_response(error.status, {"error": {"code": error.code, "message": error.message}}, error.headers)


def internal_error_response() -> Response:
    # Never leak internals: the traceback goes to the log, the client gets a stable code.
    return error_response(ApiError(500, "internal_error", "The server failed to answer; the error was logged."))
