"""Request bodies -> validated Python values; every client mistake becomes an InvalidInput or PayloadTooLarge."""
from __future__ import annotations

import base64
import binascii
import json
import re

from function.errors import body_too_large, first_line, quoted, refuse
from function.events import Request

JSON_TYPES = ("application/json", "text/json")
JSON_DECODER = json.JSONDecoder()  # json.loads' own defaults
# Pattern strings, compiled (and kept in re's cache) by the first request that needs one, a base64 text that is not
# plain base64 or a raw image's query: compiled here, they cost every route's first request 0.25 ms.
DATA_URL = r"(?i)^data:[\w.+-]+/[\w.+-]+(;[\w.+-]+=[\w.+-]+)*;base64,"
WHITESPACE = rb"\s+"
QUERY_INTEGER = r"(?a)[0-9]{1,9}"
QUERY_FRACTION = r"(?a)[0-9]{1,9}(\.[0-9]{1,9})?|\.[0-9]{1,9}"


def check_body_size(request: Request, max_bytes: int) -> None:
    if len(request.body) > max_bytes:
        raise body_too_large(len(request.body), max_bytes)


def is_json(request: Request) -> bool:
    """JSON when declared so, or when it looks like an object (curl --data-binary sends a form type)."""
    content_type = request.content_type
    if content_type in JSON_TYPES or content_type.endswith("+json"):
        return True
    return request.body.lstrip()[:1] == b"{"


def json_object(request: Request) -> dict:
    if not request.body or request.body.isspace():  # what strip() would empty, without copying the body
        raise refuse("invalid_json", "The request body is empty; send a JSON object.")
    return parse_json_object(request.body)


def parse_json_object(raw: bytes) -> dict:
    """JSON text (a whole body, or the JSON part of one) that must be an object. NaN, Infinity and -Infinity are
    accepted, as TensorFlow Serving accepts them."""
    try:
        if type(raw) is bytes and raw[:1] == b"{" and raw[1:2] != b"\x00":
            # What json.loads does with these bytes (json.detect_encoding finds UTF-8 in any "{" but "{\0"),
            # without its detection and two frames: the common body.
            value = JSON_DECODER.decode(raw.decode("utf-8", "surrogatepass"))
        else:
            value = json.loads(raw)
    except UnicodeDecodeError as exc:
        raise refuse("invalid_json", "The request body is not UTF-8 text.") from exc
    except ValueError as exc:  # JSONDecodeError, and the int-string limit on numbers of over 4,300 digits
        raise refuse("invalid_json", f"The request body is not valid JSON: {first_line(exc)}.") from exc
    except RecursionError as exc:
        raise refuse("invalid_json", "The request body nests JSON too deeply.") from exc
    if not isinstance(value, dict):
        raise refuse("invalid_json", "The request body must be a JSON object.")
    return value


def check_not_compressed(request: Request) -> None:
    """Compressed bodies (a client's gzip option) are refused by name rather than read as broken JSON."""
    encoding = request.headers.get("content-encoding", "").strip().lower()
    if encoding not in ("", "identity"):
        raise refuse("unsupported_content_encoding", f"Content-Encoding {quoted(encoding)} is not accepted; "
                     "send the body uncompressed.")


def one_or_many(body: dict, single: str, plural: str, kind: type, kind_name: str, max_batch: int) -> list:
    """`{single: x}` or `{plural: [x, ...]}` -> [x, ...], with types, emptiness and the batch limit checked."""
    if (single in body) == (plural in body):
        raise refuse("missing_field", f"Send exactly one of {single!r} or {plural!r}.")
    if single in body:
        values = [body[single]]
    else:
        values = body[plural]
        if not isinstance(values, list):
            raise refuse("invalid_field", f"{plural!r} must be a list of {kind_name}s.")
        if not values:
            raise refuse("empty_batch", f"{plural!r} is empty; send at least one {kind_name}.")
        if len(values) > max_batch:
            raise refuse("batch_too_large", f"{plural!r} has {len(values)} items; the limit is {max_batch}.",
                         param=plural)
    if not all(isinstance(value, kind) for value in values):  # the values' names only for the error
        for value, name in zip(values, _item_names(body, single, plural)):
            if not isinstance(value, kind):
                raise refuse("invalid_field", f"{name} must be a {kind_name}, not {type(value).__name__}.")
    return values


def _item_names(body: dict, single: str, plural: str) -> list[str]:
    if single in body:
        return [repr(single)]
    return [f"'{plural}[{i}]'" for i in range(len(body[plural]))]


def field_names(body: dict, single: str, plural: str) -> list[str]:
    """Where each value came from, for error messages: "field 'image'" or "field 'images[3]'"."""
    return [f"field {name}" for name in _item_names(body, single, plural)]


def decode_base64(text: str, where: str) -> bytes:
    """Standard or URL-safe base64, with or without a data: URL prefix, line breaks or padding."""
    if not text.startswith("data:"):
        try:  # the common case, canonical base64, in one C pass: the regex clean-up below costs ~0.3 ms a photo
            decoded = base64.b64decode(text, validate=True)
            if decoded:
                return decoded
        except (binascii.Error, ValueError):
            pass
    data = re.sub(DATA_URL, "", text.strip(), count=1).encode("ascii", errors="replace")
    data = re.sub(WHITESPACE, b"", data).translate(bytes.maketrans(b"-_", b"+/"))
    data += b"=" * (-len(data) % 4)
    try:
        decoded = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise refuse("invalid_base64", f"{where} is not valid base64.") from exc
    if not decoded:
        raise refuse("invalid_base64", f"{where} is empty.")
    return decoded


def only_fields(body: dict, fields: frozenset[str]) -> None:
    """Refuse a field the route does not read (a misspelt option, or one another route takes), as convert refuses an
    unknown flag: a request is never answered as if a field it sent had been read."""
    if not fields.issuperset(body):
        unknown = next(name for name in body if name not in fields)
        raise refuse("unknown_field", f"Field {quoted(unknown)} is not one this route reads; it reads "
                     f"{', '.join(sorted(fields))}.", param=unknown)


def top_k_option(body: dict, default: int | None) -> dict:
    """{"top_k": k} from a positive integer, or {"top_k": None} for "all" (every label, as HF pipelines' top_k=None),
    or the default's when the request sends none (no entry for a None default)."""
    value = body.get("top_k", default)
    if value == "all":
        return {"top_k": None}
    if value is None and "top_k" not in body:
        return {}
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise refuse("invalid_field", "'top_k' must be a positive integer, or \"all\" for every label.", param="top_k")
    return {"top_k": value}


def threshold_option(body: dict) -> dict:
    """{"threshold": t} when the request sets one (a number in [0, 1]: multi-label models only), else {}."""
    if "threshold" not in body:
        return {}
    value = body["threshold"]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise refuse("invalid_field", "'threshold' must be a number from 0 to 1.", param="threshold")
    return {"threshold": float(value)}


def query_options(query: dict[str, str]) -> dict:
    """?model=...&top_k=...&threshold=... for raw image bodies, which have no JSON to carry options. An integer
    option is ASCII digits, at most 9 of them (str.isdigit() also accepts "²", and int() refuses 4,300 digits), a
    fraction likewise: anything else is left as text, which the option's own check refuses with a 400."""
    options: dict = {name: query[name] for name in ("model", "top_k", "threshold") if name in query}
    if re.fullmatch(QUERY_INTEGER, options.get("top_k", "")):
        options["top_k"] = int(options["top_k"])
    if re.fullmatch(QUERY_FRACTION, options.get("threshold", "")):
        options["threshold"] = float(options["threshold"])
    return options
