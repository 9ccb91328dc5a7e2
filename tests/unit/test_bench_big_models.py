"""Bench section 18's tables and verdicts from given samples: every configuration a row, the ratios the issue's
targets read computed against the right cells."""
from __future__ import annotations

import numpy as np

from bench import big_model_section as section
from bench.__main__ import SECTIONS
from tests.support.function_fixtures import demo_models  # noqa: F401


def samples(function_2t_warm: float, function_first: float) -> dict:
    found = {}
    for model in ("resnet50", "bert_base"):
        for stack, threads in section.CONFIGURATIONS:
            warm = {"function": 100.0, "litert": 100.0, "onnxruntime": 150.0, "tensorflow": 200.0}[stack]
            if stack == "function" and threads == "2":
                warm = function_2t_warm
            first = function_first if stack == "function" else 3 * warm
            cold = 0.5 if stack in ("function", "litert") else 2.0
            found[(model, stack, threads)] = {"cold_s": [cold], "first_ms": [first], "warm_1_ms": [warm, warm],
                                              "warm_8_ms": [8 * warm], "peak_rss_mb": [300.0]}
    return found


def test_section_18_is_listed():
    assert SECTIONS[section.NUMBER] == "bench.big_model_section"


def test_every_configuration_is_a_row_with_its_ratios():
    rows = section.model_table(samples(60.0, 110.0), "resnet50", 7.5).splitlines()[2:]
    assert len(rows) == len(section.CONFIGURATIONS)
    function_2t = next(row for row in rows if row.startswith("| function, 2 threads"))
    # first over warm; warm over LiteRT alone at 2 threads (100); 7.5 GFLOP in 60 ms
    assert function_2t.endswith("| 1.83x | 0.60x | 125 |")


def test_the_verdicts_read_the_issue_targets():
    met = section.verdicts(samples(60.0, 110.0))
    assert met[0].startswith("met: ResNet50 float32 warm batch 1, 2 threads over 1: 0.60x")
    missed = section.verdicts(samples(90.0, 200.0))
    assert missed[0].startswith("**missed**: ResNet50 float32 warm batch 1, 2 threads over 1: 0.90x")
    assert any("first call over a warm one 2.00x" in line and line.startswith("**missed**") for line in missed)
    # against ONNX Runtime each figure carries its range over the rounds, so a tie shows as overlapping ranges
    assert "resnet50 1t: function ahead of ONNX Runtime, warm 100.0 (100.0-100.0) vs 150.0 (150.0-150.0) ms, cold " \
           "0.50 (0.50-0.50) vs 2.00 (2.00-2.00) s" in met[3]


def test_the_matrix_work_of_a_big_model_is_counted_from_its_served_tensors(demo_models):  # noqa: F811
    from bench import big_models  # noqa: PLC0415

    # EfficientNet-Lite0: about 0.39 G multiply-adds per 224x224 image, the order of EfficientNet-B0 (0.39 G)
    gflop = big_models.count_gflop(demo_models / "efficientnet_lite0" / "model.tflite")
    assert 0.7 < gflop < 0.85


def test_a_model_without_onnx_says_so_in_its_rows_and_verdicts():
    found = {key: value for key, value in samples(60.0, 110.0).items() if key[1] != "onnxruntime"}
    rows = section.model_table(found, "bert_base", 22.0).splitlines()[2:]
    assert sum("not measured" in row for row in rows) == 3
    assert "**missed**: bert_base 1t: ONNX Runtime not measured" in section.verdicts(found)


def test_the_thread_line_feeds_each_model_its_own_dtypes_and_tokens(demo_models):  # noqa: F811
    from bench.thread_line import batch_of_one  # noqa: PLC0415
    from function.model.manifest import load_manifest  # noqa: PLC0415

    text = batch_of_one(load_manifest(demo_models / "minilm"), 16)
    assert {role: (array.shape, array.dtype.kind) for role, array in text.items()} == {
        "input_ids": ((1, 16), "i"), "attention_mask": ((1, 16), "i")}
    image = batch_of_one(load_manifest(demo_models / "efficientnet_lite0"), 16)
    assert image["image"].shape == (1, 224, 224, 3) and image["image"].dtype == np.float32


def test_the_compare_table_names_each_models_mode_and_memory():
    from bench.big_model_advice import advice_part, advice_table  # noqa: PLC0415
    from convert.memory_advice import ModeRuntime, advise  # noqa: PLC0415
    from convert.runtime_report import section as runtime_section  # noqa: PLC0415

    measured = [ModeRuntime("float32", True, 1.2, 180.0, 175.0, 80.0, 260.0, True),
                ModeRuntime("dynamic", False, 0.5, 400.0, 120.0, 70.0, 105.0, False)]  # failed its gate
    block = runtime_section(measured, advise(measured), "x86_64")
    rows = advice_table({"resnet50": (block, "", 300.0), "bert_base": (None, "convert --compare exited 2", 900.0)})
    resnet = next(row for row in rows.splitlines() if row.startswith("| resnet50 |"))
    assert resnet.startswith("| resnet50 | float32 | 3,538 MB | 2 | 80.0 | 1.20 | 260 |")
    assert "| bert_base | - |" in rows and "convert --compare exited 2" in rows
    markdown, verdicts = advice_part({"resnet50": (block, "", 300.0), "bert_base": (None, "it timed out", 900.0)})
    assert markdown.startswith("\n### What `convert --compare` recommends\n\nWhat `python -m convert --compare`")
    assert verdicts == ["met: resnet50: convert --compare names a mode and a memory size",
                        "**missed**: bert_base: convert --compare names a mode and a memory size (it timed out)"]

