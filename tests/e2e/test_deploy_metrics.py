"""serverless.yml's metrics, dashboard, per model version alarms and tracing, packaged by the real framework.

The dashboard and the alarms are checked against the function's own EMF writer (function/metrics.py): every metric
and dimension set they read is one a log line publishes, so a renamed metric fails here, not on a blank graph.
cfn-lint runs on the `observed` variant with the other variants (test_deploy_config.py).
"""
from __future__ import annotations

import json
import re

import pytest

from function.config import MetricsSettings
from function.log import json_line
from function.metrics import metric_fields
from tests.support import emf
from tests.support.cloudformation import deployed
from tests.support.serverless_package import cfn_lint, only, resources_of_type

pytestmark = pytest.mark.slow
NAMESPACE = "Inference/ci"  # the observed variant's metricsNamespace


def published_by_the_function() -> set[tuple[str, tuple[str, ...]]]:
    """(metric name, dimension keys) for every metric a fully populated request line publishes."""
    fields = {"route": "/classify", "status": 500, "cold_start": True, "model": "digits", "model_version": "1",
              "error_code": "internal_error", "batch": 1, "cache_hits": 0, "cache_misses": 1, "tokens": 3,
              "cache_hits_memory": 0, "cache_hits_shared": 0,
              "timings_ms": {"parse": 1.0, "cache": 1.0, "invoke": 1.0, "total": 3.0}}
    document = emf.validate(json_line({**fields, **metric_fields(fields, MetricsSettings(namespace=NAMESPACE))}))
    return {(p.name, tuple(k for k, _ in p.dimensions)) for p in emf.datapoints(document)}


def function_of(template: dict) -> dict:
    return only(resources_of_type(deployed(template), "AWS::Lambda::Function"))["Properties"]


def test_the_observed_variant_passes_cfn_lint(packages):
    done = cfn_lint(packages("observed").template_path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_metrics_are_on_by_default_in_a_namespace_per_stage(packages):
    variables = function_of(packages("default").template)["Environment"]["Variables"]
    assert variables["METRICS_ENABLED"] == "true"
    assert variables["METRICS_NAMESPACE"] == "lambda-tflite-serving/ci"
    assert float(variables["METRICS_LATENCY_TARGET_MS"]) > 0
    MetricsSettings.from_env({k: str(v) for k, v in variables.items()})  # values the function accepts
    assert function_of(packages("observed").template)["Environment"]["Variables"]["METRICS_NAMESPACE"] == NAMESPACE


def test_dashboard_tracing_and_metric_alarms_exist_only_when_asked(packages):
    default = deployed(packages("default").template)
    assert resources_of_type(default, "AWS::CloudWatch::Dashboard") == {}
    assert "TracingConfig" not in function_of(packages("default").template)
    assert resources_of_type(default, "AWS::IAM::Policy") == {}
    jwt = deployed(packages("jwt").template)  # alarms=true, no dashboard
    assert resources_of_type(jwt, "AWS::CloudWatch::Dashboard") == {}
    assert {name for name in resources_of_type(jwt, "AWS::CloudWatch::Alarm") if name.startswith("ModelVersion")} == {
        "ModelVersionLatencyAlarm", "ModelVersionErrorRateAlarm"}


def dashboard_body(template: dict) -> dict:
    dashboard = only(resources_of_type(deployed(template), "AWS::CloudWatch::Dashboard"))
    text, variables = dashboard["Properties"]["DashboardBody"]["Fn::Sub"]
    assert variables == {"NS": NAMESPACE}  # the MetricsNamespace parameter, which the function's variable names
    # What CloudFormation's Fn::Sub would give, in this variant's region.
    text = text.replace("${NS}", variables["NS"]).replace("${AWS::Region}", "us-east-1")
    assert "${" not in text, text
    return json.loads(text)


SEARCH = re.compile(r"SEARCH\('\{(?P<keys>[^}]*)\} MetricName=\"(?P<name>\w+)\"', '(?P<stat>\w+)', \d+\)")


def test_every_dashboard_graph_reads_a_metric_the_function_publishes(packages):
    published = published_by_the_function()
    body = dashboard_body(packages("observed").template)
    titles = [widget["properties"]["title"] for widget in body["widgets"]]
    assert len(titles) == 7, titles
    read = set()
    for widget in body["widgets"]:
        for metric in widget["properties"]["metrics"]:
            expression = metric[0].get("expression", "") if isinstance(metric[0], dict) else ""
            if expression.startswith("SEARCH"):
                match = SEARCH.fullmatch(expression)
                assert match, expression
                namespace, *keys = match["keys"].split(",")
                assert namespace == NAMESPACE
                read.add((match["name"], tuple(keys)))
            elif not expression:  # [namespace, name, {options}]: a metric with no dimension
                assert metric[0] == NAMESPACE, metric
                read.add((metric[1], ()))
    assert read <= published, read - published
    # What the issue asks the dashboard to show.
    assert {("requests", ("route", "status_class")), ("requests", ("route", "error_code")),
            ("total_ms", ("route", "model", "model_version")), ("cold_starts", ()),
            ("cache_hits", ()), ("cache_misses", ()), ("invoke_ms", ("model", "model_version"))} <= read
    stats = {m["stat"] for w in body["widgets"] for [e, *_] in w["properties"]["metrics"]
             if isinstance(e, dict) and (m := SEARCH.fullmatch(e.get("expression", "")))}
    assert {"p50", "p99", "Sum"} <= stats


QUERY = re.compile(r'SELECT AVG\((?P<name>\w+)\) FROM SCHEMA\("(?P<ns>[^"]+)", (?P<keys>[\w, ]+)\) '
                   r"GROUP BY (?P<group>[\w, ]+)")


def test_model_version_alarms_query_what_the_function_publishes_and_notify_the_topic(packages):
    template = packages("observed").template
    resources = deployed(template)["Resources"]
    published = published_by_the_function()
    found = {}
    for name in ("ModelVersionLatencyAlarm", "ModelVersionErrorRateAlarm"):
        properties = resources[name]["Properties"]
        (query,) = properties["Metrics"]
        text = query["Expression"]["Fn::Sub"].replace("${MetricsNamespace}", NAMESPACE)
        match = QUERY.fullmatch(text)
        assert match, text
        keys = tuple(k.strip() for k in match["keys"].split(","))
        assert match["ns"] == NAMESPACE and keys == ("model", "model_version")
        assert tuple(k.strip() for k in match["group"].split(",")) == keys  # one contributor per model version
        assert (match["name"], keys) in published
        assert query["ReturnData"] is True and query["Period"] == 300
        assert properties["AlarmActions"] == [{"Ref": "AlarmTopic"}]
        assert properties["ComparisonOperator"] == "GreaterThanThreshold"
        found[match["name"]] = properties
    # p99 above the target <=> more than 1% of requests over it; the error rate is a fraction of requests.
    assert found["over_latency_target"]["Threshold"] == 0.01
    assert 0 < float(found["server_errors"]["Threshold"]) < 1
    variables = function_of(template)["Environment"]["Variables"]
    assert variables["METRICS_LATENCY_TARGET_MS"] == template["Parameters"]["LatencyAlarmMs"]["Default"]


def test_tracing_turns_on_active_tracing_with_exactly_the_xray_grant(packages):
    template = packages("observed").template
    assert function_of(template)["TracingConfig"] == {"Mode": "Active"}
    # Inside the role's own policies, so that CreateFunction waits for it; no separate policy to race the function.
    assert not resources_of_type(deployed(template), "AWS::IAM::Policy")
    policies = deployed(template)["Resources"]["FunctionExecutionRole"]["Properties"]["Policies"]
    (tracing,) = [policy for policy in policies if policy["PolicyName"] == "tracing"]
    (statement,) = tracing["PolicyDocument"]["Statement"]
    assert statement == {"Effect": "Allow", "Action": ["xray:PutTraceSegments", "xray:PutTelemetryRecords"],
                         "Resource": "*"}  # X-Ray has no resource-level permissions
    untraced = deployed(packages("default").template)["Resources"]["FunctionExecutionRole"]["Properties"]
    assert [policy["PolicyName"] for policy in untraced["Policies"]] == ["results-cache-and-logs"]
