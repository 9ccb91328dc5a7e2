"""A model refresh never takes a working model down (MODEL_SOURCE=s3://..., moto's S3 over HTTP, its network
broken for real by kit/s3_proxy.py).

Each fault of a newly published version, played while digits v1 is serving: a manifest whose files climb out of
the model directory, a manifest of an unknown schema, an index of an unknown schema, an index whose version is not
its manifest's, a tampered file, S3 going away between the index and the files, S3 hung (it accepts connections and
never answers). Throughout, digits answers with v1, every request well within the bound (loosely: 3 s, for a 1 s
limit), and GET /models shows why v2 is not served. Once the fault passes, the next due check installs v2.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from convert.publish import publish
from function.aws.s3 import client_from_environment
from function.catalog.published import INDEX_FILE
from function.catalog.registry import ModelRegistry
from function.catalog.s3_source import S3ModelSource
from tests.support.aws_fixtures import aws, aws_environment  # noqa: F401
from tests.support.function_fixtures import call, demo_models, make_service, registry  # noqa: F401
from kit.photos import b64, encode, photo
from kit.s3_proxy import S3Proxy
from tests.support.clock import Clock
from tests.support.model_copies import relabelled

REFRESH_SECONDS = 30
REQUEST_BOUND_SECONDS = 3.0  # the limit is ~1 s; asserted loosely, never a fine timing


class Deployment:
    """digits v1 published and served through the proxy, warm; v2 is what each test publishes, broken or not."""

    def __init__(self, aws, bucket: str, model_dir: Path, proxy: S3Proxy, tmp_path: Path,  # noqa: F811
                 source_class: type[S3ModelSource] = S3ModelSource) -> None:
        self.aws, self.bucket, self.model_dir, self.proxy, self.tmp_path = aws, bucket, model_dir, proxy, tmp_path
        self.publisher = client_from_environment()  # straight to moto: publishing is not what breaks
        self.v1 = publish(model_dir / "digits", f"s3://{bucket}/models/", self.publisher).model.version
        self.clock = Clock()
        through_proxy = client_from_environment({**os.environ, "AWS_ENDPOINT_URL_S3": proxy.url})
        self.source = source_class(bucket, "models/", through_proxy, tmp_path / "downloads", REFRESH_SECONDS,
                                   self.clock)
        self.registry = ModelRegistry(self.source)
        self.service = make_service(self.registry)
        assert self.classify()["model_version"] == self.v1  # v1 downloaded and loaded

    def classify(self) -> dict:
        started = time.monotonic()
        status, body = call(self.service, "POST", "/classify", digit_image())
        assert time.monotonic() - started < REQUEST_BOUND_SECONDS
        assert status == 200, body
        return body

    def publish_v2(self) -> str:
        return publish(relabelled(self.model_dir / "digits", self.tmp_path), f"s3://{self.bucket}/models/",
                       self.publisher).model.version

    def edit_index(self, edit) -> None:
        index = self.aws.read_json(self.bucket, f"models/{INDEX_FILE}")
        edit(index)
        self.aws.s3.put_object(Bucket=self.bucket, Key=f"models/{INDEX_FILE}", Body=json.dumps(index).encode())

    def refresh(self) -> None:
        """The next check falls due; a request starts it (and is answered by v1); wait for it to finish."""
        self.clock.now += REFRESH_SECONDS
        assert self.classify()["model_version"] == self.v1
        self.registry.settle(30)

    def digits_entry(self) -> dict:
        models = {m["name"]: m for m in call(self.service, "GET", "/models")[1]["models"]}
        return models["digits"]


def digit_image() -> dict:
    return {"image": b64(encode(photo("camera").resize((8, 8)), "PNG")), "model": "digits", "top_k": 3}




@pytest.fixture()
def proxy(aws):  # noqa: F811
    with S3Proxy(aws.endpoint) as running:
        yield running


@pytest.fixture()
def deployment(aws_environment, registry, proxy, tmp_path) -> Deployment:  # noqa: F811
    return Deployment(aws_environment, aws_environment.bucket(), registry.model_dir, proxy, tmp_path)


def assert_v1_serves_and_v2_is_refused(deployment: Deployment, v2: str, reason: str) -> None:
    assert deployment.classify()["model_version"] == deployment.v1
    entry = deployment.digits_entry()
    assert (entry["version"], entry["available"], entry["refresh"]["version"]) == (deployment.v1, True, v2)
    assert reason in entry["refresh"]["problem"]


def manifest_edit(change):
    def edit(index: dict) -> None:
        change(index["models"]["digits"]["manifest"])
    return edit


def test_a_manifest_whose_files_climb_out_of_the_model_directory_is_refused(deployment):
    v2 = deployment.publish_v2()
    deployment.edit_index(manifest_edit(lambda manifest: manifest["files"].update({"../../escape": "0" * 64})))
    deployment.refresh()
    assert_v1_serves_and_v2_is_refused(deployment, v2, "is not a file name inside the model directory")
    assert not list(deployment.tmp_path.rglob("escape"))


def test_a_manifest_of_an_unknown_schema_is_refused(deployment):
    v2 = deployment.publish_v2()
    deployment.edit_index(manifest_edit(lambda manifest: manifest.update({"schema": 99})))
    deployment.refresh()
    assert_v1_serves_and_v2_is_refused(deployment, v2, "schema 99")


def test_an_index_of_an_unknown_schema_is_refused_as_a_whole(deployment):
    deployment.publish_v2()
    deployment.edit_index(lambda index: index.update({"schema": 2}))
    deployment.refresh()
    assert deployment.classify()["model_version"] == deployment.v1
    assert deployment.source.checks["failed"] == 1 and "refresh" not in deployment.digits_entry()


def test_an_index_whose_version_is_not_its_manifests_is_refused(deployment):
    v2 = deployment.publish_v2()
    deployment.edit_index(manifest_edit(lambda manifest: manifest.update({"output": "logits"})))
    deployment.refresh()
    assert_v1_serves_and_v2_is_refused(deployment, v2, f"the index says version {v2[:16]}... but its manifest is")


def test_a_tampered_file_of_a_new_version_is_refused(deployment):
    v2 = deployment.publish_v2()
    key = f"models/digits/{v2}/model.tflite"
    original = deployment.aws.s3.get_object(Bucket=deployment.bucket, Key=key)["Body"].read()
    deployment.aws.s3.put_object(Bucket=deployment.bucket, Key=key, Body=original[:-64] + bytes(64))
    deployment.refresh()
    assert_v1_serves_and_v2_is_refused(deployment, v2, "model.tflite has sha256")
    deployment.refresh()  # checked again when due: refused again at once, never downloaded again
    assert_v1_serves_and_v2_is_refused(deployment, v2, "model.tflite has sha256")
    assert not list((deployment.tmp_path / "downloads" / "digits" / v2).glob("*.tflite"))


class CutAfterTheIndex(S3ModelSource):
    """S3 goes away right after the index is read, before any file of the new version is downloaded."""

    proxy: S3Proxy

    def prepare(self, listed) -> None:
        self.proxy.mode = "down"
        super().prepare(listed)


def test_s3_gone_between_the_index_and_the_files_then_back(aws_environment, registry, proxy, tmp_path):  # noqa: F811
    CutAfterTheIndex.proxy = proxy
    deployment = Deployment(aws_environment, aws_environment.bucket(), registry.model_dir, proxy, tmp_path,
                            CutAfterTheIndex)
    v2 = deployment.publish_v2()
    deployment.refresh()
    assert proxy.mode == "down"  # the cut happened
    assert_v1_serves_and_v2_is_refused(deployment, v2, "Connection")  # reset or refused
    assert not (tmp_path / "downloads" / "digits" / v2 / "model.tflite").exists()

    deployment.source.__class__ = S3ModelSource  # S3 is back for good
    proxy.mode = "up"
    deployment.refresh()  # the index is unchanged (304): the listing not taken in is tried again
    assert deployment.classify()["model_version"] == v2
    assert "refresh" not in deployment.digits_entry()


def test_a_hung_s3_never_holds_a_request_and_the_old_version_answers(deployment, proxy):
    v2 = deployment.publish_v2()
    proxy.mode = "hung"
    deployment.clock.now += REFRESH_SECONDS
    ends = time.monotonic() + 2.5  # longer than the check's own limit: requests run while it waits on S3
    answered = 0
    while time.monotonic() < ends:
        assert deployment.classify()["model_version"] == deployment.v1  # each within the bound
        answered += 1
    deployment.registry.settle(30)
    assert deployment.source.checks["failed"] == 1 and answered > 1
    assert deployment.classify()["model_version"] == deployment.v1  # not due again: no new check, no wait

    proxy.mode = "up"
    deployment.refresh()
    assert deployment.classify()["model_version"] == v2


def test_a_first_download_under_a_hung_s3_answers_503_within_the_bound(aws_environment, registry, proxy,  # noqa: F811
                                                                        tmp_path):
    bucket = aws_environment.bucket()
    publish(registry.model_dir / "sentiment", f"s3://{bucket}/models/", client_from_environment())
    source = S3ModelSource(bucket, "models/",
                           client_from_environment({**os.environ, "AWS_ENDPOINT_URL_S3": proxy.url}),
                           tmp_path / "downloads")
    service = make_service(ModelRegistry(source))  # listed at start; its files come on first use
    proxy.mode = "hung"
    started = time.monotonic()
    status, body = call(service, "POST", "/sentiment", {"text": "Lovely."})
    assert time.monotonic() - started < REQUEST_BOUND_SECONDS
    assert (status, body["error"]["code"]) == (503, "model_unavailable")
    proxy.mode = "up"
    assert call(service, "POST", "/sentiment", {"text": "Lovely."})[0] == 200  # the next request tries again
