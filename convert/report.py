"""The conversion report: one row per converted mode, printed and saved as report.json and report.md.

Size and latency columns are the same for every model; the fidelity columns are the task's own gate's."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from convert import runtime_report
from convert.agreement_interval import intervals_cell
from convert.fidelity.base import Column
from convert.mode_choice import choice_text

REPORT_JSON = "report.json"
REPORT_MD = "report.md"


@dataclass
class ReportRow:
    mode: str
    passed: bool
    size_bytes: int | None = None
    size_ratio_vs_float32: float | None = None
    fidelity: dict | None = None  # the gate's metrics, as in the manifest
    mean_ms: float | None = None
    p50_ms: float | None = None
    p99_ms: float | None = None
    latency_runs: int | None = None
    error: str | None = None
    float32_layers: list[str] | None = None  # mixed: the fully connected layers it keeps in float32
    shortfall: str | None = None  # the verdict "not enough samples": why (convert/agreement_interval.py)


@dataclass
class Report:
    name: str
    task: str | None
    saved_model: str
    served_mode: str | None  # None only until the mode is chosen by measurement
    samples: dict  # {"source": file name or "generated", "count": N}
    converter: str
    columns: tuple[Column, ...] = ()  # the gate's columns; not saved, the rows' fidelity dicts carry the numbers
    rows: list[ReportRow] = field(default_factory=list)
    model_kept: bool = False  # --compare without --quantization: the model already in OUT_DIR was left as it was
    choice: dict | None = None  # no --quantization: how the served mode was chosen (convert/mode_choice.py)
    runtime: dict | None = None  # --compare: each mode served by the function, and the memory advice

    def as_dict(self) -> dict:
        fields = asdict(self)
        fields.pop("columns")
        return {**fields, "latency": {"threads": 1, "batch": 1, "runtime": "ai-edge-litert"}}


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
    headers = ["mode", "size", "vs float32", *(column.header for column in report.columns),
               "95% CI", "mean invoke", "p50 invoke", "p99 invoke", "gate"]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in report.rows:
        mode = f"**{row.mode}** (served)" if row.mode == report.served_mode else row.mode
        fidelity = [column.cell(row.fidelity) if row.fidelity is not None else "-" for column in report.columns]
        gate = verdict(row)
        cells = [mode, _size(row.size_bytes), _number(row.size_ratio_vs_float32, ".2f"), *fidelity,
                 intervals_cell(row.fidelity),
                 format_ms(row.mean_ms), format_ms(row.p50_ms), format_ms(row.p99_ms), gate]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def verdict(row: ReportRow) -> str:
    if not row.passed:
        return f"FAIL: {row.error}"
    return f"not enough samples: {row.shortfall}" if row.shortfall else "pass"


def markdown(report: Report) -> str:
    task = f", task {report.task}" if report.task else ""
    return (f"# Conversion report: {report.name}\n\n"
            f"Source `{report.saved_model}`{task}, converter {report.converter}, fidelity inputs: "
            f"{report.samples['count']} from {report.samples['source']}. Latency: LiteRT, 1 thread, batch 1, "
            "warmed up." + (f" The {report.served_mode} model that was in the directory was kept as it was; "
                             "the other rows were measured and discarded." if report.model_kept else "")
            + "\n\n" + markdown_table(report)
            + ("\n" + choice_text(report.choice) if report.choice else "")
            + ("" if report.runtime is None else "\n" + runtime_report.markdown(report.runtime)))


def write_report(directory: Path, report: Report) -> None:
    (directory / REPORT_JSON).write_text(json.dumps(report.as_dict(), indent=2) + "\n", encoding="utf-8")
    (directory / REPORT_MD).write_text(markdown(report), encoding="utf-8")
