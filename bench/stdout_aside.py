"""A bench worker's own output kept apart from the function's log lines, which go to fd 1 as in Lambda."""
from __future__ import annotations

import os


def stdout_aside():
    """A line-buffered copy of the original stdout, for the worker's own output; fd 1 itself (where the function
    logs) now writes to /dev/null."""
    kept = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    return kept
