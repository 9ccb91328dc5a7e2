"""Hands back the resident pages of a model file once the interpreter no longer reads them.

LiteRT maps the .tflite file and XNNPACK packs the weights into memory of its own on the first invoke: from then on
the mapped pages are a second, unread copy that still counts in the process's RSS. Dropping them is safe because the
mappings are read-only: a page an undelegated op does read faults back in from the page cache. Handing them back
takes about 1 ms (mostly the kernel unmapping them), so it waits for the next call of any model
(function/model/runner.py): a cold start's first answer does not pay it, nor imports this module, and a model
loaded later packs its weights with the earlier files already handed back."""
from __future__ import annotations

import os

MAPS = "/proc/self/maps"
MADV_DONTNEED = 4  # Linux's value on x86_64 and arm64


def read_only_mappings(path: str, maps: str = MAPS) -> list[tuple[int, int]]:
    """(start, end) of every mapping of the file at `path` that this process cannot write."""
    target, spans = os.path.realpath(path), []
    try:
        with open(maps) as lines:
            for line in lines:
                fields = line.split(maxsplit=5)
                if len(fields) == 6 and fields[1][1] == "-" and fields[5].rstrip("\n") == target:
                    start, end = fields[0].split("-")
                    spans.append((int(start, 16), int(end, 16)))
    except OSError:  # no /proc (macOS, a sandbox): nothing to hand back
        return []
    return spans


def release_file_pages(path: str) -> int:
    """Advises the kernel that this process no longer needs the file's mapped pages; returns the bytes advised."""
    spans = read_only_mappings(path)
    if not spans:
        return 0
    import ctypes  # noqa: PLC0415 (numpy has loaded it already: no import cost)

    madvise = ctypes.CDLL(None, use_errno=True).madvise
    madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    return sum(end - start for start, end in spans if madvise(start, end - start, MADV_DONTNEED) == 0)

