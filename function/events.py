"""API Gateway events in, results out: HTTP API payload 2.0 and REST API proxy 1.0 become one `Request`.

The one place that decodes request bodies. Bodies are decoded from base64 to BYTES here, never to text
(Powertools' `decoded_body` returns UTF-8 text, which breaks a raw JPEG).
"""
from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field

JSON_CONTENT_TYPE = "application/json; charset=utf-8"


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes
    query: dict[str, str] = field(default_factory=dict)  # as API Gateway passes them
    request_id: str = ""
    event_format: str = "2.0"

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()


@dataclass
class Response:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


class EventFormatError(ValueError):
    """The event is not an API Gateway proxy event this function understands."""


def json_response(status: int, payload: object, headers: dict[str, str] | None = None) -> Response:
    # ensure_ascii=False: labels and texts stay readable UTF-8 rather than \u escapes.
    # errors="replace": a lone surrogate echoed from the client must not turn an answer into a crash.
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8", errors="replace")
    return Response(status, body, {"content-type": JSON_CONTENT_TYPE, **(headers or {})})


def _body_bytes(event: dict) -> bytes:
    body = event.get("body")
    if body is None:
        return b""
    if not isinstance(body, str):
        raise EventFormatError("the event body is not a string")
    if event.get("isBase64Encoded"):
        try:
            return base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise EventFormatError("isBase64Encoded is set but the body is not valid base64") from exc
    return body.encode("utf-8")


def _strip_stage(path: str, stage: str | None) -> str:
    # HTTP APIs with a named stage put it in rawPath ("/prod/classify"); routes never include it.
    if stage and stage != "$default" and (path == f"/{stage}" or path.startswith(f"/{stage}/")):
        return path[len(stage) + 1:] or "/"
    return path


def parse_event(event: dict) -> Request:
    """Turn either API Gateway proxy event into a Request; raises EventFormatError for anything else."""
    if not isinstance(event, dict):
        raise EventFormatError("the event is not a JSON object")
    headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}
    context = event.get("requestContext") or {}
    if event.get("version") == "2.0":
        http = context.get("http") or {}
        method, path = http.get("method"), event.get("rawPath") or http.get("path")
        path = _strip_stage(path or "", context.get("stage"))
        event_format = "2.0"
    elif "httpMethod" in event:
        # REST API `path` is the resource path without the stage.
        method, path, event_format = event.get("httpMethod"), event.get("path"), "1.0"
    else:
        raise EventFormatError("not an API Gateway proxy event (payload format 1.0 or 2.0)")
    if not method or not path:
        raise EventFormatError("the event has no HTTP method or path")
    query = {str(k): str(v) for k, v in (event.get("queryStringParameters") or {}).items()}
    return Request(method=method.upper(), path=path, headers=headers, body=_body_bytes(event), query=query,
                   request_id=str(context.get("requestId") or ""), event_format=event_format)


def to_result(response: Response) -> dict:
    """The proxy integration result; the same shape serves payload 1.0 and 2.0."""
    return {
        "statusCode": response.status,
        "headers": response.headers,
        "body": response.body.decode("utf-8"),
        "isBase64Encoded": False,
    }
