"""API Gateway events in: HTTP API payload 2.0 and REST API proxy 1.0 become one `Request`.

The one place that decodes request bodies and the one place that refuses a malformed event: any field of the
wrong type raises `UnsupportedEvent` (400 unsupported_event), never a TypeError. Bodies are decoded from base64 to
BYTES here, never to text (Powertools' `decoded_body` returns UTF-8 text, which breaks a raw JPEG).
"""
from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from types import MappingProxyType

from function.errors import refuse
from function.records import named_tuple


NO_QUERY: Mapping[str, str] = MappingProxyType({})  # one shared default, so it cannot be changed


@named_tuple
class Request:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes
    query: Mapping[str, str] = NO_QUERY  # as API Gateway passes them
    request_id: str = ""
    event_format: str = "2.0"

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()


def _mapping(event: dict, key: str, where: str = "the event") -> dict:
    value = event.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise refuse("unsupported_event", f"{key} in {where} must be an object, not {type(value).__name__}.")
    return value


def _string_map(event: dict, key: str, lower_keys: bool = False) -> dict[str, str]:
    strings = {}
    for name, value in _mapping(event, key).items():
        if value is None:
            continue
        if not isinstance(name, str) or not isinstance(value, str):
            raise refuse("unsupported_event", f"{key} must map strings to strings.")
        strings[name.lower() if lower_keys else name] = value
    return strings


def _string(value: object, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise refuse("unsupported_event", f"the event has no HTTP {what}.")
    return value


def _body_bytes(event: dict) -> bytes:
    body = event.get("body")
    if body is None:
        return b""
    if not isinstance(body, str):
        raise refuse("unsupported_event", "the event body is not a string.")
    if event.get("isBase64Encoded") is True:
        try:
            return base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise refuse("unsupported_event", "isBase64Encoded is set but the body is not valid base64.") from exc
    try:
        return body.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate: no client can have sent these bytes
        raise refuse("unsupported_event", "the event body is not valid Unicode.") from exc


def _strip_stage(path: str, stage: object) -> str:
    # HTTP APIs with a named stage put it in rawPath ("/prod/classify"); routes never include it.
    if isinstance(stage, str) and stage and stage != "$default" and (
            path == f"/{stage}" or path.startswith(f"/{stage}/")):
        return path[len(stage) + 1:] or "/"
    return path


def _valid_text(text: str, what: str) -> str:
    if text.isascii():  # no lone surrogate in it: the common case, without encoding a copy
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise refuse("unsupported_event", f"the event's {what} is not valid Unicode.") from exc
    return text


def parse_event(event: object) -> Request:
    """Turn either API Gateway proxy event into a Request; raises UnsupportedEvent for anything else."""
    if not isinstance(event, dict):
        raise refuse("unsupported_event", "the event is not a JSON object.")
    headers = _string_map(event, "headers", lower_keys=True)
    context = _mapping(event, "requestContext")
    if event.get("version") == "2.0":
        http = _mapping(context, "http", "requestContext")
        method = _string(http.get("method"), "method")
        path = _strip_stage(_string(event.get("rawPath") or http.get("path"), "path"), context.get("stage"))
        event_format = "2.0"
    elif "httpMethod" in event:
        # REST API `path` is the resource path without the stage.
        method, path = _string(event.get("httpMethod"), "method"), _string(event.get("path"), "path")
        event_format = "1.0"
    else:
        raise refuse("unsupported_event", "not an API Gateway proxy event (payload format 1.0 or 2.0).")
    request_id = context.get("requestId")
    return Request(method=_valid_text(method, "method").upper(), path=_valid_text(path, "path"), headers=headers,
                   body=_body_bytes(event), query=_string_map(event, "queryStringParameters"),
                   request_id=_valid_text(request_id, "request id") if isinstance(request_id, str) else "",
                   event_format=event_format)
