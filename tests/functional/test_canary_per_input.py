"""A canary's share is chosen by each input on every door: an image gets the version it gets alone, whether it comes
alone, in an HTTP batch, in a Distributed Map batch or as an S3 Batch Operations task. Against moto's S3 over HTTP:
digits stable and its relabelled copy (answers that differ: "digit 3" for "3") as `canary` at weight 50."""
from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from PIL import Image

from convert.publish import publish
from function.aws.s3 import client_from_environment
from function.catalog.registry import ModelRegistry
from function.catalog.s3_source import S3ModelSource
from function.entry import handle_event
from tests.support.aws_fixtures import aws, aws_environment  # noqa: F401
from tests.support.clock import Clock
from tests.support.function_fixtures import call, demo_models, make_service, registry  # noqa: F401
from tests.support.model_copies import relabelled

pytestmark = pytest.mark.slow
IMAGES = 30
RESULTS = "predictions/"


def digit_pngs(count: int, seed: int = 21) -> list[bytes]:
    rng = np.random.default_rng(seed)
    pngs = []
    for _ in range(count):
        buffer = io.BytesIO()
        Image.fromarray(rng.integers(0, 256, (8, 8), dtype=np.uint8), "L").save(buffer, "PNG")
        pngs.append(buffer.getvalue())
    return pngs


@pytest.fixture()
def canary_service(aws, aws_environment, registry, tmp_path):  # noqa: F811
    models, results = aws.bucket(), aws.bucket()
    client = client_from_environment()
    url = f"s3://{models}/models/"
    stable = publish(registry.model_dir / "digits", url, client).model.version
    canary = publish(relabelled(registry.model_dir / "digits", tmp_path), url, client, label="canary",
                     weight=50).model.version
    source = S3ModelSource(models, "models/", client, tmp_path / "downloads", 0, Clock())
    service = make_service(ModelRegistry(source), results_bucket=results, results_prefix=RESULTS,
                           default_image_model="digits", max_batch=IMAGES)
    return service, results, {stable, canary}


def version_alone(service, png: bytes) -> str:
    status, answer = call(service, "POST", "/classify", {"image": base64.b64encode(png).decode(), "model": "digits"})
    assert status == 200, answer
    return answer["model_version"]


def test_every_door_answers_an_input_with_the_version_it_gets_alone(aws, canary_service):  # noqa: F811
    service, results, versions = canary_service
    pngs = digit_pngs(IMAGES)
    alone = [version_alone(service, png) for png in pngs]
    assert set(alone) == versions  # at weight 50, 30 images meet both versions

    status, batch = call(service, "POST", "/classify", {"images": [base64.b64encode(p).decode() for p in pngs],
                                                        "model": "digits"})
    assert status == 200
    per_input = [prediction["model_version"] for prediction in batch["predictions"]]
    assert per_input == alone
    (canary,) = versions - {batch["model_version"]}  # the batch's own version is the stable one
    # Each answer is its version's own: the canary's labels start with "digit ".
    assert [p["label"].startswith("digit ") for p in batch["predictions"]] == [v == canary for v in per_input]

    source = aws.bucket()
    for index, png in enumerate(pngs):
        aws.s3.put_object(Bucket=source, Key=f"{index:02d}.png", Body=png)
    event = {"Items": [{"Key": f"{index:02d}.png"} for index in range(IMAGES)],
             "BatchInput": {"task": "classify", "model": "digits", "options": {}, "bucket": source,
                            "results": {"bucket": results, "prefix": RESULTS}}}
    assert handle_event(service, event, None)["answered"] == IMAGES
    assert [aws.read_json(results, f"{RESULTS}{source}/{index:02d}.png.json")["model_version"]
            for index in range(IMAGES)] == alone

    tasks = [{"taskId": str(index), "s3Bucket": source, "s3Key": f"{index:02d}.png"} for index in range(IMAGES)]
    answer = handle_event(service, {"invocationSchemaVersion": "2.0", "invocationId": "i", "tasks": tasks,
                                    "job": {"id": "j", "userArguments": {"model": "digits"}}}, None)
    assert {result["resultCode"] for result in answer["results"]} == {"Succeeded"}
    assert [aws.read_json(results, f"{RESULTS}{source}/{index:02d}.png.json")["model_version"]
            for index in range(IMAGES)] == alone


def test_abort_takes_the_canary_away_in_one_write_without_a_previous_stable(aws, aws_environment, registry,  # noqa: F811
                                                                            tmp_path):
    from convert.publish import main as publish_main  # noqa: PLC0415

    models = aws.bucket()
    url = f"s3://{models}/models/"
    client = client_from_environment()
    stable = publish(registry.model_dir / "digits", url, client).model.version
    publish(relabelled(registry.model_dir / "digits", tmp_path), url, client, label="canary", weight=50)
    before = aws.s3.head_object(Bucket=models, Key="models/index.json")["ETag"]
    assert publish_main([url, "--model", "digits", "--abort", "canary"]) == 0
    entry = aws.read_json(models, "models/index.json")["models"]["digits"]
    assert (entry["version"], entry.get("labels"), entry.get("weights"), entry.get("previous_stable")) == (
        stable, None, None, None)  # the first stable: --rollback would have had nothing to go back to
    assert aws.s3.head_object(Bucket=models, Key="models/index.json")["ETag"] != before
    assert publish_main([url, "--model", "digits", "--abort", "canary"]) == 2  # no such label any more
    source = S3ModelSource(models, "models/", client, tmp_path / "downloads", 0, Clock())
    service = make_service(ModelRegistry(source))
    assert {version_alone(service, png) for png in digit_pngs(IMAGES)} == {stable}
