"""Read tensors from a `.safetensors` file with numpy alone (no torch, no safetensors package).

The format is an 8-byte little-endian header length, a JSON header mapping each tensor name to its dtype,
shape and byte range in the data block that follows, then the raw little-endian data.
"""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from convert.errors import ConversionError
from convert.json_file import parse_json

_DTYPES = {
    "F64": np.float64, "F32": np.float32, "F16": np.float16,
    "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_,
}


class SafetensorsError(ValueError):
    """The file is not a readable safetensors file."""


def read_header(path: Path) -> tuple[dict, int]:
    """(header without `__metadata__`, offset where the data block starts)."""
    with open(path, "rb") as f:
        prefix = f.read(8)
        if len(prefix) != 8:
            raise SafetensorsError(f"{path}: too short to be a safetensors file")
        (length,) = struct.unpack("<Q", prefix)
        if length > 100_000_000:
            raise SafetensorsError(f"{path}: implausible header length {length}")
        try:
            header = parse_json(f.read(length), f"{path}: header", "header", "not a safetensors file", max_depth=3)
        except ConversionError as error:
            raise SafetensorsError(error.message) from None
    if not isinstance(header, dict):
        raise SafetensorsError(f"{path}: header is not a JSON object")
    header.pop("__metadata__", None)
    return header, 8 + length


def load_tensors(path: Path, names: list[str] | None = None) -> dict[str, np.ndarray]:
    """The named tensors (all when `names` is None) as numpy arrays in native byte order."""
    path = Path(path)
    header, data_start = read_header(path)
    wanted = list(header) if names is None else names
    missing = [n for n in wanted if n not in header]
    if missing:
        raise SafetensorsError(f"{path}: no tensor named {missing[0]!r}")
    # Memory-mapped so reading a few tensors of a large file touches only their bytes.
    blob = np.memmap(path, dtype=np.uint8, mode="r", offset=data_start)
    tensors = {}
    for name in wanted:
        entry = header[name]
        if entry["dtype"] not in _DTYPES:
            raise SafetensorsError(f"{path}: tensor {name!r} has unsupported dtype {entry['dtype']}")
        dtype = np.dtype(_DTYPES[entry["dtype"]]).newbyteorder("<")
        begin, end = entry["data_offsets"]
        shape = tuple(entry["shape"])
        expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if end - begin != expected or end > blob.size:
            raise SafetensorsError(f"{path}: tensor {name!r} byte range does not match its shape {shape}")
        array = np.frombuffer(blob[begin:end].tobytes(), dtype=dtype).reshape(shape)
        tensors[name] = array.astype(dtype.newbyteorder("="))
    return tensors
