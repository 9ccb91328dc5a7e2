"""After its first invoke a model's mapped file stops counting in the process's RSS (from the next call of any
model on), and the answers stay the same."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

from function.model.manifest import load_manifest
from function.model.resident import read_only_mappings, release_file_pages
from function.model.runner import ModelRunner
from tests.support.function_fixtures import demo_models  # noqa: F401
from tests.support.resident import resident_bytes

pytestmark = pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="needs Linux's /proc")


def test_the_first_invoke_hands_back_the_mapped_weights_and_answers_stay_equal(demo_models):  # noqa: F811
    manifest = load_manifest(demo_models / "efficientnet_lite0")
    image = np.random.default_rng(1).uniform(-1, 1, (1, *manifest.input("image").shape[1:])).astype(np.float32)
    plain = Interpreter(model_path=str(manifest.model_file), num_threads=1).get_signature_runner(manifest.signature)
    expected = np.asarray(plain(**{manifest.input("image").name: image})[manifest.outputs[0].name])
    resident_after_plain_invoke = resident_bytes(manifest.model_file)
    assert resident_after_plain_invoke > manifest.model_file.stat().st_size // 2  # XNNPACK read the whole file

    runner = ModelRunner(manifest)
    first = runner.run({"image": image})["scores"]
    assert resident_bytes(manifest.model_file) >= resident_after_plain_invoke  # the first answer does not wait
    again = runner.run({"image": image})["scores"]
    assert resident_bytes(manifest.model_file) < resident_after_plain_invoke // 4  # both mappings handed back
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(first, expected)


def test_text_model_answers_survive_new_lengths_after_the_release(demo_models):  # noqa: F811
    # minilm's embedding table stays in the file (a gather reads a few rows): those pages fault back in.
    manifest = load_manifest(demo_models / "minilm")
    feeds = []
    for length in (5, 17, 9):
        ids = np.arange(1000, 1000 + length, dtype=np.int32)[None, :]
        feeds.append({"input_ids": ids, "attention_mask": np.ones_like(ids)})
    plain = Interpreter(model_path=str(manifest.model_file), num_threads=1).get_signature_runner(manifest.signature)
    expected = [{name: np.asarray(values) for name, values in plain(**feed).items()} for feed in feeds]

    runner = ModelRunner(manifest)
    for feed, reference in zip(feeds, expected):
        answers = runner.run(feed)
        for spec in manifest.outputs:
            np.testing.assert_array_equal(answers[spec.role], reference[spec.name])


def test_only_read_only_mappings_of_that_file_are_advised(tmp_path):
    maps = tmp_path / "maps"
    model = tmp_path / "model with space.tflite"
    model.write_bytes(b"x")
    maps.write_text(
        f"7f0000000000-7f0000004000 r--s 00000000 08:01 42 {model}\n"
        f"7f0000004000-7f0000008000 rw-p 00000000 08:01 42 {model}\n"
        f"7f0000008000-7f000000c000 r--p 00000000 08:01 43 {tmp_path / 'other.tflite'}\n"
        "7f000000c000-7f0000010000 rw-p 00000000 00:00 0\n"
        f"7f0000010000-7f0000012000 r--p 00000000 08:01 42 {model} (deleted)\n")
    assert read_only_mappings(str(model), str(maps)) == [(0x7F0000000000, 0x7F0000004000)]
    assert read_only_mappings(str(model), str(tmp_path / "no-proc")) == []


def test_a_file_that_is_not_mapped_releases_nothing(tmp_path):
    path = tmp_path / "never-mapped.tflite"
    path.write_bytes(b"\0" * 4096)
    assert release_file_pages(str(path)) == 0
