"""Who may call the deployed API and what caps its spend (docs/threat-model.md), read from the CloudFormation
template `osls package` writes for each `auth` value and the other params (tests/support/serverless_package.py)."""
from __future__ import annotations

import json

import pytest

from function.devserver.cors import CorsPolicy
from tests.support.cloudformation import deployed
from tests.support.serverless_package import (
    DEFAULT_IMAGE, JWT_AUDIENCE, JWT_ISSUER, only, only_named, resources_of_type,
)

pytestmark = pytest.mark.slow

# Headers a browser must be allowed to send for a signed (SigV4) or bearer-token call.
SIGNED_REQUEST_HEADERS = {"authorization", "x-amz-date", "x-amz-security-token", "content-type"}


def routes(template: dict) -> dict[str, dict]:
    """RouteKey -> route properties."""
    found = resources_of_type(template, "AWS::ApiGatewayV2::Route").values()
    return {r["Properties"]["RouteKey"]: r["Properties"] for r in found}


def resources(packages, name: str) -> dict:
    return deployed(packages(name).template)["Resources"]


def of_type(deployed_resources: dict, kind: str) -> dict[str, dict]:
    return {name: r for name, r in deployed_resources.items() if r["Type"] == kind}


def test_by_default_every_route_needs_a_sigv4_signature(packages):
    template = packages("default").template
    assert routes(template), "no routes"
    for key, route in routes(template).items():
        assert route.get("AuthorizationType") == "AWS_IAM", key
        assert "AuthorizerId" not in route, key
    assert resources_of_type(template, "AWS::ApiGatewayV2::Authorizer") == {}


def test_jwt_puts_every_route_behind_one_authorizer_with_the_given_issuer_and_audience(packages):
    template = packages("jwt").template
    name, authorizer = only_named(resources_of_type(template, "AWS::ApiGatewayV2::Authorizer"))
    assert authorizer["Properties"]["AuthorizerType"] == "JWT"
    assert authorizer["Properties"]["JwtConfiguration"] == {"Issuer": JWT_ISSUER, "Audience": [JWT_AUDIENCE]}
    assert authorizer["Properties"]["IdentitySource"] == ["$request.header.Authorization"]
    assert routes(template).keys() == routes(packages("default").template).keys()
    for key, route in routes(template).items():
        assert route.get("AuthorizationType") == "JWT", key
        assert route.get("AuthorizerId") == {"Ref": name}, key


def test_none_makes_every_route_public(packages):
    template = packages("public").template
    assert routes(template).keys() == routes(packages("default").template).keys()
    for key, route in routes(template).items():
        assert route.get("AuthorizationType", "NONE") == "NONE", key
    assert resources_of_type(template, "AWS::ApiGatewayV2::Authorizer") == {}


def test_jwt_without_an_issuer_fails_at_packaging_instead_of_deploying(osls, tmp_path):
    done = osls.package(tmp_path / "package", *DEFAULT_IMAGE, "--param", "auth=jwt",
                        "--param", f"jwtAudience={JWT_AUDIENCE}")
    assert done.returncode != 0
    assert "provider.httpApi.authorizers.jwt" in done.stdout + done.stderr


def test_an_unknown_auth_value_fails_at_packaging(osls, tmp_path):
    done = osls.package(tmp_path / "package", *DEFAULT_IMAGE, "--param", "auth=public")
    assert done.returncode != 0
    assert 'Cannot resolve variable at "custom.authorizer"' in done.stdout + done.stderr


def stage_throttle(deployed_resources: dict) -> tuple[float, float]:
    settings = only(of_type(deployed_resources, "AWS::ApiGatewayV2::Stage"))["Properties"]["DefaultRouteSettings"]
    return float(settings["ThrottlingRateLimit"]), float(settings["ThrottlingBurstLimit"])


def reserved_concurrency(deployed_resources: dict) -> int | None:
    function = only(of_type(deployed_resources, "AWS::Lambda::Function"))["Properties"]
    value = function.get("ReservedConcurrentExecutions")
    return None if value is None else int(value)


def test_the_stage_throttles_every_route_at_50_per_second_with_bursts_of_100_unless_told(packages):
    assert stage_throttle(resources(packages, "default")) == (50, 100)
    assert stage_throttle(resources(packages, "public")) == (5, 10)


def test_reserved_concurrency_caps_the_function_at_10_containers_unless_told(packages):
    assert reserved_concurrency(resources(packages, "default")) == 10
    assert reserved_concurrency(resources(packages, "public")) == 2
    assert reserved_concurrency(resources(packages, "jwt")) is None  # reservedConcurrency=none


def test_the_results_table_has_a_ceiling_on_request_units(packages):
    for name, units in (("default", 1000), ("public", 100)):
        table = only(of_type(resources(packages, name), "AWS::DynamoDB::Table"))["Properties"]
        assert table["BillingMode"] == "PAY_PER_REQUEST"
        assert {k: int(v) for k, v in table["OnDemandThroughput"].items()} == {
            "MaxReadRequestUnits": units, "MaxWriteRequestUnits": units}


def cors(deployed_resources: dict) -> dict | None:
    return only(of_type(deployed_resources, "AWS::ApiGatewayV2::Api"))["Properties"].get("CorsConfiguration")


def test_no_browser_origin_is_allowed_unless_listed(packages):
    assert cors(resources(packages, "default")) is None
    listed = cors(resources(packages, "jwt"))
    assert listed["AllowOrigins"] == ["https://app.example.com", "https://admin.example.com"]
    assert SIGNED_REQUEST_HEADERS <= {h.lower() for h in listed["AllowHeaders"]}
    assert not listed.get("AllowCredentials")
    assert cors(resources(packages, "public"))["AllowOrigins"] == ["*"]  # only because corsOrigins=* asked for it


def test_the_cors_settings_are_the_devserver_cors_json_s_which_the_local_server_applies(packages):
    """One source for both: serverless.yml reads function/devserver/cors.json, and so does
    function/devserver/cors.py."""
    listed = cors(resources(packages, "jwt"))
    policy = CorsPolicy.load("https://app.example.com,https://admin.example.com")
    assert (listed["AllowHeaders"], listed["AllowMethods"], int(listed["MaxAge"])) == (
        list(policy.allow_headers), list(policy.allow_methods), policy.max_age)
    assert list(policy.origins) == listed["AllowOrigins"]
    parameter = packages("default").template["Parameters"]["CorsOrigins"]["Default"]
    assert parameter == ",".join(CorsPolicy.load().origins) == ""  # the default: no origin, as the local server's


def alarms(deployed_resources: dict) -> dict[str, dict]:
    """Metric name (the first metric's, for metric-math alarms; the query's id for Metrics Insights alarms) ->
    alarm properties."""
    found = {}
    for alarm in of_type(deployed_resources, "AWS::CloudWatch::Alarm").values():
        properties = alarm["Properties"]
        first = (properties.get("Metrics") or [{}])[0]
        stat = first.get("MetricStat", {}).get("Metric", {})
        found[properties.get("MetricName") or stat.get("MetricName") or first["Id"]] = properties
    return found


def test_alarms_exist_only_when_asked_and_notify_one_topic(packages):
    assert alarms(resources(packages, "default")) == {}
    assert of_type(resources(packages, "default"), "AWS::SNS::Topic") == {}
    on = resources(packages, "jwt")
    topic_name, _ = only_named(of_type(on, "AWS::SNS::Topic"))
    found = alarms(on)
    # slowShare and errorRate: per model version, from the log line's metrics (test_deploy_metrics.py).
    assert found.keys() == {"Errors", "Throttles", "5xx", "Count", "slowShare", "errorRate"}
    for metric, alarm in found.items():
        assert alarm["AlarmActions"] == [{"Ref": topic_name}], metric
        assert alarm["TreatMissingData"] == "notBreaching", metric
        assert metric in {"slowShare", "errorRate"} or alarm["Threshold"] >= 1, metric
    function_name, _ = only_named(of_type(on, "AWS::Lambda::Function"))
    api_name, _ = only_named(of_type(on, "AWS::ApiGatewayV2::Api"))
    assert found["Errors"]["Dimensions"] == [{"Name": "FunctionName", "Value": {"Ref": function_name}}]
    assert found["Throttles"]["Namespace"] == "AWS/Lambda"
    assert found["5xx"]["Dimensions"] == [{"Name": "ApiId", "Value": {"Ref": api_name}}]
    # Requests per 5 minutes / 240 = the per-second rate at 80% of the throttle, compared with throttleRate.
    near_throttle = found["Count"]
    assert near_throttle["Metrics"][1]["Expression"] == "requests / 240"
    assert float(near_throttle["Threshold"]) == stage_throttle(on)[0]
    assert deployed(packages("jwt").template)["Outputs"]["AlarmTopicArn"]["Value"] == {"Ref": topic_name}


def test_the_access_log_names_the_caller_for_each_kind_of_auth(packages):
    template = packages("default").template
    stage = only(resources_of_type(template, "AWS::ApiGatewayV2::Stage"))["Properties"]
    log_group = template["Resources"][stage["AccessLogSettings"]["DestinationArn"]["Fn::GetAtt"][0]]
    assert log_group["Properties"]["RetentionInDays"] == 14
    fields = json.loads(stage["AccessLogSettings"]["Format"])
    assert {"$context.identity.sourceIp", "$context.identity.userArn", "$context.authorizer.claims.sub",
            "$context.authorizer.error", "$context.status", "$context.requestId"} <= set(fields.values())
    off = packages("jwt").template  # accessLogs=false
    assert "AccessLogSettings" not in only(resources_of_type(off, "AWS::ApiGatewayV2::Stage"))["Properties"]


def test_the_stack_outputs_the_resource_an_iam_policy_grants(packages):
    arn = packages("default").template["Outputs"]["HttpApiInvokeArn"]["Value"]
    api_name, _ = only_named(resources_of_type(packages("default").template, "AWS::ApiGatewayV2::Api"))
    assert arn == {"Fn::Sub": "arn:${AWS::Partition}:execute-api:${AWS::Region}:${AWS::AccountId}:${%s}/*" % api_name}
