"""Embedded Metric Format lines checked against the published specification and read the way CloudWatch reads them.

`validate(line)` applies tests/support/emf_schema.json (jsonschema) and the rules a schema cannot state: every
metric a directive names is a root member holding a number or up to 100 numbers, every dimension key a root member
holding a string CloudWatch accepts as a dimension value, a line within the 1 MB log event limit.
`datapoints(line)` is what CloudWatch extracts: one datapoint per directive x dimension set x metric.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from jsonschema import Draft202012Validator

SCHEMA_PATH = Path(__file__).with_name("emf_schema.json")
MAX_EVENT_BYTES = 1024 * 1024  # a CloudWatch Logs event, which an EMF document must fit in
MAX_VALUES_PER_METRIC = 100
MAX_DIMENSION_VALUE_CHARS = 1024  # CloudWatch's Dimension.Value


@cache
def validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def problems(document: dict) -> list[str]:
    """Every way `document` (one parsed log line) breaks the specification; empty when it is valid."""
    found = [f"{'/'.join(map(str, error.absolute_path)) or '<root>'}: {error.message}"
             for error in validator().iter_errors(document)]
    if found:
        return found
    for index, directive in enumerate(document["_aws"]["CloudWatchMetrics"]):
        for dimension_set in directive["Dimensions"]:
            for key in dimension_set:
                value = document.get(key)
                if not isinstance(value, str):
                    found.append(f"directive {index}: dimension {key!r} is not a root string member: {value!r}")
                elif not value.strip() or not value.isascii() or len(value) > MAX_DIMENSION_VALUE_CHARS:
                    found.append(f"directive {index}: dimension {key!r} has a value CloudWatch refuses: {value!r}")
            if len(set(dimension_set)) != len(dimension_set):
                found.append(f"directive {index}: a dimension set repeats a key: {dimension_set}")
        for definition in directive["Metrics"]:
            name = definition["Name"]
            value = document.get(name)
            values = value if isinstance(value, list) else [value]
            if not values or len(values) > MAX_VALUES_PER_METRIC or not all(map(_number, values)):
                found.append(f"directive {index}: metric {name!r} is not a number or up to 100 numbers: {value!r}")
    return found


def validate(line: str | bytes) -> dict:
    """The parsed line; fails the test with every problem found."""
    raw = line.encode() if isinstance(line, str) else line
    assert len(raw) <= MAX_EVENT_BYTES, f"an EMF line of {len(raw)} bytes is over the log event limit"
    document = json.loads(raw)
    assert isinstance(document, dict), "an EMF document is a JSON object"
    found = problems(document)
    assert not found, "\n".join(found)
    return document


@dataclass(frozen=True)
class Datapoint:
    namespace: str
    name: str
    unit: str
    dimensions: tuple[tuple[str, str], ...]  # (key, value) in the set's order
    values: tuple[float, ...]


def datapoints(document: dict) -> list[Datapoint]:
    """The metric datapoints CloudWatch publishes for one valid document."""
    points = []
    for directive in document["_aws"]["CloudWatchMetrics"]:
        for dimension_set in directive["Dimensions"]:
            dimensions = tuple((key, document[key]) for key in dimension_set)
            for definition in directive["Metrics"]:
                value = document[definition["Name"]]
                points.append(Datapoint(directive["Namespace"], definition["Name"], definition.get("Unit", "None"),
                                        dimensions, tuple(value) if isinstance(value, list) else (value,)))
    return points


def metric_values(document: dict) -> dict[str, float]:
    """Metric name -> its value in this line, over every directive (a name means one root member)."""
    return {point.name: point.values[0] for point in datapoints(document)}
