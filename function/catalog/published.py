"""How models are published under an S3 prefix: the one place that knows the layout.

    s3://bucket/prefix/index.json                       which version of each model is current, with its manifest
    s3://bucket/prefix/<name>/<version>/<file>           every file the manifest lists, and manifest.json

`python -m convert publish` uploads a version's files first and rewrites index.json last, with a compare-and-swap
on its ETag, so a reader sees either the old version or the whole new one, never half of one. A version is the
model's serving version (function/model/identity.py): republishing the same model uploads to the same place.
The function reads index.json once at start (every model's manifest, no model file) and, to see new versions,
asks again only with its ETag (If-None-Match: a 304 costs no download).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

INDEX_FILE = "index.json"
INDEX_SCHEMA = 1
# A model name is one path segment, on S3 and under /tmp: nothing an index could use to climb out of either.
MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
VERSION = re.compile(r"[0-9a-f]{64}")


class ModelIndexError(ValueError):
    """index.json is not a model index this function can read; the message says why."""


@dataclass(frozen=True)
class PublishedModel:
    name: str
    version: str
    sizes: dict[str, int]  # bytes of each file, so the reader can check its disk space before downloading
    manifest: dict  # the manifest.json of that version, as published

    @property
    def path(self) -> str:
        """Where the version's files are, relative to the prefix."""
        return version_path(self.name, self.version)

    def as_json(self) -> dict:
        return {"version": self.version, "path": self.path, "sizes": self.sizes, "manifest": self.manifest}


def version_path(name: str, version: str) -> str:
    return f"{name}/{version}/"


def parse_s3_url(url: str) -> tuple[str, str]:
    """"s3://bucket/prefix/" -> (bucket, "prefix/"); the prefix is empty or ends with "/"."""
    if not url.startswith("s3://"):
        raise ValueError(f"{url!r} is not an s3:// URL")
    bucket, _, prefix = url[len("s3://"):].partition("/")
    if not bucket:
        raise ValueError(f"{url!r} names no bucket")
    if prefix and not prefix.endswith("/"):
        prefix += "/"
    return bucket, prefix


def parse_index(body: bytes, where: str) -> dict[str, PublishedModel]:
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ModelIndexError(f"{where}: not JSON: {exc}") from exc
    if not isinstance(data, dict) or data.get("schema") != INDEX_SCHEMA or not isinstance(data.get("models"), dict):
        raise ModelIndexError(f"{where}: not a model index of schema {INDEX_SCHEMA} "
                          "(written by `python -m convert publish`)")
    models = {}
    for name, entry in data["models"].items():
        if not MODEL_NAME.fullmatch(name) or not isinstance(entry, dict):
            raise ModelIndexError(f"{where}: {name!r} is not a model name")
        version, sizes, manifest = entry.get("version"), entry.get("sizes", {}), entry.get("manifest")
        if not isinstance(version, str) or not VERSION.fullmatch(version) or entry.get("path") != version_path(
                name, version):
            raise ModelIndexError(f"{where}: model {name!r} has no valid version and path")
        if not isinstance(manifest, dict) or not isinstance(sizes, dict) or not all(
                isinstance(size, int) and size >= 0 for size in sizes.values()):
            raise ModelIndexError(f"{where}: model {name!r} has no manifest or bad sizes")
        models[name] = PublishedModel(name, version, dict(sizes), manifest)
    return models


def index_bytes(models: dict[str, PublishedModel]) -> bytes:
    data = {"schema": INDEX_SCHEMA, "models": {name: models[name].as_json() for name in sorted(models)}}
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False).encode("utf-8")
