"""Every log line the function writes is a valid Embedded Metric Format document whose metrics are the line's own
numbers: every route of the router, S3 uploads (moto over HTTP), SQS messages and the warm-up, through the real
handler and the real demo models. Over a mixed run, the distinct metrics (name x dimension values, what CloudWatch
bills) stay under the bound docs/deploy.md states, and no client-chosen value ever becomes a dimension."""
from __future__ import annotations

import io
import json
import logging

import pytest

from function.config import MetricsSettings
from function.entry import handle_event
from function.errors import ERROR_CODES
from function.http_errors import status_of_kind
from function.log import JsonLineFormatter
from function.router import ROUTES
from tests.support import emf
from kit.aws_events import s3_object_created, sqs_batch
from tests.support.aws_fixtures import aws, aws_environment  # noqa: F401
from kit.events import http_api_event
from tests.support.function_fixtures import DEMO_MODELS, demo_models, make_service, registry  # noqa: F401
from tests.support.log_capture import attached
from kit.photos import cat_jpeg

NAMESPACE = "Tests/metrics"
TABULAR = {"vitals": [0.1, 0.2, 0.3], "sex": 1, "serum": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]}


@pytest.fixture()
def lines():
    """Every line the function's logger writes during the test, as text."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonLineFormatter())
    with attached(handler):
        yield lambda: stream.getvalue().splitlines()


@pytest.fixture()
def metered(registry):  # noqa: F811
    return make_service(registry, metrics=MetricsSettings(namespace=NAMESPACE), uploads_prefix="uploads/")


def request_for(template: str, method: str) -> tuple[str, object]:
    """A request to one route template: its path with the demo models filled in, and a body that it answers."""
    name = "tabular" if "{name}" in template else None
    path = template.replace("{name}", name or "").replace("{version}", "1")
    bodies = {"/classify": {"image": __import__("base64").b64encode(cat_jpeg()).decode()},
              "/sentiment": {"text": "What a wonderful film."}, "/tokenize": {"text": "Crème brûlée"},
              "/embed": {"texts": ["a cat", "a dog"]}, "/v1/embeddings": {"input": "a cat", "model": "minilm"}}
    if template.endswith(":predict"):
        return path, {"instances": [TABULAR]}
    if template.endswith("/infer"):
        return path, {"inputs": [{"name": k, "datatype": "INT32" if k == "sex" else "FP32",
                                  "shape": [1] if k == "sex" else [1, len(v)], "data": v if k != "sex" else [v]}
                                 for k, v in TABULAR.items()]}
    return path, bodies.get(template) if method == "POST" else None


def checked(line: str) -> dict:
    """One line, valid EMF, whose metrics are exactly the line's own timings and counts."""
    document = emf.validate(line)
    values = emf.metric_values(document)
    timings = document["timings_ms"]
    members = {name[:-3]: ms for name, ms in document.items() if name.endswith("_ms") and name != "timings_ms"}
    assert members == timings  # every stage is a member; published under a model version once one answered
    # Every stage once a model version answered, or on an error line (how far a refused request got).
    assert {name[:-3]: ms for name, ms in values.items() if name.endswith("_ms")} == (
        timings if "model_version" in document or document.get("error_code") in ERROR_CODES
        else {"total": timings["total"]})
    for name in ("batch", "cache_hits", "cache_misses", "tokens", "cache_hits_memory", "cache_hits_shared"):
        assert values.get(name) == document.get(name), name
    assert values["requests"] == 1
    assert document["server_errors"] == int(document["status"] >= 500)  # published with a model version
    assert values["cold_starts"] + values["restores"] == int(bool(document["cold_start"]))
    assert {point.namespace for point in emf.datapoints(document)} == {NAMESPACE}
    for point in emf.datapoints(document):
        assert dict(point.dimensions).get("route", document["route"]) == document["route"]
    return document


def test_every_route_writes_one_valid_emf_line_with_its_own_values(metered, lines):
    sent = 0
    for template, methods in ROUTES.items():
        for method in methods:
            path, body = request_for(template, method)
            handle_event(metered, http_api_event(method, path, body), None)
            sent += 1
    written = [json.loads(line) for line in lines()]
    assert len(written) == sent
    documents = [checked(line) for line in lines()]
    assert {d["route"] for d in documents} == set(ROUTES)
    ok = [d for d in documents if d["status"] == 200 and "model" in d]
    assert {d["model"] for d in ok} >= {"efficientnet_lite0", "sentiment", "minilm", "tabular"}, \
        [(d["route"], d["status"], d.get("error_code")) for d in documents]
    # A model answered: its version is a dimension, and the text routes count their tokens.
    assert all(("model", "model_version") in {tuple(k for k, _ in p.dimensions) for p in emf.datapoints(d)}
               for d in ok)
    assert all(d["tokens"] > 0 for d in ok if d["route"] in {"/tokenize", "/embed", "/v1/embeddings"})
    assert documents[0]["cold_start"] is True and emf.metric_values(documents[0])["cold_starts"] == 1


def test_the_second_identical_request_counts_a_memory_tier_hit(metered, lines):
    for _ in range(2):
        handle_event(metered, http_api_event("POST", "/sentiment", {"text": "Fine."}), None)
    first, second = (checked(line) for line in lines())
    assert (first["cache_misses"], second["cache_hits"], second["cache_hits_memory"]) == (1, 1, 1)


def test_warmup_s3_uploads_and_sqs_messages_write_valid_emf_lines(metered, lines, aws, aws_environment):  # noqa: F811
    handle_event(metered, {"warmup": True}, None)
    bucket = aws_environment.bucket()
    for key, data in (("uploads/cat.jpg", cat_jpeg()), ("uploads/broken.jpg", b"%PDF-1.7")):
        aws.s3.put_object(Bucket=bucket, Key=key, Body=data)
        handle_event(metered, s3_object_created(bucket, key, len(data)), None)
    messages = [{"messageId": "m1", "body": json.dumps({"route": "/sentiment", "text": "Lovely."})}]
    handle_event(metered, sqs_batch(messages), None)
    documents = [json.loads(line) for line in lines()]
    metered_lines = [line for line, d in zip(lines(), documents) if "_aws" in d]
    checked_documents = [checked(line) for line in metered_lines]
    routes = [d["route"] for d in checked_documents]
    assert routes[:3] == ["warmup", "s3:upload", "s3:upload"] and "/sentiment" in routes[3:], routes
    warmup, cat, broken = checked_documents[:3]
    assert warmup["cold_start"] is True and emf.metric_values(warmup)["cold_starts"] == 1
    assert (cat["status_class"], cat["model"]) == ("2xx", "efficientnet_lite0")
    assert (broken["status_class"], broken["error_code"]) == ("4xx", "unsupported_image")
    assert next(d for d in checked_documents if d["route"] == "/sentiment")["event_format"] == "sqs"
    # Lines that are not a request's (the SQS message's own outcome) carry no metrics of their own.
    assert all(d["message"] not in {"request", "warmup", "s3 upload"} for d in documents if "_aws" not in d)


def test_metrics_off_keeps_the_line_as_it_was(registry, lines):  # noqa: F811
    service = make_service(registry, metrics=MetricsSettings(enabled=False))
    handle_event(service, http_api_event("GET", "/health"), None)
    (line,) = lines()
    assert "_aws" not in json.loads(line) and "requests" not in json.loads(line)


CLIENT_VALUES = ["/v1/models/évil", "x" * 300, "../../etc/passwd", "req-123e4567", "nosuchmodel", "DROP TABLE"]


def mixed_requests() -> list[dict]:
    """Many models, routes, inputs and errors, client-chosen values among them."""
    events = []
    for index in range(8):
        text = f"Sentence number {index} is {'good' if index % 2 else 'bad'}."
        for model in ("sentiment", "minilm", "nosuchmodel", CLIENT_VALUES[index % len(CLIENT_VALUES)]):
            events.append(http_api_event("POST", "/sentiment", {"text": text, "model": model}))
            events.append(http_api_event("POST", "/embed", {"texts": [text], "model": model}))
            events.append(http_api_event("POST", "/tokenize", {"text": text, "model": model}))
        events.append(http_api_event("POST", "/classify", {"image": "bm90IGFuIGltYWdl"}))  # not an image
        events.append(http_api_event("POST", "/classify", b"\xff" * index, "image/jpeg", True))
        events.append(http_api_event("GET", f"/v1/models/{CLIENT_VALUES[index % len(CLIENT_VALUES)]}"))
        events.append(http_api_event("GET", f"/v2/models/tabular/versions/{index}"))
        events.append(http_api_event("POST", "/v1/models/tabular:predict", {"instances": [TABULAR] * (index + 1)}))
        events.append(http_api_event("GET", CLIENT_VALUES[index % len(CLIENT_VALUES)]))
        events.append(http_api_event("POST", "/sentiment", "{not json"))
        events[-1]["requestContext"]["requestId"] = CLIENT_VALUES[index % len(CLIENT_VALUES)]
    return events


def status_classes() -> set[str]:
    """Every status class the function can answer with: 2xx, and the class of each declared error code's status."""
    return {"2xx", *(f"{status_of_kind(entry.kind) // 100}xx" for entry in ERROR_CODES.values())}


def test_dimension_cardinality_over_a_mixed_run_stays_under_the_documented_bound(metered, lines):
    for event in mixed_requests():
        handle_event(metered, event, None)
    documents = [checked(line) for line in lines()]
    series = {(p.name, p.dimensions) for d in documents for p in emf.datapoints(d)}
    dimension_sets = {p.dimensions for d in documents for p in emf.datapoints(d)}
    # docs/deploy.md: 16 M + 2 R C + R M + R E + 6 metrics, here with every count at its largest possible value.
    routes = len(ROUTES) + 3  # every template, "unknown", "warmup", "s3:upload"
    versions = len(DEMO_MODELS)  # one version each
    classes = len(status_classes())  # 2xx, 4xx, 5xx
    codes = len(ERROR_CODES)  # the only values an error_code dimension takes (function/metrics.py)
    metric_bound = 16 * versions + 2 * routes * classes + routes * versions + routes * codes + 6
    set_bound = routes * classes + routes * codes + versions + routes * versions + 1
    assert len(series) <= metric_bound and len(dimension_sets) <= set_bound, (len(series), len(dimension_sets))
    values = {value for dimensions in dimension_sets for _, value in dimensions}
    assert not values & set(CLIENT_VALUES), values & set(CLIENT_VALUES)

    def taken(key: str) -> set[str]:
        return {value for dimensions in dimension_sets for name, value in dimensions if name == key}

    assert taken("route") <= {*ROUTES, "unknown"} and taken("model") <= set(DEMO_MODELS)
    assert taken("error_code") <= set(ERROR_CODES) and taken("status_class") <= status_classes()
    assert len(taken("error_code")) > 1 and {"2xx", "4xx"} <= taken("status_class")  # the run reaches them
    print(f"\n{len(documents)} requests: {len(series)} metrics, {len(dimension_sets)} dimension sets "
          f"(bounds {metric_bound}, {set_bound})")
