"""Write OUT_DIR all at once: build it in a hidden sibling, then swap it in, so a failure leaves the old one intact."""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from convert.errors import ConversionError

MARKER = "manifest.json"  # a directory holding one is a previous conversion, safe to replace


def _directory_mode() -> int:
    """What a plain mkdir would give: mkdtemp's 0700 would hide the model from the non-root user Lambda runs as."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o777 & ~umask


def check_replaceable(out_dir: Path) -> None:
    """Refuse to replace anything but an empty directory or an earlier conversion (never a user's folder)."""
    if not out_dir.exists():
        return
    if not out_dir.is_dir():
        raise ConversionError("bad_out_dir", f"{out_dir} is a file: choose a directory for the converted model")
    if any(out_dir.iterdir()) and not (out_dir / MARKER).is_file():
        raise ConversionError("bad_out_dir", f"{out_dir} already holds files that are not a converted model: "
                              "choose a new or empty directory")


@contextlib.contextmanager
def staged_output_dir(out_dir: Path) -> Iterator[Path]:
    """Yields an empty directory to fill; on success it becomes out_dir, on any exception it disappears."""
    check_replaceable(out_dir)
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
