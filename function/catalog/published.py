"""How models are published under an S3 prefix: the one place that knows the layout.

    s3://bucket/prefix/index.json                       which version of each model is current, with its manifest
    s3://bucket/prefix/<name>/<version>/<file>           every file the manifest lists, and manifest.json

A model's entry in index.json is its stable version (version, path, sizes, manifest: all an index had before
labels, so a reader that knows no label serves the stable one). Beside it, optionally: "labels" (label -> version,
e.g. "canary"), "weights" (label -> the percent of the requests that name no version it takes), "previous_stable"
(what `--rollback` restores) and "versions" (version -> path, sizes, manifest of every other version named there).

`python -m convert publish` uploads a version's files first and rewrites index.json last, with a compare-and-swap
on its ETag, so a reader sees either the old version or the whole new one, never half of one. A version is the
model's serving version (function/model/identity.py): republishing the same model uploads to the same place.
The function reads index.json once at start (every model's manifest, no model file) and, to see new versions,
asks again only with its ETag (If-None-Match: a 304 costs no download).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from function.errors import quoted

INDEX_FILE = "index.json"
INDEX_SCHEMA = 1
# A model name is one path segment, on S3 and under /tmp: nothing an index could use to climb out of either.
MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
# A label is one path segment of /v1/models/{name}/labels/{label} (TensorFlow Serving's spelling).
LABEL = re.compile(r"[a-z][a-z0-9_-]{0,63}")
STABLE = "stable"
VERSION = re.compile(r"[0-9a-f]{64}")


class ModelIndexError(ValueError):
    """index.json is not a model index this function can read; the message says why."""


@dataclass(frozen=True)
class PublishedModel:
    """One published version of a model."""

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


@dataclass(frozen=True)
class PublishedEntry:
    """A model's entry in the index: its stable version and every labelled one."""

    stable: PublishedModel
    labels: dict[str, str] = field(default_factory=dict)  # label -> version, besides "stable"
    weights: dict[str, int] = field(default_factory=dict)  # label -> percent of the requests naming no version
    previous_stable: PublishedModel | None = None  # what --rollback restores
    others: dict[str, PublishedModel] = field(default_factory=dict)  # version -> every labelled non-stable version

    @property
    def name(self) -> str:
        return self.stable.name

    def version(self, version: str) -> PublishedModel:
        if version == self.stable.version:
            return self.stable
        return self.others[version]

    def labelled(self) -> dict[str, PublishedModel]:
        """label -> its version, "stable" included."""
        return {STABLE: self.stable, **{label: self.version(version) for label, version in self.labels.items()}}

    def as_json(self) -> dict:
        entry = self.stable.as_json()
        kept = {version: self.others[version] for version in set(self.labels.values()) - {self.stable.version}}
        if self.previous_stable is not None and self.previous_stable.version != self.stable.version:
            entry["previous_stable"] = self.previous_stable.version
            kept[self.previous_stable.version] = self.previous_stable
        if self.labels:
            entry["labels"] = dict(self.labels)
        if self.weights:
            entry["weights"] = dict(self.weights)
        if kept:
            entry["versions"] = {version: {key: value for key, value in model.as_json().items() if key != "version"}
                                 for version, model in kept.items()}
        return entry


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


def parse_index(body: bytes, where: str) -> dict[str, PublishedEntry]:
    """Every model of the index; ModelIndexError when any part of it cannot be read (what `publish` rewrites)."""
    models, broken = read_index(body, where)
    if broken:
        raise ModelIndexError(next(iter(broken.values())))
    return models


def read_index(body: bytes, where: str) -> tuple[dict[str, PublishedEntry], dict[str, str]]:
    """(every model entry that can be read, model name -> why its entry cannot): what the function serves from. One
    model's bad entry (a number no integer can hold, a file name no file system takes, nesting past the parser's
    depth) is that model's problem, never the other models'. ModelIndexError only when the index as a whole is not
    one."""
    deep: set[str] = set()
    try:
        data = json.loads(body, parse_int=_integer)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ModelIndexError(f"{where}: not JSON: {exc}") from exc
    except RecursionError:  # some value nests past the parser's depth: which model's, if any, is that model's problem
        data, deep = _read_around_deep_entries(body, where)
    if not isinstance(data, dict) or data.get("schema") != INDEX_SCHEMA or not isinstance(data.get("models"), dict):
        raise ModelIndexError(f"{where}: not a model index of schema {INDEX_SCHEMA} "
                              "(written by `python -m convert publish`)")
    models = {}
    broken = {name: f"{where}: model {quoted(name)} has an entry that nests too deeply to read" for name in deep}
    for name, entry in data["models"].items():
        try:
            if not MODEL_NAME.fullmatch(name) or not isinstance(entry, dict):
                raise ModelIndexError(f"{where}: {quoted(name)} is not a model name")
            models[name] = _parse_entry(name, entry, where)
        except ModelIndexError as exc:
            broken[name] = str(exc)
        except (TypeError, ValueError, OverflowError, RecursionError) as exc:
            broken[name] = f"{where}: model {quoted(name)} has an entry this function cannot read: " \
                           f"{type(exc).__name__}: {quoted(str(exc), 200)}"
    return models, broken


MAX_INTEGER_DIGITS = 100  # a size or a dimension has a few; past this a number is read as Infinity, no integer


def _integer(digits: str) -> int | float:
    """A JSON integer, or Infinity past MAX_INTEGER_DIGITS (int() refuses 4,300 digits, and the whole index with it):
    the entry holding it is then refused by its own checks."""
    return int(digits) if len(digits) <= MAX_INTEGER_DIGITS else float("inf")


_SPACE = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_PLAIN = re.compile(r'[^"\[\]{}]+')


def _read_around_deep_entries(body: bytes, where: str) -> tuple[dict, set[str]]:
    """The index read member by member, each model's entry on its own: (the index without the entries that nest
    past the parser's depth, the names of those). Anything else nesting that deep leaves the index unreadable."""
    decoder = json.JSONDecoder(parse_int=_integer)
    try:
        text = body.decode("utf-8")
        data: dict = {}
        deep: set[str] = set()

        def model(name: str, start: int) -> int:
            try:
                data["models"][name], end = decoder.raw_decode(text, start)
                return end
            except RecursionError:
                deep.add(name)
                return _skip_value(text, start)

        def member(key: str, start: int) -> int:
            if key == "models" and text.startswith("{", start):
                data["models"] = {}
                return _members(decoder, text, start, model)
            data[key], end = decoder.raw_decode(text, start)
            return end

        end = _members(decoder, text, _SPACE.match(text).end(), member)
        if text[end:].strip():
            raise ValueError(f"extra data at character {end}")
        return data, deep
    except (UnicodeDecodeError, ValueError, IndexError, AttributeError, RecursionError) as exc:
        raise ModelIndexError(f"{where}: not JSON this function reads: {type(exc).__name__}: {exc}") from exc


def _members(decoder: json.JSONDecoder, text: str, start: int, read) -> int:
    """Reads the object at `start` ("{"), handing each member's key and value position to `read`, which returns
    where the value ends; returns where the object ends."""
    if not text.startswith("{", start):
        raise ValueError(f"an object expected at character {start}")
    at = _SPACE.match(text, start + 1).end()
    if text.startswith("}", at):
        return at + 1
    while True:
        key, at = decoder.raw_decode(text, at)
        at = _SPACE.match(text, at).end()
        if not isinstance(key, str) or not text.startswith(":", at):
            raise ValueError(f"a member expected at character {at}")
        at = _SPACE.match(text, read(key, _SPACE.match(text, at + 1).end())).end()
        if text.startswith(",", at):
            at = _SPACE.match(text, at + 1).end()
        elif text.startswith("}", at):
            return at + 1
        else:
            raise ValueError(f"',' or '}}' expected at character {at}")


def _skip_value(text: str, start: int) -> int:
    """Where the array or object at `start` ends, by its brackets (strings skipped whole), however deep."""
    depth, at = 0, start
    while at < len(text):
        char = text[at]
        if char == '"':
            at = _STRING.match(text, at).end()
            continue
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return at + 1
        else:
            at = _PLAIN.match(text, at).end()
            continue
        at += 1
    raise ValueError("an array or object is not closed")


def _parse_version(name: str, version: object, entry: object, where: str) -> PublishedModel:
    if not isinstance(entry, dict):
        raise ModelIndexError(f"{where}: model {name!r} has a version that is not an object")
    sizes, manifest = entry.get("sizes", {}), entry.get("manifest")
    if not isinstance(version, str) or not VERSION.fullmatch(version) or entry.get("path") != version_path(
            name, version):
        raise ModelIndexError(f"{where}: model {name!r} has no valid version and path")
    if not isinstance(manifest, dict) or not isinstance(sizes, dict) or not all(
            isinstance(size, int) and size >= 0 for size in sizes.values()):
        raise ModelIndexError(f"{where}: model {name!r} has no manifest or bad sizes")
    return PublishedModel(name, version, dict(sizes), manifest)


def _parse_entry(name: str, entry: dict, where: str) -> PublishedEntry:
    stable = _parse_version(name, entry.get("version"), entry, where)
    others_json = entry.get("versions", {})
    if not isinstance(others_json, dict):
        raise ModelIndexError(f"{where}: model {name!r} has 'versions' that is not an object")
    others = {version: _parse_version(name, version, other, where) for version, other in others_json.items()}
    known = {stable.version, *others}
    labels, weights = entry.get("labels", {}), entry.get("weights", {})
    if not isinstance(labels, dict) or not all(
            isinstance(label, str) and LABEL.fullmatch(label) and version in known for label, version in
            labels.items()):
        raise ModelIndexError(f"{where}: model {name!r} has labels that are not label -> a version it lists")
    if labels.get(STABLE, stable.version) != stable.version:
        raise ModelIndexError(f"{where}: model {name!r} labels another version stable than its own")
    labels = {label: version for label, version in labels.items() if label != STABLE}
    if not isinstance(weights, dict) or not all(
            label in labels and isinstance(weight, int) and not isinstance(weight, bool) and 0 <= weight <= 100
            for label, weight in weights.items()) or sum(weights.values()) > 100:
        raise ModelIndexError(f"{where}: model {name!r} has weights that are not percents of its labels (at most "
                              "100 in all)")
    previous = entry.get("previous_stable")
    if previous is not None and previous not in others:
        raise ModelIndexError(f"{where}: model {name!r} has a previous_stable it does not list")
    return PublishedEntry(stable, labels, dict(weights), others.get(previous) if previous else None, others)


def index_bytes(models: dict[str, PublishedEntry]) -> bytes:
    data = {"schema": INDEX_SCHEMA, "models": {name: models[name].as_json() for name in sorted(models)}}
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False).encode("utf-8")
