"""S3 upload events and S3's limit of 10 tags per object, against moto over HTTP (and a scripted S3 for refusals
moto never makes): the uploader's tags stay, ours take only the room left, in a fixed order; a permanent refusal by
S3 is not retried, and the JSON answer is written once, after the tags."""
from __future__ import annotations

import pytest

from function.entry import handle_event
from function.entry.s3_upload import MAX_TAGS, UploadsNotProcessed
from kit.aws_events import s3_object_created
from tests.support.aws_fixtures import aws, aws_environment, bucket  # noqa: F401
from tests.support.function_fixtures import demo_models, make_service, registry  # noqa: F401
from kit.photos import cat_jpeg
from tests.support.recording_s3 import RecordingS3

PREFIX = "uploads/"
OURS = ("label", "score", "model_version")
INVALID_TAG = b"<Error><Code>InvalidTag</Code><Message>Object tags cannot be greater than 10</Message></Error>"
SLOW_DOWN = b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"


def user_tags(count: int) -> dict[str, str]:
    return {f"team-{i}": f"value {i}" for i in range(count)}


def upload(aws, bucket: str, key: str, tags: dict[str, str]) -> dict:  # noqa: F811
    data = cat_jpeg()
    aws.s3.put_object(Bucket=bucket, Key=key, Body=data, Tagging="&".join(f"{k}={v}" for k, v in tags.items())
                      .replace(" ", "+"))
    return s3_object_created(bucket, key, len(data))


@pytest.mark.parametrize("count, added", [(0, OURS), (7, OURS), (8, OURS[:2]), (9, OURS[:1]), (10, ())])
def test_the_uploaders_tags_stay_and_ours_take_the_room_left(aws, bucket, registry, count, added):  # noqa: F811
    service = make_service(registry, uploads_prefix=PREFIX)
    event = upload(aws, bucket, "uploads/cat.jpg", user_tags(count))
    for _ in range(2):  # again: our earlier tags are replaced, never counted as the uploader's
        outcome = handle_event(service, event, None)["uploads"][0]
        assert outcome["outcome"] == "classified"
        tags = aws.tags(bucket, "uploads/cat.jpg")
        assert len(tags) <= MAX_TAGS
        assert {k: v for k, v in tags.items() if k not in OURS} == user_tags(count)
        assert tuple(name for name in OURS if name in tags) == added
    assert aws.read_json(bucket, f"predictions/{bucket}/uploads/cat.jpg.json")["predictions"]


def test_a_results_bucket_s3_refuses_for_good_is_not_retried(aws, bucket, registry):  # noqa: F811
    service = make_service(registry, uploads_prefix=PREFIX, results_bucket="no-such-bucket-here")
    outcome = handle_event(service, upload(aws, bucket, "uploads/cat.jpg", {}), None)["uploads"][0]
    assert outcome["outcome"] == "refused_by_s3"  # returned: no exception, so Lambda does not retry


def scripted_s3(monkeypatch, *answers) -> RecordingS3:
    server = RecordingS3((200, {"x-amz-tagging-count": "0", "ETag": '"e"'}, cat_jpeg()), *answers)
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", server.url)
    return server


def json_writes(server: RecordingS3) -> list[dict]:
    return [r for r in server.requests if r["method"] == "PUT" and r["target"].endswith(".json")]


def test_tags_refused_for_good_are_noted_and_the_answer_is_written_once(aws_environment, registry,  # noqa: F811
                                                                        monkeypatch):
    with scripted_s3(monkeypatch, (400, {}, INVALID_TAG), (200, {"ETag": '"j"'}, b"")) as server:
        service = make_service(registry, uploads_prefix=PREFIX)
        outcome = handle_event(service, s3_object_created("photos", "uploads/cat.jpg", len(cat_jpeg())), None)
    assert outcome["uploads"][0]["outcome"] == "classified"
    assert [r["method"] for r in server.requests] == ["GET", "PUT", "PUT"]  # object, tags (refused), answer
    assert len(json_writes(server)) == 1


def test_tags_s3_throttles_are_retried_by_lambda_before_any_answer_is_written(aws_environment, registry,  # noqa: F811
                                                                             monkeypatch):
    with scripted_s3(monkeypatch, *[(503, {}, SLOW_DOWN)] * 3) as server:
        service = make_service(registry, uploads_prefix=PREFIX)
        with pytest.raises(UploadsNotProcessed):
            handle_event(service, s3_object_created("photos", "uploads/cat.jpg", len(cat_jpeg())), None)
    assert json_writes(server) == []  # the retried event writes the answer, once
