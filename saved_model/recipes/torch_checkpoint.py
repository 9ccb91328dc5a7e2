"""Read a legacy-format PyTorch checkpoint (`torch.save` before 1.6: a stream of pickles, then raw storages)
into numpy arrays, without torch and without letting the pickle call anything but a few known rebuilders.

Layout of the legacy stream: magic number, protocol version, system info, the object pickle (tensors refer to
storages by key through persistent ids), the list of storage keys, then each storage as an int64 element count
followed by its raw bytes, in that order.
"""
from __future__ import annotations

import collections
import pickle
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

LEGACY_MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL_VERSION = 1001

# torch storage classes -> the numpy dtype of their elements.
STORAGE_DTYPES = {
    "DoubleStorage": np.float64,
    "FloatStorage": np.float32,
    "HalfStorage": np.float16,
    "LongStorage": np.int64,
    "IntStorage": np.int32,
    "ShortStorage": np.int16,
    "CharStorage": np.int8,
    "ByteStorage": np.uint8,
    "BoolStorage": np.bool_,
}


class CheckpointError(ValueError):
    """The file is not a legacy PyTorch checkpoint this reader can open safely."""


class ForbiddenGlobalError(CheckpointError, pickle.UnpicklingError):
    """The pickle names a global outside the allow-list (it could run arbitrary code)."""


@dataclass(frozen=True)
class StorageType:
    name: str
    dtype: type


@dataclass
class StorageRef:
    """A storage named in the pickle; its bytes come later in the stream."""

    key: str
    dtype: np.dtype
    numel: int
    view: tuple[str, int, int] | None = None  # (root key, element offset, element count) for storage views


@dataclass
class TensorRef:
    storage: StorageRef
    offset: int
    shape: tuple[int, ...]
    stride: tuple[int, ...]


def rebuild_tensor(storage, storage_offset, size, stride, *_ignored) -> TensorRef:
    # Covers _rebuild_tensor and _rebuild_tensor_v2 (extra args: requires_grad, hooks, metadata: irrelevant here).
    return TensorRef(storage, int(storage_offset), tuple(size), tuple(stride))


def rebuild_parameter(data, *_ignored):
    return data


ALLOWED_GLOBALS = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("torch._utils", "_rebuild_tensor"): rebuild_tensor,
    ("torch._utils", "_rebuild_tensor_v2"): rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): rebuild_parameter,
    **{("torch", name): StorageType(name, dtype) for name, dtype in STORAGE_DTYPES.items()},
}


class RestrictedUnpickler(pickle.Unpickler):
    """Resolves only ALLOWED_GLOBALS; storages become StorageRef placeholders."""

    def find_class(self, module: str, name: str):
        try:
            return ALLOWED_GLOBALS[(module, name)]
        except KeyError:
            raise ForbiddenGlobalError(
                f"checkpoint refers to {module}.{name}, which this reader refuses (not a tensor or storage type)"
            ) from None

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and pid and pid[0] == "storage" and len(pid) == 6):
            raise CheckpointError(f"unsupported persistent id in checkpoint: {pid!r:.80}")
        _, storage_type, key, _location, numel, view_metadata = pid
        if not isinstance(storage_type, StorageType):
            raise CheckpointError(f"persistent id names no storage type: {storage_type!r:.80}")
        ref = StorageRef(str(key), np.dtype(storage_type.dtype), int(numel))
        if view_metadata is not None:
            view_key, view_offset, view_size = view_metadata
            ref.view = (str(key), int(view_offset), int(view_size))
            ref.key = str(view_key)
        return ref


def read_storages(stream: BinaryIO, keys: list[str], refs: dict[str, StorageRef]) -> dict[str, np.ndarray]:
    storages = {}
    for key in keys:
        ref = refs.get(key)
        if ref is None:
            raise CheckpointError(f"storage {key!r} is stored but no tensor refers to it")
        header = stream.read(8)
        if len(header) != 8:
            raise CheckpointError(f"checkpoint ends before storage {key!r}")
        numel = int(np.frombuffer(header, dtype="<i8")[0])
        nbytes = numel * ref.dtype.itemsize
        data = stream.read(nbytes)
        if len(data) != nbytes:
            raise CheckpointError(f"checkpoint ends inside storage {key!r}")
        storages[key] = np.frombuffer(data, dtype=ref.dtype.newbyteorder("<"))
    return storages


def materialize(value, storages: dict[str, np.ndarray]):
    """Replace every TensorRef inside dicts/lists/tuples by a C-contiguous numpy array."""
    if isinstance(value, TensorRef):
        ref = value.storage
        if ref.view is not None:
            root_key, view_offset, view_size = ref.view
            flat = storages[root_key][view_offset : view_offset + view_size]
        else:
            flat = storages[ref.key]
        needed = value.offset + sum((n - 1) * s for n, s in zip(value.shape, value.stride)) + 1
        if any(n == 0 for n in value.shape):
            return np.zeros(value.shape, dtype=flat.dtype)
        if needed > flat.size:
            raise CheckpointError(f"tensor of shape {value.shape} reaches past its storage ({flat.size} elements)")
        itemsize = flat.dtype.itemsize
        view = np.lib.stride_tricks.as_strided(
            flat[value.offset :], shape=value.shape, strides=tuple(s * itemsize for s in value.stride)
        )
        return np.array(view, dtype=flat.dtype.newbyteorder("="), order="C", copy=True)
    if isinstance(value, dict):
        return type(value)((k, materialize(v, storages)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return type(value)(materialize(v, storages) for v in value)
    return value


def collect_storage_refs(value, refs: dict[str, StorageRef]) -> None:
    if isinstance(value, TensorRef):
        ref = value.storage
        refs.setdefault(ref.view[0] if ref.view else ref.key, ref)
    elif isinstance(value, dict):
        for v in value.values():
            collect_storage_refs(v, refs)
    elif isinstance(value, (list, tuple)):
        for v in value:
            collect_storage_refs(v, refs)


def load_stream(stream: BinaryIO):
    def next_pickle():
        try:
            return RestrictedUnpickler(stream).load()
        except (ForbiddenGlobalError, CheckpointError):
            raise
        except Exception as exc:  # a truncated or foreign file: say so in one line
            raise CheckpointError(f"not a legacy PyTorch checkpoint ({type(exc).__name__}: {exc})") from None

    if next_pickle() != LEGACY_MAGIC_NUMBER:
        raise CheckpointError("not a legacy PyTorch checkpoint (magic number missing)")
    if next_pickle() != LEGACY_PROTOCOL_VERSION:
        raise CheckpointError("unsupported PyTorch checkpoint protocol version")
    sys_info = next_pickle()
    if not (isinstance(sys_info, dict) and sys_info.get("little_endian", False)):
        raise CheckpointError("only little-endian checkpoints are supported")
    result = next_pickle()
    keys = next_pickle()
    if not isinstance(keys, list):
        raise CheckpointError("storage key list missing after the object pickle")
    refs: dict[str, StorageRef] = {}
    collect_storage_refs(result, refs)
    return materialize(result, read_storages(stream, [str(k) for k in keys], refs))


def load_checkpoint(path: Path | str):
    """Everything the checkpoint holds (usually a state dict name -> array), tensors as numpy arrays."""
    path = Path(path)
    if zipfile.is_zipfile(path):
        raise CheckpointError(f"{path.name} is a zip-format (torch >= 1.6) checkpoint; only the legacy format is read")
    with path.open("rb") as stream:
        return load_stream(stream)
