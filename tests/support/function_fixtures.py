"""Fixtures and helpers for the function's tests: the real demo models, real photos, real API Gateway events.

Import the fixtures a test module uses (`from tests.support.function_fixtures import demo_models, service`).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from function.config import DEFAULT_MODEL_DIR
from function.entry import handle_event
from function.catalog.registry import ModelRegistry
from function.service import Service
from kit.events import EVENT_BUILDERS
from kit.service import make_service  # the tests import it from here, beside the fixtures

REPO = Path(__file__).resolve().parents[2]
DEMO_MODELS = ("efficientnet_lite0", "sentiment", "digits", "minilm", "tabular")


def model_dir() -> Path:
    """The converted demo models `make models` writes (FUNCTION_TEST_MODEL_DIR only to point at another copy)."""
    return Path(os.environ.get("FUNCTION_TEST_MODEL_DIR") or DEFAULT_MODEL_DIR)


@pytest.fixture(scope="session")
def demo_models() -> Path:
    directory = model_dir()
    missing = [name for name in DEMO_MODELS if not (directory / name / "manifest.json").is_file()]
    if missing:
        pytest.fail(f"demo models missing in {directory}: {', '.join(missing)}; run `make models` first",
                    pytrace=False)
    return directory


@pytest.fixture(scope="session")
def registry(demo_models: Path) -> ModelRegistry:
    """Shared across tests: interpreters load once, as in a warm container."""
    return ModelRegistry(demo_models)


@pytest.fixture()
def service(registry: ModelRegistry) -> Service:
    """A warm service with an empty in-memory result cache, so `cached` flags are predictable."""
    return make_service(registry)


# ---- calls ------------------------------------------------------------------------------------------

def call(service: Service, method: str, path: str, body=None, content_type: str = "application/json",
         binary: bool = False, event_format: str = "2.0") -> tuple[int, dict]:
    """Send one request through the Lambda entry contract; (status, parsed JSON body)."""
    event = EVENT_BUILDERS[event_format](method, path, body, content_type, binary)
    result = handle_event(service, event, None)
    assert result["headers"]["content-type"].startswith("application/json")
    return result["statusCode"], json.loads(result["body"])


def assert_healthy(service: Service) -> None:
    status, body = call(service, "GET", "/health")
    assert (status, body["status"]) == (200, "ok")
