"""S3 ObjectCreated events, against moto's S3 over HTTP: an upload is classified, tagged and its answer written;
what is not an image is tagged with its error and never retried; the function never classifies its own output;
a transient failure raises so that Lambda retries; the same content is answered from the result cache."""
from __future__ import annotations

import json
import shutil

import pytest

from function.entry import handle_event
from function.entry.s3_upload import UploadsNotProcessed, tag_value
from function.catalog.registry import ModelRegistry
from kit.aws_events import s3_object_created
from tests.support.aws_fixtures import aws, aws_environment, bucket  # noqa: F401
from tests.support.function_fixtures import call, demo_models, make_service, registry  # noqa: F401
from kit.photos import cat_jpeg, is_cat

PREFIX = "uploads/"


@pytest.fixture()
def uploads_service(registry):  # noqa: F811
    return make_service(registry, uploads_prefix=PREFIX)


def upload(aws, bucket: str, key: str, data: bytes, **extra) -> dict:  # noqa: F811
    aws.s3.put_object(Bucket=bucket, Key=key, Body=data, **extra)
    return s3_object_created(bucket, key, len(data))


def test_an_upload_is_tagged_and_its_answer_written_as_classify_would_answer(aws, bucket,  # noqa: F811
                                                                             uploads_service):
    photo = cat_jpeg()
    outcome = handle_event(uploads_service, upload(aws, bucket, "uploads/my cat (1).jpg", photo), None)
    assert outcome["uploads"][0]["outcome"] == "classified"
    written = aws.read_json(bucket, f"predictions/{bucket}/uploads/my cat (1).jpg.json")
    status, http_answer = call(uploads_service, "POST", "/classify", photo, "image/jpeg", binary=True)
    assert status == 200 and http_answer["predictions"][0]["cached"] is True  # the upload computed it
    assert written["predictions"][0]["cached"] is False
    for answer in (written, http_answer):
        answer["predictions"][0].pop("cached")
    assert written == http_answer
    best = written["predictions"][0]
    assert is_cat(best["label"])
    assert aws.tags(bucket, "uploads/my cat (1).jpg") == {
        "label": tag_value(best["label"]), "score": str(best["score"]), "model_version": written["model_version"]}


def test_the_uploaders_own_tags_are_kept(aws, bucket, uploads_service):  # noqa: F811
    event = upload(aws, bucket, "uploads/tagged.jpg", cat_jpeg(), Tagging="owner=alice&project=zoo")
    handle_event(uploads_service, event, None)
    tags = aws.tags(bucket, "uploads/tagged.jpg")
    assert {tags["owner"], tags["project"]} == {"alice", "zoo"} and is_cat(tags["label"].replace("_", " "))


@pytest.mark.parametrize("data, code", [
    (cat_jpeg()[:3000], "unsupported_image"),  # a photo cut short
    (b"%PDF-1.7 not a photo at all", "unsupported_image"),
    (b'{"image": "not an upload format"}', "unsupported_image"),  # JSON content is an object's bytes, not a request
], ids=["truncated-jpeg", "pdf", "json"])
def test_what_is_not_an_image_gets_its_error_tag_and_is_not_retried(aws, bucket, uploads_service, data,  # noqa: F811
                                                                    code):
    outcome = handle_event(uploads_service, upload(aws, bucket, "uploads/broken.jpg", data), None)  # no raise
    assert outcome["uploads"] == [{"key": "uploads/broken.jpg", "outcome": "refused", "error_code": code}]
    assert aws.tags(bucket, "uploads/broken.jpg") == {"error": code}
    assert aws.read_json(bucket, f"predictions/{bucket}/uploads/broken.jpg.json")["error"]["code"] == code


def test_an_object_over_the_body_limit_is_refused_unread_with_the_http_code(aws, bucket, registry):  # noqa: F811
    service = make_service(registry, uploads_prefix=PREFIX, max_body_bytes=10_000)
    event = upload(aws, bucket, "uploads/big.jpg", cat_jpeg())
    handle_event(service, event, None)
    assert aws.tags(bucket, "uploads/big.jpg") == {"error": "body_too_large"}
    # The event may understate the size (the object was replaced): the GET's own length is checked too.
    event["Records"][0]["s3"]["object"]["size"] = 100
    aws.s3.delete_object_tagging(Bucket=bucket, Key="uploads/big.jpg")
    handle_event(service, event, None)
    assert aws.tags(bucket, "uploads/big.jpg") == {"error": "body_too_large"}


def test_a_reupload_that_now_fails_loses_its_old_label(aws, bucket, uploads_service):  # noqa: F811
    handle_event(uploads_service, upload(aws, bucket, "uploads/photo.jpg", cat_jpeg()), None)
    handle_event(uploads_service, upload(aws, bucket, "uploads/photo.jpg", b"not any more"), None)
    assert aws.tags(bucket, "uploads/photo.jpg") == {"error": "unsupported_image"}


def test_the_same_content_twice_is_answered_from_the_result_cache(aws, bucket, uploads_service):  # noqa: F811
    photo = cat_jpeg()
    first = upload(aws, bucket, "uploads/a.jpg", photo)
    handle_event(uploads_service, first, None)
    handle_event(uploads_service, upload(aws, bucket, "uploads/copy of a.jpg", photo), None)
    handle_event(uploads_service, first, None)  # Lambda delivering the same event again
    assert aws.read_json(bucket, f"predictions/{bucket}/uploads/copy of a.jpg.json")["predictions"][0]["cached"] is True
    assert aws.read_json(bucket, f"predictions/{bucket}/uploads/a.jpg.json")["predictions"][0]["cached"] is True
    assert aws.tags(bucket, "uploads/a.jpg") == aws.tags(bucket, "uploads/copy of a.jpg")


@pytest.mark.parametrize("key", ["predictions/uploads/a.jpg.json", "elsewhere/a.jpg"])
def test_the_function_never_classifies_its_own_results_nor_keys_outside_the_rules(aws, bucket, registry,  # noqa: F811
                                                                                  key):
    service = make_service(registry, uploads_prefix="", uploads_suffix=".jpg")
    if key.startswith("elsewhere"):
        service = make_service(registry, uploads_prefix=PREFIX)
    outcome = handle_event(service, upload(aws, bucket, key, cat_jpeg()), None)
    assert outcome["uploads"][0]["outcome"] == "skipped"
    assert aws.keys(bucket) == [key] and aws.tags(bucket, key) == {}


def test_other_events_and_deleted_objects_are_skipped(aws, bucket, uploads_service):  # noqa: F811
    event = upload(aws, bucket, "uploads/gone.jpg", cat_jpeg())
    aws.s3.delete_object(Bucket=bucket, Key="uploads/gone.jpg")
    removed = s3_object_created(bucket, "uploads/x.jpg", 1, event_name="ObjectRemoved:Delete")
    assert handle_event(uploads_service, event, None)["uploads"][0]["outcome"] == "skipped"
    assert handle_event(uploads_service, removed, None)["uploads"][0]["outcome"] == "skipped"
    assert aws.keys(bucket) == []


def test_a_transient_failure_raises_for_lambdas_retry_and_writes_nothing(aws, bucket, demo_models,  # noqa: F811
                                                                         tmp_path):
    shutil.copytree(demo_models / "digits", tmp_path / "digits")
    (tmp_path / "digits" / "model.tflite").write_bytes(b"not a model")  # loads fail: 503 model_unavailable
    service = make_service(ModelRegistry(tmp_path), uploads_prefix=PREFIX, default_image_model="digits")
    with pytest.raises(UploadsNotProcessed, match="uploads/digit.jpg"):
        handle_event(service, upload(aws, bucket, "uploads/digit.jpg", cat_jpeg()), None)
    assert aws.keys(bucket) == ["uploads/digit.jpg"] and aws.tags(bucket, "uploads/digit.jpg") == {}


def test_tag_values_keep_only_what_s3_accepts():
    assert tag_value("jack-o'-lantern, carved") == "jack-o_-lantern_ carved"
    assert tag_value("x" * 300) == "x" * 256
    assert json.dumps(tag_value("crème brûlée")) == '"cr_me br_l_e"'
