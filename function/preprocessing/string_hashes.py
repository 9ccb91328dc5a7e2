"""The two string hashes Keras's Hashing layer (and a lookup's several OOV indices) bucket values with, in plain
Python, bit for bit as TensorFlow computes them:
- `fingerprint64`: FarmHash's Fingerprint64 (its "na" Hash64, seed 81), what `tf.strings.to_hash_bucket_fast`
  takes modulo the number of buckets;
- `siphash`: SipHash-2-4 under a 128-bit key given as two 64-bit words, what `tf.strings.to_hash_bucket_strong`
  takes modulo the number of buckets (the layer's `salt`).
Both are specified in their authors' published papers and reference code; this is an independent rendering of the
specifications, checked against TensorFlow's own ops on strings of every length class (tests/unit).
"""
from __future__ import annotations

MASK = (1 << 64) - 1
K0 = 0xC3A5C85C97CB3127
K1 = 0xB492B66FBE98F273
K2 = 0x9AE16A3B2F90404F


def _fetch64(data: bytes, at: int) -> int:
    return int.from_bytes(data[at:at + 8], "little")


def _fetch32(data: bytes, at: int) -> int:
    return int.from_bytes(data[at:at + 4], "little")


def _rotate(value: int, shift: int) -> int:
    """Right rotation of a 64-bit word."""
    return ((value >> shift) | (value << (64 - shift))) & MASK if shift else value


def _shift_mix(value: int) -> int:
    return value ^ (value >> 47)


def _hash16(u: int, v: int, mul: int) -> int:
    a = ((u ^ v) * mul) & MASK
    a ^= a >> 47
    b = ((v ^ a) * mul) & MASK
    b ^= b >> 47
    return (b * mul) & MASK


def _len0to16(data: bytes) -> int:
    length = len(data)
    if length >= 8:
        mul = (K2 + length * 2) & MASK
        a = (_fetch64(data, 0) + K2) & MASK
        b = _fetch64(data, length - 8)
        c = (_rotate(b, 37) * mul + a) & MASK
        d = ((_rotate(a, 25) + b) * mul) & MASK
        return _hash16(c, d, mul)
    if length >= 4:
        mul = (K2 + length * 2) & MASK
        a = _fetch32(data, 0)
        return _hash16((length + (a << 3)) & MASK, _fetch32(data, length - 4), mul)
    if length > 0:
        a, b, c = data[0], data[length >> 1], data[length - 1]
        y = (a + (b << 8)) & 0xFFFFFFFF
        z = (length + (c << 2)) & 0xFFFFFFFF
        return (_shift_mix(((y * K2) ^ (z * K0)) & MASK) * K2) & MASK
    return K2


def _len17to32(data: bytes) -> int:
    length = len(data)
    mul = (K2 + length * 2) & MASK
    a = (_fetch64(data, 0) * K1) & MASK
    b = _fetch64(data, 8)
    c = (_fetch64(data, length - 8) * mul) & MASK
    d = (_fetch64(data, length - 16) * K2) & MASK
    return _hash16((_rotate((a + b) & MASK, 43) + _rotate(c, 30) + d) & MASK,
                   (a + _rotate((b + K2) & MASK, 18) + c) & MASK, mul)


def _len33to64(data: bytes) -> int:
    length = len(data)
    mul = (K2 + length * 2) & MASK
    a = (_fetch64(data, 0) * K2) & MASK
    b = _fetch64(data, 8)
    c = (_fetch64(data, length - 8) * mul) & MASK
    d = (_fetch64(data, length - 16) * K2) & MASK
    y = (_rotate((a + b) & MASK, 43) + _rotate(c, 30) + d) & MASK
    z = _hash16(y, (a + _rotate((b + K2) & MASK, 18) + c) & MASK, mul)
    e = (_fetch64(data, 16) * mul) & MASK
    f = _fetch64(data, 24)
    g = ((y + _fetch64(data, length - 32)) * mul) & MASK
    h = ((z + _fetch64(data, length - 24)) * mul) & MASK
    return _hash16((_rotate((e + f) & MASK, 43) + _rotate(g, 30) + h) & MASK,
                   (e + _rotate((f + a) & MASK, 18) + g) & MASK, mul)


def _weak32(data: bytes, at: int, a: int, b: int) -> tuple[int, int]:
    w, x, y, z = (_fetch64(data, at + offset) for offset in (0, 8, 16, 24))
    a = (a + w) & MASK
    b = _rotate((b + a + z) & MASK, 21)
    c = a
    a = (a + x + y) & MASK
    b = (b + _rotate(a, 44)) & MASK
    return (a + z) & MASK, (b + c) & MASK


def fingerprint64(data: bytes) -> int:
    """FarmHash Fingerprint64 of `data` (an unsigned 64-bit integer)."""
    length = len(data)
    if length <= 16:
        return _len0to16(data)
    if length <= 32:
        return _len17to32(data)
    if length <= 64:
        return _len33to64(data)
    seed = 81
    x = seed
    y = (seed * K1 + 113) & MASK
    z = (_shift_mix((y * K2 + 113) & MASK) * K2) & MASK
    v = (0, 0)
    w = (0, 0)
    x = (x * K2 + _fetch64(data, 0)) & MASK
    end = ((length - 1) // 64) * 64
    last64 = end + ((length - 1) & 63) - 63
    at = 0
    while True:
        x = (_rotate((x + y + v[0] + _fetch64(data, at + 8)) & MASK, 37) * K1) & MASK
        y = (_rotate((y + v[1] + _fetch64(data, at + 48)) & MASK, 42) * K1) & MASK
        x ^= w[1]
        y = (y + v[0] + _fetch64(data, at + 40)) & MASK
        z = (_rotate((z + w[0]) & MASK, 33) * K1) & MASK
        v = _weak32(data, at, (v[1] * K1) & MASK, (x + w[0]) & MASK)
        w = _weak32(data, at + 32, (z + w[1]) & MASK, (y + _fetch64(data, at + 16)) & MASK)
        z, x = x, z
        at += 64
        if at == end:
            break
    mul = (K1 + ((z & 0xFF) << 1)) & MASK
    at = last64
    w = ((w[0] + ((length - 1) & 63)) & MASK, w[1])
    v = ((v[0] + w[0]) & MASK, v[1])
    w = ((w[0] + v[0]) & MASK, w[1])
    x = (_rotate((x + y + v[0] + _fetch64(data, at + 8)) & MASK, 37) * mul) & MASK
    y = (_rotate((y + v[1] + _fetch64(data, at + 48)) & MASK, 42) * mul) & MASK
    x ^= (w[1] * 9) & MASK
    y = (y + v[0] * 9 + _fetch64(data, at + 40)) & MASK
    z = (_rotate((z + w[0]) & MASK, 33) * mul) & MASK
    v = _weak32(data, at, (v[1] * mul) & MASK, (x + w[0]) & MASK)
    w = _weak32(data, at + 32, (z + w[1]) & MASK, (y + _fetch64(data, at + 16)) & MASK)
    z, x = x, z
    return _hash16((_hash16(v[0], w[0], mul) + _shift_mix(y) * K0 + z) & MASK,
                   (_hash16(v[1], w[1], mul) + x) & MASK, mul)


def _rotl(value: int, shift: int) -> int:
    return ((value << shift) | (value >> (64 - shift))) & MASK


def _sip_rounds(v: list[int], count: int) -> None:
    for _ in range(count):
        v[0] = (v[0] + v[1]) & MASK
        v[1] = _rotl(v[1], 13) ^ v[0]
        v[0] = _rotl(v[0], 32)
        v[2] = (v[2] + v[3]) & MASK
        v[3] = _rotl(v[3], 16) ^ v[2]
        v[0] = (v[0] + v[3]) & MASK
        v[3] = _rotl(v[3], 21) ^ v[0]
        v[2] = (v[2] + v[1]) & MASK
        v[1] = _rotl(v[1], 17) ^ v[2]
        v[2] = _rotl(v[2], 32)


def siphash(key: tuple[int, int], data: bytes) -> int:
    """SipHash-2-4 of `data` under the 128-bit key (k0, k1) (an unsigned 64-bit integer)."""
    k0, k1 = key[0] & MASK, key[1] & MASK
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D, k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]
    whole = len(data) - len(data) % 8
    for at in range(0, whole, 8):
        word = _fetch64(data, at)
        v[3] ^= word
        _sip_rounds(v, 2)
        v[0] ^= word
    last = ((len(data) & 0xFF) << 56) | int.from_bytes(data[whole:], "little")
    v[3] ^= last
    _sip_rounds(v, 2)
    v[0] ^= last
    v[2] ^= 0xFF
    _sip_rounds(v, 4)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def hash_bucket(text: str, buckets: int, key: tuple[int, int] | None = None) -> int:
    """tf.strings.to_hash_bucket_fast (no key) or _strong (a key) of one UTF-8 string."""
    data = text.encode("utf-8")
    return (fingerprint64(data) if key is None else siphash(key, data)) % buckets
