"""serverless.yml, validated offline: the real framework packages it and cfn-lint checks what it generates.
Who may call the API and the caps on its spend: test_deploy_auth.py, on the same shared packagings.

`provider.ecr.images` needs Docker and STS, so the tests use the documented switch (`--param imageUri=<digest URI>`
or FUNCTION_IMAGE_URI); everything else is the template `serverless deploy` would send to CloudFormation.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from function.cache.dynamodb_item import KEY_ATTRIBUTE, TTL_ATTRIBUTE
from tests.support.cloudformation import deployed
from tests.support.serverless_package import (
    DEFAULT_IMAGE, DIGEST_URI, REPO_ROOT, VARIANTS, as_list, cfn_lint, only, only_named, resources_of_type,
)
from tests.unit.test_router_table import gateway_routes

# Every route the function serves (function/router.py's group tables), and nothing else.
EXPECTED_ROUTES = gateway_routes()
API_GATEWAY_LIMIT_SECONDS = 30

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def template(packages) -> dict:
    return packages("default").template


@pytest.fixture(scope="module")
def function(template) -> dict:
    return only(resources_of_type(template, "AWS::Lambda::Function"))


def test_cfn_lint_passes_on_every_variant_of_the_template(packages):
    done = cfn_lint(*(packages(name).template_path for name in VARIANTS))
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_function_is_the_image_given_by_digest(function):
    assert function["Properties"]["PackageType"] == "Image"
    assert function["Properties"]["Code"] == {"ImageUri": DIGEST_URI.format(region="us-east-1")}


def cache_actions_called_by_the_function() -> set[str]:
    """The DynamoDB operations the function can send, read from the one client that sends them
    (function/aws/dynamodb.py: `self.call("BatchGetItem", ...)` -> dynamodb:BatchGetItem)."""
    source = (REPO_ROOT / "function" / "aws" / "dynamodb.py").read_text()
    operations = set(re.findall(r'self\.call\(\s*"(\w+)"', source))
    assert operations, "found no DynamoDB operations in function/aws/dynamodb.py"
    return {f"dynamodb:{operation}" for operation in operations}


def role_statements(template: dict) -> list[dict]:
    """Every statement of the policies CloudFormation would create (a feature's policy exists only under its
    condition: tests/e2e/test_deploy_events.py)."""
    template = {**template, **deployed(template)}
    statements = []
    for role in resources_of_type(template, "AWS::IAM::Role").values():
        for policy in role["Properties"].get("Policies", []):
            statements += policy["PolicyDocument"]["Statement"]
    for policy in resources_of_type(template, "AWS::IAM::Policy").values():
        statements += policy["Properties"]["PolicyDocument"]["Statement"]
    return statements


def test_iam_grants_exactly_the_cache_calls_on_the_table_and_logging_on_the_own_log_group(template, function):
    role_name, role = only_named(resources_of_type(deployed(template), "AWS::IAM::Role"))
    table_name, _ = only_named(resources_of_type(template, "AWS::DynamoDB::Table"))
    log_group_name = function["DependsOn"][0]
    assert template["Resources"][log_group_name]["Properties"]["LogGroupName"] == "/aws/lambda/" + (
        function["Properties"]["FunctionName"])
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


def test_params_switch_on_warmup_provisioned_concurrency_stage_and_region(packages):
    prod = packages("prod")
    assert "stage prod (eu-west-1)" in prod.output
    template = prod.template
    function = only(resources_of_type(template, "AWS::Lambda::Function"))
    assert function["Properties"]["Code"] == {"ImageUri": DIGEST_URI.format(region="eu-west-1")}  # from the env
    assert function["Properties"]["FunctionName"].endswith("-prod-api")
    alias = only(resources_of_type(template, "AWS::Lambda::Alias"))
    assert only(resources_of_type(template, "AWS::Lambda::Version"))  # what the alias points at
    assert alias["Properties"]["ProvisionedConcurrencyConfig"] == {"ProvisionedConcurrentExecutions": 2}
    # Provisioned instances must fit inside the reserved ones, or CloudFormation refuses the alias.
    reserved = deployed(template)["Resources"][only_named(resources_of_type(template, "AWS::Lambda::Function"))[0]]
    assert 2 <= int(reserved["Properties"]["ReservedConcurrentExecutions"])
    rule = only(resources_of_type(template, "AWS::Events::Rule"))
    assert rule["Properties"]["State"] == "ENABLED"
    # Both the API and the warm-up must reach the provisioned alias, or the warm instances sit unused.
    alias_arn = {"Fn::Join": [":", [{"Fn::GetAtt": ["ApiLambdaFunction", "Arn"]}, alias["Properties"]["Name"]]]}
    assert only_target(rule)["Arn"] == alias_arn
    integration = only(resources_of_type(template, "AWS::ApiGatewayV2::Integration"))
    assert integration["Properties"]["IntegrationUri"] == alias_arn


def test_the_function_runs_on_x86_64_by_default_and_on_arm64_by_the_param(function, packages):
    assert function["Properties"]["Architectures"] == ["x86_64"]
    arm64 = only(resources_of_type(packages("arm64").template, "AWS::Lambda::Function"))
    assert arm64["Properties"]["Architectures"] == ["arm64"]
    assert arm64["Properties"]["Code"] == function["Properties"]["Code"]


def test_the_image_is_built_for_the_function_s_architecture(osls):
    for architecture, platform in (("x86_64", "linux/amd64"), ("arm64", "linux/arm64")):
        done = osls.run(["print", "--format", "json", "--param", f"architecture={architecture}"])
        assert done.returncode == 0, done.stdout + done.stderr
        resolved = json.loads(done.stdout)
        assert resolved["provider"]["architecture"] == architecture
        assert resolved["provider"]["ecr"]["images"]["inference"]["platform"] == platform


def test_an_unknown_architecture_fails_packaging(osls, tmp_path):
    done = osls.package(tmp_path / "package", *DEFAULT_IMAGE, "--param", "architecture=arm")
    assert done.returncode != 0
    assert "provider.ecr.images.inference.platform" in done.stdout + done.stderr  # the lookup by architecture


def test_config_validation_rejects_a_typo(osls, tmp_path):
    service = tmp_path / "service"
    service.mkdir()
    text = (REPO_ROOT / "serverless.yml").read_text()
    assert "  memorySize: ${param:memorySize}" in text
    (service / "serverless.yml").write_text(text.replace("  memorySize: ${param:memorySize}", "  memorySise: 1769"))
    shutil.copytree(REPO_ROOT / "deploy", service / "deploy")  # the state machine's definition, read by ${file()}
    cors = Path("function", "devserver", "cors.json")  # the CORS settings, read by ${file()} too
    (service / cors).parent.mkdir(parents=True)
    shutil.copy(REPO_ROOT / cors, service / cors)
    done = osls.package(tmp_path / "package", *DEFAULT_IMAGE, service_dir=service)
    assert done.returncode != 0
    assert "memorySise" in done.stdout + done.stderr


def test_without_the_switch_the_framework_builds_and_pushes_the_dockerfile(osls):
    done = osls.run(["print", "--format", "json"])
    assert done.returncode == 0, done.stdout + done.stderr
    resolved = json.loads(done.stdout)
    image = resolved["functions"]["api"]["image"]
    assert resolved["provider"]["ecr"]["images"][image]["path"] == "./"  # ./Dockerfile, built by `serverless deploy`
    assert (resolved["provider"]["stage"], resolved["provider"]["region"]) == ("dev", "us-east-1")
