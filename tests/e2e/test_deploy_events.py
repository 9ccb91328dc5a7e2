"""serverless.yml beyond API Gateway (docs/events.md): models from S3, S3 uploads, the request queue. Each is off
by default and switched on by its param; each packaging passes cfn-lint, and its IAM grants exactly the calls its
feature makes, on its own prefix or queue only."""
from __future__ import annotations

import json
import re

import pytest

from tests.support.cloudformation import deployed
from tests.support.serverless_package import DEFAULT_IMAGE, Packaged, as_list, cfn_lint

pytestmark = pytest.mark.slow

VARIANTS = {
    "models": ("--param", "modelBucket=acme-models", "--param", "modelPrefix=serving/models/",
               "--param", "modelRefreshSeconds=60"),
    "uploads": ("--param", "uploadsBucket=acme-photo-uploads", "--param", "uploadsPrefix=incoming/",
                "--param", "uploadsSuffix=.jpg"),
    "queue": ("--param", "queue=true", "--param", "queueBatchSize=5", "--param", "queueBatchWindowSeconds=2",
              "--param", "queueMaxReceives=4"),
}
RESULTS = {"ResultsBucket", "ResultsWritePolicy"}
# What each feature adds to the default stack, and nothing else.
FEATURE_RESOURCES = {
    "models": {"ModelsReadPolicy"},
    "uploads": {*RESULTS, "UploadsBucketResource", "UploadsInvokePermission", "UploadFailuresQueue",
                "UploadsInvokeConfig", "UploadsAccessPolicy"},
    "queue": {*RESULTS, "RequestQueue", "RequestDeadLetterQueue", "RequestQueueMapping", "RequestQueuePolicy"},
}


@pytest.fixture(scope="module")
def packaged(osls, packages, tmp_path_factory):
    """Each variant packaged once; "default" is the shared default packaging."""
    found = {"default": packages("default")}

    def get(name: str) -> Packaged:
        if name not in found:
            output = tmp_path_factory.mktemp(name) / "package"
            ran = osls.package(output, "--stage", "ci", *DEFAULT_IMAGE, *VARIANTS[name])
            assert ran.returncode == 0, ran.stdout + ran.stderr
            found[name] = Packaged(output, ran.stdout + ran.stderr)
        return found[name]
    return get


def resources(packaged, name: str) -> dict:
    return deployed(packaged(name).template)["Resources"]


def of_type(found: dict, kind: str) -> dict[str, dict]:
    """Resources of `kind`, but the framework's own deployment bucket."""
    return {name: r for name, r in found.items() if r["Type"] == kind and name != "ServerlessDeploymentBucket"}


def resolved(value, template: dict):
    """Fn::Sub over the template's parameter defaults, the partition and GetAtt ...Arn of a bucket (its ARN);
    other values as they are."""
    if isinstance(value, dict) and set(value) == {"Fn::Sub"}:
        parameters = {name: str(spec["Default"]) for name, spec in template["Parameters"].items()}

        def substitute(match: re.Match) -> str:
            name = match.group(1)
            if name == "AWS::Partition":
                return "aws"
            if name.endswith(".Arn"):
                return f"arn:aws:s3:::<{name[:-4]}>"
            return parameters[name]
        return re.sub(r"\$\{([^}]+)\}", substitute, value["Fn::Sub"])
    return value


def grants(packaged, name: str) -> list[tuple[tuple[str, ...], object]]:
    """(actions, resource) of every statement in the feature policies (everything but the base role's)."""
    template = packaged(name).template
    found = []
    for policy in of_type(resources(packaged, name), "AWS::IAM::Policy").values():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            assert statement["Effect"] == "Allow" and set(statement) == {"Effect", "Action", "Resource"}
            found.append((tuple(sorted(as_list(statement["Action"]))), resolved(statement["Resource"], template)))
    return sorted(found, key=str)


def environment(packaged, name: str) -> dict:
    function = resources(packaged, name)["ApiLambdaFunction"]
    return function["Properties"]["Environment"]["Variables"]


def test_cfn_lint_passes_with_each_feature_on(packaged):
    done = cfn_lint(*(packaged(name).template_path for name in VARIANTS))
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("name", VARIANTS)
def test_each_feature_adds_exactly_its_resources_to_the_default_stack(packaged, name):
    default, variant = set(resources(packaged, "default")), set(resources(packaged, name))
    assert (variant - default, default - variant) == (FEATURE_RESOURCES[name], set())


def test_by_default_none_of_it_exists_and_the_function_serves_the_images_models(packaged):
    found = resources(packaged, "default")
    for kind in ("AWS::S3::Bucket", "AWS::SQS::Queue", "AWS::Lambda::EventSourceMapping", "AWS::IAM::Policy",
                 "AWS::Lambda::EventInvokeConfig"):
        assert of_type(found, kind) == {}, kind
    variables = environment(packaged, "default")
    assert (variables["MODEL_SOURCE"], variables["RESULTS_BUCKET"]) == ("", "")


def test_models_from_s3_may_only_get_objects_under_the_model_prefix(packaged):
    variables = environment(packaged, "models")
    assert resolved(variables["MODEL_SOURCE"], packaged("models").template) == "s3://acme-models/serving/models/"
    assert variables["MODEL_REFRESH_SECONDS"] == "60"
    assert grants(packaged, "models") == [(("s3:GetObject",), "arn:aws:s3:::acme-models/serving/models/*")]


def test_uploads_read_and_tag_under_their_prefix_and_write_answers_elsewhere(packaged):
    found = resources(packaged, "uploads")
    template = packaged("uploads").template
    bucket = found["UploadsBucketResource"]["Properties"]
    (notification,) = bucket["NotificationConfiguration"]["LambdaConfigurations"]
    assert bucket["BucketName"] == "acme-photo-uploads"
    assert notification["Event"] == "s3:ObjectCreated:*"
    assert notification["Function"] == {"Fn::GetAtt": ["ApiLambdaFunction", "Arn"]}
    assert notification["Filter"]["S3Key"]["Rules"] == [{"Name": "prefix", "Value": "incoming/"},
                                                        {"Name": "suffix", "Value": ".jpg"}]
    permission = found["UploadsInvokePermission"]["Properties"]
    assert (permission["Principal"], resolved(permission["SourceArn"], template)) == (
        "s3.amazonaws.com", "arn:aws:s3:::acme-photo-uploads")
    variables = environment(packaged, "uploads")
    assert (variables["UPLOADS_PREFIX"], variables["UPLOADS_SUFFIX"]) == ("incoming/", ".jpg")
    assert variables["RESULTS_BUCKET"] == {"Ref": "ResultsBucket"}  # not the uploads bucket: never a trigger
    assert grants(packaged, "uploads") == sorted([
        (("s3:GetObject", "s3:GetObjectTagging", "s3:PutObjectTagging"), "arn:aws:s3:::acme-photo-uploads/incoming/*"),
        (("s3:PutObject",), "arn:aws:s3:::<ResultsBucket>/predictions/*"),
        (("sqs:SendMessage",), {"Fn::GetAtt": ["UploadFailuresQueue", "Arn"]}),
    ], key=str)
    retries = found["UploadsInvokeConfig"]["Properties"]
    assert retries["MaximumRetryAttempts"] == 2
    assert retries["DestinationConfig"]["OnFailure"]["Destination"] == {"Fn::GetAtt": ["UploadFailuresQueue", "Arn"]}


def test_the_queue_reports_batch_item_failures_and_dead_letters_after_its_receives(packaged):
    found = resources(packaged, "queue")
    mapping = found["RequestQueueMapping"]["Properties"]
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert (int(mapping["BatchSize"]), int(mapping["MaximumBatchingWindowInSeconds"])) == (5, 2)
    assert mapping["EventSourceArn"] == {"Fn::GetAtt": ["RequestQueue", "Arn"]}
    queue = found["RequestQueue"]["Properties"]
    assert queue["RedrivePolicy"]["deadLetterTargetArn"] == {"Fn::GetAtt": ["RequestDeadLetterQueue", "Arn"]}
    assert int(queue["RedrivePolicy"]["maxReceiveCount"]) == 4
    function = found["ApiLambdaFunction"]["Properties"]
    assert int(queue["VisibilityTimeout"]) >= 6 * int(function["Timeout"])  # AWS's advice for a Lambda consumer
    assert grants(packaged, "queue") == sorted([
        (("sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"),
         {"Fn::GetAtt": ["RequestQueue", "Arn"]}),
        (("s3:PutObject",), "arn:aws:s3:::<ResultsBucket>/predictions/*"),
    ], key=str)
    assert environment(packaged, "queue")["RESULTS_BUCKET"] == {"Ref": "ResultsBucket"}


@pytest.mark.parametrize("name", ["models", "uploads", "queue"])
def test_no_feature_grants_a_wildcard_action_or_a_whole_bucket(packaged, name):
    for actions, resource in grants(packaged, name):
        assert all("*" not in action for action in actions)
        text = json.dumps(resource)
        assert not text.endswith(':::*"') and ":::*" not in text and not re.search(r":::[^/\"]+\*", text)
