"""CloudWatch metrics carried by each request's own log line: Embedded Metric Format, no API call, no extra line.

`metric_fields(fields, settings)` returns what to add to a log line's fields: the metric values as top-level
members and the `_aws` block that tells CloudWatch Logs which members are metrics and which are dimensions.
A metric's name is its member's name, so Logs Insights and CloudWatch Metrics speak of the same `total_ms`.

Dimensions are a bounded set, all chosen by this code and never by a client: the route template (or "unknown"),
the status class, the model and model version (only once a served model answered), the error code when
function/errors.py declares it.
docs/deploy.md "Metrics" lists every metric, its unit, its dimension sets, and what they cost.
"""
from __future__ import annotations

import json
import time
from functools import lru_cache

from function.config import MetricsSettings
from function.errors import ERROR_CODES
from function.log import RawJson

COUNT, MILLISECONDS = "Count", "Milliseconds"
# Members the log line may already hold, published as they are when present (ints).
COUNTED_FIELDS = ("cache_hits", "cache_misses", "cache_hits_memory", "cache_hits_shared", "batch", "tokens")
# Service-wide (no dimension): what belongs to the container or the cache as a whole, not to a route.
SERVICE_METRICS = ("cold_starts", "restores", "cache_hits", "cache_misses", "cache_hits_memory", "cache_hits_shared")
MAX_DIMENSION_CHARS = 1024  # CloudWatch's limit on a dimension value


def _status_class(status: object) -> str:
    return f"{status // 100}xx" if isinstance(status, int) and 100 <= status <= 599 else "unknown"


def _dimension(value: object) -> str | None:
    """`value` if CloudWatch takes it as a dimension value (non-blank ASCII, at most 1,024 characters), else None."""
    if isinstance(value, str) and value.strip() and value.isascii() and len(value) <= MAX_DIMENSION_CHARS:
        return value
    return None


def _directive(namespace: str, dimension_sets: list[list[str]], names: list[str], present: set[str]) -> dict:
    return {"Namespace": namespace, "Dimensions": dimension_sets,
            "Metrics": [{"Name": name, "Unit": MILLISECONDS if name.endswith("_ms") else COUNT}
                        for name in names if name in present]}


@lru_cache(maxsize=512)
def _directives(namespace: str, stages: tuple[str, ...], counted: tuple[str, ...], error: bool, model: bool) -> str:
    """The CloudWatchMetrics array as JSON, for one shape of line: its text depends on nothing else, so a warm
    container serializes each shape once (stages, counts, error and model are bounded sets chosen by code)."""
    present = {"requests", "cold_starts", "restores", "server_errors", *(f"{stage}_ms" for stage in stages), *counted}
    if "total" in stages:
        present.add("over_latency_target")
    directives = [
        _directive(namespace, [["route", "status_class"]], ["requests", "total_ms"], present),
        _directive(namespace, [[]], list(SERVICE_METRICS), present),
    ]
    if error:  # an error line's stage times too: how far a refused request got, and what it cost
        directives.append(_directive(namespace, [["route", "error_code"]],
                                     ["requests", *(f"{stage}_ms" for stage in stages)], present))
    if model:
        per_version = ["requests", "server_errors", "over_latency_target",
                       *(f"{stage}_ms" for stage in stages), *COUNTED_FIELDS]
        directives.append(_directive(namespace, [["model", "model_version"]], per_version, present))
        directives.append(_directive(namespace, [["route", "model", "model_version"]], ["total_ms"], present))
    return json.dumps([d for d in directives if d["Metrics"]], separators=(",", ":"))


def metric_fields(fields: dict, settings: MetricsSettings, now: float | None = None) -> dict:
    """The members that make the log line `fields` an EMF document (empty when metrics are off).

    `fields` is the line as the service builds it: `route`, `status`, `cold_start` (True, False or "restore"),
    `timings_ms` (stage -> ms, with `total`), and when a model answered `model`, `model_version` and the counts.
    The `_aws` member is already JSON (function.log.RawJson): the log line writes it as it is.
    """
    if not settings.enabled:
        return {}
    get = fields.get
    timings = get("timings_ms") or {}
    cold = get("cold_start")
    status = get("status")
    values: dict = {
        "requests": 1,
        "cold_starts": 1 if cold and cold != "restore" else 0,
        "restores": 1 if cold == "restore" else 0,
        "server_errors": 1 if isinstance(status, int) and status >= 500 else 0,
    }
    for stage, ms in timings.items():
        values[stage + "_ms"] = ms
    counted = tuple([name for name in COUNTED_FIELDS if type(get(name)) is int])  # never a bool
    for name in counted:
        values[name] = fields[name]
    total = timings.get("total")
    if total is not None:
        values["over_latency_target"] = 1 if total > settings.latency_target_ms else 0
    values["route"] = _dimension(get("route")) or "unknown"
    values["status_class"] = _status_class(status)
    error_code = get("error_code")
    error = error_code in ERROR_CODES  # the declared codes only: the dimension's values are a fixed set
    if error:
        values["error_code"] = error_code
    model, version = _dimension(get("model")), _dimension(get("model_version"))
    if model and version:
        values["model"], values["model_version"] = model, version
    directives = _directives(settings.namespace, tuple(timings), counted, error, bool(model and version))
    stamp = time.time() if now is None else now
    values["_aws"] = RawJson(f'{{"Timestamp":{int(stamp * 1000)},"CloudWatchMetrics":{directives}}}')
    return values

