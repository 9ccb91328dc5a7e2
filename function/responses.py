"""What the function answers: a status, headers and bytes, and the API Gateway proxy result they become."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

JSON_CONTENT_TYPE = "application/json; charset=utf-8"


@dataclass
class Response:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


def json_response(status: int, payload: object, headers: dict[str, str] | None = None) -> Response:
    # ensure_ascii=False: labels and texts stay readable UTF-8 rather than \u escapes.
    # errors="replace": a lone surrogate echoed from the client must not turn an answer into a crash.
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8", errors="replace")
    return Response(status, body, {"content-type": JSON_CONTENT_TYPE, **(headers or {})})


def to_result(response: Response) -> dict:
    """The proxy integration result; the same shape serves payload 1.0 and 2.0."""
    return {
        "statusCode": response.status,
        "headers": response.headers,
        "body": response.body.decode("utf-8", errors="replace"),
        "isBase64Encoded": False,
    }
