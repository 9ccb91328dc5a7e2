"""Bench section 19 (bring your own encoder, all-mpnet-base-v2): its table from given samples, every stack a row and
every ratio against the function's own cell, and the batch it times: 32 real sentences, some past 128 tokens."""
from __future__ import annotations

import numpy as np
from tokenizers import Tokenizer

from bench import byo_encoder as section
from bench.__main__ import SECTIONS
from tests.support.function_fixtures import demo_models  # noqa: F401

MANIFEST = {"quantization": "float16", "model_file": "model.tflite"}


def samples() -> section.Samples:
    found = section.Samples()
    for label, scale in ((section.FUNCTION, 1.0), (section.ONNX, 2.0), (section.TORCH, 4.0)):
        found.cold_ms[label] = [500 * scale, 600 * scale, 400 * scale]
        found.rss_mb[label] = [300 * scale] * 3
        found.warm_p50[(label, section.SHORT)] = [10 * scale, 12 * scale, 11 * scale]
        found.warm_p50[(label, section.BATCH)] = [1000 * scale] * 3
    unit = np.eye(33, 768)
    found.vectors = {section.FUNCTION: unit, section.ONNX: unit, section.TORCH: unit}
    return found


def rows(markdown: str) -> dict[str, list[str]]:
    table = [line for line in markdown.splitlines() if line.startswith("| ")][1:]
    return {cells[0]: cells[1:] for cells in ([c.strip() for c in line.strip("|").split("|")] for line in table)}


def test_section_19_is_listed():
    assert SECTIONS[section.NUMBER] == "bench.byo_encoder"


def test_every_stack_is_a_row_with_its_ratios_to_the_function():
    installed = {section.FUNCTION: 150.0, section.ONNX: 80.0, section.TORCH: 1200.0}
    markdown = section.render(samples(), installed, 3, 20, MANIFEST, 220.0, ("a b c",) * 32)
    table = rows(markdown)
    assert list(table) == [section.FUNCTION, section.ONNX, section.TORCH]
    assert table[section.FUNCTION][:8] == ["500 (400-600)", "1.00x", "300 (300-300)", "11.0 (10.0-12.0)", "1.00x",
                                           "1000 (1000-1000)", "1.00x", "1.000000"]
    assert table[section.ONNX][1] == "2.00x" and table[section.ONNX][4] == "2.00x" and table[section.ONNX][6] == "2.00x"
    assert table[section.TORCH][1:3] == ["4.00x", "1200 (1200-1200)"] and table[section.TORCH][-1] == "1200 MB"
    assert "default mode: **float16**, 220 MB" in markdown


def test_a_stack_that_was_not_measured_says_why():
    found = samples()
    found.not_measured[section.ONNX] = "cosine 0.990000 to sentence-transformers, under 0.9999"
    installed = {section.FUNCTION: 150.0, section.TORCH: 1200.0}
    table = rows(section.render(found, installed, 3, 20, MANIFEST, 220.0, ("a b c",) * 32))
    assert table[section.ONNX][0] == "not measured: `cosine 0.990000 to sentence-transformers, under 0.9999`"
    assert table[section.FUNCTION][1] == "1.00x"


def test_cosines_are_held_against_sentence_transformers_own_vectors():
    found = samples()
    found.vectors[section.ONNX] = found.vectors[section.ONNX] + np.eye(33, 768, k=1)  # 45 degrees off
    cosines = section.cosines_to_torch(found)
    assert cosines[section.TORCH] == 1.0 and cosines[section.FUNCTION] == 1.0
    assert abs(cosines[section.ONNX] - np.sqrt(0.5)) < 1e-9


def test_the_batch_mixes_short_sentences_with_ones_past_128_tokens(demo_models):  # noqa: F811
    tokenizer_file = demo_models / "minilm" / "tokenizer.json"
    texts = section.batch_texts(tokenizer_file)
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    lengths = sorted(len(tokenizer.encode(text).ids) for text in texts)
    assert len(texts) == len(set(texts)) == 32
    assert lengths[0] <= 16 and sum(length > 128 for length in lengths) == 4
    assert texts == section.batch_texts.__wrapped__(tokenizer_file)  # the same batch every run


def test_why_a_stack_failed_fits_one_cell_and_keeps_the_emulators_last_words():
    error = RuntimeError("sentence-transformers: Expecting value\n" + "x" * 1000
                         + "\nTask timed out after 15.00 seconds")
    text = section.why(error)
    assert "\n" not in text and len(text) < 420
    assert text.startswith("RuntimeError: sentence-transformers: Expecting value")
    assert text.endswith("Task timed out after 15.00 seconds")
