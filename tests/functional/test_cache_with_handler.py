"""The result cache end to end through `function.app.handler`, with RESULTS_TABLE on a real DynamoDB server:
a repeat answers "cached": true with the identical prediction, in the same container and in a new one; a dead
table never fails a request."""
import base64
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import function.app
from function.cache.factory import open_result_store
from function.config import CacheSettings, ServiceSettings
from function.service import Service
from kit.dynamodb_server import DynamoDBServer, create_results_table
from tests.support.dynamodb_fixtures import dynamodb_server, results_table  # noqa: F401  (fixtures)
from kit.events import http_api_event

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    """The models `make models` converted, else digits built and converted afresh (~30 s, TensorFlow in a child)."""
    if (REPO / "models" / "digits" / "manifest.json").is_file():
        return REPO / "models"
    scratch = tmp_path_factory.mktemp("digits")
    build = ("from pathlib import Path; from saved_model.recipes import digits; "
             f"digits.build(Path({str(scratch / 'sm')!r}))")
    for command in ([sys.executable, "-c", build],
                    [sys.executable, "-m", "convert", str(scratch / "sm"), str(scratch / "models" / "digits"),
                     "--quantization", "dynamic"]):
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"building the digits model failed: {done.stderr[-2000:]}"
    return scratch / "models"


def container(model_dir: Path, table: str) -> Service:
    """What function.app builds at init, with this test's model directory and table: one warm container."""
    settings = ServiceSettings.from_env(model_dir=model_dir, default_image_model="digits")
    return Service(settings, open_result_store(CacheSettings.from_env({"RESULTS_TABLE": table})))


def digit_png(stroke_column: int) -> bytes:
    pixels = np.zeros((8, 8), dtype=np.uint8)
    pixels[1:7, stroke_column] = 255  # a vertical stroke: a "1" wherever it stands
    buffer = io.BytesIO()
    Image.fromarray(pixels, mode="L").save(buffer, format="PNG")
    return buffer.getvalue()


def classify_event(image: bytes) -> dict:
    return http_api_event("POST", "/classify", {"model": "digits", "image": base64.b64encode(image).decode()})


def call(event: dict) -> tuple[int, dict]:
    result = function.app.handler(event, None)
    return result["statusCode"], json.loads(result["body"])


def without_cached_flag(body: dict) -> list[dict]:
    return [{k: v for k, v in prediction.items() if k != "cached"} for prediction in body["predictions"]]


def test_the_same_request_twice_is_answered_from_the_cache(monkeypatch, model_dir, results_table):
    first_container = container(model_dir, results_table)
    monkeypatch.setattr(function.app, "SERVICE", first_container)
    event = classify_event(digit_png(3))

    status, fresh = call(event)
    assert status == 200 and [p["cached"] for p in fresh["predictions"]] == [False]
    status, repeat = call(event)
    assert status == 200 and [p["cached"] for p in repeat["predictions"]] == [True]
    assert without_cached_flag(repeat) == without_cached_flag(fresh)

    # A cold container shares nothing in memory with the first: its hit comes from DynamoDB.
    second_container = container(model_dir, results_table)
    monkeypatch.setattr(function.app, "SERVICE", second_container)
    status, elsewhere = call(event)
    assert status == 200 and [p["cached"] for p in elsewhere["predictions"]] == [True]
    assert without_cached_flag(elsewhere) == without_cached_flag(fresh)
    assert second_container.store.shared.stats["hits"] == 1


def test_a_killed_table_server_still_answers_200(monkeypatch, model_dir):
    with DynamoDBServer() as server:  # a private server this test may kill
        monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", server.endpoint)
        table = create_results_table(server.client())
        warm = container(model_dir, table)
        monkeypatch.setattr(function.app, "SERVICE", warm)
        status, before = call(classify_event(digit_png(2)))
        assert status == 200
        server.stop()

        status, after = call(classify_event(digit_png(5)))  # a new input: needs the dead table, then computes
        assert status == 200 and [p["cached"] for p in after["predictions"]] == [False]
        assert warm.store.shared.stats["errors"] >= 1

        monkeypatch.setattr(function.app, "SERVICE", container(model_dir, table))  # cold, nothing in memory
        status, recomputed = call(classify_event(digit_png(2)))
        assert status == 200 and [p["cached"] for p in recomputed["predictions"]] == [False]
        assert without_cached_flag(recomputed) == without_cached_flag(before)
