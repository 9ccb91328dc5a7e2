"""docs/deploy.md's permission table is true of the templates serverless.yml packages into: for each packaged set of
params, every AWS service whose resources the stack then holds is named, by its IAM action prefix, in the rows of
those params (or of every deployment), and the roles handed to a service need iam:PassRole there. And `serverless
remove` keeps exactly what deploy.md says: the results and uploads buckets, the only resources retained."""
from __future__ import annotations

import re

import pytest

from tests.support.cloudformation import deployed
from tests.support.function_fixtures import REPO
from tests.support.serverless_package import DEFAULT_IMAGE, VARIANTS, Packaged

pytestmark = pytest.mark.slow

PAGE = REPO / "docs" / "deploy.md"
TABLE = re.compile(r"<!-- permissions: .*?-->\n(.*?)\n<!-- end -->", re.S)
# The IAM action prefix of each CloudFormation namespace a template here may hold.
SERVICES = {"AWS::Lambda": "lambda", "AWS::ApiGatewayV2": "apigateway", "AWS::DynamoDB": "dynamodb",
            "AWS::IAM": "iam", "AWS::Logs": "logs", "AWS::SNS": "sns", "AWS::CloudWatch": "cloudwatch",
            "AWS::Events": "events", "AWS::SQS": "sqs", "AWS::S3": "s3", "AWS::StepFunctions": "states"}
# Resources that hand an IAM role to an AWS service, which the deploying credentials must be allowed to pass.
PASSES_A_ROLE = ("AWS::Lambda::Function", "AWS::StepFunctions::StateMachine")
BULK_AND_MODELS = ("--param", "batch=true", "--param", "batchBucket=acme-photos", "--param", "modelBucket=acme-models")
# The shared packagings (serverless_package.VARIANTS) that switch params on, and one more for the rest.
PACKAGED = ("default", "observed", "snapstart", "prod", "jwt", "bulk_and_models")


def rows() -> list[tuple[str, str]]:
    """(params cell, needs cell) of each row of the table."""
    [table] = TABLE.findall(PAGE.read_text(encoding="utf-8"))
    found = []
    for line in table.splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        found.append((cells[0], cells[2]))
    return found


def params_of(options: tuple[str, ...]) -> set[str]:
    return {value.split("=")[0] for flag, value in zip(options, options[1:]) if flag == "--param"}


def needs(params: set[str]) -> str:
    """What the table says the credentials need for a stack with these params set."""
    return " ".join(text for names, text in rows() if names == "every deployment"
                    or set(re.findall(r"`(\w+)", names)) & params)


@pytest.fixture(scope="module")
def stacks(osls, packages, tmp_path_factory) -> dict[str, tuple[set[str], dict]]:
    """name -> (its params, its resources as deployed)."""
    found = {}
    for name in PACKAGED:
        if name == "bulk_and_models":
            output = tmp_path_factory.mktemp(name) / "package"
            ran = osls.package(output, "--stage", "ci", *DEFAULT_IMAGE, *BULK_AND_MODELS)
            assert ran.returncode == 0, ran.stdout + ran.stderr
            packaged, options = Packaged(output, ran.stdout), BULK_AND_MODELS
        else:
            packaged, options = packages(name), VARIANTS[name].options
        found[name] = (params_of(options), deployed(packaged.template)["Resources"])
    return found


@pytest.mark.parametrize("name", PACKAGED)
def test_every_service_the_stack_holds_is_in_its_params_rows(stacks, name):
    params, resources = stacks[name]
    text = needs(params)
    for logical_id, resource in resources.items():
        namespace = "::".join(resource["Type"].split("::")[:2])
        assert namespace in SERVICES, f"{logical_id}: {resource['Type']} has no IAM prefix here: add it to SERVICES"
        assert f"`{SERVICES[namespace]}:" in text, (name, logical_id, resource["Type"])
        if resource["Type"] in PASSES_A_ROLE:
            assert "`iam:PassRole`" in text, (name, logical_id)


def test_the_rows_name_real_params():
    import yaml  # noqa: PLC0415

    from tests.unit.test_router_table import TemplateLoader  # noqa: PLC0415

    declared = set(yaml.load((PAGE.parents[1] / "serverless.yml").read_text(), Loader=TemplateLoader)  # noqa: S506
                   ["params"]["default"]) | {"imageUri"}
    named = {param for names, _ in rows() for param in re.findall(r"`(\w+)", names)}
    assert named and named <= declared, named - declared


def test_remove_keeps_the_two_buckets_deploy_md_names(stacks):
    retained = {logical_id for _, resources in stacks.values() for logical_id, resource in resources.items()
                if resource.get("DeletionPolicy") == "Retain"}
    assert retained == {"ResultsBucket", "UploadsBucketResource"}
    _, with_uploads = stacks["snapstart"]  # uploadsBucket=example-uploads: the bucket is named by the param
    assert with_uploads["UploadsBucketResource"]["Properties"]["BucketName"] == "example-uploads"
    assert "BucketName" not in with_uploads["ResultsBucket"].get("Properties", {})  # generated: a new one each time
    remove = PAGE.read_text(encoding="utf-8").split("\n## Remove\n")[1].split("\n## ")[0]
    for said in ("DeletionPolicy: Retain", "results\nbucket", "uploads bucket", "same `uploadsBucket` fails"):
        assert said.replace("\n", " ") in remove.replace("\n", " "), said
