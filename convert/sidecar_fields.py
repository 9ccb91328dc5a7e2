"""Checks for single sidecar.json fields: each refusal is one line naming the field (dotted path) and the fix."""
from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from convert.errors import ConversionError

DOCS = "docs/model-format.md"
# A model name appears in URLs (/v1/models/{name}) and cache keys: keep it to characters that need no escaping.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def refuse(field: str, problem: str, fix: str) -> ConversionError:
    return ConversionError("bad_sidecar", f"sidecar.json: \"{field}\" {problem}: {fix} (see {DOCS})")


def joined(field: str, key: str) -> str:
    return f"{field}.{key}" if field else key


def show(value: Any, limit: int = 60) -> str:
    """A JSON-looking rendering of a value for messages ("rgb", [64, 64], true), cut short to keep one line."""
    if isinstance(value, str):
        text = f"\"{value}\""
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif value is None:
        text = "null"
    elif isinstance(value, list):
        text = "[" + ", ".join(show(item) for item in value) + "]"
    elif isinstance(value, dict):
        text = "{...}"
    else:
        text = str(value)
    return text if len(text) <= limit else text[:limit - 4].rstrip() + " ..."


def _listed(values: Sequence[str]) -> str:
    return ", ".join(f"\"{value}\"" for value in values)


def check_keys(data: dict, allowed: Sequence[str], field: str, context: str) -> None:
    """Refuse keys outside `allowed`; a near miss ("resise") gets its likely meaning."""
    for key in data:
        if key in allowed:
            continue
        close = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
        hint = f" (did you mean \"{close[0]}\"?)" if close else ""
        raise refuse(joined(field, key), f"is not a known key{hint}", f"the keys {context} are {', '.join(allowed)}")


def forbid(data: dict, key: str, task: str, reason: str) -> None:
    """A key of the schema that a task has no use for: refused, so nobody believes it takes effect."""
    if key in data:
        raise refuse(key, f"does not apply to task \"{task}\" ({reason})", "remove it")


def require(data: dict, key: str, field: str = "") -> Any:
    if key not in data:
        where = f"\"{field}\"" if field else "sidecar.json"
        raise ConversionError("bad_sidecar", f"sidecar.json: \"{joined(field, key)}\" is missing: add it to {where} "
                              f"(see {DOCS})")
    return data[key]


def mapping(value: Any, field: str) -> dict:
    if not isinstance(value, dict):
        raise refuse(field, f"is {show(value)}", "make it a JSON object")
    return value


def text(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise refuse(field, f"is {show(value)}", "make it a non-empty string")
    return value


NAME_RULE = "use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit (it appears in URLs)"


def model_name(value: Any) -> str:
    if not isinstance(value, str) or not NAME_PATTERN.fullmatch(value):
        raise refuse("name", f"is {show(value)}", NAME_RULE)
    return value


def served_name(value: str) -> str:
    """`convert --name`: the same rule as the sidecar's "name"."""
    if not NAME_PATTERN.fullmatch(value):
        raise ConversionError("bad_name", f"--name {show(value)}: {NAME_RULE}")
    return value


def choice(value: Any, field: str, allowed: Sequence[str]) -> str:
    """One of `allowed`, exactly; a value that differs only in case is named with its correct spelling."""
    if value in allowed:
        return value
    same_letters = [option for option in allowed if isinstance(value, str) and option.lower() == value.lower()]
    if same_letters:
        fix = f"write \"{same_letters[0]}\" (values are case-sensitive; allowed: {_listed(allowed)})"
    else:
        close = difflib.get_close_matches(value, allowed, n=1) if isinstance(value, str) else []
        fix = (f"did you mean \"{close[0]}\"? allowed: {_listed(allowed)}" if close
               else f"use one of {_listed(allowed)}")
    raise refuse(field, f"is {show(value)}", fix)


def flag(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise refuse(field, f"is {show(value)}", "write true or false")
    return value


def positive_int(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise refuse(field, f"is {show(value)}", "make it a positive whole number")
    return value


def numbers(value: Any, field: str, lengths: Sequence[int], what: str, positive: bool = False) -> list[float]:
    ok = isinstance(value, list) and len(value) in lengths and all(
        isinstance(item, (int, float)) and not isinstance(item, bool) for item in value)
    if ok and positive:
        ok = all(item > 0 for item in value)
    if not ok:
        count = " or ".join(str(length) for length in sorted(set(lengths)))
        sign = " positive" if positive else ""
        raise refuse(field, f"is {show(value)}", f"give a list of {count}{sign} numbers ({what})")
    return [float(item) for item in value]


def strings(value: Any, field: str, what: str) -> list[str]:
    """A non-empty list of distinct non-empty strings."""
    if not isinstance(value, list) or not value or not all(isinstance(item, str) and item for item in value):
        raise refuse(field, f"is {show(value)}", f"give a non-empty list of strings ({what})")
    return value


def distinct(values: list[str], field: str) -> list[str]:
    repeated = sorted({value for value in values if values.count(value) > 1})
    if repeated:
        raise refuse(field, f"lists {_listed(repeated)} more than once", "name each one once")
    return values


def role_map(value: Any, field: str, required: Sequence[str], optional: Sequence[str] = ()) -> dict[str, str]:
    """{role: signature tensor name} with exactly the roles a task knows."""
    data = mapping(value, field)
    check_keys(data, [*required, *optional], field, f"in \"{field}\" for this task")
    for role in required:
        require(data, role, field)
    for role, name in data.items():
        text(name, joined(field, role))
    return dict(data)


def file_in(directory: Path, value: Any, field: str) -> Path:
    """A file named relative to the SavedModel directory, which must stay inside it and exist."""
    if not isinstance(value, str) or not value or Path(value).is_absolute() or ".." in Path(value).parts:
        raise refuse(field, f"is {show(value)}", "name a file inside the SavedModel directory")
    path = directory / value
    if not path.is_file():
        raise refuse(field, f"names {value}, which is not in {directory}", "put the file there or fix the name")
    return path
