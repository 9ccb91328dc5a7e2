"""The one reader of the JSON files convert is handed (sidecar.json, a model directory's config.json, modules.json,
tokenizer.json...): a hostile or broken file is a ConversionError, one line with the file, the fault and the fix,
never a traceback, within a memory bound.

Refused: a file over its size cap (read no further), bytes that are not UTF-8 JSON, NaN or Infinity (Python's
parser takes them, no file format convert reads has them), an integer past Python's digit limit, nesting deeper
than the caller's cap (thousands of levels break the parser, hundreds whatever walks the value), and a value
that is not a JSON object when the caller wants one.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from convert.errors import ConversionError

MAX_JSON_BYTES = 16 * 1024 * 1024  # far past any config or sidecar; a large tokenizer.json asks for more
MAX_DEPTH = 32  # of nested objects and lists; tokenizer.json, the deepest file read, nests about 6


def depth_of(value) -> int:
    """How deeply `value` nests lists and objects, walked without recursion (a scalar is 0, [] is 1)."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is not None:
            deepest = max(deepest, depth)
            pending.extend((child, depth + 1) for child in children)
    return deepest


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def read_json_file(path: Path, code: str, fix: str, name: str | None = None, max_bytes: int = MAX_JSON_BYTES,
                   max_depth: int = MAX_DEPTH, deep_hint: str = "", want_object: bool = True):
    """The JSON value in `path`, or ConversionError(`code`) naming the file (`name`, or the path) and ending with
    `fix`; `deep_hint` says, for a too-deep file, how deep the real one nests."""
    where = name or str(path)
    try:
        size = path.stat().st_size
    except OSError as error:
        raise ConversionError(code, f"{where}: cannot be read ({error.strerror or error}): {fix}") from None
    if size > max_bytes:
        raise ConversionError(code, f"{where}: is {size:,} bytes, over the {max_bytes:,} convert reads: {fix}")
    data = parse_json(path.read_bytes(), where, code, fix, max_depth, deep_hint)
    if want_object and not isinstance(data, dict):
        raise ConversionError(code, f"{where}: holds a JSON {type(data).__name__}: write one JSON object; {fix}")
    return data


def parse_json(raw: bytes, where: str, code: str, fix: str, max_depth: int = MAX_DEPTH, deep_hint: str = ""):
    """The JSON value of `raw` (UTF-8), refused as read_json_file refuses a file's."""
    too_deep = ConversionError(code, f"{where}: nests objects or lists more than {max_depth} levels deep"
                               f"{': ' + deep_hint if deep_hint else ''}; {fix}")
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ConversionError(code, f"{where}: not valid JSON ({error}): {fix}") from None
    except RecursionError:  # thousands of levels: deeper than json's parser goes
        raise too_deep from None
    except ValueError as error:  # NaN / Infinity, or an integer past Python's digit limit
        fault = (str(error) if "not a number JSON allows" in str(error) else
                 f"holds an integer longer than the {sys.get_int_max_str_digits():,} digits convert reads")
        raise ConversionError(code, f"{where}: {fault}: {fix}") from None
    if depth_of(data) > max_depth:  # hundreds of levels parse, then break whatever walks them (a json.dumps)
        raise too_deep
    return data
