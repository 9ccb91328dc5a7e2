"""Relabelling a model is a new serving version: a new process answers the new label, never the cached old one.

Each answer comes from a fresh process calling `function.app.handler`, configured only through the environment
as in Lambda, sharing one result store (SQLite file or DynamoDB) as deployed containers do.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kit.dynamodb_server import FAKE_CREDENTIALS

from tests.support.dynamodb_fixtures import dynamodb_server, results_table  # noqa: F401  (fixtures)
from kit.events import http_api_event
from tests.support.function_fixtures import demo_models  # noqa: F401
from kit.photos import b64, encode, photo

REPO_ROOT = Path(__file__).resolve().parents[2]
ANSWER = """
import json, sys
import function.app
result = function.app.handler(json.loads(sys.stdin.read()), None)
print(json.dumps(json.loads(result["body"])))
"""


def answer_in_a_new_process(env: dict, event: dict) -> dict:
    done = subprocess.run([sys.executable, "-c", ANSWER], input=json.dumps(event), cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture()
def digits_dir(demo_models, tmp_path):  # noqa: F811
    shutil.copytree(demo_models / "digits", tmp_path / "models" / "digits")
    return tmp_path / "models"


def relabel(model_dir: Path) -> None:
    manifest_file = model_dir / "digits" / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    manifest["labels"] = [f"digit {label}" for label in manifest["labels"]]
    manifest_file.write_text(json.dumps(manifest))


def check_relabel(env: dict, model_dir: Path) -> tuple[dict, dict]:
    event = http_api_event("POST", "/classify", {"model": "digits", "image": b64(encode(
        photo("chelsea").convert("L").resize((8, 8)), "PNG"))})
    first = answer_in_a_new_process(env, event)
    again = answer_in_a_new_process(env, event)
    assert again["predictions"][0]["cached"] is True  # the store is really shared between processes
    relabel(model_dir)
    after = answer_in_a_new_process(env, event)
    (before_prediction,), (after_prediction,) = first["predictions"], after["predictions"]
    assert after_prediction["cached"] is False
    assert after_prediction["label"] == f"digit {before_prediction['label']}"
    assert after["model_version"] != first["model_version"]
    return first, after


def test_relabelled_model_answers_the_new_label_with_sqlite(digits_dir, tmp_path):
    env = {**os.environ, "MODEL_DIR": str(digits_dir), "DEFAULT_IMAGE_MODEL": "digits", "RESULTS_CACHE": "sqlite",
           "RESULTS_SQLITE_PATH": str(tmp_path / "results.sqlite3")}
    check_relabel(env, digits_dir)


@pytest.mark.slow
def test_relabelled_model_answers_the_new_label_with_dynamodb(digits_dir, results_table, dynamodb_server):  # noqa: F811
    env = {**os.environ, **FAKE_CREDENTIALS, "MODEL_DIR": str(digits_dir), "DEFAULT_IMAGE_MODEL": "digits",
           "RESULTS_TABLE": results_table, "AWS_ENDPOINT_URL_DYNAMODB": dynamodb_server.endpoint}
    first, after = check_relabel(env, digits_dir)
    # Each item names the model version that computed it: operators can find (and drop) an old version's items.
    items = dynamodb_server.client().scan(TableName=results_table)["Items"]
    assert sorted(item["model_version"]["S"] for item in items) == sorted([first["model_version"],
                                                                           after["model_version"]])
