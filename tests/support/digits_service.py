"""A warm service on the small digits model for tests that time something else (a store, a lock): its requests
cost a millisecond, so what a test measures is what it injected."""
from __future__ import annotations

import io
import json
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from function.cache.base import ResultStore
from function.config import ServiceSettings
from function.entry import handle_event
from function.service import Service
from kit.events import http_api_event
from tests.support.function_fixtures import model_dir


@pytest.fixture(scope="session")
def digits_models() -> Path:
    directory = model_dir()
    if not (directory / "digits" / "manifest.json").is_file():
        pytest.fail(f"the digits model is missing in {directory}; run `make models` first", pytrace=False)
    return directory


def digits_service(models: Path, store: ResultStore) -> Service:
    settings = ServiceSettings.from_env({}, model_dir=models, default_image_model="digits")
    return Service(settings, store)


def digit_png(column: int) -> bytes:
    """An 8x8 image with a vertical stroke at `column`: a different input (and cache key) per column."""
    pixels = np.zeros((8, 8), dtype=np.uint8)
    pixels[1:7, column] = 255
    buffer = io.BytesIO()
    Image.fromarray(pixels, mode="L").save(buffer, format="PNG")
    return buffer.getvalue()


def classify(service: Service, column: int) -> tuple[dict, float]:
    """One /classify of a new image; asserts it was computed (not a cache hit). (parsed answer, seconds taken)"""
    event = http_api_event("POST", "/classify", digit_png(column), "image/png", binary=True)
    started = time.perf_counter()
    result = handle_event(service, event, None)
    seconds = time.perf_counter() - started
    assert result["statusCode"] == 200, result["body"]
    body = json.loads(result["body"])
    prediction = body["predictions"][0]
    assert prediction["cached"] is False and prediction["label"] in "0123456789"
    return body, seconds
