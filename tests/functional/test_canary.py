"""Model versions by label with a canary, against moto's S3 over HTTP: digits published as stable, the same model
relabelled (another serving version, answers that differ: "digit 3" for "3") published as `canary` at weight 10.
Over 2,000 requests naming no version the canary's share stays within the binomial 99.9% bound and the same input
always gets the same version; a path naming a label or a version gets it; `--promote canary` and `--rollback` (one
PutObject of the index each) take effect at the next refresh; a canary whose file is tampered or missing leaves the
stable version answering every request."""
from __future__ import annotations

import io
import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from convert.publish import main as publish_main
from convert.publish import publish
from function.aws.s3 import client_from_environment
from function.catalog.published import INDEX_FILE
from function.catalog.registry import ModelRegistry
from function.catalog.s3_source import S3ModelSource
from function.protocols.tfserving import version_number
from tests.support.aws_fixtures import aws, aws_environment, bucket  # noqa: F401
from tests.support.function_fixtures import call, demo_models, make_service, registry  # noqa: F401
from kit.photos import b64
from tests.support.clock import Clock
from tests.support.model_copies import relabelled

REFRESH_SECONDS = 30
REQUESTS = 2000
WEIGHT = 10
Z_999 = 3.2905  # two-sided 99.9% quantile of the normal approximation to the binomial




def digit_images(count: int, seed: int = 7) -> list[str]:
    """`count` distinct 8x8 grey PNGs, base64."""
    rng = np.random.default_rng(seed)
    images = []
    for _ in range(count):
        buffer = io.BytesIO()
        Image.fromarray(rng.integers(0, 256, (8, 8), dtype=np.uint8), "L").save(buffer, "PNG")
        images.append(b64(buffer.getvalue()))
    return images


class Deployment:
    """digits stable + its relabelled copy as canary, served from S3 by a service refreshing on a test clock."""

    def __init__(self, bucket: str, registry: ModelRegistry, tmp_path: Path) -> None:  # noqa: F811
        self.url = f"s3://{bucket}/models/"
        client = client_from_environment()
        self.stable = publish(registry.model_dir / "digits", self.url, client).model.version
        canary_dir = relabelled(registry.model_dir / "digits", tmp_path)
        self.canary = publish(canary_dir, self.url, client, label="canary", weight=WEIGHT).model.version
        self.clock = Clock()
        source = S3ModelSource(bucket, "models/", client, tmp_path / "downloads", REFRESH_SECONDS, self.clock)
        self.registry = ModelRegistry(source)
        self.service = make_service(self.registry)

    def classify(self, image: str, top_k: int = 1, path: str = "/classify") -> dict:
        status, body = call(self.service, "POST", path, {"image": image, "model": "digits", "top_k": top_k})
        assert status == 200, body
        return body

    def next_refresh(self) -> None:
        """The refresh interval passes; the check a request then starts in the background has finished."""
        self.clock.now += REFRESH_SECONDS
        self.service.registry.refresh()
        self.service.registry.settle(30)


@pytest.fixture()
def deployment(bucket, registry, tmp_path) -> Deployment:  # noqa: F811
    return Deployment(bucket, registry, tmp_path)


def test_the_canary_takes_its_weight_of_the_requests_and_the_same_input_always_the_same_version(deployment):
    images = digit_images(REQUESTS)
    versions = {}
    for image in images:
        answer = deployment.classify(image)
        label = answer["predictions"][0]["label"]
        # The version says so, and the answer is that version's own: the canary's labels start with "digit ".
        assert answer["model_version"] in (deployment.stable, deployment.canary)
        assert label.startswith("digit ") == (answer["model_version"] == deployment.canary)
        versions[image] = answer["model_version"]
    canaries = sum(version == deployment.canary for version in versions.values())
    expected, spread = REQUESTS * WEIGHT / 100, Z_999 * math.sqrt(REQUESTS * WEIGHT / 100 * (1 - WEIGHT / 100))
    assert expected - spread <= canaries <= expected + spread, canaries

    # Again, in another order and with other options: the version follows the input, not the request.
    for image in random.Random(3).sample(images, 300):
        answer = deployment.classify(image, top_k=3)
        assert answer["model_version"] == versions[image]
        assert answer["predictions"][0]["cached"] is False  # top_k 3 is another key; same version computed it
    for image in images[-100:]:  # the most recent: the in-memory cache keeps the last 1,000
        answer = deployment.classify(image)
        assert (answer["model_version"], answer["predictions"][0]["cached"]) == (versions[image], True)

    models = {m["name"]: m for m in call(deployment.service, "GET", "/models")[1]["models"]}
    assert models["digits"]["version"] == deployment.stable
    assert models["digits"]["version_labels"] == {"stable": {"version": deployment.stable},
                                          "canary": {"version": deployment.canary, "weight": WEIGHT}}


def test_a_path_naming_a_label_or_a_version_gets_that_version(deployment):
    def version_number_of(version: str) -> str:  # TF Serving's integer for it
        return version_number(deployment.registry.version_task("digits", version).manifest)

    pixels = np.random.default_rng(1).random((1, 8, 8, 1)).round(3).tolist()
    for label, version in (("canary", deployment.canary), ("stable", deployment.stable)):
        status, body = call(deployment.service, "GET", f"/v1/models/digits/labels/{label}")
        assert (status, body["model_version_status"][0]["version"]) == (200, version_number_of(version))
        status, by_label = call(deployment.service, "POST", f"/v1/models/digits/labels/{label}:predict",
                                {"instances": pixels})
        status_v, by_version = call(deployment.service, "POST",
                                    f"/v1/models/digits/versions/{version_number_of(version)}:predict",
                                    {"instances": pixels})
        assert status == status_v == 200 and by_label == by_version
        status, infer = call(deployment.service, "POST", f"/v2/models/digits/versions/{version}/infer",
                             {"inputs": [{"name": "image", "shape": [1, 8, 8, 1], "datatype": "FP32",
                                          "data": pixels}]})
        assert (status, infer["model_version"]) == (200, version)
    status, body = call(deployment.service, "GET", "/v1/models/digits")
    assert [entry["version"] for entry in body["model_version_status"]] == [
        version_number_of(deployment.stable), version_number_of(deployment.canary)]
    status, body = call(deployment.service, "GET", "/v2/models/digits")
    assert body["versions"] == [deployment.stable, deployment.canary]
    status, body = call(deployment.service, "GET", "/v1/models/digits/labels/beta")
    assert status == 404 and "no version labelled 'beta'" in body["error"]
    status, body = call(deployment.service, "POST", f"/v2/models/digits/versions/{'0' * 64}/infer", {"inputs": []})
    assert status == 404 and deployment.canary in body["error"]


def test_triton_statistics_and_index_list_each_version_and_count_only_the_one_that_ran(deployment):
    """Triton's server_status_test (test_model_specific_infer, test_model_latest_infer) on two versions: every
    version has its entry, and only the version inferred counts its requests."""
    for seed in range(3):
        pixels = np.random.default_rng(seed).random((1, 8, 8, 1)).round(3).tolist()
        status, _ = call(deployment.service, "POST", f"/v2/models/digits/versions/{deployment.canary}/infer",
                         {"inputs": [{"name": "image", "shape": [1, 8, 8, 1], "datatype": "FP32", "data": pixels}]})
        assert status == 200
    status, body = call(deployment.service, "GET", "/v2/models/digits/stats")
    counts = {stat["version"]: stat["inference_stats"]["success"]["count"] for stat in body["model_stats"]}
    assert status == 200 and counts == {deployment.stable: 0, deployment.canary: 3}
    status, body = call(deployment.service, "GET", f"/v2/models/digits/versions/{deployment.stable}/stats")
    assert [(stat["version"], stat["execution_count"]) for stat in body["model_stats"]] == [(deployment.stable, 0)]
    status, index = call(deployment.service, "POST", "/v2/repository/index", {})
    assert [(entry["version"], entry["state"]) for entry in index if entry["name"] == "digits"] == [
        (deployment.stable, "READY"), (deployment.canary, "READY")]


def test_promote_and_rollback_change_the_index_in_one_write_and_take_effect_at_the_next_refresh(deployment, aws):  # noqa: F811
    image = digit_images(1, seed=11)[0]
    assert publish_main([deployment.url, "--model", "digits", "--promote", "canary"]) == 0
    index = json.loads(aws.s3.get_object(Bucket=deployment.url.split("/")[2],
                                         Key=f"models/{INDEX_FILE}")["Body"].read())["models"]["digits"]
    assert (index["version"], index["previous_stable"], index.get("labels"), index.get("weights")) == (
        deployment.canary, deployment.stable, None, None)
    # Not refreshed yet: the old rollout still serves (one input: whichever version its hash gives).
    before = deployment.classify(image)["model_version"]
    deployment.next_refresh()
    for other in digit_images(50, seed=12):
        assert deployment.classify(other)["model_version"] == deployment.canary
    assert before in (deployment.stable, deployment.canary)
    listed = {m["name"]: m for m in call(deployment.service, "GET", "/models")[1]["models"]}["digits"]
    assert "version_labels" not in listed, listed

    assert publish_main([deployment.url, "--model", "digits", "--rollback"]) == 0
    assert deployment.classify(image)["model_version"] == deployment.canary  # until the next refresh
    deployment.next_refresh()
    for other in digit_images(50, seed=12):
        assert deployment.classify(other)["model_version"] == deployment.stable
    assert publish_main([deployment.url, "--model", "digits", "--rollback"]) == 2  # nothing left to roll back to


@pytest.mark.parametrize("fault", ["tampered", "missing"])
def test_a_broken_canary_leaves_the_stable_version_answering_every_request(deployment, aws, fault):  # noqa: F811
    bucket = deployment.url.split("/")[2]
    key = f"models/digits/{deployment.canary}/model.tflite"
    if fault == "tampered":
        original = aws.s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        aws.s3.put_object(Bucket=bucket, Key=key, Body=original[:-64] + bytes(64))
    else:
        aws.s3.delete_object(Bucket=bucket, Key=key)
    answers = [deployment.classify(image) for image in digit_images(300, seed=5)]
    assert {answer["model_version"] for answer in answers} == {deployment.stable}
    labels = {m["name"]: m for m in call(deployment.service, "GET", "/models")[1]["models"]}["digits"]["version_labels"]
    assert labels["canary"]["weight"] == WEIGHT and labels["canary"]["stopped"]
    status, body = call(deployment.service, "POST", "/v1/models/digits/labels/canary:predict",
                        {"instances": np.zeros((1, 8, 8, 1)).tolist()})
    assert status == 503  # asked for by name, the canary says why it cannot answer
    assert deployment.registry.is_loaded("digits")
