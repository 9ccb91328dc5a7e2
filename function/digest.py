"""sha256 of what the function digests per request or once per model (inputs, cache keys, checksums, a model's
serving version), without loading OpenSSL for it on a cold start.

hashlib's OpenSSL costs 2-2.5 ms to import; CPython's own sha256 (`_sha2`) 0.3 ms, but it hashes 5x slower
per byte here (330 MB/s against 1.8 GB/s with the CPU's SHA instructions). So up to SMALL_BYTES goes through the
builtin (at most ~80 us more than OpenSSL would take), and anything larger (a photo) through OpenSSL, imported on
the first one. Both are sha256: the digest is the same either way. Model files are hashed by hashlib directly
(function/model/files.py), as they are large.
"""
from __future__ import annotations

try:
    from _sha2 import sha256 as _builtin_sha256  # Python 3.12+
except ImportError:
    try:
        from _sha256 import sha256 as _builtin_sha256  # Python 3.11
    except ImportError:  # a Python built without its own hashes: OpenSSL's is then the only one
        from hashlib import sha256 as _builtin_sha256

SMALL_BYTES = 32 * 1024


def sha256(data: bytes):
    """A sha256 hash object of `data` (call .hexdigest() or .digest())."""
    digest = hasher(len(data))
    digest.update(data)
    return digest


def hasher(size: int):
    """An empty sha256 hash object, for `size` bytes given to it in parts."""
    if size <= SMALL_BYTES:
        return _builtin_sha256()
    from hashlib import sha256 as openssl_sha256  # noqa: PLC0415  (2 ms once, on the first large input)

    return openssl_sha256()
