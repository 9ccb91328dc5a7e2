"""The EMF checker itself (tests/support/emf.py): AWS's own example passes, each broken rule of the spec fails."""
from __future__ import annotations

import copy
import json

import pytest

from function.config import MetricsSettings
from function.log import json_line
from function.metrics import metric_fields
from tests.support import emf

# The specification's example document, as the CloudWatch User Guide gives it.
SPEC_EXAMPLE = {
    "_aws": {"Timestamp": 1574109732004, "CloudWatchMetrics": [
        {"Namespace": "lambda-function-metrics", "Dimensions": [["functionVersion"]],
         "Metrics": [{"Name": "time", "Unit": "Milliseconds"}]}]},
    "functionVersion": "$LATEST", "time": 100, "requestId": "989ffbf8-9ace-4817-a57c-e4dd734019ee",
}


def broken(change) -> dict:
    document = copy.deepcopy(SPEC_EXAMPLE)
    change(document)
    return document


def test_the_specifications_own_example_is_valid_and_reads_back():
    (point,) = emf.datapoints(emf.validate(json.dumps(SPEC_EXAMPLE)))
    assert (point.namespace, point.name, point.unit, point.dimensions, point.values) == (
        "lambda-function-metrics", "time", "Milliseconds", (("functionVersion", "$LATEST"),), (100,))


@pytest.mark.parametrize("change", [
    lambda d: d["_aws"].pop("Timestamp"),
    lambda d: d["_aws"].update(Timestamp="1574109732004"),
    lambda d: d["_aws"]["CloudWatchMetrics"][0].pop("Namespace"),
    lambda d: d["_aws"]["CloudWatchMetrics"][0].update(Dimensions=[]),
    lambda d: d["_aws"]["CloudWatchMetrics"][0].update(Dimensions=[[f"d{i}" for i in range(31)]]),
    lambda d: d["_aws"]["CloudWatchMetrics"][0].update(Metrics=[{"Name": "time"}] * 101),
    lambda d: d["_aws"]["CloudWatchMetrics"][0]["Metrics"][0].update(Unit="Millis"),
    lambda d: d["_aws"]["CloudWatchMetrics"][0]["Metrics"][0].update(StorageResolution=5),
    lambda d: d["_aws"]["CloudWatchMetrics"][0]["Metrics"][0].update(Extra=1),
    lambda d: d.pop("functionVersion"),  # a dimension with no root member
    lambda d: d.update(functionVersion=7),  # a dimension that is not a string
    lambda d: d.update(functionVersion="é"),  # CloudWatch takes ASCII dimension values only
    lambda d: d.update(time="100"),  # a metric that is not a number
    lambda d: d.update(time=True),
    lambda d: d.update(time=[1] * 101),
    lambda d: d.pop("time"),
], ids=["no-timestamp", "string-timestamp", "no-namespace", "no-dimension-set", "31-dimensions",
        "101-metrics", "unknown-unit", "bad-resolution", "extra-member", "missing-dimension",
        "numeric-dimension", "non-ascii-dimension", "string-metric", "boolean-metric", "101-values",
        "missing-metric"])
def test_each_broken_rule_is_caught(change):
    assert emf.problems(broken(change))


def test_metrics_off_adds_nothing_to_the_line():
    fields = {"route": "/classify", "status": 200, "timings_ms": {"total": 1.0}}
    assert metric_fields(fields, MetricsSettings(enabled=False)) == {}


def test_a_line_with_every_kind_of_field_is_valid_and_its_values_are_the_lines_own():
    fields = {"route": "/classify", "status": 503, "cold_start": "restore", "model": "digits", "model_version": "3",
              "error_code": "model_unavailable", "batch": 4, "cache_hits": 1, "cache_misses": 3, "tokens": 12,
              "timings_ms": {"parse": 0.5, "cache": 1.25, "invoke": 7.0, "total": 2500.0}}
    document = emf.validate(json_line({**fields, **metric_fields(fields, MetricsSettings(namespace="Tests/x"))}))
    values = emf.metric_values(document)
    assert {name[:-3]: ms for name, ms in values.items() if name.endswith("_ms")} == fields["timings_ms"]
    assert values["requests"] == 1 and values["server_errors"] == 1 and values["over_latency_target"] == 1
    assert (values["restores"], values["cold_starts"]) == (1, 0)
    assert {k: values[k] for k in ("batch", "cache_hits", "cache_misses", "tokens")} == {
        "batch": 4, "cache_hits": 1, "cache_misses": 3, "tokens": 12}
    dimension_sets = {tuple(dict(p.dimensions)) for p in emf.datapoints(document)}
    assert dimension_sets == {("route", "status_class"), (), ("route", "error_code"), ("model", "model_version"),
                              ("route", "model", "model_version")}
    assert document["status_class"] == "5xx" and {p.namespace for p in emf.datapoints(document)} == {"Tests/x"}


def test_values_a_client_could_choose_never_become_dimensions():
    fields = {"route": "/v1/models/é\u2028", "status": 404, "error_code": "not_a_declared_code", "model": "x" * 2000,
              "model_version": "1", "timings_ms": {"total": 1.0}}
    document = emf.validate(json_line({**fields, **metric_fields(fields, MetricsSettings())}))
    assert {dict(p.dimensions).get("route") for p in emf.datapoints(document)} == {"unknown", None}
    assert all("model" not in dict(p.dimensions) for p in emf.datapoints(document))
    assert all("error_code" not in dict(p.dimensions) for p in emf.datapoints(document))


def test_metrics_settings_resolve_from_the_environment_and_refuse_bad_values():
    assert MetricsSettings.from_env({}) == MetricsSettings(True, "lambda-tflite-serving", 2000.0)
    assert MetricsSettings.from_env({"METRICS_ENABLED": "FALSE", "METRICS_NAMESPACE": "Inference/prod",
                                     "METRICS_LATENCY_TARGET_MS": "250"}) == MetricsSettings(False, "Inference/prod",
                                                                                             250.0)
    for environ in ({"METRICS_ENABLED": "yes"}, {"METRICS_NAMESPACE": "AWS/Lambda"}, {"METRICS_NAMESPACE": "é"},
                    {"METRICS_LATENCY_TARGET_MS": "0"}, {"METRICS_LATENCY_TARGET_MS": "nan"},
                    {"METRICS_LATENCY_TARGET_MS": "fast"}):
        with pytest.raises(ValueError, match="METRICS_"):
            MetricsSettings.from_env(environ)
