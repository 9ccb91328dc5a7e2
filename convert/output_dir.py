"""Write OUT_DIR all at once: build it in a hidden sibling, then swap it in, so a failure leaves the old one intact."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from convert.errors import ConversionError

MARKER = "manifest.json"  # a directory holding one is a previous conversion, safe to replace
REPORT_PREFIX = "report."  # report.json, report.md, report.samples.npz, report.html: for people, never served


def _directory_mode() -> int:
    """What a plain mkdir would give: mkdtemp's 0700 would hide the model from the non-root user Lambda runs as."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o777 & ~umask


def check_replaceable(out_dir: Path, marker: str = MARKER, what: str = "converted model") -> None:
    """Refuse to replace anything but an empty directory or an earlier output, recognised by its marker file
    (never a user's folder)."""
    if not out_dir.exists():
        return
    if not out_dir.is_dir():
        raise ConversionError("bad_out_dir", f"{out_dir} is a file: choose a directory for the {what}")
    if any(out_dir.iterdir()) and not (out_dir / marker).is_file():
        raise ConversionError("bad_out_dir", f"{out_dir} already holds files that are not a {what}: "
                              "choose a new or empty directory")


@contextlib.contextmanager
def staged_output_dir(out_dir: Path, marker: str = MARKER, what: str = "converted model") -> Iterator[Path]:
    """Yields an empty directory to fill; on success it becomes out_dir, on any exception it disappears.
    Also how saved_model/ writes a demo SavedModel (marker sidecar.json)."""
    check_replaceable(out_dir, marker, what)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.staging-", dir=out_dir.parent))
    try:
        staging.chmod(_directory_mode())
        yield staging
        previous = None
        if out_dir.exists():
            previous = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.previous-", dir=out_dir.parent))
            out_dir.rename(previous / "model")
        try:
            staging.rename(out_dir)
        except OSError:
            if previous is not None:
                (previous / "model").rename(out_dir)
            raise
        if previous is not None:
            shutil.rmtree(previous, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def is_report_file(name: str) -> bool:
    return name.startswith(REPORT_PREFIX)


def served_mode_in(out_dir: Path) -> str | None:
    """The quantization of the model an earlier conversion left in out_dir, or None when it holds no model."""
    manifest = out_dir / MARKER
    if not manifest.is_file():
        return None
    try:
        mode = json.loads(manifest.read_text(encoding="utf-8"))["quantization"]
    except (OSError, ValueError, KeyError, TypeError):
        mode = None
    if not isinstance(mode, str):
        raise ConversionError("bad_out_dir", f"{manifest} does not say which quantization the model there has: "
                              "pass --quantization MODE to replace it with a new conversion")
    return mode


def carry_over_model(out_dir: Path, staging: Path) -> list[str]:
    """Put out_dir's model files (everything but its report files) into staging unchanged, hard-linked where the
    file system allows (no copy of a large model), so that swapping staging in leaves them byte-identical."""
    kept = []
    for entry in sorted(out_dir.iterdir()):
        if is_report_file(entry.name):
            continue
        if entry.is_dir():
            shutil.copytree(entry, staging / entry.name, symlinks=True)
        else:
            try:
                os.link(entry, staging / entry.name)
            except OSError:
                shutil.copy2(entry, staging / entry.name)
        kept.append(entry.name)
    return kept
