"""The JSONPath half of Amazon States Language, as far as the bulk-inference definition uses it: reference paths
(`$.a.b`, `$$.Execution.Input`), payload templates (keys ending in `.$`), the intrinsic functions it calls and
Choice rules. Anything else raises Unsupported, so a definition that outgrows this fails its rehearsal loudly
instead of being played wrong."""
from __future__ import annotations

import copy
import fnmatch
import json
import re

PATH_PART = re.compile(r"\.([A-Za-z0-9_]+)|\[(\d+)\]")
INTRINSIC = re.compile(r"(States\.[A-Za-z]+)\((.*)\)", re.DOTALL)


class Unsupported(NotImplementedError):
    """Part of Amazon States Language this rehearsal does not play."""


class PathMissing(LookupError):
    """A path selects nothing: Step Functions fails the state with States.Runtime."""


def _parts(path: str) -> tuple[str, list]:
    root = "$$" if path.startswith("$$") else "$"
    rest = path[len(root):]
    parts, position = [], 0
    for match in PATH_PART.finditer(rest):
        if match.start() != position:
            raise Unsupported(f"path {path!r}")
        parts.append(match.group(1) if match.group(1) is not None else int(match.group(2)))
        position = match.end()
    if position != len(rest):
        raise Unsupported(f"path {path!r}")
    return root, parts


def read_path(path: str, data, context: dict):
    root, parts = _parts(path)
    value = context if root == "$$" else data
    for part in parts:
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError) as exc:
            raise PathMissing(f"{path} selects nothing") from exc
    return value


def is_present(path: str, data, context: dict) -> bool:
    try:
        read_path(path, data, context)
    except PathMissing:
        return False
    return True


def write_path(path: str | None, data, value):
    """ResultPath: `$` (or absent) replaces the input; `$.a.b` sets that field of a copy; null discards."""
    if path is None or path == "$":
        return value
    root, parts = _parts(path)
    if root != "$" or not all(isinstance(part, str) for part in parts):
        raise Unsupported(f"ResultPath {path!r}")
    result = copy.deepcopy(data)
    target = result
    for part in parts[:-1]:
        target = target.setdefault(part, {})
    target[parts[-1]] = value
    return result


def _split_arguments(text: str) -> list[str]:
    """Top-level comma-separated arguments; single-quoted strings may hold commas and \\' escapes."""
    arguments, current, depth, quoted, index = [], "", 0, False, 0
    while index < len(text):
        char = text[index]
        if quoted and char == "\\":
            current += text[index:index + 2]
            index += 2
            continue
        if char == "'":
            quoted = not quoted
        elif not quoted and char == "(":
            depth += 1
        elif not quoted and char == ")":
            depth -= 1
        elif not quoted and depth == 0 and char == ",":
            arguments.append(current.strip())
            current = ""
            index += 1
            continue
        current += char
        index += 1
    if current.strip():
        arguments.append(current.strip())
    return arguments


def _argument(text: str, data, context: dict):
    if text.startswith("'") and text.endswith("'"):
        return re.sub(r"\\(.)", r"\1", text[1:-1])
    if text.startswith("$"):
        return read_path(text, data, context)
    if text.startswith("States."):
        return evaluate(text, data, context)
    return json.loads(text)  # numbers, true, false, null


def evaluate(expression: str, data, context: dict):
    """The value of a `.$` field: a path or an intrinsic function call."""
    match = INTRINSIC.fullmatch(expression.strip())
    if not match:
        return read_path(expression, data, context)
    name, arguments = match.group(1), [_argument(a, data, context) for a in _split_arguments(match.group(2))]
    if name == "States.StringToJson":
        (text,) = arguments
        return json.loads(text)
    if name == "States.JsonMerge":
        left, right, deep = arguments
        if deep is not False or not isinstance(left, dict) or not isinstance(right, dict):
            raise Unsupported("States.JsonMerge other than a shallow merge of two objects")
        return {**left, **right}  # the second object's fields win
    raise Unsupported(name)


def payload(template, data, context: dict):
    """A payload template (Parameters, ItemSelector, BatchInput) filled in from `data`."""
    if isinstance(template, list):
        return [payload(item, data, context) for item in template]
    if not isinstance(template, dict):
        return template
    filled = {}
    for key, value in template.items():
        if key.endswith(".$"):
            filled[key[:-2]] = evaluate(value, data, context)
        else:
            filled[key] = payload(value, data, context)
    return filled


def choice_matches(rule: dict, data, context: dict) -> bool:
    if "And" in rule:
        return all(choice_matches(r, data, context) for r in rule["And"])
    if "Or" in rule:
        return any(choice_matches(r, data, context) for r in rule["Or"])
    if "Not" in rule:
        return not choice_matches(rule["Not"], data, context)
    variable = rule["Variable"]
    if "IsPresent" in rule:
        return is_present(variable, data, context) == rule["IsPresent"]
    value = read_path(variable, data, context)  # absent: States.Runtime, as Step Functions fails it
    if "StringMatches" in rule:
        return isinstance(value, str) and fnmatch.fnmatchcase(value, rule["StringMatches"])
    if "StringEquals" in rule:
        return value == rule["StringEquals"]
    raise Unsupported(f"Choice rule {sorted(rule)}")
