"""Evicts given files from the kernel's page cache, to time a start whose code is not in memory yet.

A new Lambda host reads the image's files from storage on the first start; a benchmark that runs every stack
several times would otherwise measure only the warm-cache case. posix_fadvise(DONTNEED) drops the clean pages of
exactly these files, nothing else on the machine (unlike /proc/sys/vm/drop_caches).
"""

from __future__ import annotations

import os
from pathlib import Path


def evict(roots: list[Path]) -> int:
    """Drops the cached pages of every regular file under roots; returns how many bytes those files hold."""
    total = 0
    for root in roots:
        for path in root.rglob("*"):
            if not path.is_file() or path.is_symlink():
                continue
            try:
                descriptor = os.open(path, os.O_RDONLY)
            except OSError:
                continue
            try:
                os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
                total += os.fstat(descriptor).st_size
            finally:
                os.close(descriptor)
    return total
