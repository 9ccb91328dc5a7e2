"""/v1/embeddings refuses what its OpenAPI schema refuses (found by fuzzing against the document): an empty or
false encoding_format is not "float", and `true` is not a number of dimensions even where it equals 1."""
from __future__ import annotations

import pytest

from function.catalog.registry import ModelRegistry
from tests.support.embedding_stand_in import NAME, models_with_embedding
from tests.support.function_fixtures import call, demo_models, make_service  # noqa: F401


@pytest.fixture(scope="module")
def service(demo_models, tmp_path_factory):  # noqa: F811
    registry = ModelRegistry(models_with_embedding(demo_models, tmp_path_factory.mktemp("models") / "models"))
    return make_service(registry, default_embedding_model=NAME)


@pytest.mark.parametrize("fields,code", [
    ({"encoding_format": ""}, "invalid_field"),
    ({"encoding_format": False}, "invalid_field"),
    ({"dimensions": True}, "unsupported_dimensions"),  # the stand-in's vectors have 1 dimension, and True == 1
    ({"dimensions": 2}, "unsupported_dimensions"),
])
def test_refused(service, fields, code):
    status, body = call(service, "POST", "/v1/embeddings", {"input": "a fine day", **fields})
    assert (status, body["error"]["code"]) == (400, code)


@pytest.mark.parametrize("fields", [{}, {"encoding_format": None}, {"encoding_format": "base64"}, {"dimensions": 1},
                                    {"dimensions": None}, {"user": 42}])
def test_accepted(service, fields):
    status, body = call(service, "POST", "/v1/embeddings", {"input": "a fine day", **fields})
    assert status == 200 and body["data"][0]["object"] == "embedding"
