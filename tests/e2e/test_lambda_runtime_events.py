"""The image's contents under the Lambda runtime emulator, with requirements.txt alone (no boto3), serving models
published to S3 and answering an S3 upload and an SQS batch: moto's S3 over HTTP stands in for AWS."""
from __future__ import annotations

import json

import pytest

from convert.publish import publish
from function.aws.s3 import client_from_environment
from kit.aws_events import s3_object_created, sqs_batch
from tests.support.aws_fixtures import aws, aws_environment  # noqa: F401
from kit.dynamodb_server import FAKE_CREDENTIALS
from kit.events import http_api_event
from kit.lambda_runtime import LambdaRuntime, lay_out_task_root
from kit.photos import b64, cat_jpeg, is_cat

pytestmark = pytest.mark.slow


@pytest.fixture()
def emulated(aws_environment, tmp_path):  # noqa: F811
    models, uploads, results = (aws_environment.bucket() for _ in range(3))
    client = client_from_environment()
    task_root = lay_out_task_root(tmp_path / "task")
    for name in ("efficientnet_lite0", "sentiment"):
        publish(task_root / "models" / name, f"s3://{models}/published/", client)
    environment = {**FAKE_CREDENTIALS, "AWS_ENDPOINT_URL_S3": aws_environment.endpoint,
                   "MODEL_SOURCE": f"s3://{models}/published/", "RESULTS_BUCKET": results,
                   "UPLOADS_PREFIX": "uploads/", "RESULTS_CACHE": "memory"}
    with LambdaRuntime(task_root, environment=environment) as runtime:
        yield runtime, uploads, results


def test_models_from_s3_uploads_and_a_queue_batch_in_the_lambda_runtime(aws, emulated):  # noqa: F811
    runtime, uploads, results = emulated
    listed = runtime.invoke(http_api_event("GET", "/models"))
    assert {m["name"] for m in listed.json_body()["models"]} == {"efficientnet_lite0", "sentiment"}

    aws.s3.put_object(Bucket=uploads, Key="uploads/cat.jpg", Body=cat_jpeg())
    upload = runtime.invoke(s3_object_created(uploads, "uploads/cat.jpg", len(cat_jpeg())))
    assert upload.payload["uploads"][0]["outcome"] == "classified", upload.logs
    assert is_cat(aws.read_json(results, f"predictions/{uploads}/uploads/cat.jpg.json")["predictions"][0]["label"])
    assert set(aws.tags(uploads, "uploads/cat.jpg")) == {"label", "score", "model_version"}
    downloaded = [json.loads(line) for line in upload.logs if '"model files ready"' in line]
    assert [line["model"] for line in downloaded] == ["efficientnet_lite0"]  # on first use, that model only

    messages = [{"messageId": "a", "body": json.dumps({"route": "/sentiment", "text": "Wonderful.", "id": "r1"})},
                {"messageId": "b", "body": json.dumps({"route": "/classify", "image": b64(cat_jpeg())})},
                {"messageId": "c", "body": "{not json"}]
    batch = runtime.invoke(sqs_batch(messages))
    assert batch.payload == {"batchItemFailures": []}
    assert aws.read_json(results, "predictions/r1.json")["predictions"][0]["label"] == "positive"
    assert aws.read_json(results, "predictions/b.json")["predictions"][0]["cached"] is True  # the upload's answer
    assert aws.read_json(results, "predictions/c.json")["error"]["code"] == "invalid_json"
