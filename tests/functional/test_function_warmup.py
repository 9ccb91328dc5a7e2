"""The scheduled warm-up event (serverless.yml sends {"warmup": true}): loads every model, infers nothing."""
from __future__ import annotations

import json
from types import SimpleNamespace

from function.entry import handle_event
from function.catalog.registry import ModelRegistry
from tests.support.function_fixtures import assert_healthy, demo_models, make_service  # noqa: F401


def test_warmup_event_loads_every_model_and_answers_200(demo_models):  # noqa: F811
    fresh = ModelRegistry(demo_models)
    service = make_service(fresh)
    assert not any(fresh.is_loaded(name) for name in fresh.tasks)

    result = handle_event(service, {"warmup": True}, SimpleNamespace(aws_request_id="abc-123"))

    assert result["statusCode"] == 200
    body = json.loads(result["body"])
    assert body == {"warm": True, "models": sorted(fresh.tasks)}
    assert all(fresh.is_loaded(name) for name in fresh.tasks)
    assert_healthy(service)


def test_an_event_that_only_resembles_a_warmup_is_still_rejected(demo_models):  # noqa: F811
    service = make_service(ModelRegistry(demo_models))
    result = handle_event(service, {"warmup": "yes"})
    assert result["statusCode"] == 400
    assert json.loads(result["body"])["error"]["code"] == "unsupported_event"
