"""`python -m convert publish MODEL_DIR s3://bucket/prefix/`: put a converted model where the function can serve it
from S3 (MODEL_SOURCE=s3://bucket/prefix/), so that no reader ever sees half of it.

    python -m convert publish MODEL_DIR s3://bucket/prefix/                            the new stable version
    python -m convert publish MODEL_DIR s3://bucket/prefix/ --label canary --weight 10 10% of the requests
    python -m convert publish s3://bucket/prefix/ --model NAME --promote canary        the canary becomes stable
    python -m convert publish s3://bucket/prefix/ --model NAME --rollback              the previous stable again
    python -m convert publish s3://bucket/prefix/ --model NAME --abort canary          the canary takes no request

Each changes index.json in one PutObject (convert/rollout.py says what each edit does); the function follows at
its next refresh (MODEL_REFRESH_SECONDS).

The layout is function/catalog/published.py's: the version's files go to <prefix><name>/<version>/ first, then
index.json is rewritten with a compare-and-swap on its ETag (If-Match, or If-None-Match: * for the first model),
so a reader finds either the previous version or the complete new one, and two publishers never lose each other's
models. The directory must serve as it is (the same checks the function makes at start) and every file must match
the sha256 its manifest lists: the function refuses anything else, so it is never uploaded.

Credentials and region come from the environment, as for the function (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
AWS_SESSION_TOKEN, AWS_REGION; with a profile or SSO: `eval "$(aws configure export-credentials --format env)"`).
AWS_ENDPOINT_URL_S3 points it at another S3 implementation.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from function.aws.s3 import S3Client, S3Error
from function.model.files import file_sha256
from function.model.manifest import MANIFEST_FILE
from convert.rollout import RolloutError, aborted, check_label, labelled, promoted, rolled_back
from function.catalog.published import (INDEX_FILE, STABLE, ModelIndexError, PublishedEntry, PublishedModel,
                                        index_bytes, parse_index, parse_s3_url)
from function.catalog.registry import UnservableModel, open_model
from function.config import TaskLimits

EXIT_USER_ERROR = 2
INDEX_ATTEMPTS = 5  # compare-and-swap rounds against other publishers before giving up
CONTENT_TYPES = {".json": "application/json", ".tflite": "application/octet-stream"}


class PublishError(Exception):
    """Why the model was not published; nothing that a reader sees has changed."""


@dataclass(frozen=True)
class Published:
    model: PublishedModel
    bucket: str
    prefix: str
    uploaded_bytes: int
    label: str = STABLE
    weight: int | None = None

    def summary(self) -> str:
        serves = "now serves it" if self.label == STABLE else f"serves it as {self.label!r}" + (
            f" to {self.weight}% of the requests naming no version" if self.weight else "")
        return (f"published {self.model.name} version {self.model.version[:12]} to "
                f"s3://{self.bucket}/{self.prefix}{self.model.path} ({len(self.model.sizes)} files, "
                f"{self.uploaded_bytes / 1e6:.2f} MB); s3://{self.bucket}/{self.prefix}{INDEX_FILE} {serves}")


def checked_model(directory: Path) -> tuple[PublishedModel, dict[str, bytes]]:
    """The index entry for `directory` and the bytes of every file to upload (manifest.json last)."""
    name, task = open_model(directory, TaskLimits())
    if isinstance(task, UnservableModel):
        raise PublishError(f"{directory} cannot be served: {task.reason}")
    manifest = task.manifest
    contents = {}
    for file_name, digest in sorted(manifest.files.items()):
        path = directory / file_name
        if not path.is_file():
            raise PublishError(f"{path} is listed in the manifest but missing")
        if file_sha256(path) != digest:
            raise PublishError(f"{path} does not match the sha256 in its manifest: convert the model again")
        contents[file_name] = path.read_bytes()
    contents[MANIFEST_FILE] = (directory / MANIFEST_FILE).read_bytes()
    import json  # noqa: PLC0415

    entry = PublishedModel(name, manifest.version, {name_: len(data) for name_, data in contents.items()},
                           json.loads(contents[MANIFEST_FILE]))
    return entry, contents


def publish(directory: Path, url: str, client: S3Client, label: str = STABLE, weight: int | None = None) -> Published:
    bucket, prefix = parse_s3_url(url)
    entry, contents = checked_model(Path(directory))
    try:
        check_label(label, weight)  # before any upload: a label the index edit would refuse uploads nothing
    except RolloutError as exc:
        raise PublishError(str(exc)) from exc
    try:
        for file_name, data in contents.items():  # manifest.json last: the version is complete once it is there
            client.put_object(bucket, prefix + entry.path + file_name, data,
                              CONTENT_TYPES.get(Path(file_name).suffix, "application/octet-stream"))
        update_index(client, bucket, prefix, lambda models: labelled(models, entry, label, weight))
    except S3Error as exc:
        raise PublishError(str(exc)) from exc
    return Published(entry, bucket, prefix, sum(len(data) for data in contents.values()), label, weight)


def change_labels(url: str, client: S3Client, name: str, promote: str | None = None,
                  abort: str | None = None) -> PublishedEntry:
    """--promote LABEL, --abort LABEL, or --rollback when neither is given: the model's new entry, once written
    (one PutObject of the index)."""
    bucket, prefix = parse_s3_url(url)

    def change(models: dict[str, PublishedEntry]) -> dict[str, PublishedEntry]:
        if promote:
            return promoted(models, name, promote)
        return aborted(models, name, abort) if abort else rolled_back(models, name)
    try:
        models = update_index(client, bucket, prefix, change)
    except S3Error as exc:
        raise PublishError(str(exc)) from exc
    return models[name]


def update_index(client: S3Client, bucket: str, prefix: str,
                 change: Callable[[dict[str, PublishedEntry]], dict[str, PublishedEntry]]
                 ) -> dict[str, PublishedEntry]:
    """`change` applied to the current index and written with a compare-and-swap on its ETag (one PutObject),
    again on the newer index when another publisher wrote meanwhile."""
    key = prefix + INDEX_FILE
    for _ in range(INDEX_ATTEMPTS):
        try:
            current = client.get_object(bucket, key)
        except S3Error as exc:
            if exc.code != "NoSuchKey":
                raise
            current = None
        try:
            models = parse_index(current.body, f"s3://{bucket}/{key}") if current else {}
        except ModelIndexError as exc:
            raise PublishError(f"{exc}; refusing to overwrite it") from exc
        try:
            models = change(models)
        except RolloutError as exc:
            raise PublishError(str(exc)) from exc
        try:
            client.put_object(bucket, key, index_bytes(models), "application/json",
                              if_match=current.etag if current else None, if_none_match=None if current else "*")
            return models
        except S3Error as exc:
            if exc.status not in (409, 412):  # 412: someone published meanwhile; 409: a concurrent first write
                raise
    raise PublishError(f"s3://{bucket}/{key} kept changing under {INDEX_ATTEMPTS} attempts: publish again")


def main(argv: list[str] | None = None, prog: str = "python -m convert publish") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model_dir", metavar="MODEL_DIR", type=Path, nargs="?",
                        help="a converted model directory (not with --promote or --rollback)")
    parser.add_argument("url", metavar="s3://BUCKET/PREFIX/", help="where the function's MODEL_SOURCE points")
    parser.add_argument("--label", default=STABLE, help="the label the version is published under (default: "
                        "stable, the version requests naming none get)")
    parser.add_argument("--weight", type=int, help="with a label other than stable: the percent of the requests "
                        "naming no version it answers, chosen by a hash of their input")
    parser.add_argument("--model", help="the published model --promote or --rollback changes")
    change = parser.add_mutually_exclusive_group()
    change.add_argument("--promote", metavar="LABEL", help="make the version under LABEL the stable one (the old "
                        "stable kept for --rollback)")
    change.add_argument("--rollback", action="store_true", help="serve the previous stable version again")
    change.add_argument("--abort", metavar="LABEL", help="take LABEL and its weight away (a canary stopped): the "
                        "stable version answers every request naming no version again")
    args = parser.parse_args(argv)
    changing = args.promote is not None or args.rollback or args.abort is not None
    if changing and (args.model_dir is not None or args.model is None or args.weight is not None
                     or args.label != STABLE):
        parser.error("--promote, --rollback and --abort take the URL and --model NAME only")
    if not changing and (args.model_dir is None or args.model is not None):
        parser.error("publishing takes MODEL_DIR and the URL (--model goes with --promote or --rollback)")
    from function.aws.s3 import client_from_environment  # noqa: PLC0415

    try:
        if not args.url.startswith("s3://"):
            raise PublishError(f"{args.url!r} is not an s3://bucket/prefix/ URL")
        if changing:
            entry = change_labels(args.url, client_from_environment(), args.model, args.promote, args.abort)
            labels = ", ".join(f"{label} {version[:12]}" for label, version in sorted(entry.labels.items()))
            print(f"{args.model}: stable is now version {entry.stable.version[:12]}; labels: {labels or 'none'}")
            return 0
        result = publish(args.model_dir, args.url, client_from_environment(), args.label, args.weight)
    except (PublishError, RuntimeError, ValueError, OSError) as exc:
        print(f"convert publish: error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    print(result.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
