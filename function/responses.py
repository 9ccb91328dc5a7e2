"""What the function answers: a status, headers and bytes, and the API Gateway proxy result they become."""
from __future__ import annotations

import base64

from function.json_encoding import reusable_encoder

JSON_CONTENT_TYPE = "application/json; charset=utf-8"
BINARY_CONTENT_TYPE = "application/octet-stream"
# The content types whose bodies are text, a "/" ending naming a whole family: the function answers them unencoded.
TEXT_TYPES = ("application/json", "text/")


class Response:
    __slots__ = ("status", "body", "headers")

    def __init__(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.status = status
        self.body = body
        self.headers = {} if headers is None else headers


# ensure_ascii=False: labels and texts stay readable UTF-8 rather than \u escapes. One encoder for every answer.
ANSWER_JSON = reusable_encoder(ensure_ascii=False, separators=(",", ":"))


def json_bytes(payload: object) -> bytes:
    # errors="replace": a lone surrogate echoed from the client must not turn an answer into a crash.
    return ANSWER_JSON(payload).encode("utf-8", errors="replace")


def json_response(status: int, payload: object, headers: dict[str, str] | None = None) -> Response:
    return Response(status, json_bytes(payload), {"content-type": JSON_CONTENT_TYPE, **(headers or {})})


def to_result(response: Response) -> dict:
    """The proxy integration result; the same shape serves payload 1.0 and 2.0. A body that is not text (binary
    tensor data) goes base64-encoded with isBase64Encoded, which API Gateway decodes back to the bytes."""
    if response.headers.get("content-type", JSON_CONTENT_TYPE).startswith(TEXT_TYPES):
        body, encoded = response.body.decode("utf-8", errors="replace"), False
    else:
        body, encoded = base64.b64encode(response.body).decode("ascii"), True
    return {"statusCode": response.status, "headers": response.headers, "body": body, "isBase64Encoded": encoded}
