"""Hostile .npz files for convert's samples reader: .npy headers that lie about their shape or need pickle, and a
zip bomb (megabytes on disk that inflate to gigabytes), each built in about a second without inflating anything."""
from __future__ import annotations

import io
import struct
import zipfile
import zlib
from pathlib import Path

import numpy as np

CHUNK = 1 << 24  # 16 MiB of zeros, compressed once and repeated


def npy_header(shape: tuple[int, ...], descr: str = "<f4") -> bytes:
    """A valid version 1.0 .npy header for `shape`, with no data after it."""
    stream = io.BytesIO()
    np.lib.format.write_array_header_1_0(stream, {"descr": descr, "fortran_order": False, "shape": shape})
    return stream.getvalue()


def write_npz(path: Path, entries: dict[str, bytes]) -> Path:
    """An .npz whose members are the given .npy bytes, stored as they are."""
    with zipfile.ZipFile(path, "w") as archive:
        for key, data in entries.items():
            archive.writestr(f"{key}.npy", data)
    return path


def write_zip_bomb(path: Path, key: str, inflated_bytes: int) -> Path:
    """An .npz with one float32 array of `inflated_bytes` zeros (a multiple of CHUNK), deflated to about a thousandth
    of that. The stream is one compressed CHUNK repeated (a full flush makes each copy independent of the ones before),
    and the zip's two headers are written by hand, CRC and sizes true: a reader that inflates it gets every byte."""
    header = npy_header((inflated_bytes // 4,))
    compressor = zlib.compressobj(1, zlib.DEFLATED, -15)
    head = compressor.compress(header) + compressor.flush(zlib.Z_FULL_FLUSH)
    chunk = compressor.compress(bytes(CHUNK)) + compressor.flush(zlib.Z_FULL_FLUSH)
    tail = compressor.flush()
    copies = inflated_bytes // CHUNK
    crc = zlib.crc32(header)
    zeros = bytes(CHUNK)
    for _ in range(copies):
        crc = zlib.crc32(zeros, crc)
    compressed = len(head) + len(chunk) * copies + len(tail)
    size = len(header) + inflated_bytes
    name = f"{key}.npy".encode()
    fields = (20, 0, zipfile.ZIP_DEFLATED, 0, 0x21, crc, compressed, size, len(name), 0)
    local = struct.pack("<4s5HLLLHH", b"PK\x03\x04", *fields) + name
    central = struct.pack("<4s6HLLL5HLL", b"PK\x01\x02", 20, *fields, 0, 0, 0, 0, 0) + name
    with open(path, "wb") as out:
        out.write(local + head)
        for _ in range(copies):
            out.write(chunk)
        out.write(tail)
        offset = out.tell()
        out.write(central)
        out.write(struct.pack("<4s4HLLH", b"PK\x05\x06", 0, 0, 1, 1, len(central), offset, 0))
    return path
