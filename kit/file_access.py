"""Every file a process tree opens, recorded by strace (Debian's, installed by tools/install-test-deps.sh).

Python's own opens and the native code's alike: LiteRT, numpy and Pillow load their shared objects with dlopen, which
opens a file before it maps it, so "opened" covers "opened or mapped". Used by tests/e2e/test_runtime_prune.py (no
route touches a pruned file) and by the benchmark's cold-start bytes:

    log = tmp_path / "opens.log"
    with LambdaRuntime(task_root, command_prefix=strace_prefix(log)) as runtime:
        runtime.invoke(event)
    opened_files(log)  # {Path, ...}: every regular file opened successfully, as the kernel resolved it
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

STRACE = shutil.which("strace") or "/usr/bin/strace"
# -z: successful calls only; -y: each returned descriptor with the path the kernel resolved (symlinks, dirfds).
OPENED = re.compile(r"^\d+\s+(?:open|openat|openat2)\(.*\)\s+=\s+\d+<(?P<path>.+)>$")


class StraceMissing(RuntimeError):
    """strace is not installed: tools/install-test-deps.sh installs Debian's strace when it runs as root."""


def strace_prefix(log: Path) -> tuple[str, ...]:
    """The command prefix that records, for the whole process tree, every successful open into `log`."""
    if not Path(STRACE).exists():
        raise StraceMissing("strace not found: run `bash tools/install-test-deps.sh` as root (Debian's strace)")
    return (STRACE, "-f", "-qq", "-z", "-y", "-e", "trace=open,openat,openat2", "-e", "signal=none",
            "-o", str(Path(log).resolve()))


def opened_files(log: Path) -> set[Path]:
    """Regular files opened successfully (directories, pipes, sockets and /proc left out)."""
    opened = set()
    for line in Path(log).read_text(encoding="utf-8", errors="replace").splitlines():
        match = OPENED.match(line)
        if match:
            path = Path(match.group("path"))
            if not str(path).startswith(("/proc/", "/dev/", "/sys/")) and path.is_file():
                opened.add(path)
    return opened


def under(files: set[Path], root: Path) -> set[Path]:
    """The files below root, relative to it."""
    root = Path(root).resolve()
    return {path.relative_to(root) for path in files if root in path.parents}
