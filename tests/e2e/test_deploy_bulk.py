"""serverless.yml's bulk runs (batch=true, docs/events.md "Bulk runs"): off by default; on, the packaged template
passes cfn-lint and holds the state machine of deploy/bulk-inference.asl.json with the deploy's settings, and every
role may do exactly what its part of a run needs: the state machine invokes only this function and reads only the
input prefix, the function reads only the input prefix and writes only the results prefix, and an S3 Batch
Operations job invokes only this function, reads only manifests and writes only reports."""
from __future__ import annotations

import json
import re

import pytest

from tests.support.bulk_definition import placeholders, substituted
from tests.support.cloudformation import deployed
from tests.support.serverless_package import DEFAULT_IMAGE, Packaged, as_list, cfn_lint

pytestmark = pytest.mark.slow

BATCH = ("--param", "batch=true", "--param", "batchBucket=acme-photos", "--param", "batchPrefix=archive/2026/",
         "--param", "batchSize=25", "--param", "batchMaxConcurrency=200",
         "--param", "batchToleratedFailurePercentage=2")
FUNCTION_ARN = {"Fn::GetAtt": ["ApiLambdaFunction", "Arn"]}
STATE_MACHINE = "lambda-tflite-serving-ci-bulk-inference"
BULK_RESOURCES = {"ResultsBucket", "ResultsWritePolicy", "BulkInferenceStateMachine", "BulkInferenceRole",
                  "BatchReadPolicy", "BatchOperationsRole", "ResultsBucketInventoryPolicy"}
PREFIX_ONLY = {"StringLike": {"s3:prefix": "archive/2026/*"}}


@pytest.fixture(scope="module")
def bulk(osls, tmp_path_factory) -> Packaged:
    output = tmp_path_factory.mktemp("bulk") / "package"
    ran = osls.package(output, "--stage", "ci", *DEFAULT_IMAGE, *BATCH)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return Packaged(output, ran.stdout + ran.stderr)


@pytest.fixture(scope="module")
def found(bulk) -> dict:
    return deployed(bulk.template)["Resources"]


def resolved(value, template: dict):
    """Fn::Sub over the template's parameter defaults, with the partition, region and account of a real stack and
    arn:aws:s3:::<Name> for a bucket's ARN; anything else as it is."""
    if isinstance(value, list):
        return [resolved(item, template) for item in value]
    if isinstance(value, dict) and set(value) == {"Fn::Sub"}:
        text = value["Fn::Sub"]
        known = {name: str(spec["Default"]) for name, spec in template["Parameters"].items()}
        known.update({"AWS::Partition": "aws", "AWS::Region": "us-east-1", "AWS::AccountId": "123456789012"})
        while "${" in text:
            start = text.index("${")
            name = text[start + 2:text.index("}", start)]
            bucket_arn = f"arn:aws:s3:::<{name.removesuffix('.Arn')}>"  # the only GetAtt ...Arn these policies use
            text = text.replace("${" + name + "}", known.get(name, bucket_arn))
        return text
    if isinstance(value, dict):
        return {key: resolved(item, template) for key, item in value.items()}
    return value


def statements(policy_document: dict, template: dict) -> list[tuple[tuple[str, ...], object, object]]:
    """(actions, resource, condition) of every statement, resolved; every statement allows."""
    found = []
    for statement in policy_document["Statement"]:
        assert statement["Effect"] == "Allow" and set(statement) <= {"Effect", "Action", "Resource", "Condition"}
        found.append((tuple(sorted(as_list(statement["Action"]))), resolved(statement["Resource"], template),
                      resolved(statement.get("Condition"), template)))
    return sorted(found, key=str)


def role_statements(role: dict, template: dict) -> list:
    (policy,) = role["Properties"]["Policies"]
    return statements(policy["PolicyDocument"], template)


def trusted_service(role: dict) -> str:
    (statement,) = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert statement["Action"] == "sts:AssumeRole"
    assert statement["Condition"] == {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}}
    return statement["Principal"]["Service"]


def test_cfn_lint_passes_with_bulk_runs_on(bulk):
    done = cfn_lint(bulk.template_path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_bulk_runs_add_exactly_their_resources_and_nothing_by_default(packages, found):
    default = set(deployed(packages("default").template)["Resources"])
    assert (set(found) - default, default - set(found)) == (BULK_RESOURCES, set())


def test_without_its_input_bucket_the_stack_is_refused_before_anything_is_created(osls, tmp_path):
    output = tmp_path / "package"
    ran = osls.package(output, "--stage", "ci", *DEFAULT_IMAGE, "--param", "batch=true")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    parameter = json.loads((output / "cloudformation-template-update-stack.json").read_text())["Parameters"]
    assert parameter["BatchBucket"]["Default"] == ""
    done = cfn_lint(output / "cloudformation-template-update-stack.json")
    # CloudFormation refuses a parameter outside its AllowedPattern; cfn-lint says so for the default.
    assert done.returncode != 0 and "E2015" in done.stdout, done.stdout


def test_the_state_machine_runs_the_repos_definition_with_the_deploys_settings(bulk, found):
    machine = found["BulkInferenceStateMachine"]["Properties"]
    assert machine["StateMachineName"] == STATE_MACHINE and machine["StateMachineType"] == "STANDARD"
    assert machine["RoleArn"] == {"Fn::GetAtt": ["BulkInferenceRole", "Arn"]}
    substitutions = machine["DefinitionSubstitutions"]
    assert set(substitutions) == placeholders(json.dumps(machine["Definition"]))
    assert machine["Definition"] == substituted({name: "${" + name + "}" for name in substitutions})
    assert substitutions["FunctionArn"] == FUNCTION_ARN
    assert substitutions["ResultsBucket"] == {"Ref": "ResultsBucket"}
    template = bulk.template
    assert {name: resolved(substitutions[name], template) for name in
            ("InputBucket", "InputPrefix", "ResultsPrefix", "ReportsPrefix")} == {
        "InputBucket": "acme-photos", "InputPrefix": "archive/2026/", "ResultsPrefix": "predictions/",
        "ReportsPrefix": "bulk-reports/step-functions"}
    assert {name: int(substitutions[name]) for name in ("BatchSize", "MaxConcurrency",
                                                        "ToleratedFailurePercentage")} == {
        "BatchSize": 25, "MaxConcurrency": 200, "ToleratedFailurePercentage": 2}


def test_the_state_machine_may_invoke_this_function_read_the_input_prefix_and_write_reports(bulk, found):
    role = found["BulkInferenceRole"]
    assert trusted_service(role) == "states.amazonaws.com"
    states = f"arn:aws:states:us-east-1:123456789012:%s:{STATE_MACHINE}"
    assert role_statements(role, bulk.template) == sorted([
        (("lambda:InvokeFunction",), FUNCTION_ARN, None),
        (("s3:ListBucket",), "arn:aws:s3:::acme-photos", PREFIX_ONLY),
        (("s3:GetObject",), "arn:aws:s3:::acme-photos/archive/2026/*", None),
        (("s3:AbortMultipartUpload", "s3:GetObject", "s3:ListMultipartUploadParts", "s3:PutObject"),
         "arn:aws:s3:::<ResultsBucket>/bulk-reports/*", None),
        (("states:StartExecution",), states % "stateMachine", None),  # its own child executions
        (("states:DescribeExecution", "states:StopExecution"), states % "execution" + "/*", None),
    ], key=str)


def test_the_function_reads_only_the_input_prefix_and_writes_only_the_results_prefix(bulk, found):
    template = bulk.template
    grants = [grant for name in ("BatchReadPolicy", "ResultsWritePolicy")
              for grant in statements(found[name]["Properties"]["PolicyDocument"], template)]
    assert sorted(grants, key=str) == sorted([
        (("s3:GetObject", "s3:GetObjectVersion"), "arn:aws:s3:::acme-photos/archive/2026/*", None),
        (("s3:ListBucket",), "arn:aws:s3:::acme-photos", PREFIX_ONLY),  # NoSuchKey for a missing item, not 403
        (("s3:PutObject",), "arn:aws:s3:::<ResultsBucket>/predictions/*", None),
    ], key=str)
    variables = found["ApiLambdaFunction"]["Properties"]["Environment"]["Variables"]
    assert variables["RESULTS_BUCKET"] == {"Ref": "ResultsBucket"}


def test_s3_batch_operations_may_invoke_this_function_read_manifests_and_write_reports(bulk, found):
    role = found["BatchOperationsRole"]
    assert trusted_service(role) == "batchoperations.s3.amazonaws.com"
    assert role_statements(role, bulk.template) == sorted([
        (("lambda:InvokeFunction",), FUNCTION_ARN, None),
        (("s3:GetObject", "s3:GetObjectVersion"), "arn:aws:s3:::<ResultsBucket>/bulk-manifests/*", None),
        (("s3:PutObject",), "arn:aws:s3:::<ResultsBucket>/bulk-reports/*", None),
    ], key=str)
    outputs = deployed(bulk.template)["Outputs"]
    assert outputs["BatchOperationsRoleArn"]["Value"] == {"Fn::GetAtt": ["BatchOperationsRole", "Arn"]}
    assert outputs["FunctionArn"]["Value"] == FUNCTION_ARN
    assert outputs["BulkInferenceStateMachineArn"]["Value"] == {"Ref": "BulkInferenceStateMachine"}


def test_only_the_input_buckets_inventory_may_deliver_manifests(bulk, found):
    policy = found["ResultsBucketInventoryPolicy"]["Properties"]
    (statement,) = policy["PolicyDocument"]["Statement"]
    assert statement["Principal"] == {"Service": "s3.amazonaws.com"} and statement["Action"] == "s3:PutObject"
    assert resolved(statement["Resource"], bulk.template) == "arn:aws:s3:::<ResultsBucket>/bulk-manifests/*"
    condition = resolved(statement["Condition"], bulk.template)
    assert condition["ArnLike"] == {"aws:SourceArn": "arn:aws:s3:::acme-photos"}
    assert condition["StringEquals"]["s3:x-amz-acl"] == "bucket-owner-full-control"


def test_no_bulk_grant_is_a_wildcard_action_or_a_whole_bucket_of_objects(bulk, found):
    template = bulk.template
    documents = [found[name]["Properties"]["PolicyDocument"] for name in ("BatchReadPolicy", "ResultsWritePolicy")]
    documents += [found[name]["Properties"]["Policies"][0]["PolicyDocument"]
                  for name in ("BulkInferenceRole", "BatchOperationsRole")]
    for document in documents:
        for actions, resource, condition in statements(document, template):
            assert all("*" not in action for action in actions)
            if not (isinstance(resource, str) and resource.startswith("arn:aws:s3:::")):
                continue
            if actions == ("s3:ListBucket",):  # a bucket ARN, but only its input prefix may be listed
                assert "/" not in resource and condition == PREFIX_ONLY
            else:
                assert re.fullmatch(r"arn:aws:s3:::[^/*]+/[^*]+\*", resource), resource
