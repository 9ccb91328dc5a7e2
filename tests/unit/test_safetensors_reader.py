"""The numpy-only safetensors reader against files written by hand to the published layout."""
import json
import struct

import numpy as np
import pytest

from convert.transformer.safetensors_reader import SafetensorsError, load_tensors


def write_safetensors(path, tensors: dict[str, np.ndarray], dtype_names: dict[str, str]):
    header, chunks, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, array in tensors.items():
        data = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": dtype_names[name], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    encoded = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(encoded)) + encoded + b"".join(chunks))


def test_reads_every_tensor_with_its_shape_dtype_and_values(tmp_path):
    matrix = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    ids = np.array([[1, -2, 3]], dtype=np.int64)
    write_safetensors(tmp_path / "m.safetensors", {"w": matrix, "ids": ids}, {"w": "F32", "ids": "I64"})

    tensors = load_tensors(tmp_path / "m.safetensors")

    assert set(tensors) == {"w", "ids"}
    np.testing.assert_array_equal(tensors["w"], matrix)
    np.testing.assert_array_equal(tensors["ids"], ids)
    assert tensors["ids"].dtype == np.int64


def test_reads_only_the_named_tensors(tmp_path):
    write_safetensors(tmp_path / "m.safetensors", {"a": np.ones(2, np.float16), "b": np.zeros(3, np.float32)},
                      {"a": "F16", "b": "F32"})
    assert list(load_tensors(tmp_path / "m.safetensors", ["a"])) == ["a"]


def test_unknown_tensor_name_is_a_clear_error(tmp_path):
    write_safetensors(tmp_path / "m.safetensors", {"a": np.ones(2, np.float32)}, {"a": "F32"})
    with pytest.raises(SafetensorsError, match="no tensor named 'missing'"):
        load_tensors(tmp_path / "m.safetensors", ["missing"])


def test_byte_range_that_disagrees_with_the_shape_is_rejected(tmp_path):
    write_safetensors(tmp_path / "m.safetensors", {"a": np.ones(4, np.float32)}, {"a": "F32"})
    raw = (tmp_path / "m.safetensors").read_bytes()
    (tmp_path / "bad.safetensors").write_bytes(raw.replace(b'"shape": [4]', b'"shape": [5]'))
    with pytest.raises(SafetensorsError, match="does not match its shape"):
        load_tensors(tmp_path / "bad.safetensors")


def test_a_file_that_is_not_safetensors_is_rejected(tmp_path):
    (tmp_path / "junk.safetensors").write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00hello")
    with pytest.raises(SafetensorsError, match="header: not valid JSON"):
        load_tensors(tmp_path / "junk.safetensors")
