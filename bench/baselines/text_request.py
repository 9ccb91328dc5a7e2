"""The part of the embedding baseline that is not ONNX Runtime: read an /embed event, shape the JSON answer.

The body is the function's /embed request (`{"text": str}` or `{"texts": [str, ...]}`, optional `"normalize"`,
default true); the answer carries `dimensions`, `embeddings` (one list of floats per text, in order) and
`truncated` (the text had more tokens than the model's max_length). Numpy and the standard library only.
"""

from __future__ import annotations

import base64
import json

import numpy as np


class BadRequest(ValueError):
    """The event is not an /embed request this baseline understands."""


def embed_request(event: dict) -> tuple[list[str], bool]:
    """(texts, normalize) from an API Gateway proxy event with a JSON body."""
    body = event.get("body") or ""
    if event.get("isBase64Encoded"):
        body = base64.b64decode(body).decode("utf-8")
    try:
        payload = json.loads(body)
    except ValueError:
        raise BadRequest("the body is not JSON") from None
    texts = payload.get("texts", [payload["text"]] if "text" in payload else None)
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) and t for t in texts):
        raise BadRequest('send "text": a non-empty string, or "texts": a list of them')
    return texts, bool(payload.get("normalize", True))


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def response(model_name: str, vectors: np.ndarray, truncated: list[bool]) -> dict:
    body = {"model": model_name, "model_version": "onnx", "dimensions": int(vectors.shape[1]),
            "embeddings": vectors.tolist(), "truncated": truncated, "cached": [False] * len(truncated)}
    return {"statusCode": 200, "headers": {"Content-Type": "application/json"}, "body": json.dumps(body)}


def error(message: str) -> dict:
    body = {"error": {"code": "invalid_input", "message": message}}
    return {"statusCode": 400, "headers": {"Content-Type": "application/json"}, "body": json.dumps(body)}
