"""The asynchronous doors' one table of routes is the router's, and their one outcome vocabulary decides alike for
every door."""
from __future__ import annotations

import pytest

from function.async_routes import (NOT_FINISHED, REFUSED, ROUTE_NAMES, ROUTE_PATHS, async_route, outcome_of)
from function.aws.s3 import S3Error
from function.entry import sqs_batch
from function.errors import refuse
from function.router import API


def test_every_async_route_is_a_post_route_of_the_router_with_its_task_kind():
    for name, path in zip(ROUTE_NAMES, ROUTE_PATHS):
        route = async_route(name)
        assert route.path == path and "POST" in API.routes[path]
        assert route.kind == {"classify": "image_classification", "classify-text": "text_classification",
                              "sentiment": "text_classification", "embed": "text_embedding"}[name]
    assert sqs_batch.ROUTES is ROUTE_PATHS  # SQS messages name the same routes


@pytest.mark.parametrize("error, outcome", [
    (refuse("unsupported_image", "x"), REFUSED),
    (refuse("model_unavailable", "x"), NOT_FINISHED),
    (S3Error(403, "AccessDenied", "x", "s3://b/k"), REFUSED),
    (S3Error(400, "KeyTooLongError", "x", "s3://b/k"), REFUSED),
    (S3Error(503, "SlowDown", "x", "s3://b/k"), NOT_FINISHED),
    (S3Error(400, "RequestTimeout", "x", "s3://b/k"), NOT_FINISHED),
    (ConnectionResetError(), NOT_FINISHED),
])
def test_an_error_is_refused_when_it_would_recur_and_not_finished_when_it_may_pass(error, outcome):
    assert outcome_of(error) == outcome


@pytest.mark.parametrize("name, options, refused", [
    ("classify", {"top_k": 0}, "top_k"),
    ("classify", {"normalize": False}, "not options of classify"),
    ("sentiment", {"normalize": True}, "not options of sentiment"),
    ("classify-text", {"top_k": 0}, "top_k"),
    ("embed", {"normalize": "yes"}, "normalize"),
    ("sentiment", {"threshold": 2}, "threshold"),
])
def test_a_runs_options_are_checked_as_the_route_checks_a_request(name, options, refused):
    with pytest.raises(Exception, match=refused):
        async_route(name).options(options)
