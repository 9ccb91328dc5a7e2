"""The conversion report: one row per converted mode, printed and saved as report.json and report.md."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPORT_JSON = "report.json"
REPORT_MD = "report.md"


@dataclass
class ReportRow:
    mode: str
    passed: bool
    size_bytes: int | None = None
    size_ratio_vs_float32: float | None = None
    top1_agreement: float | None = None
    max_abs_diff: float | None = None
    accuracy: float | None = None
    reference_accuracy: float | None = None
    threshold: float | None = None
    mean_ms: float | None = None
    p50_ms: float | None = None
    p99_ms: float | None = None
    latency_runs: int | None = None
    error: str | None = None


@dataclass
class Report:
    name: str
    saved_model: str
    served_mode: str
    samples: dict  # {"source": file name or "generated", "count": N}
    converter: str
    rows: list[ReportRow] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {**asdict(self), "latency": {"threads": 1, "batch": 1, "runtime": "ai-edge-litert"}}


def _size(value: int | None) -> str:
    if value is None:
        return "-"
    return f"{value / 1e6:.2f} MB" if value >= 1e6 else f"{value / 1e3:.1f} KB"


def _number(value: float | None, pattern: str) -> str:
    return "-" if value is None else format(value, pattern)


def format_ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f} ms" if value >= 10 else f"{value:.2f} ms" if value >= 1 else f"{value:.3f} ms"


def markdown_table(report: Report) -> str:
    header = ("| mode | size | vs float32 | top-1 agreement | max abs diff | accuracy (SavedModel) "
              "| mean invoke | p50 invoke | p99 invoke | gate |\n|---|---|---|---|---|---|---|---|---|---|\n")
    lines = []
    for row in report.rows:
        mode = f"**{row.mode}** (served)" if row.mode == report.served_mode else row.mode
        accuracy = "-" if row.accuracy is None else f"{row.accuracy:.2%} ({row.reference_accuracy:.2%})"
        gate = "pass" if row.passed else f"FAIL: {row.error}"
        lines.append(f"| {mode} | {_size(row.size_bytes)} | {_number(row.size_ratio_vs_float32, '.2f')} "
                     f"| {_number(row.top1_agreement, '.2%')} | {_number(row.max_abs_diff, '.2g')} | {accuracy} "
                     f"| {format_ms(row.mean_ms)} | {format_ms(row.p50_ms)} | {format_ms(row.p99_ms)} | {gate} |")
    return header + "\n".join(lines) + "\n"


def markdown(report: Report) -> str:
    return (f"# Conversion report: {report.name}\n\n"
            f"Source `{report.saved_model}`, converter {report.converter}, fidelity inputs: "
            f"{report.samples['count']} from {report.samples['source']}. Latency: LiteRT, 1 thread, batch 1, "
            "warmed up.\n\n" + markdown_table(report))


def write_report(directory: Path, report: Report) -> None:
    (directory / REPORT_JSON).write_text(json.dumps(report.as_dict(), indent=2) + "\n", encoding="utf-8")
    (directory / REPORT_MD).write_text(markdown(report), encoding="utf-8")
