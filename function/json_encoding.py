"""JSON encoders built once. `json.JSONEncoder.encode` builds a new C encoder, and a closure, on every call: ~1 us of
a request's two encodes (the answer and its log line), more once the invoke has left the CPU's caches cold."""
from __future__ import annotations

import json
from collections.abc import Callable
from json import encoder as json_encoder


def reusable_encoder(ensure_ascii: bool, separators: tuple[str, str], default: Callable | None = None,
                     allow_nan: bool = True) -> Callable[[object], str]:
    """value -> the text `json.JSONEncoder(...).encode(value)` writes with these settings, from one C encoder.
    There is no circular-reference check (a cycle raises RecursionError, not ValueError): no caller passes one."""
    reference = json.JSONEncoder(ensure_ascii=ensure_ascii, separators=separators, default=default,
                                 allow_nan=allow_nan, check_circular=False)
    if json_encoder.c_make_encoder is None:  # a Python without the _json accelerator
        return reference.encode
    item_separator, key_separator = separators
    strings = json_encoder.encode_basestring_ascii if ensure_ascii else json_encoder.encode_basestring
    chunks = json_encoder.c_make_encoder(None, reference.default, strings, None, key_separator, item_separator,
                                         False, False, allow_nan)
    join = "".join

    def encode(value: object) -> str:
        return join(chunks(value, 0))

    return encode
