"""Domain errors: what went wrong, in terms the client can act on, and nothing about HTTP.

Code below the routes (tasks, preprocessing, the registry, request parsing) raises these. Only the HTTP edge
(`function/http_errors.py`) knows which status each kind gets, and each protocol (this API, OpenAI, TF Serving,
the Open Inference Protocol) writes the body in its own shape.
"""
from __future__ import annotations


class ServingError(Exception):
    """A stable machine-readable `code` plus a sentence. Subclasses say which kind of problem it is."""

    def __init__(self, code: str, message: str, param: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.param = param  # the request field at fault, when there is one (OpenAI's error shape reports it)


class InvalidInput(ServingError):
    """The request is malformed or asks for something that cannot be done."""


class PayloadTooLarge(ServingError):
    """The body, a batch, an image or a text is over a documented limit."""


class UnsupportedMedia(ServingError):
    """The bytes are not a kind of content the model takes (not an image, a multipart form...)."""


class ModelNotFound(ServingError):
    """No model of that name is served here."""


class WrongTask(ServingError):
    """The model exists but does another task than the route needs."""


class ModelUnavailable(ServingError):
    """The model is known but cannot answer now (its directory is broken, its file failed to load)."""


class RouteNotFound(ServingError):
    """No route at this path."""


class MethodNotAllowed(ServingError):
    def __init__(self, method: str, path: str, allowed: list[str]):
        super().__init__("method_not_allowed", f"{method} is not allowed on {path}; use {', '.join(allowed)}.")
        self.allowed = allowed


class UnsupportedEvent(ServingError):
    """The Lambda event is not one this function understands."""

    def __init__(self, message: str):
        super().__init__("unsupported_event", message)


def body_too_large(size: int, limit: int) -> PayloadTooLarge:
    return PayloadTooLarge("body_too_large", f"The request body is {size} bytes; the limit is {limit} bytes.")
