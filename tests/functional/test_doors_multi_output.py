"""A model with two heads (a softmax digit and a linear "ink": tests/support/two_head_model.py, converted by the real
convert) through every door: the answer an S3 upload, an SQS message, a Distributed Map item and an S3 Batch
Operations task store is the /classify answer an HTTP client gets for the same photo, label, scores and the value
head's `outputs` alike, exactly (the same model on the same bytes), served single-label or multi-label; what a door
returns to its engine (a bulk run's summary, a completion report's resultString) says the values too. Against moto's
S3 over HTTP (kit/aws_server.py)."""
from __future__ import annotations

import base64
import json
from urllib.parse import quote_plus

import pytest
from jsonschema import Draft202012Validator

from function.catalog.registry import ModelRegistry
from function.entry import handle_event
from kit.aws_events import s3_object_created, sqs_batch
from tests.support import two_head_model
from tests.support.aws_fixtures import aws, aws_environment, buckets  # noqa: F401
from tests.support.function_fixtures import call, make_service
from tests.support.model_copies import multi_label_copy
from tests.support.two_head_model import NAME, png_bytes

pytestmark = pytest.mark.slow
RESULTS = "predictions/"
PHOTOS = 4  # held-out digits, sent one by one to /classify and together through the doors that batch
NOT_AN_IMAGE = b"%PDF-1.7 not a photo at all"
TAGS = "digits_ink_tags"
THRESHOLD = 0.01  # low enough that most photos have two labels or more


@pytest.fixture(scope="module")
def registry(tmp_path_factory) -> ModelRegistry:
    """The two-head model, and the same served multi-label as TAGS (each digit its own label's score)."""
    converted = two_head_model.converted_two_heads(tmp_path_factory)
    assert converted.code == 0, converted.err
    root = tmp_path_factory.mktemp("door_models")
    (root / NAME).symlink_to(converted.models / NAME)
    multi_label_copy(converted.models / NAME, root, TAGS)
    return ModelRegistry(root)


@pytest.fixture(scope="module")
def pngs(tmp_path_factory) -> list[bytes]:
    return [png_bytes(photo) for photo in two_head_model.two_heads(tmp_path_factory).held_out[:PHOTOS]]


@pytest.fixture(scope="module")
def classified(registry, pngs) -> list[dict]:
    """Per photo, /classify's answer for it alone (its one prediction beside the model and its version), from a
    service of its own: every door below computes its answers itself, none reads them from this one's cache."""
    service = make_service(registry)
    answers = []
    for png in pngs:
        status, answer = call(service, "POST", "/classify", {"image": base64.b64encode(png).decode(), "model": NAME})
        assert status == 200, answer
        (prediction,) = answer["predictions"]
        assert set(prediction["outputs"]) == {"ink"} and len(prediction["outputs"]["ink"]) == 1
        answers.append({**answer, "predictions": [prediction]})
    assert len({answer["predictions"][0]["outputs"]["ink"][0] for answer in answers}) == PHOTOS  # values differ
    return answers


@pytest.fixture()
def door_service(registry, buckets, aws_environment):  # noqa: F811
    """A service whose default image model is the two-head one, with an empty result cache."""
    return make_service(registry, results_bucket=buckets[1], results_prefix=RESULTS, default_image_model=NAME,
                        uploads_prefix="uploads/")


@pytest.fixture(scope="module")
def classify_schemas(registry) -> dict[str, Draft202012Validator]:
    """The /classify answers the OpenAPI document describes, by status: what a door's result file must be too."""
    status, document = call(make_service(registry), "GET", "/openapi.json")
    assert status == 200
    responses = document["paths"]["/classify"]["post"]["responses"]
    return {code: Draft202012Validator(responses[code]["content"]["application/json"]["schema"])
            for code in ("200", "415")}


def uncached(answer: dict) -> dict:
    """The answer without its `cached` flags: a door may answer from the cache, and says so."""
    return {**answer, "predictions": [{k: v for k, v in p.items() if k != "cached"} for p in answer["predictions"]]}


def summary_of(answer: dict) -> dict:
    """What a bulk run's summary says of one answer: its label, score and values."""
    (prediction,) = answer["predictions"]
    return {key: prediction[key] for key in ("label", "score", "outputs")}


def put_photos(aws, bucket: str, pngs: list[bytes], prefix: str) -> list[str]:  # noqa: F811
    keys = [f"{prefix}{index}.png" for index in range(len(pngs))]
    for key, png in zip(keys, pngs):
        aws.s3.put_object(Bucket=bucket, Key=key, Body=png)
    return keys


def test_classify_answers_a_batch_of_the_photos_as_it_answers_each_alone(registry, pngs, classified):
    """The doors that batch (Distributed Map, S3 Batch Operations) run the photos together: the values do not
    depend on the batch."""
    status, answer = call(make_service(registry), "POST", "/classify",
                          {"images": [base64.b64encode(png).decode() for png in pngs], "model": NAME})
    assert status == 200, answer
    assert answer["predictions"] == [a["predictions"][0] for a in classified]


def test_an_upload_stores_and_tags_the_classify_answer_with_its_values(aws, buckets, door_service, pngs,  # noqa: F811
                                                                        classified):
    source, results = buckets
    keys = put_photos(aws, source, pngs, "uploads/")
    event = {"Records": [s3_object_created(source, key, len(png))["Records"][0] for key, png in zip(keys, pngs)]}
    outcome = handle_event(door_service, event, None)
    assert [entry["outcome"] for entry in outcome["uploads"]] == ["classified"] * PHOTOS
    for key, expected in zip(keys, classified):
        stored = aws.read_json(results, f"{RESULTS}{source}/{key}.json")
        assert uncached(stored) == uncached(expected)
        (prediction,) = expected["predictions"]
        assert aws.tags(source, key) == {"label": prediction["label"], "score": str(prediction["score"]),
                                         "model_version": expected["model_version"]}


def test_an_sqs_message_stores_the_classify_answer_with_its_values(aws, buckets, door_service, pngs,  # noqa: F811
                                                                   classified):
    results = buckets[1]
    one = {"route": "/classify", "id": "ink/one", "image": base64.b64encode(pngs[0]).decode(), "model": NAME}
    many = {"route": "/classify", "id": "ink/many", "images": [base64.b64encode(png).decode() for png in pngs]}
    answer = handle_event(door_service, sqs_batch([{"messageId": "m-1", "body": json.dumps(one)},
                                                   {"messageId": "m-2", "body": json.dumps(many)}]), None)
    assert answer == {"batchItemFailures": []}
    assert uncached(aws.read_json(results, f"{RESULTS}ink/one.json")) == uncached(classified[0])
    stored = uncached(aws.read_json(results, f"{RESULTS}ink/many.json"))
    assert stored == {**uncached(classified[0]), "predictions": [uncached(a)["predictions"][0] for a in classified]}


def test_a_distributed_map_batch_stores_and_summarizes_the_classify_answers_with_their_values(
        aws, buckets, door_service, pngs, classified, classify_schemas):  # noqa: F811
    source, results = buckets
    keys = put_photos(aws, source, pngs, "d/")
    aws.s3.put_object(Bucket=source, Key="d/broken.png", Body=NOT_AN_IMAGE)  # a refusal among the answers
    event = {"Items": [{"Key": key} for key in keys] + [{"Key": "d/broken.png"}],
             "BatchInput": {"task": "classify", "model": NAME, "options": {}, "bucket": source,
                            "results": {"bucket": results, "prefix": RESULTS}}}
    for run in ("computed", "from the cache"):
        summary = handle_event(door_service, event, None)
        assert (summary["answered"], summary["refused"]) == (PHOTOS, 1), run
        assert [(f["item"], f["code"]) for f in summary["failed"]] == [("d/broken.png", "unsupported_image")]
        assert summary["answers"] == [{"item": key, **summary_of(expected)} for key, expected in zip(keys, classified)]
        for key, expected in zip(keys, classified):
            stored = aws.read_json(results, f"{RESULTS}{source}/{key}.json")
            assert uncached(stored) == uncached(expected), run
            assert stored["predictions"][0]["cached"] == (run == "from the cache")
            classify_schemas["200"].validate(stored)  # the values are part of the answer the document describes
    refused = aws.read_json(results, f"{RESULTS}{source}/d/broken.png.json")
    assert refused["error"]["code"] == "unsupported_image"
    classify_schemas["415"].validate(refused)  # as /classify refuses such bytes


def test_s3_batch_operations_tasks_store_the_classify_answers_with_their_values(aws, buckets, door_service,  # noqa: F811
                                                                                pngs, classified):
    source, results = buckets
    keys = put_photos(aws, source, pngs, "b/")
    event = {"invocationSchemaVersion": "2.0", "invocationId": "inv-1",
             "job": {"id": "job-1", "userArguments": {"model": NAME}},
             "tasks": [{"taskId": f"t{i}", "s3Bucket": source, "s3Key": quote_plus(key, safe="/"), "s3VersionId": None}
                       for i, key in enumerate(keys)]}
    answer = handle_event(door_service, event, None)
    assert [result["resultCode"] for result in answer["results"]] == ["Succeeded"] * PHOTOS
    for key, expected, result in zip(keys, classified, answer["results"]):
        assert uncached(aws.read_json(results, f"{RESULTS}{source}/{key}.json")) == uncached(expected)
        label, score, ink = (expected["predictions"][0][key] for key in ("label", "score", "outputs"))
        assert result["resultString"] == f"{label} {score:.3f} ink={ink['ink']}"  # the values beside the label


def test_an_upload_that_is_not_an_image_stores_its_error_code_for_a_two_head_model(aws, buckets,  # noqa: F811
                                                                                   door_service):
    source, results = buckets
    aws.s3.put_object(Bucket=source, Key="uploads/report.png", Body=NOT_AN_IMAGE)
    outcome = handle_event(door_service, s3_object_created(source, "uploads/report.png", len(NOT_AN_IMAGE)), None)
    assert outcome["uploads"] == [{"key": "uploads/report.png", "outcome": "refused",
                                   "error_code": "unsupported_image"}]
    stored = aws.read_json(results, f"{RESULTS}{source}/uploads/report.png.json")
    assert set(stored) == {"error"} and stored["error"]["code"] == "unsupported_image"
    assert aws.tags(source, "uploads/report.png") == {"error": "unsupported_image"}


def test_a_multi_label_two_head_model_keeps_its_values_beside_its_labels_through_the_doors(
        aws, aws_environment, buckets, registry, pngs):  # noqa: F811
    source, results = buckets
    http = make_service(registry)
    expected = []
    for png in pngs:
        status, answer = call(http, "POST", "/classify", {"image": base64.b64encode(png).decode(), "model": TAGS,
                                                          "threshold": THRESHOLD})
        assert status == 200, answer
        expected.append(uncached(answer))
    assert any(len(answer["predictions"][0]["labels"]) > 1 for answer in expected)
    assert all(set(answer["predictions"][0]) == {"labels", "outputs"} for answer in expected)
    doors = make_service(registry, results_bucket=results, results_prefix=RESULTS)

    keys = put_photos(aws, source, pngs, "m/")
    summary = handle_event(doors, {"Items": [{"Key": key} for key in keys], "BatchInput": {
        "task": "classify", "model": TAGS, "options": {"threshold": THRESHOLD}, "bucket": source,
        "results": {"bucket": results, "prefix": RESULTS}}}, None)
    assert summary["answers"] == [
        {"item": key, "labels": [entry["label"] for entry in answer["predictions"][0]["labels"]],
         "outputs": answer["predictions"][0]["outputs"]} for key, answer in zip(keys, expected)]
    assert [uncached(aws.read_json(results, f"{RESULTS}{source}/{key}.json")) for key in keys] == expected

    other = aws.bucket()
    keys = put_photos(aws, other, pngs, "b/")
    answer = handle_event(doors, {"invocationSchemaVersion": "2.0", "invocationId": "inv-2", "job": {
        "id": "job-2", "userArguments": {"model": TAGS, "options": json.dumps({"threshold": THRESHOLD})}},
        "tasks": [{"taskId": f"t{i}", "s3Bucket": other, "s3Key": key, "s3VersionId": None}
                  for i, key in enumerate(keys)]}, None)
    for result, wanted in zip(answer["results"], expected):
        prediction = wanted["predictions"][0]
        labels = " ".join(entry["label"] for entry in prediction["labels"])
        assert result == {"taskId": result["taskId"], "resultCode": "Succeeded",
                          "resultString": f"labels: {labels} ink={prediction['outputs']['ink']}"}
    assert [uncached(aws.read_json(results, f"{RESULTS}{other}/{key}.json")) for key in keys] == expected
