"""The report table: sizes, ratios and latencies people compare modes by, the task's own fidelity columns, and
failed modes shown as such."""
from __future__ import annotations

import json

from convert.agreement_interval import annotate, shortfall
from convert.fidelity.classification import Top1Gate
from convert.fidelity.embedding import CosineGate
from convert.report import Report, ReportRow, format_ms, markdown_table, write_report

CLASSIFIER_METRICS = {"float32": {"samples": 7, "top1_agreement": 1.0, "max_abs_diff": 1e-6, "accuracy": 0.9,
                                  "reference_accuracy": 0.9, "threshold": 0.99},
                      "int8": {"samples": 7, "top1_agreement": 0.95, "max_abs_diff": 0.03, "accuracy": 0.85,
                               "reference_accuracy": 0.9, "threshold": 0.95}}


def sample_report() -> Report:
    report = Report(name="cats", task="image_classification", saved_model="saved_model/cats", served_mode="int8",
                    samples={"source": "validation.npz", "count": 7}, converter="tensorflow 2.21.0",
                    columns=Top1Gate.columns)
    report.rows = [
        ReportRow(mode="float32", passed=True, size_bytes=18_600_000, size_ratio_vs_float32=1.0,
                  fidelity=CLASSIFIER_METRICS["float32"], mean_ms=17.71, p50_ms=17.5, p99_ms=19.2, latency_runs=160),
        ReportRow(mode="int8", passed=True, size_bytes=5_300_000, size_ratio_vs_float32=0.2849,
                  fidelity=CLASSIFIER_METRICS["int8"], mean_ms=0.456, p50_ms=0.45, p99_ms=1.5, latency_runs=300),
        ReportRow(mode="dynamic", passed=False, error="agrees on 50.0%"),
    ]
    return report


def test_table_rows_show_size_ratio_agreement_accuracy_and_latency():
    table = markdown_table(sample_report())
    assert table.startswith("| mode | size | vs float32 | top-1 agreement | max abs diff | accuracy (SavedModel) "
                            "| 95% CI | mean invoke | p50 invoke | p99 invoke | gate |\n"
                            "|---|---|---|---|---|---|---|---|---|---|---|\n")
    assert ("| float32 | 18.60 MB | 1.00 | 100.00% | 1e-06 | 90.00% (90.00%) "
            "| - | 17.7 ms | 17.5 ms | 19.2 ms | pass |") in table
    assert ("| **int8** (served) | 5.30 MB | 0.28 | 95.00% | 0.03 | 85.00% (90.00%) "
            "| - | 0.456 ms | 0.450 ms | 1.50 ms | pass |") in table
    assert "| dynamic | - | - | - | - | - | - | - | - | - | FAIL: agrees on 50.0% |" in table


def test_an_embedding_report_shows_its_own_columns():
    report = Report(name="minilm", task="text_embedding", saved_model="saved_model/minilm", served_mode="float16",
                    samples={"source": "validation.npz", "count": 3}, converter="tensorflow 2.21.0",
                    columns=CosineGate.columns)
    report.rows = [ReportRow(mode="float16", passed=True, size_bytes=45_000_000, size_ratio_vs_float32=0.5,
                             fidelity={"min_cosine": 0.9999123, "mean_cosine": 0.9999871, "max_abs_diff": 0.0004},
                             mean_ms=5.0, p50_ms=5.0, p99_ms=6.0, latency_runs=100)]
    table = markdown_table(report)
    assert "| mode | size | vs float32 | min cosine | mean cosine | max abs diff | 95% CI | mean invoke |" in table
    assert "| **float16** (served) | 45.00 MB | 0.50 | 0.999912 | 0.999987 | 0.0004 | - | 5.00 ms |" in table
    assert "top-1" not in table


def test_milliseconds_keep_three_significant_digits():
    assert [format_ms(v) for v in (0.00412, 5.614, 17.71, None)] == ["0.004 ms", "5.61 ms", "17.7 ms", "-"]


def test_report_files(tmp_path):
    write_report(tmp_path, sample_report())
    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved["served_mode"] == "int8" and [row["mode"] for row in saved["rows"]] == ["float32", "int8", "dynamic"]
    assert saved["task"] == "image_classification" and "columns" not in saved
    assert saved["rows"][1]["fidelity"] == CLASSIFIER_METRICS["int8"]
    assert saved["latency"] == {"threads": 1, "batch": 1, "runtime": "ai-edge-litert"}
    text = (tmp_path / "report.md").read_text()
    assert text.startswith("# Conversion report: cats") and "task image_classification" in text
    assert "7 from validation.npz" in text


def test_each_agreement_figure_shows_its_interval_and_a_verdict_on_too_few_samples_says_so(tmp_path):
    report = sample_report()
    metrics = annotate({**CLASSIFIER_METRICS["float32"],
                        "served": annotate({"samples": 7, "top1_agreement": 1.0, "threshold": 0.99, "score_bound": 0.01,
                                            "max_score_diff": 0.002},
                                           [{"index": i, "agrees": True, "max_score_diff": 0.002} for i in range(7)])})
    report.rows[0] = ReportRow(mode="float32", passed=True, fidelity=metrics, p50_ms=1.0,
                               shortfall=shortfall(metrics))
    table = markdown_table(report)
    assert "| top-1 64.6%-100.0%; served top-1 64.6%-100.0%, scores in bound 64.6%-100.0% |" in table
    assert ("| not enough samples: 7 samples cannot show >= 99.0% agreement at 95% confidence: give at least 381 |"
            in table)
    write_report(tmp_path, report)
    saved = json.loads((tmp_path / "report.json").read_text())["rows"][0]
    assert saved["fidelity"]["intervals"]["top1_agreement"] == {"agreeing": 7, "samples": 7, "low": 0.64567,
                                                                "high": 1.0, "confidence": 0.95}
    assert saved["shortfall"].startswith("7 samples cannot show")
