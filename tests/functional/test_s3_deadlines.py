"""Every S3 call a request or a door's item waits for has a deadline for the whole operation, a model's first
download included: S3 trickling its answers (a byte every 0.1 s, each read well within any per-read timeout) is cut
off by the deadline, and the request answers 503 (the door's item: not finished, to be retried) instead of waiting
for the last byte. Against moto's S3 over HTTP, through kit/s3_proxy.py in "trickle" mode."""
from __future__ import annotations

import base64
import io
import os
import time

import numpy as np
import pytest
from PIL import Image

from convert.publish import publish
from function.aws.s3 import client_from_environment
from function.catalog.registry import ModelRegistry
from function.catalog.s3_source import S3ModelSource
from function.entry import handle_event
from tests.support.aws_fixtures import aws, aws_environment  # noqa: F401
from tests.support.function_fixtures import call, demo_models, make_service, registry  # noqa: F401
from kit.s3_proxy import S3Proxy

REQUEST_BOUND_SECONDS = 3.0  # the bound; asserted loosely, the deadline's own message is the real check


def grey_png() -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(np.arange(64, dtype=np.uint8).reshape(8, 8), "L").save(buffer, "PNG")
    return buffer.getvalue()


@pytest.fixture()
def proxy(aws):  # noqa: F811
    with S3Proxy(aws.endpoint) as running:
        yield running


def test_a_models_first_download_trickled_by_s3_answers_503_at_the_deadline(aws_environment, registry, proxy,  # noqa: F811
                                                                            tmp_path):
    bucket = aws_environment.bucket()
    publish(registry.model_dir / "digits", f"s3://{bucket}/models/", client_from_environment())
    through_proxy = client_from_environment({**os.environ, "AWS_ENDPOINT_URL_S3": proxy.url})
    source = S3ModelSource(bucket, "models/", through_proxy, tmp_path / "downloads")
    service = make_service(ModelRegistry(source))  # the index read at start; the files come on first use
    proxy.mode = "trickle"
    image = {"image": base64.b64encode(grey_png()).decode(), "model": "digits"}
    started = time.monotonic()
    status, body = call(service, "POST", "/classify", image)
    assert time.monotonic() - started < REQUEST_BOUND_SECONDS
    assert (status, body["error"]["code"]) == (503, "model_unavailable")
    assert "ran out of time" in body["error"]["message"]
    proxy.mode = "up"
    assert call(service, "POST", "/classify", image)[0] == 200  # the next request downloads it


def test_a_bulk_item_trickled_by_s3_is_not_finished_at_the_deadline(aws_environment, registry, proxy,  # noqa: F811
                                                                    monkeypatch):
    source, results = aws_environment.bucket(), aws_environment.bucket()
    aws_environment.s3.put_object(Bucket=source, Key="a.png", Body=grey_png() * 40)  # ~3 KB to trickle
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", proxy.url)
    service = make_service(registry, results_bucket=results, default_image_model="digits")
    proxy.mode = "trickle"
    event = {"invocationSchemaVersion": "2.0", "invocationId": "i", "job": {"id": "j", "userArguments": {}},
             "tasks": [{"taskId": "t", "s3Bucket": source, "s3Key": "a.png"}]}
    started = time.monotonic()
    (result,) = handle_event(service, event, None)["results"]
    assert time.monotonic() - started < REQUEST_BOUND_SECONDS
    assert (result["resultCode"], result["resultString"].split(":")[0]) == ("TemporaryFailure", "DeadlineExceeded")
