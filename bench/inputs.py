"""The requests every section sends: one real photo as JPEG, real review sentences, as API Gateway v2 events.

The same bytes go to every configuration, so a difference in a number is a difference in the stack.
"""

from __future__ import annotations

import base64
import io
import json
from functools import lru_cache

from saved_model.recipes.photos import PHOTOS

PHOTO_NAME = "chelsea"  # the tabby cat: unambiguous top-1 for EfficientNet-Lite0
JPEG_QUALITY = 90
SENTENCES = (
    "The acting was superb and the story kept me hooked until the very last scene.",
    "Worst purchase I have made this year: it broke after two days and support never answered.",
)


@lru_cache(maxsize=1)
def photo_jpeg() -> bytes:
    """The photo re-encoded as a JPEG, the format a phone upload usually is."""
    photo = next(p for p in PHOTOS if p.name == PHOTO_NAME)
    buffer = io.BytesIO()
    photo.open().save(buffer, format="JPEG", quality=JPEG_QUALITY)
    return buffer.getvalue()


def classify_body(model: str | None = None) -> dict:
    body = {"image": base64.b64encode(photo_jpeg()).decode("ascii")}
    if model:
        body["model"] = model
    return body


def sentiment_body() -> dict:
    return {"text": SENTENCES[0]}


def tokenize_body() -> dict:
    return {"text": SENTENCES[1]}


ROUTE_BODIES = {"/classify": classify_body, "/sentiment": sentiment_body, "/tokenize": tokenize_body}


def http_api_event(path: str, body: dict, method: str = "POST") -> dict:
    """An API Gateway HTTP API (payload format 2.0) event, the shape the function receives in AWS."""
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": "",
        "headers": {"content-type": "application/json", "host": "bench.local"},
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "bench",
            "domainName": "bench.local",
            "http": {"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1",
                     "userAgent": "bench"},
            "requestId": "bench",
            "routeKey": "$default",
            "stage": "$default",
            "timeEpoch": 0,
        },
        "body": json.dumps(body),
        "isBase64Encoded": False,
    }
