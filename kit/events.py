"""The one builder of API Gateway events for tests and benchmarks: the real captured shapes in kit/event_shapes/,
filled in."""
from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from urllib.parse import urlencode

EVENTS = Path(__file__).resolve().parent / "event_shapes"


def load_event(name: str) -> dict:
    return json.loads((EVENTS / name).read_text(encoding="utf-8"))


def http_api_event(method: str, path: str, body: bytes | str | dict | list | None = None,
                   content_type: str | None = "application/json", binary: bool | None = None,
                   query: dict[str, str] | None = None) -> dict:
    """An HTTP API payload 2.0 event. `binary` defaults to True for bytes bodies: API Gateway base64-encodes them."""
    event = copy.deepcopy(load_event("http_api_v2_post_json.json"))
    event["rawPath"] = event["requestContext"]["http"]["path"] = path
    event["requestContext"]["http"]["method"] = method
    event["routeKey"] = "$default"
    event["rawQueryString"] = urlencode(query or {})
    event.pop("queryStringParameters", None)
    if query:
        event["queryStringParameters"] = dict(query)
    _set_content_type(event["headers"], content_type)
    _set_body(event, body, binary)
    return event


def rest_api_event(method: str, path: str, body: bytes | str | dict | list | None = None,
                   content_type: str | None = "application/json", binary: bool | None = None,
                   query: dict[str, str] | None = None) -> dict:
    """A REST API proxy (payload 1.0) event."""
    event = copy.deepcopy(load_event("rest_v1_post_json.json"))
    event["path"] = event["requestContext"]["path"] = path
    event["httpMethod"] = event["requestContext"]["httpMethod"] = method
    event["queryStringParameters"] = dict(query) if query else None
    event["multiValueQueryStringParameters"] = {k: [v] for k, v in query.items()} if query else None
    for headers in (event["headers"], event["multiValueHeaders"]):
        for name in [name for name in headers if name.lower() == "content-type"]:
            del headers[name]
    if content_type:
        event["headers"]["Content-Type"] = content_type
        event["multiValueHeaders"]["Content-Type"] = [content_type]
    _set_body(event, body, binary)
    return event


EVENT_BUILDERS = {"2.0": http_api_event, "1.0": rest_api_event}


def _set_content_type(headers: dict, content_type: str | None) -> None:
    headers.pop("content-type", None)
    headers.pop("content-length", None)
    if content_type:
        headers["content-type"] = content_type


def _set_body(event: dict, body: bytes | str | dict | list | None, binary: bool | None) -> None:
    if isinstance(body, (dict, list)):
        body = json.dumps(body, ensure_ascii=False)
    if binary is None:
        binary = isinstance(body, bytes)
    if body is None:
        event["body"], event["isBase64Encoded"] = None, False
    elif binary:
        raw = body if isinstance(body, bytes) else body.encode("utf-8", "surrogatepass")
        event["body"], event["isBase64Encoded"] = base64.b64encode(raw).decode("ascii"), True
    else:
        event["body"], event["isBase64Encoded"] = body if isinstance(body, str) else body.decode("utf-8"), False
