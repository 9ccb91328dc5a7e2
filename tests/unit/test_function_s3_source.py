"""The S3 model source's failures, from a scripted S3 (tests/support/recording_s3.py): an index it cannot read at
start fails the init saying why; a failed refresh check keeps what is loaded; a malformed index is refused."""
from __future__ import annotations

import pytest

from function.model.manifest import ManifestError

from function.aws.s3 import S3Client, resolve_endpoint
from function.aws.sigv4 import Credentials
from function.catalog.s3_source import S3ModelSource
from function.catalog.source import ModelSourceError
from tests.support.recording_s3 import RecordingS3

DENIED = b"<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>"
EMPTY_INDEX = b'{"schema": 1, "models": {}}'


def source_for(url: str, tmp_path, refresh: float = 0.0, clock=lambda: 0.0) -> S3ModelSource:
    client = S3Client(resolve_endpoint("us-east-1", {"AWS_ENDPOINT_URL_S3": url}), "us-east-1",
                      Credentials("AKID", "secret"), max_attempts=1)
    return S3ModelSource("models", "serving/", client, tmp_path, refresh, clock)


def test_an_index_the_role_may_not_read_fails_the_init_with_a_hint(tmp_path):
    with RecordingS3((403, {}, DENIED)) as server:
        with pytest.raises(ModelSourceError, match="AccessDenied .*has a model been published there"):
            source_for(server.url, tmp_path).models()
    assert server.requests[0]["target"] == "/models/serving/index.json"


def test_an_index_that_is_not_one_is_refused(tmp_path):
    with RecordingS3((200, {}, b'{"models": "all of them"}')) as server:
        with pytest.raises(ModelSourceError, match="not a model index"):
            source_for(server.url, tmp_path).models()


@pytest.mark.parametrize("index", [
    b'{"schema": 1, "models": {"../etc": {"version": "' + b"a" * 64 + b'", "path": "../etc/' + b"a" * 64 + b'/"}}}',
    b'{"schema": 1, "models": {"m": {"version": "latest", "path": "m/latest/", "manifest": {}}}}',
], ids=["name-climbs", "version-not-a-digest"])
def test_an_index_entry_that_could_climb_out_of_its_directory_is_refused(tmp_path, index):
    """Refused as that entry's problem (the other models are served): a name that is not one is not listed at all,
    a version that is not a digest is listed as unservable, with why, under a directory of the source's own."""
    with RecordingS3((200, {}, index)) as server:
        source = source_for(server.url, tmp_path)
        listing = source.models()
    assert all(isinstance(listed.manifest, ManifestError) and listed.directory.is_relative_to(source.directory)
               and "no valid version" in str(listed.manifest) for listed in listing)
    assert [listed.name for listed in listing] == ([] if b"../etc" in index else ["m"])


def test_a_failed_refresh_check_keeps_serving_and_the_next_interval_asks_again(tmp_path):
    now = [0.0]
    with RecordingS3((200, {"ETag": '"v1"'}, EMPTY_INDEX), (503, {}, b""), (304, {}, b"")) as server:
        source = source_for(server.url, tmp_path, refresh=10, clock=lambda: now[0])
        assert source.models() == []
        now[0] = 10
        assert source.poll() is None  # 503: logged, nothing changes
        assert source.poll() is None  # not due again yet: no request
        now[0] = 20
        assert source.poll() is None  # 304
    assert source.checks == {"unchanged": 1, "changed": 0, "failed": 1}
    assert [r["headers"].get("If-None-Match") for r in server.requests] == [None, '"v1"', '"v1"']
