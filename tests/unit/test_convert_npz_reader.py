"""A samples .npz is read within a memory bound: a bomb, a header that claims an enormous shape or needs pickle, and
a file that is no zip are each refused with bad_samples before numpy allocates their arrays."""
from __future__ import annotations

import resource

import numpy as np
import pytest

from convert.errors import ConversionError
from convert.npz_reader import MAX_NPZ_BYTES, array_names, read_arrays
from tests.support.hostile_npz import npy_header, write_npz, write_zip_bomb


def refusal(path) -> str:
    with pytest.raises(ConversionError) as raised:
        read_arrays(path)
    assert raised.value.code == "bad_samples" and raised.value.message.startswith(f"{path.name}: ")
    return raised.value.message


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_reads_every_array_of_an_honest_file(tmp_path):
    np.savez_compressed(tmp_path / "v.npz", inputs_image=np.ones((3, 4, 4, 1), np.float32), labels=np.arange(3))
    arrays = read_arrays(tmp_path / "v.npz")
    assert sorted(arrays) == ["inputs_image", "labels"] and arrays["inputs_image"].shape == (3, 4, 4, 1)


def test_a_bomb_past_the_cap_is_refused_from_its_declared_size(tmp_path):
    bomb = write_zip_bomb(tmp_path / "v.npz", "inputs_image", MAX_NPZ_BYTES)  # + its header: one past the cap
    assert bomb.stat().st_size < MAX_NPZ_BYTES // 100
    before = peak_rss_mib()
    message = refusal(bomb)
    assert f"{MAX_NPZ_BYTES + 128:,} bytes uncompressed, more than the {MAX_NPZ_BYTES:,}" in message
    assert "save fewer samples" in message
    assert peak_rss_mib() - before < 100  # nothing was inflated (ru_maxrss only grows: an upper bound)


def test_a_header_claiming_an_enormous_shape_is_refused_before_any_allocation(tmp_path):
    shape = (100_000_000_000, 8, 8, 1)
    path = write_npz(tmp_path / "v.npz", {"inputs_image": npy_header(shape)})
    message = refusal(path)  # numpy itself would try to allocate 23 TiB (MemoryError)
    assert f"inputs_image's header claims shape {shape} of float32 (25,600,000,000,000 bytes)" in message
    assert "the entry holds 0 bytes" in message


def test_a_header_claiming_more_than_its_data_is_refused(tmp_path):
    data = npy_header((1000,)) + bytes(400)  # 4,000 bytes claimed, 400 held
    assert "(4,000 bytes) but the entry holds 400 bytes" in refusal(write_npz(tmp_path / "v.npz", {"x": data}))


def test_an_object_array_is_refused_without_unpickling(tmp_path):
    path = write_npz(tmp_path / "v.npz", {"raw_texts": npy_header((3,), "|O") + b"cos\nsystem\n(S'exit 1'\ntR."})
    assert "raw_texts is an object array, which would need pickle" in refusal(path)


def test_a_header_too_long_to_parse_safely_is_refused(tmp_path):
    shape_text = "(" + "1," * 20_000 + ")"
    header = f"{{'descr': '<f4', 'fortran_order': False, 'shape': {shape_text}, }}".encode("latin1")
    data = b"\x93NUMPY\x02\x00" + len(header).to_bytes(4, "little") + header
    assert "not a readable .npz file" in refusal(write_npz(tmp_path / "v.npz", {"x": data}))


@pytest.mark.parametrize("content", [b"not a zip", b"PK\x03\x04truncated", b""])
def test_a_file_that_is_no_zip_is_refused(tmp_path, content):
    (tmp_path / "v.npz").write_bytes(content)
    assert "not a readable .npz file" in refusal(tmp_path / "v.npz")


def test_a_missing_file_is_refused(tmp_path):
    with pytest.raises(ConversionError, match="absent.npz does not exist") as raised:
        read_arrays(tmp_path / "absent.npz")
    assert raised.value.code == "bad_samples"


def test_names_and_chosen_arrays_pass_the_same_checks(tmp_path):
    np.savez(tmp_path / "v.npz", expected=np.ones((2, 3)), raw_texts=np.array(["a", "b"]))
    assert array_names(tmp_path / "v.npz") == {"expected", "raw_texts"}
    assert list(read_arrays(tmp_path / "v.npz", ("expected", "labels"))) == ["expected"]
    write_npz(tmp_path / "h.npz", {"expected": npy_header((10 ** 12,))})
    for read in (array_names, lambda path: read_arrays(path, ("labels",))):
        with pytest.raises(ConversionError, match="expected's header claims shape"):
            read(tmp_path / "h.npz")


def flipped(path, local_offset: int, central_offset: int, value=None, bit: int = 0) -> None:
    """The byte at `local_offset` of the local header and at `central_offset` of the central one, OR'd with `bit` or
    set to `value`."""
    data = bytearray(path.read_bytes())
    central = data.rfind(b"PK\x01\x02")
    for at in (local_offset, central + central_offset):
        data[at] = value if value is not None else data[at] | bit
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(("damage", "expected"), [
    (lambda path: flipped(path, 6, 8, bit=1), "is encrypted"),  # the encrypted flag
    (lambda path: flipped(path, 8, 10, value=99), "compression method is not supported"),
    (lambda path: path.write_bytes(path.read_bytes()[:60] + b"\xff" * 30 + path.read_bytes()[90:]),
     "while decompressing data"),
])
def test_an_encrypted_unknown_or_corrupt_entry_is_refused(tmp_path, damage, expected):
    path = tmp_path / "v.npz"
    np.savez_compressed(path, inputs_image=np.arange(10_000, dtype=np.float32))
    damage(path)
    message = refusal(path)
    assert "not a readable .npz file" in message and expected in message
