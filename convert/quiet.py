"""Silence native (C++) writes to stderr around noisy TensorFlow calls; Python exceptions still carry the details."""
from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator


@contextlib.contextmanager
def quiet_native_stderr() -> Iterator[None]:
    """TensorFlow's import and converter print pages of absl/MLIR logs to fd 2, which Python cannot filter."""
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def import_tensorflow():
    """`import tensorflow` without its start-up chatter (oneDNN notes, absl warnings)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    with quiet_native_stderr():
        import tensorflow as tf  # noqa: PLC0415  (6-9 s: imported only when a conversion really starts)
    return tf
