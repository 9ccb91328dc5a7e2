"""Read a samples .npz (validation.npz, representative.npz) within a memory bound, whatever the file claims.

An .npz is a zip of .npy files. Before numpy allocates anything, every entry's size as the zip declares it (the
most a read of it can return) is summed and held against MAX_NPZ_BYTES, which stops a bomb (kilobytes that inflate
to gigabytes), and every .npy header is parsed and its shape times its item size held against the bytes the entry
holds, which stops a header that claims an enormous shape (numpy would allocate that before reading a byte).
Nothing is unpickled: np.load runs with allow_pickle=False and an object array is refused.
"""
from __future__ import annotations

import math
import zipfile
import zlib
from pathlib import Path

import numpy as np

from convert.errors import ConversionError

MAX_NPZ_BYTES = 2 * 1024 ** 3  # docs/model-format.md: the arrays of one .npz, uncompressed, together
OBJECT_ARRAY_FIX = ("save images as raw_images (every image's uint8 pixels, flattened and concatenated) + "
                    "raw_image_shapes (N, 3), texts as np.array(list_of_str) (docs/model-format.md)")


def _bad(path: Path, problem: str) -> ConversionError:
    return ConversionError("bad_samples", f"{path.name}: {problem}")


def _check_npy_entry(path: Path, archive: zipfile.ZipFile, entry: zipfile.ZipInfo) -> None:
    """The entry's header, read without reading its data: an object dtype or a shape larger than the entry."""
    key = entry.filename.removesuffix(".npy")
    with archive.open(entry) as stream:
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(stream)
        else:
            shape, _, dtype = np.lib.format.read_array_header_2_0(stream)
        header_bytes = stream.tell()
    if dtype.hasobject:
        raise _bad(path, f"{key} is an object array, which would need pickle: {OBJECT_ARRAY_FIX}")
    claimed = math.prod(shape) * dtype.itemsize
    held = entry.file_size - header_bytes
    if claimed > held:
        raise _bad(path, f"{key}'s header claims shape {shape} of {dtype} ({claimed:,} bytes) but the entry holds "
                         f"{max(held, 0):,} bytes: save it again with np.savez")


def _check_archive(path: Path) -> None:
    with zipfile.ZipFile(path) as archive:
        entries = archive.infolist()
        declared = sum(entry.file_size for entry in entries)
        if declared > MAX_NPZ_BYTES:
            raise _bad(path, f"its arrays hold {declared:,} bytes uncompressed, more than the "
                             f"{MAX_NPZ_BYTES:,} convert reads: save fewer samples")
        for entry in entries:
            if entry.filename.endswith(".npy"):
                _check_npy_entry(path, archive, entry)


def _read(path: Path, take):
    """take(the open NpzFile), once the whole file has passed the checks; a ConversionError("bad_samples") saying
    what is wrong with the file otherwise."""
    if not path.is_file():
        raise ConversionError("bad_samples", f"{path} does not exist: pass an .npz with inputs_<role> arrays")
    try:
        _check_archive(path)
        with np.load(path, allow_pickle=False) as archive:
            return take(archive)
    except ConversionError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as error:
        raise _bad(path, f"not a readable .npz file ({error})") from None
    except (RuntimeError, NotImplementedError) as error:  # zipfile: an encrypted entry, an unknown compression
        raise _bad(path, f"not a readable .npz file ({error}): save it with np.savez or np.savez_compressed") from None


def read_arrays(path: Path, keys: tuple[str, ...] | None = None) -> dict[str, np.ndarray]:
    """The arrays of the .npz at `path`: those of `keys` it holds, or all."""
    return _read(path, lambda archive: {key: archive[key] for key in archive.files if keys is None or key in keys})


def array_names(path: Path) -> set[str]:
    """The names of the arrays the .npz at `path` holds, none of them read."""
    return _read(path, lambda archive: set(archive.files))
