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

import time

from function.config import MetricsSettings
from function.errors import ERROR_CODES

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


def _directive(namespace: str, dimension_sets: list[list[str]], names: list[str], values: dict) -> dict:
    return {"Namespace": namespace, "Dimensions": dimension_sets,
            "Metrics": [{"Name": name, "Unit": MILLISECONDS if name.endswith("_ms") else COUNT}
                        for name in names if name in values]}


def metric_fields(fields: dict, settings: MetricsSettings, now: float | None = None) -> dict:
    """The members that make the log line `fields` an EMF document (empty when metrics are off).

    `fields` is the line as the service builds it: `route`, `status`, `cold_start` (True, False or "restore"),
    `timings_ms` (stage -> ms, with `total`), and when a model answered `model`, `model_version` and the counts.
    """
    if not settings.enabled:
        return {}
    timings = fields.get("timings_ms") or {}
    cold = fields.get("cold_start")
    status = fields.get("status")
    values: dict = {
        "requests": 1,
        "cold_starts": int(bool(cold) and cold != "restore"),
        "restores": int(cold == "restore"),
        "server_errors": int(isinstance(status, int) and status >= 500),
        **{f"{stage}_ms": ms for stage, ms in timings.items()},
        **{name: fields[name] for name in COUNTED_FIELDS if isinstance(fields.get(name), int)},
    }
    total = timings.get("total")
    if total is not None:
        values["over_latency_target"] = int(total > settings.latency_target_ms)
    dimensions = {"route": _dimension(fields.get("route")) or "unknown", "status_class": _status_class(status)}
    namespace = settings.namespace
    directives = [
        _directive(namespace, [["route", "status_class"]], ["requests", "total_ms"], values),
        _directive(namespace, [[]], list(SERVICE_METRICS), values),
    ]
    error_code = fields.get("error_code")
    if error_code in ERROR_CODES:  # the declared codes only: the dimension's values are a fixed set
        dimensions["error_code"] = error_code
        directives.append(_directive(namespace, [["route", "error_code"]], ["requests"], values))
    model, version = _dimension(fields.get("model")), _dimension(fields.get("model_version"))
    if model and version:
        dimensions.update(model=model, model_version=version)
        per_version = ["requests", "server_errors", "over_latency_target",
                       *(f"{stage}_ms" for stage in timings), *COUNTED_FIELDS]
        directives.append(_directive(namespace, [["model", "model_version"]], per_version, values))
        directives.append(_directive(namespace, [["route", "model", "model_version"]], ["total_ms"], values))
    stamp = time.time() if now is None else now
    return {**values, **dimensions,
            "_aws": {"Timestamp": int(stamp * 1000), "CloudWatchMetrics": [d for d in directives if d["Metrics"]]}}
