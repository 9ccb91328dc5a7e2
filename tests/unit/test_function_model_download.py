"""A published model's files under /tmp: only a file whose sha256 matches the manifest ever gets its name; a
download cut short leaves nothing and is tried again; a refused file is not downloaded again; the space is checked
before anything is downloaded. The faults come from a scripted HTTP server (tests/support/recording_s3.py)."""
from __future__ import annotations

import hashlib
import http.client
import shutil

import pytest

from function.aws.s3 import S3Client, resolve_endpoint
from function.aws.sigv4 import Credentials
from function.catalog.download import DownloadedFiles
from function.model.files import ModelFilesError, ModelFilesRefused
from tests.support.recording_s3 import RecordingS3

CONTENT = b"\x00tflite model bytes\xff" * 1000


def files_for(url: str, directory, sizes: dict | None = None, make_room=lambda: None) -> DownloadedFiles:
    client = S3Client(resolve_endpoint("us-east-1", {"AWS_ENDPOINT_URL_S3": url}), "us-east-1",
                      Credentials("AKID", "secret"), max_attempts=1)
    return DownloadedFiles(client, "models", "m/v1/", directory, {"model.tflite": hashlib.sha256(CONTENT).hexdigest()},
                           sizes or {"model.tflite": len(CONTENT)}, "m", make_room)


def names_in(directory) -> list[str]:
    return sorted(path.name for path in directory.iterdir()) if directory.exists() else []


def test_a_verified_file_gets_its_name_and_is_not_fetched_again(tmp_path):
    with RecordingS3((200, {}, CONTENT)) as server:
        files = files_for(server.url, tmp_path / "m" / "v1")
        files.ensure()
        files.ensure()
    assert len(server.requests) == 1 and server.requests[0]["target"] == "/models/m/v1/model.tflite"
    assert (tmp_path / "m" / "v1" / "model.tflite").read_bytes() == CONTENT


def test_a_file_that_differs_from_its_manifest_is_refused_once_and_for_all(tmp_path):
    tampered = CONTENT[:-1] + b"\x00"
    with RecordingS3((200, {}, tampered)) as server:
        files = files_for(server.url, tmp_path / "v1")
        with pytest.raises(ModelFilesRefused, match="model.tflite has sha256 .* but the manifest says"):
            files.ensure()
        with pytest.raises(ModelFilesRefused):
            files.ensure()
    assert len(server.requests) == 1  # refused: not downloaded again for this version
    assert names_in(tmp_path / "v1") == []  # no file under its name, no partial left behind


def test_a_download_cut_short_leaves_nothing_and_the_next_use_tries_again(tmp_path):
    with RecordingS3((200, {}, CONTENT[:5000], True), (200, {}, CONTENT)) as server:
        files = files_for(server.url, tmp_path / "v1")
        with pytest.raises(http.client.IncompleteRead):
            files.ensure()
        assert names_in(tmp_path / "v1") == []
        files.ensure()
    assert (tmp_path / "v1" / "model.tflite").read_bytes() == CONTENT


def test_a_file_left_by_an_earlier_process_is_used_only_if_it_still_verifies(tmp_path):
    directory = tmp_path / "v1"
    directory.mkdir()
    (directory / "model.tflite").write_bytes(b"half of it")
    with RecordingS3((200, {}, CONTENT)) as server:
        files_for(server.url, directory).ensure()
    assert len(server.requests) == 1 and (directory / "model.tflite").read_bytes() == CONTENT
    with RecordingS3() as server:
        files_for(server.url, directory).ensure()
    assert server.requests == []


def test_too_little_space_makes_room_first_then_refuses_before_downloading(tmp_path):
    free = shutil.disk_usage(tmp_path).free
    asked = []
    with RecordingS3() as server:
        files = files_for(server.url, tmp_path / "v1", {"model.tflite": free * 2}, lambda: asked.append(True))
        with pytest.raises(ModelFilesError, match="MB to download but .* MB free"):
            files.ensure()
    assert asked == [True] and server.requests == []
