"""One model's bad entry in a published index.json is that model's problem: the other entries are read, and the
bad one is named with why (nesting past the parser's depth, an integer past Python's conversion limit); a manifest
with an Infinity in a shape or a NUL in a file name is a ManifestError (the source lists that model with it)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from function.catalog.published import ModelIndexError, PublishedModel, index_bytes, parse_index, read_index
from function.catalog.published import PublishedEntry
from function.model.identity import serving_version
from function.model.manifest import ManifestError, parse_manifest

DIGITS = json.loads((Path(__file__).resolve().parents[2] / "models" / "digits" / "manifest.json").read_text())
DEEP = 100_000


def index_with(bad_entry_text: str) -> bytes:
    """digits as published, beside a model `other` whose entry is `bad_entry_text`."""
    good = PublishedModel("digits", serving_version(DIGITS), {"model.tflite": 1}, DIGITS)
    text = index_bytes({"digits": PublishedEntry(good)}).decode()
    data = json.loads(text)
    data["models"]["other"] = "PLACE"
    return json.dumps(data).replace('"PLACE"', bad_entry_text).encode()


def entry_text(manifest: dict, version: str = "a" * 64) -> str:
    return json.dumps({"version": version, "path": f"other/{version}/", "sizes": {}, "manifest": manifest},
                      allow_nan=True)


@pytest.mark.parametrize("bad, problem", [
    ('{"version": ' + "[" * DEEP + "]" * DEEP + "}", "nests too deeply"),
    ('{"sizes": {"model.tflite": ' + "1" + "0" * 5000 + "}}", "no valid version"),
], ids=["deep-nesting", "huge-integer"])
def test_a_bad_entry_is_named_and_the_others_are_read(bad, problem):
    models, broken = read_index(index_with(bad), "s3://b/index.json")
    assert list(models) == ["digits"] and list(broken) == ["other"]
    if problem:
        assert problem in broken["other"]
    with pytest.raises(ModelIndexError):  # publish's reader stays strict: it never rewrites a broken index
        parse_index(index_with(bad), "s3://b/index.json")


@pytest.mark.parametrize("change", [
    {"files": {"mo\0del.tflite": "0" * 64}, "model_file": "mo\0del.tflite"},
    {"inputs": [{**DIGITS["inputs"][0], "shape": [1, float("inf"), 8, 1]}]},
], ids=["nul-file-name", "infinity-in-a-shape"])
def test_a_manifest_that_no_file_system_or_integer_can_hold_is_a_manifest_error(change):
    with pytest.raises(ManifestError):
        parse_manifest({**DIGITS, **change}, Path("/nowhere"), "test")


def test_an_index_nesting_too_deeply_outside_any_entry_is_unreadable_as_a_whole():
    with pytest.raises(ModelIndexError, match="not JSON this function reads"):
        read_index(b'{"schema": ' + b"[" * DEEP + b"]" * DEEP + b', "models": {}}', "test")
