"""The function behind its real local HTTP server (function.devserver), in a thread of the test process, on a
free port of 127.0.0.1: what the page, the OpenAPI fuzzer and the documented clients talk to.

Fixtures: `demo_api` and `embedding_api` (import them with `registry` and `demo_models` from function_fixtures).
"""
from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from function.entry import handle_event
from function.catalog.registry import ModelRegistry
from function.devserver.cors import CorsPolicy
from function.devserver.server import make_server
from function.service import Service
from tests.support.embedding_stand_in import NAME as STAND_IN, models_with_embedding
from tests.support.function_fixtures import make_service


@contextmanager
def serving(service: Service, cors: CorsPolicy | None = None) -> Iterator[str]:
    """The base URL (http://127.0.0.1:PORT) of `service` served over HTTP until the block ends; `cors`: the
    CORS policy, as `--cors-origins` gives it."""
    server = make_server(functools.partial(handle_event, service), "127.0.0.1", 0, service.settings.max_body_bytes,
                         cors)
    thread = threading.Thread(target=server.serve_forever, name="local-api", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def demo_api(registry: ModelRegistry) -> Iterator[str]:
    """The demo models with the page on, as `make serve` serves them."""
    with serving(make_service(registry, serve_page=True)) as url:
        yield url


@pytest.fixture(scope="module")
def embedding_api(demo_models: Path, tmp_path_factory) -> Iterator[str]:
    """The demo models plus a text_embedding model (tests/support/embedding_stand_in.py), the default of the
    embedding routes, the page on."""
    directory = models_with_embedding(demo_models, tmp_path_factory.mktemp("models") / "models")
    service = make_service(ModelRegistry(directory), serve_page=True, default_embedding_model=STAND_IN)
    with serving(service) as url:
        yield url
