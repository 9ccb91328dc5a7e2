"""serverless.yml, validated offline: the real framework packages it and cfn-lint checks what it generates.

`provider.ecr.images` needs Docker and STS, so the tests use the documented switch (`--param imageUri=<digest URI>`
or FUNCTION_IMAGE_URI); everything else is the template `serverless deploy` would send to CloudFormation.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from function.cache.dynamodb_item import KEY_ATTRIBUTE, TTL_ATTRIBUTE
from function.router import ROUTES

REPO_ROOT = Path(__file__).resolve().parents[2]
OSLS = REPO_ROOT / "tools" / "node_modules" / ".bin" / "osls"
CFN_LINT = Path(sys.executable).parent / "cfn-lint"
TEMPLATE = "cloudformation-template-update-stack.json"
DIGEST_URI = "123456789012.dkr.ecr.{region}.amazonaws.com/lambda-tflite-serving@sha256:" + "ab" * 32
# API Gateway path variables are whole segments: the protocol routes ("{name}:predict", "/versions/{version}") reach
# the function through greedy routes under these prefixes, and its router resolves the rest.
GREEDY_PREFIXES = ("/v1/models/", "/v2/")


def gateway_path(template: str) -> str:
    prefix = next((prefix for prefix in GREEDY_PREFIXES if template.startswith(prefix)), None)
    return prefix + "{proxy+}" if prefix else template


# Every route the function serves, and nothing else.
EXPECTED_ROUTES = {f"{method} {gateway_path(path)}" for path, methods in ROUTES.items() for method in methods}
API_GATEWAY_LIMIT_SECONDS = 30

pytestmark = pytest.mark.slow


def run_osls(arguments: list[str], home: Path, service_dir: Path = REPO_ROOT, environment: dict | None = None):
    """The framework CLI with fake credentials and none of the caller's AWS settings."""
    assert OSLS.exists(), "tools/node_modules is missing: run `bash tools/install-test-deps.sh`"
    env = {key: value for key, value in os.environ.items() if not key.startswith("AWS_") and key != "FUNCTION_IMAGE_URI"}
    env.update({
        "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE", "AWS_SECRET_ACCESS_KEY": "fake-secret-for-offline-packaging",
        "HOME": str(home), "SLS_TELEMETRY_DISABLED": "1", "SLS_NOTIFICATIONS_MODE": "off",
    })
    env.update(environment or {})
    return subprocess.run([str(OSLS), *arguments], cwd=service_dir, env=env, capture_output=True, text=True, timeout=180)


def package(output: Path, *options: str, service_dir: Path = REPO_ROOT, environment: dict | None = None):
    """`osls package` into `output` (never the repo's .serverless/); returns the completed process."""
    return run_osls(["package", "--package", str(output), *options], output.parent, service_dir, environment)


def load_template(output: Path) -> dict:
    return json.loads((output / TEMPLATE).read_text())


def resources_of_type(template: dict, kind: str) -> dict[str, dict]:
    return {name: r for name, r in template["Resources"].items() if r["Type"] == kind}


def only_named(mapping: dict) -> tuple[str, dict]:
    """The one (logical id, resource) of `mapping`; fails if there are more or none."""
    assert len(mapping) == 1, sorted(mapping)
    return next(iter(mapping.items()))


def only(mapping: dict) -> dict:
    return only_named(mapping)[1]


@pytest.fixture(scope="module")
def default_package(tmp_path_factory) -> Path:
    output = tmp_path_factory.mktemp("default") / "package"
    done = package(output, "--stage", "ci", "--param", f"imageUri={DIGEST_URI.format(region='us-east-1')}")
    assert done.returncode == 0, done.stdout + done.stderr
    return output


@pytest.fixture(scope="module")
def template(default_package) -> dict:
    return load_template(default_package)


@pytest.fixture(scope="module")
def function(template) -> dict:
    return only(resources_of_type(template, "AWS::Lambda::Function"))


def test_cfn_lint_passes_on_the_generated_template(default_package):
    done = subprocess.run([str(CFN_LINT), "-i", "W3005", "--", str(default_package / TEMPLATE)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_function_is_the_image_given_by_digest(function):
    assert function["Properties"]["PackageType"] == "Image"
    assert function["Properties"]["Code"] == {"ImageUri": DIGEST_URI.format(region="us-east-1")}


def cache_actions_called_by_the_function() -> set[str]:
    """The DynamoDB operations the function can send, read from the one client that sends them
    (function/cache/dynamodb_client.py: `self.call("BatchGetItem", ...)` -> dynamodb:BatchGetItem)."""
    source = (REPO_ROOT / "function" / "cache" / "dynamodb_client.py").read_text()
    operations = set(re.findall(r'self\.call\(\s*"(\w+)"', source))
    assert operations, "found no DynamoDB operations in function/cache/dynamodb_client.py"
    return {f"dynamodb:{operation}" for operation in operations}


def role_statements(template: dict) -> list[dict]:
    statements = []
    for role in resources_of_type(template, "AWS::IAM::Role").values():
        for policy in role["Properties"].get("Policies", []):
            statements += policy["PolicyDocument"]["Statement"]
    for policy in resources_of_type(template, "AWS::IAM::Policy").values():
        statements += policy["Properties"]["PolicyDocument"]["Statement"]
    return statements


def as_list(value) -> list:
    return value if isinstance(value, list) else [value]


def test_iam_grants_exactly_the_cache_calls_on_the_table_and_logging_on_the_own_log_group(template, function):
    role_name, role = only_named(resources_of_type(template, "AWS::IAM::Role"))
    table_name, _ = only_named(resources_of_type(template, "AWS::DynamoDB::Table"))
    log_group_name, _ = only_named(resources_of_type(template, "AWS::Logs::LogGroup"))
    assert function["Properties"]["Role"] == {"Fn::GetAtt": [role_name, "Arn"]}
    assert "ManagedPolicyArns" not in role["Properties"]  # AWSLambdaBasicExecutionRole would grant logs on *
    statements = role_statements(template)
    dynamodb = [s for s in statements if all(a.startswith("dynamodb:") for a in as_list(s["Action"]))]
    logs = [s for s in statements if all(a.startswith("logs:") for a in as_list(s["Action"]))]
    assert len(dynamodb) + len(logs) == len(statements), statements
    assert all(s["Effect"] == "Allow" and set(s) == {"Effect", "Action", "Resource"} for s in statements)
    assert {a for s in dynamodb for a in as_list(s["Action"])} == cache_actions_called_by_the_function()
    assert all(as_list(s["Resource"]) == [{"Fn::GetAtt": [table_name, "Arn"]}] for s in dynamodb)
    assert {a for s in logs for a in as_list(s["Action"])} == {"logs:CreateLogStream", "logs:PutLogEvents"}
    assert all(as_list(s["Resource"]) == [{"Fn::GetAtt": [log_group_name, "Arn"]}] for s in logs)
    for statement in statements:
        assert "*" not in json.dumps([statement["Action"], statement["Resource"]]), statement


def test_every_route_is_an_http_api_route_with_payload_v2(template):
    routes = {r["Properties"]["RouteKey"] for r in resources_of_type(template, "AWS::ApiGatewayV2::Route").values()}
    assert routes == EXPECTED_ROUTES
    assert {"POST /classify", "POST /sentiment", "POST /tokenize", "GET /models", "GET /health"} <= routes
    api = only(resources_of_type(template, "AWS::ApiGatewayV2::Api"))
    assert api["Properties"]["ProtocolType"] == "HTTP"  # binary bodies arrive base64-encoded, no binaryMediaTypes
    integration = only(resources_of_type(template, "AWS::ApiGatewayV2::Integration"))
    assert integration["Properties"]["PayloadFormatVersion"] == "2.0"
    assert api["Properties"]["CorsConfiguration"]["AllowOrigins"] == ["*"]


def test_results_table_is_on_demand_with_ttl_on_the_expiry_attribute_the_cache_writes(template, function):
    name, table = next(iter(resources_of_type(template, "AWS::DynamoDB::Table").items()))
    properties = table["Properties"]
    assert properties["BillingMode"] == "PAY_PER_REQUEST"
    assert properties["KeySchema"] == [{"AttributeName": KEY_ATTRIBUTE, "KeyType": "HASH"}]
    assert properties["AttributeDefinitions"] == [{"AttributeName": KEY_ATTRIBUTE, "AttributeType": "S"}]
    assert properties["TimeToLiveSpecification"] == {"AttributeName": TTL_ATTRIBUTE, "Enabled": True}
    variables = function["Properties"]["Environment"]["Variables"]
    assert variables["RESULTS_TABLE"] == {"Ref": name}
    assert variables["RESULTS_CACHE"] == "dynamodb"


def test_memory_is_one_vcpu_and_the_timeout_ends_before_api_gateway_gives_up(template, function):
    assert function["Properties"]["MemorySize"] == 1769
    assert 0 < function["Properties"]["Timeout"] < API_GATEWAY_LIMIT_SECONDS
    integration = only(resources_of_type(template, "AWS::ApiGatewayV2::Integration"))
    assert integration["Properties"]["TimeoutInMillis"] >= function["Properties"]["Timeout"] * 1000


def test_provisioned_concurrency_and_warmup_are_off_by_default(template):
    assert resources_of_type(template, "AWS::Lambda::Alias") == {}
    assert resources_of_type(template, "AWS::Lambda::Version") == {}
    rule = only(resources_of_type(template, "AWS::Events::Rule"))
    assert rule["Properties"]["State"] == "DISABLED"
    assert json.loads(only_target(rule)["Input"]) == {"warmup": True}


def only_target(rule: dict) -> dict:
    (target,) = rule["Properties"]["Targets"]
    return target


def test_params_switch_on_warmup_provisioned_concurrency_cors_stage_and_region(tmp_path):
    output = tmp_path / "package"
    uri = DIGEST_URI.format(region="eu-west-1")
    done = package(output, "--stage", "prod", "--region", "eu-west-1", "--param", "warmup=true",
                   "--param", "provisionedConcurrency=2", "--param", "corsOrigin=https://app.example.com",
                   environment={"FUNCTION_IMAGE_URI": uri})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "stage prod (eu-west-1)" in done.stdout + done.stderr
    template = load_template(output)
    function = only(resources_of_type(template, "AWS::Lambda::Function"))
    assert function["Properties"]["Code"] == {"ImageUri": uri}
    assert function["Properties"]["FunctionName"].endswith("-prod-api")
    alias = only(resources_of_type(template, "AWS::Lambda::Alias"))
    assert only(resources_of_type(template, "AWS::Lambda::Version"))  # what the alias points at
    assert alias["Properties"]["ProvisionedConcurrencyConfig"] == {"ProvisionedConcurrentExecutions": 2}
    rule = only(resources_of_type(template, "AWS::Events::Rule"))
    assert rule["Properties"]["State"] == "ENABLED"
    # Both the API and the warm-up must reach the provisioned alias, or the warm instances sit unused.
    alias_arn = {"Fn::Join": [":", [{"Fn::GetAtt": ["ApiLambdaFunction", "Arn"]}, alias["Properties"]["Name"]]]}
    assert only_target(rule)["Arn"] == alias_arn
    assert only(resources_of_type(template, "AWS::ApiGatewayV2::Integration"))["Properties"]["IntegrationUri"] == alias_arn
    api = only(resources_of_type(template, "AWS::ApiGatewayV2::Api"))
    assert api["Properties"]["CorsConfiguration"]["AllowOrigins"] == ["https://app.example.com"]


def test_config_validation_rejects_a_typo(tmp_path):
    service = tmp_path / "service"
    service.mkdir()
    text = (REPO_ROOT / "serverless.yml").read_text()
    assert "  memorySize: ${param:memorySize}" in text
    (service / "serverless.yml").write_text(text.replace("  memorySize: ${param:memorySize}", "  memorySise: 1769"))
    done = package(tmp_path / "package", "--param", f"imageUri={DIGEST_URI.format(region='us-east-1')}",
                   service_dir=service)
    assert done.returncode != 0
    assert "memorySise" in done.stdout + done.stderr


def test_without_the_switch_the_framework_builds_and_pushes_the_dockerfile(tmp_path):
    done = run_osls(["print", "--format", "json"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    resolved = json.loads(done.stdout)
    image = resolved["functions"]["api"]["image"]
    assert resolved["provider"]["ecr"]["images"][image]["path"] == "./"  # ./Dockerfile, built by `serverless deploy`
    assert (resolved["provider"]["stage"], resolved["provider"]["region"]) == ("dev", "us-east-1")
