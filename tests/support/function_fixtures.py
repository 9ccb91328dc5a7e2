"""Fixtures and helpers for the function's tests: the real demo models, real photos, real API Gateway events.

Import the fixtures a test module uses (`from tests.support.function_fixtures import demo_models, service`).
"""
from __future__ import annotations

import base64
import copy
import io
import json
import os
from pathlib import Path

import pytest
from PIL import Image

from function.cache.memory import MemoryResultStore
from function.config import DEFAULT_MAX_IMAGE_PIXELS, DEFAULT_MODEL_DIR, ServiceSettings
from function.models.registry import ModelRegistry
from function.service import Service
from saved_model.recipes.common import package_file

REPO = Path(__file__).resolve().parents[2]
EVENTS = REPO / "tests" / "events"
DEMO_MODELS = ("efficientnet_lite0", "sentiment", "digits")
# ImageNet labels that count as "a cat" for skimage's chelsea (a tabby): any of the cat classes.
CAT_LABELS = {"tabby", "tabby cat", "tiger cat", "Egyptian cat", "Persian cat", "Siamese cat", "lynx"}


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
    return ModelRegistry(demo_models, DEFAULT_MAX_IMAGE_PIXELS)


def make_service(registry: ModelRegistry, **overrides) -> Service:
    settings = ServiceSettings.from_env({}, model_dir=registry.model_dir, **overrides)
    return Service(settings, MemoryResultStore(max_items=1000, ttl_seconds=3600), registry)


@pytest.fixture()
def service(registry: ModelRegistry) -> Service:
    """A warm service with an empty in-memory result cache, so `cached` flags are predictable."""
    return make_service(registry)


# ---- photos -------------------------------------------------------------------------------------------

def photo(name: str) -> Image.Image:
    """skimage's sample photos: chelsea (a cat), coffee, astronaut, rocket..."""
    suffix = ".jpg" if name in ("rocket", "retina") else ".png"
    with Image.open(package_file("scikit-image", f"skimage/data/{name}{suffix}")) as image:
        return image.convert("RGB")


def encode(image: Image.Image, fmt: str, **options) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


# ---- events -------------------------------------------------------------------------------------------

def load_event(name: str) -> dict:
    return json.loads((EVENTS / name).read_text(encoding="utf-8"))


def http_api_event(method: str, path: str, body: bytes | str | None = None, content_type: str = "application/json",
                   binary: bool = False) -> dict:
    """An HTTP API payload 2.0 event, built from the real captured shape in tests/events/."""
    event = copy.deepcopy(load_event("http_api_v2_post_json.json"))
    event["rawPath"] = event["requestContext"]["http"]["path"] = path
    event["requestContext"]["http"]["method"] = method
    event["routeKey"] = "$default"
    event["headers"]["content-type"] = content_type
    _set_body(event, body, binary)
    return event


def rest_api_event(method: str, path: str, body: bytes | str | None = None, content_type: str = "application/json",
                   binary: bool = False) -> dict:
    """A REST API proxy (payload 1.0) event, built from the real captured shape in tests/events/."""
    event = copy.deepcopy(load_event("rest_v1_post_json.json"))
    event["path"] = event["requestContext"]["path"] = path
    event["httpMethod"] = event["requestContext"]["httpMethod"] = method
    event["headers"]["Content-Type"] = content_type
    event["multiValueHeaders"]["Content-Type"] = [content_type]
    _set_body(event, body, binary)
    return event


def _set_body(event: dict, body: bytes | str | None, binary: bool) -> None:
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
    if body is None:
        event["body"], event["isBase64Encoded"] = None, False
    elif binary:
        event["body"], event["isBase64Encoded"] = b64(body if isinstance(body, bytes) else body.encode()), True
    else:
        event["body"], event["isBase64Encoded"] = body if isinstance(body, str) else body.decode("utf-8"), False


EVENT_BUILDERS = {"2.0": http_api_event, "1.0": rest_api_event}


def call(service: Service, method: str, path: str, body=None, content_type: str = "application/json",
         binary: bool = False, event_format: str = "2.0") -> tuple[int, dict]:
    """Send one request through the Lambda entry contract; (status, parsed JSON body)."""
    event = EVENT_BUILDERS[event_format](method, path, body, content_type, binary)
    result = service.handle_event(event, None)
    assert result["headers"]["content-type"].startswith("application/json")
    return result["statusCode"], json.loads(result["body"])


def assert_healthy(service: Service) -> None:
    status, body = call(service, "GET", "/health")
    assert (status, body["status"]) == (200, "ok")
