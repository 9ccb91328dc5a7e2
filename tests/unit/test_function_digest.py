"""function/digest.py: the builtin sha256 below SMALL_BYTES and OpenSSL's above give hashlib's digest exactly, whole
or in parts, so a cache key or a model version never depends on which one computed it."""
from __future__ import annotations

import hashlib
import os

import pytest

from function.digest import SMALL_BYTES, hasher, sha256


@pytest.mark.parametrize("size", [0, 1, SMALL_BYTES, SMALL_BYTES + 1, 5 * SMALL_BYTES])
def test_every_size_gives_hashlibs_digest(size):
    data = os.urandom(size)
    assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    assert sha256(data).digest() == hashlib.sha256(data).digest()
    parts = hasher(size)
    for start in range(0, size, 7000):
        parts.update(data[start:start + 7000])
    assert parts.hexdigest() == hashlib.sha256(data).hexdigest()


def test_small_inputs_do_not_go_through_openssl():
    openssl = type(hashlib.sha256(b"x"))  # _hashlib.HASH
    assert type(sha256(b"x" * SMALL_BYTES)) is not openssl
    assert type(sha256(b"x" * (SMALL_BYTES + 1))) is openssl
