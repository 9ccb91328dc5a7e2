"""A bad entry in a published index.json (an Infinity in a shape, a NUL in a file name, nesting past the parser's
depth) is that model's problem, against moto's S3 over HTTP: a refresh logs it and shows it on GET /models under
that model's `refresh` while its loaded version keeps serving, another model's new version in the same index is
installed, and a container starting on that index serves every other model and shows that one unavailable."""
from __future__ import annotations

import json
import logging

import pytest

from convert.publish import publish
from function.aws.s3 import client_from_environment
from function.catalog.published import INDEX_FILE
from function.catalog.registry import ModelRegistry
from function.catalog.s3_source import S3ModelSource
from function.model.identity import serving_version
from tests.support.aws_fixtures import aws, aws_environment  # noqa: F401
from tests.support.clock import Clock
from tests.support.function_fixtures import call, demo_models, make_service, registry  # noqa: F401
from tests.support.model_copies import relabelled
from kit.photos import b64, encode, photo

REFRESH_SECONDS = 30
DEEP = 50_000


def infinity_in_a_shape(entry: dict) -> None:
    entry["manifest"]["inputs"][0]["shape"][1] = float("inf")


def nul_in_a_file_name(entry: dict) -> None:
    """With the version the changed manifest has: nothing but the file name is wrong."""
    entry["manifest"]["files"]["model\0.tflite"] = "0" * 64
    entry["version"] = serving_version(entry["manifest"])
    entry["path"] = f"tabular/{entry['version']}/"


def deep_nesting(entry: dict) -> None:
    entry["manifest"]["deep"] = "DEEP-PLACE"


BAD_ENTRIES = {"infinity": (infinity_in_a_shape, "OverflowError"), "nul": (nul_in_a_file_name, "is not a file name"),
               "deep": (deep_nesting, "nests too deeply")}


def models_by_name(service) -> dict:
    return {m["name"]: m for m in call(service, "GET", "/models")[1]["models"]}


def classify_digits(service) -> dict:
    status, body = call(service, "POST", "/classify", {"image": b64(encode(photo("camera").resize((8, 8)), "PNG")),
                                                       "model": "digits"})
    assert status == 200, body
    return body


@pytest.mark.parametrize("bad", list(BAD_ENTRIES))
def test_a_bad_entry_is_that_models_problem_and_the_other_models_changes_apply(aws_environment, registry, tmp_path,  # noqa: F811
                                                                                bad, caplog):
    bucket = aws_environment.bucket()
    url, publisher = f"s3://{bucket}/models/", client_from_environment()
    v1 = publish(registry.model_dir / "digits", url, publisher).model.version
    tabular = publish(registry.model_dir / "tabular", url, publisher).model.version
    clock = Clock()
    source = S3ModelSource(bucket, "models/", client_from_environment(), tmp_path / "downloads", REFRESH_SECONDS,
                           clock)
    service = make_service(ModelRegistry(source))
    assert classify_digits(service)["model_version"] == v1

    v2 = publish(relabelled(registry.model_dir / "digits", tmp_path), url, publisher).model.version
    index = aws_environment.read_json(bucket, f"models/{INDEX_FILE}")
    edit, problem = BAD_ENTRIES[bad]
    edit(index["models"]["tabular"])
    body = json.dumps(index).replace('"DEEP-PLACE"', "[" * DEEP + "]" * DEEP)
    aws_environment.s3.put_object(Bucket=bucket, Key=f"models/{INDEX_FILE}", Body=body.encode())

    clock.now += REFRESH_SECONDS
    with caplog.at_level(logging.ERROR, logger="function"):
        classify_digits(service)  # starts the check in the background
        service.registry.settle(30)
    assert classify_digits(service)["model_version"] == v2  # the other model's change applied
    entry = models_by_name(service)["tabular"]
    assert (entry["available"], entry["version"]) == (True, tabular)  # its loaded version keeps serving
    assert problem in entry["refresh"]["problem"]
    assert any(getattr(record, "fields", {}).get("model") == "tabular" for record in caplog.records)

    restarted = make_service(ModelRegistry(S3ModelSource(bucket, "models/", client_from_environment(),
                                                         tmp_path / "restart", REFRESH_SECONDS, Clock())))
    assert classify_digits(restarted)["model_version"] == v2
    entry = models_by_name(restarted)["tabular"]
    assert entry["available"] is False and problem in entry["reason"]
    status, answer = call(restarted, "POST", "/v1/models/tabular:predict", {"instances": [{"vitals": [1, 2, 3]}]})
    assert status == 503
