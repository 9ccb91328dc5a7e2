"""The standard-library S3 client on the wire: every request it sends carries the signature botocore's own S3
signer computes for the same request (moto never checks signatures), and a body cut short never passes as whole.
The calls themselves run against moto's server in tests/functional/test_events_*.py."""
from __future__ import annotations

import http.client
from datetime import datetime
from urllib.parse import urlsplit

import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials as BotoCredentials

from function.aws.s3 import ObjectTooLarge, S3Client, S3Error, parse_tagging, resolve_endpoint
from function.aws.sigv4 import Credentials
from tests.support.recording_s3 import RecordingS3

CREDENTIALS = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "session/token+==")


def client_for(url: str) -> S3Client:
    return S3Client(resolve_endpoint("eu-west-1", {"AWS_ENDPOINT_URL_S3": url}), "eu-west-1", CREDENTIALS,
                    max_attempts=1)


def botocore_authorization(server_url: str, sent: dict, monkeypatch) -> str:
    """botocore's S3 signature for the request as it arrived, at the instant it says it was signed."""
    when = datetime.strptime(sent["headers"]["X-Amz-Date"], "%Y%m%dT%H%M%SZ")
    monkeypatch.setattr("botocore.auth.get_current_datetime", lambda *a, **k: when)
    signed = sent["headers"]["Authorization"].split("SignedHeaders=")[1].split(",")[0].split(";")
    headers = {name: value for name, value in sent["headers"].items() if name.lower() in signed}
    request = AWSRequest(method=sent["method"], url=server_url + sent["target"], headers=headers, data=sent["body"])
    boto_credentials = BotoCredentials(CREDENTIALS.access_key, CREDENTIALS.secret_key, CREDENTIALS.token)
    S3SigV4Auth(boto_credentials, "s3", "eu-west-1").add_auth(request)
    return request.headers["Authorization"]


@pytest.mark.parametrize("call", [
    lambda c: c.get_object("bucket", "uploads/a photo ü+é=(1).jpg"),
    lambda c: c.put_object("bucket", "predictions/x~y/z.json", b'{"label":"cat"}', "application/json",
                           if_match='"abc"'),
    lambda c: c.put_object_tagging("bucket", "uploads/a b.png", {"label": "tabby cat", "score": "0.9"}),
    lambda c: c.get_object_tagging("bucket", "uploads/a b.png"),
], ids=["get", "put", "put-tagging", "get-tagging"])
def test_every_request_carries_botocores_signature(monkeypatch, call):
    tagging = b'<Tagging><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tagging>'
    with RecordingS3((200, {"ETag": '"e"'}, tagging)) as server:
        monkeypatch.setattr("botocore.auth.S3SigV4Auth._should_sha256_sign_payload", lambda *a: True)
        call(client_for(server.url))
    (sent,) = server.requests
    assert sent["headers"]["Authorization"] == botocore_authorization(server.url, sent, monkeypatch)
    assert sent["headers"]["X-Amz-Security-Token"] == CREDENTIALS.token
    assert urlsplit(sent["target"]).path.startswith("/bucket/")  # path-style on a custom endpoint


def test_the_tag_set_is_sent_as_s3_xml_with_its_md5_and_read_back():
    with RecordingS3((200, {}, b"")) as server:
        client_for(server.url).put_object_tagging("bucket", "k", {"label": "a&b <c>", "score": "1"})
    (sent,) = server.requests
    assert sent["target"] == "/bucket/k?tagging="
    assert "Content-MD5" in sent["headers"]
    assert parse_tagging(sent["body"]) == {"label": "a&b <c>", "score": "1"}


def test_a_body_cut_short_raises_instead_of_passing_as_the_whole_object():
    with RecordingS3((200, {}, b"x" * 1000), truncate=True) as server:
        received = bytearray()
        with pytest.raises(http.client.IncompleteRead):
            client_for(server.url).download("bucket", "model.tflite", received.extend)


def test_an_object_over_the_limit_is_refused_before_its_body_is_read():
    with RecordingS3((200, {}, b"x" * 5000)) as server:
        with pytest.raises(ObjectTooLarge) as refused:
            client_for(server.url).get_object("bucket", "big.jpg", max_bytes=4999)
    assert (refused.value.size, refused.value.limit) == (5000, 4999)


def test_errors_carry_s3s_code_and_say_whether_a_retry_may_help():
    no_key = b"<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>"
    slow = b"<Error><Code>SlowDown</Code><Message>Reduce your request rate.</Message></Error>"
    with RecordingS3((404, {}, no_key), (503, {}, slow)) as server:
        client = client_for(server.url)
        with pytest.raises(S3Error) as missing:
            client.get_object("bucket", "gone.jpg")
        with pytest.raises(S3Error) as throttled:
            client.get_object("bucket", "busy.jpg")
    assert (missing.value.code, missing.value.status, missing.value.transient) == ("NoSuchKey", 404, False)
    assert (throttled.value.code, throttled.value.transient) == ("SlowDown", True)


def test_aws_endpoints_put_the_bucket_in_the_host_unless_its_name_has_dots():
    endpoint = resolve_endpoint("eu-west-1", {})
    assert endpoint.locate("models", "a/b") == ("models.s3.eu-west-1.amazonaws.com", "/a/b")
    assert endpoint.locate("my.models", "a/b") == ("s3.eu-west-1.amazonaws.com", "/my.models/a/b")
