"""OpenAI's model routes read by the official `openai` client over HTTP from `python -m function.devserver`:
`models.list()` on GET /v1/models and `models.retrieve(id)` on GET /v1/models/{id}, the path that is also
TensorFlow Serving's model status, whose answer keeps TF Serving's fields beside OpenAI's."""
from __future__ import annotations

import json
import time

import openai
import pytest

from function.protocols.tfserving import version_number
from function.routes.openai_models import created
from tests.support.function_fixtures import call, demo_models, registry, make_service  # noqa: F401
from tests.support.serve_process import serving

DEMO = ["digits", "efficientnet_lite0", "minilm", "sentiment", "tabular"]


@pytest.fixture(scope="module")
def client(demo_models, tmp_path_factory):  # noqa: F811
    with serving(demo_models, tmp_path_factory.mktemp("serve")) as url:
        yield openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)


def test_the_client_lists_every_served_model(client):
    models = list(client.models.list())
    assert [model.id for model in models] == DEMO
    for model in models:
        assert model.object == "model" and model.owned_by == "lambda-tflite-serving"
        # When `convert` wrote it (its manifest's created_at): after this project began, and not in the future.
        assert 1_700_000_000 < model.created <= time.time(), model


def test_the_client_retrieves_one_model_by_id(client):
    model = client.models.retrieve("minilm")
    listed = {item.id: item for item in client.models.list()}
    fields = ("id", "object", "created", "owned_by")
    assert [getattr(model, field) for field in fields] == [getattr(listed["minilm"], field) for field in fields]
    assert model.id == "minilm" and model.object == "model"


def test_retrieving_a_model_not_served_is_the_clients_not_found_error(client):
    with pytest.raises(openai.NotFoundError) as caught:
        client.models.retrieve("gpt-4o")
    assert "gpt-4o" in json.dumps(caught.value.body)


def test_tf_serving_reads_its_own_status_in_the_same_answer(registry):  # noqa: F811
    service = make_service(registry)
    status, body = call(service, "GET", "/v1/models/minilm")
    version = version_number(registry.task("minilm").manifest)
    assert status == 200 and body["model_version_status"] == [
        {"version": version, "state": "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}}]
    assert (body["id"], body["object"], body["owned_by"]) == ("minilm", "model", "lambda-tflite-serving")
    # A version the path names answers with the same model id.
    status, by_version = call(service, "GET", f"/v1/models/minilm/versions/{version}")
    assert (status, by_version) == (200, body)


def test_the_list_is_get_only_as_tf_serving_has_it(registry):  # noqa: F811
    status, body = call(make_service(registry), "POST", "/v1/models", {"model": "minilm"})
    assert status == 400 and "Malformed request" in body["error"]


def test_created_is_the_manifests_created_at_in_unix_seconds_or_0(registry):  # noqa: F811
    manifest = registry.task("minilm").manifest
    assert created(manifest._replace(created_at="2026-01-02T03:04:05Z")) == 1767323045
    assert created(manifest._replace(created_at="")) == created(manifest._replace(created_at="yesterday")) == 0
