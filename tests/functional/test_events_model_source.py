"""Models served from S3 (MODEL_SOURCE=s3://bucket/prefix/), against moto's S3 over HTTP: published with
`python -m convert publish`, they answer exactly like the same models from the image; a tampered file is refused and
never served; a version published while the process is warm is served after MODEL_REFRESH_SECONDS (the check runs
in the background: tests wait for it with `settle()`), with cache keys that follow it, and checking for one costs a
304 and no download."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from convert.publish import PublishError, publish
from function.aws.s3 import client_from_environment
from function.config import ServiceSettings
from function.catalog.published import INDEX_FILE
from function.catalog.registry import ModelRegistry
from function.catalog.s3_source import S3ModelSource
from tests.support.aws_fixtures import aws, aws_environment, bucket  # noqa: F401
from tests.support.function_fixtures import call, demo_models, make_service, registry  # noqa: F401
from kit.photos import b64, encode, photo
from tests.support.clock import Clock
from tests.support.model_copies import relabelled

REPO = Path(__file__).resolve().parents[2]
REFRESH_SECONDS = 30


def s3_registry(bucket: str, tmp_path: Path, clock=None, refresh: int = 0) -> ModelRegistry:
    source = S3ModelSource(bucket, "models/", client_from_environment(), tmp_path / "downloads", refresh,
                           *([clock] if clock else []))
    return ModelRegistry(source)


def digit_image() -> dict:
    return {"image": b64(encode(photo("camera").resize((8, 8)), "PNG")), "model": "digits", "top_k": 3}


def test_a_model_from_s3_answers_exactly_like_the_same_model_from_the_image(bucket, registry, tmp_path):  # noqa: F811
    client = client_from_environment()
    for name in ("digits", "sentiment"):
        publish(registry.model_dir / name, f"s3://{bucket}/models/", client)
    from_s3 = make_service(s3_registry(bucket, tmp_path))
    from_image = make_service(registry)
    assert not list((tmp_path / "downloads").glob("*/*/*"))  # listed at start, nothing downloaded yet
    for path, body in (("/classify", digit_image()), ("/sentiment", {"texts": ["Loved it.", "Dreadful."]}),
                       ("/tokenize", {"text": "Crème brûlée"})):
        assert call(from_s3, "POST", path, body) == call(from_image, "POST", path, body)
    s3_models = {m["name"]: m for m in call(from_s3, "GET", "/models")[1]["models"]}
    image_models = {m["name"]: m for m in call(from_image, "GET", "/models")[1]["models"]}
    assert s3_models["digits"]["version"] == image_models["digits"]["version"]
    assert sorted(p.name for p in (tmp_path / "downloads" / "sentiment").glob("*/*")) == ["model.tflite",
                                                                                          "tokenizer.json"]


def test_a_tampered_file_is_refused_and_never_served(aws, bucket, registry, tmp_path):  # noqa: F811
    published = publish(registry.model_dir / "digits", f"s3://{bucket}/models/", client_from_environment())
    key = f"models/{published.model.path}model.tflite"
    original = aws.s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    aws.s3.put_object(Bucket=bucket, Key=key, Body=original[:-64] + bytes(64))  # same size, other bytes
    s3_models = s3_registry(bucket, tmp_path)
    service = make_service(s3_models)
    for _ in range(2):
        status, body = call(service, "POST", "/classify", digit_image())
        assert (status, body["error"]["code"]) == (503, "model_unavailable")
        assert "model.tflite has sha256" in body["error"]["message"] and "refused" in body["error"]["message"]
    assert not s3_models.is_loaded("digits")
    assert list((tmp_path / "downloads").rglob("*.tflite")) == [] and list((tmp_path / "downloads").rglob(
        "*.partial")) == []




def test_a_version_published_while_warm_is_served_after_the_refresh_interval(bucket, registry, tmp_path):  # noqa: F811
    client, clock = client_from_environment(), Clock()
    first = publish(registry.model_dir / "digits", f"s3://{bucket}/models/", client).model.version
    s3_models = s3_registry(bucket, tmp_path, clock, REFRESH_SECONDS)
    service = make_service(s3_models)
    source = s3_models.source
    assert call(service, "POST", "/classify", digit_image())[1]["model_version"] == first

    second = publish(relabelled(registry.model_dir / "digits", tmp_path), f"s3://{bucket}/models/",
                     client).model.version
    assert second != first
    clock.now += REFRESH_SECONDS - 1
    before = call(service, "POST", "/classify", digit_image())[1]
    assert (before["model_version"], before["predictions"][0]["cached"]) == (first, True)
    assert source.checks == {"unchanged": 0, "changed": 0, "failed": 0}  # not due: not even a request

    clock.now += 1
    call(service, "POST", "/classify", digit_image())  # due: starts the check, answered by whichever is served
    s3_models.settle()
    after = call(service, "POST", "/classify", digit_image())[1]
    assert after["model_version"] == second
    assert after["predictions"][0]["cached"] is False  # a new cache key: never the old version's answer
    assert after["predictions"][0]["label"] == "digit " + before["predictions"][0]["label"]

    clock.now += REFRESH_SECONDS
    call(service, "POST", "/classify", digit_image())
    s3_models.settle()
    assert source.checks == {"unchanged": 1, "changed": 1, "failed": 0}  # 304: nothing downloaded
    assert sorted(p.name for p in (tmp_path / "downloads" / "digits").iterdir()) == sorted([first, second])


def test_a_model_published_after_start_appears_on_refresh(bucket, registry, tmp_path):  # noqa: F811
    clock = Clock()
    s3_models = s3_registry(bucket, tmp_path, clock, REFRESH_SECONDS)  # nothing published yet: serves nothing
    assert s3_models.names == []
    publish(registry.model_dir / "digits", f"s3://{bucket}/models/", client_from_environment())
    clock.now += REFRESH_SECONDS
    service = make_service(s3_models)
    call(service, "GET", "/health")  # starts the check in the background
    s3_models.settle()
    status, _ = call(service, "POST", "/classify", digit_image())
    assert status == 200 and s3_models.names == ["digits"]


def test_two_publishers_at_once_both_end_up_in_the_index(aws, bucket, registry):  # noqa: F811
    errors = []

    def publish_one(name: str) -> None:
        try:
            publish(registry.model_dir / name, f"s3://{bucket}/models/", client_from_environment())
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=publish_one, args=(name,)) for name in ("digits", "sentiment")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert sorted(aws.read_json(bucket, f"models/{INDEX_FILE}")["models"]) == ["digits", "sentiment"]


def test_a_directory_whose_files_do_not_match_its_manifest_is_not_published(aws, bucket, registry,  # noqa: F811
                                                                            tmp_path):
    copy = tmp_path / "digits"
    shutil.copytree(registry.model_dir / "digits", copy)
    (copy / "model.tflite").write_bytes((copy / "model.tflite").read_bytes()[:-1])
    with pytest.raises(PublishError, match="does not match the sha256 in its manifest"):
        publish(copy, f"s3://{bucket}/models/", client_from_environment())
    assert aws.keys(bucket) == []


def test_the_publish_command_line(aws, bucket, registry, tmp_path):  # noqa: F811
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "convert", "publish", str(registry.model_dir / "digits"),
                           f"s3://{bucket}/models"], capture_output=True, text=True, env=environment, cwd=REPO,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"s3://{bucket}/models/index.json now serves it" in done.stdout
    refused = subprocess.run([sys.executable, "-m", "convert", "publish", str(tmp_path), f"s3://{bucket}/models/"],
                             capture_output=True, text=True, env=environment, cwd=REPO, timeout=120)
    assert refused.returncode == 2 and refused.stderr.startswith("convert publish: error: ")
    assert len(refused.stderr.strip().splitlines()) == 1


def test_the_settings_pick_the_source(bucket, registry, tmp_path, monkeypatch):  # noqa: F811
    publish(registry.model_dir / "digits", f"s3://{bucket}/models/", client_from_environment())
    settings = ServiceSettings.from_env({"MODEL_SOURCE": f"s3://{bucket}/models/", "MODEL_REFRESH_SECONDS": "60",
                                         "MODEL_DOWNLOAD_DIR": str(tmp_path)})
    from function.catalog.configured_source import open_model_source

    source = open_model_source(settings)
    assert (source.description, source.refresh_seconds, source.directory) == (f"s3://{bucket}/models/", 60, tmp_path)
    assert [model.name for model in source.models()] == ["digits"]
