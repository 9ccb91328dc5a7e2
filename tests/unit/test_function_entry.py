"""Which adapter an event goes to, judged by its shape (the real shapes in kit/event_shapes/), and the API path never
loading what only the S3 and SQS paths need."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from function.entry import event_kind, handle_event
from kit.events import load_event
from tests.support.function_fixtures import REPO


@pytest.mark.parametrize("event, kind", [
    (load_event("http_api_v2_post_json.json"), "api_gateway"),
    (load_event("rest_v1_post_json.json"), "api_gateway"),
    ({"warmup": True}, "warmup"),
    (load_event("s3_object_created_put.json"), "s3"),
    (load_event("sqs_receive_message.json"), "sqs"),
    ({"Records": []}, "api_gateway"),  # refused there as unsupported_event
    ({"Records": [{"eventSource": "aws:kinesis"}]}, "api_gateway"),
    ({"warmup": "yes"}, "api_gateway"),
    ("not an object", "api_gateway"),
])
def test_each_event_shape_goes_to_its_adapter(event, kind):
    assert event_kind(event) == kind


def test_an_event_of_no_known_kind_is_refused_as_the_api_refuses_it():
    from tests.support.function_fixtures import make_service
    from function.catalog.registry import ModelRegistry

    answer = handle_event(make_service(ModelRegistry(REPO / "no-models-here")), {"Records": []}, None)
    assert (answer["statusCode"], json.loads(answer["body"])["error"]["code"]) == (400, "unsupported_event")


def test_the_api_path_loads_neither_the_s3_client_nor_the_event_adapters():
    script = """
import json, sys
from function.app import handler
from function.entry import handle_event
event = json.load(open("kit/event_shapes/http_api_v2_get_health.json"))
assert handler(event, None)["statusCode"] == 200
print(json.dumps(sorted(m for m in sys.modules if m.startswith(("function.aws", "function.entry", "boto")))))
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "RESULTS_CACHE": "memory"})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == ["function.entry", "function.entry.api_gateway",
                                                                "function.entry.warmup"]
