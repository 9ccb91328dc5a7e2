"""--param snapStart=true: the function is published with SnapStart and every caller invokes its alias, never
$LATEST (an unpublished function would run without the snapshot, paying the whole init on each cold start)."""
from __future__ import annotations

import json

from tests.support.cloudformation import deployed
from tests.support.serverless_package import DEFAULT_IMAGE, cfn_lint, only, only_named, resources_of_type

ALIAS = "ApiSnapStartLambdaAlias"
ALIAS_ARN = {"Fn::Join": [":", [{"Fn::GetAtt": ["ApiLambdaFunction", "Arn"]}, "snapstart"]]}
# The framework's own events name the alias by ARN; the template's S3 and SQS resources by Ref (the alias ARN).
ALIAS_TARGETS = ({"Ref": ALIAS}, ALIAS_ARN)


def test_snapstart_is_off_by_default_and_nothing_is_published(packages):
    template = packages("default").template
    assert "SnapStart" not in only(resources_of_type(template, "AWS::Lambda::Function"))["Properties"]
    assert not resources_of_type(template, "AWS::Lambda::Alias")
    assert not resources_of_type(template, "AWS::Lambda::Version")


def test_the_param_publishes_a_version_with_snapstart_and_its_alias(packages):
    template = packages("snapstart").template
    function = only(resources_of_type(template, "AWS::Lambda::Function"))
    assert function["Properties"]["SnapStart"] == {"ApplyOn": "PublishedVersions"}
    version_id, _ = only_named(resources_of_type(template, "AWS::Lambda::Version"))
    alias_id, alias = only_named(resources_of_type(template, "AWS::Lambda::Alias"))
    assert alias_id == ALIAS
    assert alias["Properties"]["Name"] == "snapstart"
    assert alias["Properties"]["FunctionVersion"] == {"Fn::GetAtt": [version_id, "Version"]}
    # Replaced, not retained, on the next deploy: one snapshot cached (and paid for) at a time (docs/deploy.md).
    assert "DeletionPolicy" not in template["Resources"][version_id]


def test_every_caller_invokes_the_alias_never_latest(packages):
    resources = packages("snapstart").template["Resources"]
    integration = only(resources_of_type({"Resources": resources}, "AWS::ApiGatewayV2::Integration"))
    assert integration["Properties"]["IntegrationUri"] == ALIAS_ARN
    schedule = only(resources_of_type({"Resources": resources}, "AWS::Events::Rule"))
    assert [target["Arn"] for target in schedule["Properties"]["Targets"]] == [ALIAS_ARN]
    permissions = resources_of_type({"Resources": resources}, "AWS::Lambda::Permission")
    assert {p["Properties"]["Principal"] for p in permissions.values()} == {
        "apigateway.amazonaws.com", "events.amazonaws.com", "s3.amazonaws.com"}
    assert all(p["Properties"]["FunctionName"] in ALIAS_TARGETS for p in permissions.values()), permissions
    notifications = resources["UploadsBucketResource"]["Properties"]["NotificationConfiguration"]
    assert [c["Function"] for c in notifications["LambdaConfigurations"]] == [{"Ref": ALIAS}]
    assert resources["RequestQueueMapping"]["Properties"]["FunctionName"] == {"Ref": ALIAS}
    assert resources["UploadsInvokeConfig"]["Properties"]["Qualifier"] == "snapstart"
    assert "$LATEST" not in json.dumps(resources)


def test_without_snapstart_the_sources_invoke_the_function_itself(packages):
    resources = packages("default").template["Resources"]
    integration = only(resources_of_type({"Resources": resources}, "AWS::ApiGatewayV2::Integration"))
    assert integration["Properties"]["IntegrationUri"] == {"Fn::GetAtt": ["ApiLambdaFunction", "Arn"]}


def test_snapstart_with_provisioned_concurrency_is_refused_in_one_line(osls, tmp_path):
    ran = osls.package(tmp_path / "package", "--stage", "ci", *DEFAULT_IMAGE, "--param", "snapStart=true",
                       "--param", "provisionedConcurrency=1")
    assert ran.returncode != 0
    output = ran.stdout + ran.stderr
    assert "SnapStart does not support provisioned concurrency" in output, output


def test_snapstart_takes_only_true_or_false(osls, tmp_path):
    ran = osls.package(tmp_path / "package", "--stage", "ci", *DEFAULT_IMAGE, "--param", "snapStart=yes")
    assert ran.returncode != 0


def test_bulk_runs_and_batch_operations_invoke_the_alias_and_tracing_is_the_roles_own(packages):
    """snapStart with batch and tracing: the state machine's function, both roles' invoke grants and the FunctionArn
    output S3 Batch Operations jobs use are the alias (an unqualified ARN runs $LATEST, without the snapshot); the
    X-Ray grant is inside the function's role, so the function is created once the role may trace."""
    packaged = packages("snapstart-bulk")
    assert cfn_lint(packaged.template_path).returncode == 0
    resources = deployed(packaged.template)["Resources"]
    machine = resources["BulkInferenceStateMachine"]["Properties"]
    assert machine["DefinitionSubstitutions"]["FunctionArn"] == {"Ref": ALIAS}
    for role in ("BulkInferenceRole", "BatchOperationsRole"):
        (policy,) = resources[role]["Properties"]["Policies"]
        invoke = [s["Resource"] for s in policy["PolicyDocument"]["Statement"]
                  if s["Action"] == "lambda:InvokeFunction"]
        assert invoke == [{"Ref": ALIAS}], role
    assert deployed(packaged.template)["Outputs"]["FunctionArn"]["Value"] == {"Ref": ALIAS}
    assert "$LATEST" not in json.dumps(resources)
    policies = resources["FunctionExecutionRole"]["Properties"]["Policies"]
    assert "tracing" in [policy["PolicyName"] for policy in policies]
    assert not resources_of_type({"Resources": resources}, "AWS::IAM::Policy").keys() & {"TracingWritePolicy"}
