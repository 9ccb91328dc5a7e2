"""`python -m convert.report_page MODEL_DIR`: one self-contained HTML page about a conversion, MODEL_DIR/report.html.

Per-mode agreement, sizes and latencies (report.json), a scatter of served against expected scores per sample, and
the samples that disagree most, with their thumbnails or texts (report.samples.npz, convert/report_samples.py). The
page links nothing: its pictures are inline SVG and data: URLs, so it opens from a mail or an artifact store as it
does from disk. No TensorFlow: it only reads what the conversion wrote.
"""
from __future__ import annotations

import argparse
import base64
import io
import json
import os
import sys
from html import escape
from pathlib import Path

import numpy as np
from PIL import Image

from convert import runtime_report
from convert.agreement_interval import intervals_cell
from convert.report_samples import ReportSamples, read
from convert.report_svg import bar, scatter

PAGE_FILE = "report.html"
WORST_SHOWN = 12
EXIT_USER_ERROR = 2
THUMBNAIL_MIN_WIDTH = 64  # CSS pixels: an 8x8 digit is drawn 8x larger, pixelated
DIM = 64  # a thumbnail whose brightest pixel is below this is shown contrast-stretched (say 0..16 digits)
# Gate numbers that are settings or counts, not measures: the table leaves them out.
BOOKKEEPING = {"samples", "threshold", "thresholds", "decision_threshold", "passed", "checked", "intervals",
               "evidence"}  # the intervals have their own column (convert/agreement_interval.py)

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1180px;color:#222;padding:0 16px}
h1{font-size:22px;margin-bottom:4px} h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}
.meta{color:#555} table{border-collapse:collapse;margin:8px 0} th,td{border:1px solid #ddd;padding:4px 8px;
text-align:left;vertical-align:top} th{background:#f4f6f8} tr.served td{background:#eef5ff;font-weight:600}
.pass{color:#17803d} .fail{color:#b42318} .bar{background:#eef0f3;height:6px;width:110px}
.bar span{display:block;height:6px;background:#1f5fa8} .value{font-variant-numeric:tabular-nums}
.scatters{display:flex;flex-wrap:wrap;gap:12px} .legend span{margin-right:14px}
.dot{display:inline-block;width:9px;height:9px;border-radius:50%;margin-right:4px}
img.thumb{image-rendering:pixelated;min-width:64px;border:1px solid #ccc} td.text{max-width:520px}
.disagree{color:#b42318;font-weight:600} details{margin:8px 0} summary{cursor:pointer;font-weight:600}
"""


class ReportPageError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def load_report(model_dir: Path) -> dict:
    path = model_dir / "report.json"
    if not model_dir.is_dir():
        raise ReportPageError("missing_directory", f"{model_dir} is not a directory: pass a model directory that "
                              "convert wrote")
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReportPageError("no_report", f"{model_dir} has no report.json: convert a model into it first "
                              "(python -m convert MODEL OUT_DIR)") from None
    except (OSError, ValueError) as error:
        raise ReportPageError("bad_report", f"{path} is not readable JSON ({error}): convert the model again") from None
    if not isinstance(report, dict):
        raise ReportPageError("bad_report", f"{path} is not a conversion report: convert the model again")
    return report


def _number(key: str, value: float) -> str:
    if "agreement" in key and 0.0 <= value <= 1.0:
        return f"{value:.2%}"
    return f"{value:.6g}"


def flat_metrics(fidelity: dict, prefix: str = "") -> dict[str, str]:
    """A row's gate numbers as "name" -> text, nested blocks (served, thresholds) as "served top1_agreement"."""
    cells: dict[str, str] = {}
    for key, value in fidelity.items():
        if key in BOOKKEEPING:
            continue
        name = f"{prefix}{key}".replace("_", " ")
        if isinstance(value, bool):
            cells[name] = "yes" if value else "no"
        elif isinstance(value, (int, float)):
            cells[name] = _number(key, float(value))
        elif isinstance(value, dict) and not prefix:
            cells.update(flat_metrics(value, f"{key} "))
    return cells


def _size(value) -> str:
    if not isinstance(value, (int, float)):
        return "-"
    return f"{value / 1e6:.2f} MB" if value >= 1e6 else f"{value / 1e3:.1f} KB"


def _ms(value) -> str:
    return f"{value:.3g} ms" if isinstance(value, (int, float)) else "-"


def modes_table(report: dict) -> str:
    rows = [row for row in report.get("rows", []) if isinstance(row, dict)]
    metrics = [flat_metrics(_dict(row.get("fidelity"))) for row in rows]
    columns = list(dict.fromkeys(name for cells in metrics for name in cells))
    largest = max([row.get("size_bytes") or 0 for row in rows] + [1])
    slowest = max([row.get("p50_ms") or 0 for row in rows] + [1e-9])
    head = "".join(f"<th>{escape(name)}</th>" for name in ["mode", "gate", "size", "vs float32", *columns,
                                                          "95% CI", "p50 invoke", "mean", "p99"])
    body = []
    for row, cells in zip(rows, metrics):
        served = row.get("mode") == report.get("served_mode")
        gate = ('<span class="pass">pass</span>' if row.get("passed") else
                f'<span class="fail">FAIL</span> {escape(str(row.get("error") or ""))}')
        if row.get("passed") and row.get("shortfall"):
            gate = f'<span class="fail">not enough samples</span> {escape(str(row["shortfall"]))}'

        size, p50 = row.get("size_bytes"), row.get("p50_ms")
        ratio = row.get("size_ratio_vs_float32")
        values = [escape(str(row.get("mode"))) + (" (served)" if served else ""), gate,
                  bar((size or 0) / largest, _size(size)) if size else "-",
                  f"{ratio:.2f}" if isinstance(ratio, (int, float)) else "-",
                  *(escape(cells.get(name, "-")) for name in columns),
                  escape(intervals_cell(_dict(row.get("fidelity")))),
                  bar((p50 or 0) / slowest, _ms(p50)) if p50 else "-", _ms(row.get("mean_ms")), _ms(row.get("p99_ms"))]
        cls = ' class="served"' if served else ""
        body.append(f"<tr{cls}>" + "".join(f"<td>{value}</td>" for value in values) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _png_data_url(pixels: np.ndarray) -> str:
    buffer = io.BytesIO()
    Image.fromarray(pixels[:, :, 0] if pixels.shape[2] == 1 else pixels).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _titles(samples: ReportSamples, mode: str) -> tuple[str, str]:
    if samples.comparison == "raw":
        return "expected (your own pipeline)", f"served by the function ({mode})"
    return "the SavedModel", f"converted ({mode})"


def ranked_samples(samples: ReportSamples, mode: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(order, disagrees, max |served - expected|): samples whose top label differs first, then the largest
    differences."""
    expected, served = samples.expected, samples.served[mode]
    difference = np.abs(served - expected).max(axis=1) if expected.size else np.zeros(len(expected))
    if samples.labels:
        disagrees = served.argmax(axis=1) != expected.argmax(axis=1)
    else:
        disagrees = np.zeros(len(expected), bool)
    order = np.lexsort((-difference, ~disagrees))
    return order, disagrees, difference


def _answer(samples: ReportSamples, scores: np.ndarray) -> str:
    if samples.labels:
        best = int(scores.argmax())
        label = samples.labels[best] if best < len(samples.labels) else str(best)
        return f"{escape(label)} ({scores[best]:.4f})"
    shown = ", ".join(f"{value:.4g}" for value in scores[:4])
    return escape(shown + (", ..." if len(scores) > 4 else ""))


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b / norm) if norm > 0 else 1.0


def _sample_cell(samples: ReportSamples, index: int) -> str:
    if samples.thumbnails is not None:
        image = samples.thumbnails[index]
        width = max(THUMBNAIL_MIN_WIDTH, image.shape[1])
        note = ""
        if 0 < int(image.max()) < DIM:
            image, note = (image.astype(np.float32) * (255.0 / image.max())).round().astype(np.uint8), \
                " (contrast stretched)"
        return (f'<img class="thumb" alt="sample {index}{note}" title="sample {index}{note}" width="{width}" '
                f'src="{_png_data_url(image)}">')
    if samples.texts is not None:
        return f'<div class="text">{escape(samples.texts[index])}</div>'
    return f"validation sample {index}"


def worst_samples(samples: ReportSamples, mode: str) -> str:
    order, disagrees, difference = ranked_samples(samples, mode)
    expected, served = samples.expected, samples.served[mode]
    heading = ["#", "sample", "expected", "served", "max |served - expected|"]
    if not samples.labels:
        heading.append("cosine")
    rows = []
    for index in order[:WORST_SHOWN]:
        cells = [str(index), _sample_cell(samples, index), _answer(samples, expected[index]),
                 ('<span class="disagree">' + _answer(samples, served[index]) + "</span>" if disagrees[index]
                  else _answer(samples, served[index])), f"{difference[index]:.4g}"]
        if not samples.labels:
            cells.append(f"{_cosine(expected[index], served[index]):.6f}")
        text_cell = ' class="text"' if samples.texts is not None else ""
        rows.append("<tr>" + "".join(f"<td{text_cell if n == 1 else ''}>{cell}</td>" for n, cell in enumerate(cells))
                    + "</tr>")
    count = int(disagrees.sum())
    summary = "no samples"
    if len(expected):
        start = f"{count} of {len(expected)} samples get another top label" if samples.labels else \
            f"{len(expected)} samples"
        summary = f"{start}; the largest difference is {difference.max():.4g}"
    head = "".join(f"<th>{escape(name)}</th>" for name in heading)
    return f"<p>{escape(summary)}.</p><table class=\"worst\"><tr>{head}</tr>{''.join(rows)}</table>"


def samples_sections(samples: ReportSamples | None) -> str:
    if samples is None:
        return ("<h2>Samples</h2><p>This directory has no report.samples.npz (converted by an earlier version of "
                "convert): convert the model again to see each sample's scores here.</p>")
    what = ("the raw samples, answered as the function answers a request, against <code>expected</code>"
            if samples.comparison == "raw" else "the validation inputs, against the SavedModel's own outputs")
    kept = "" if samples.count == samples.total else f" (the first {samples.count} of {samples.total})"
    legend = ('<p class="legend"><span><i class="dot" style="background:#1f5fa8"></i>a sample\'s top score</span>'
              '<span><i class="dot" style="background:#d0312d"></i>top score of a sample whose served top label '
              'differs</span><span><i class="dot" style="background:#9aa5b1"></i>its next best scores</span></p>'
              if samples.labels else "<p>Every output value of every sample; on the dashed line they agree.</p>")
    plots = []
    for mode in samples.modes:
        x_title, y_title = _titles(samples, mode)
        plots.append(scatter(samples.expected, samples.served[mode], bool(samples.labels), x_title, y_title, mode))
    parts = [f"<h2>Served vs expected, per sample</h2><p>{what}{kept}.</p>{legend}",
             f'<div class="scatters">{"".join(plots)}</div>', "<h2>The samples that disagree most</h2>"]
    first, *others = samples.modes
    parts.append(f"<h3>{escape(first)}</h3>{worst_samples(samples, first)}")
    parts += [f"<details><summary>{escape(mode)}</summary>{worst_samples(samples, mode)}</details>" for mode in others]
    return "".join(parts)


def page(report: dict, samples: ReportSamples | None) -> str:
    name = escape(str(report.get("name", "model")))
    info = _dict(report.get("samples"))
    raw = _dict(info.get("raw"))
    served_mode = escape(str(report.get("served_mode", "-")))
    kept = " (kept as it was by --compare)" if report.get("model_kept") else ""
    meta = (f"task {escape(str(report.get('task') or 'tensor (no sidecar)'))}, source "
            f"<code>{escape(str(report.get('saved_model', '-')))}</code>, {escape(str(report.get('converter', '')))}. "
            f"Served mode: <b>{served_mode}</b>{kept}. Fidelity inputs: {escape(str(info.get('count', '-')))} from "
            f"{escape(str(info.get('source', '-')))}" + (f"; raw samples: {escape(str(raw.get('count')))} "
                                                         f"{escape(str(raw.get('kind')))}s" if raw else "") + ".")
    latency = _dict(report.get("latency"))
    timing = (f"Invoke latency: {escape(str(latency.get('runtime', 'LiteRT')))}, {latency.get('threads', 1)} thread, "
              f"batch {latency.get('batch', 1)}, warmed up.")
    return (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Conversion report: {name}</title>"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><style>{STYLE}</style></head>"
            f"<body><h1>Conversion report: {name}</h1><p class=\"meta\">{meta}</p><h2>Modes</h2>"
            f"<p>{timing}</p>{modes_table(report)}{choice_section(report)}{runtime_report.html(report.get('runtime'))}"
            f"{samples_sections(samples)}</body></html>\n")


def choice_section(report: dict) -> str:
    """No --quantization: how the served mode was chosen, each other mode with why it was not."""
    choice = _dict(report.get("choice"))
    if not choice:
        return ""
    others = "".join(f"<li>{escape(str(mode))}: {escape(str(why))}</li>"
                     for mode, why in _dict(choice.get("others")).items())
    return (f"<h2>How the served mode was chosen</h2><p><b>{escape(str(choice.get('chosen')))}</b>: "
            f"{escape(str(choice.get('reason')))}.</p><ul>{others}</ul>")


def write_page(model_dir: Path, output: Path | None = None) -> Path:
    report = load_report(model_dir)
    try:
        samples = read(model_dir)
    except (OSError, ValueError, KeyError) as error:
        raise ReportPageError("bad_report", f"{model_dir / 'report.samples.npz'} is not readable ({error}): "
                              "convert the model again") from None
    target = output or model_dir / PAGE_FILE
    temporary = target.with_name(f".{target.name}.tmp")
    temporary.write_text(page(report, samples), encoding="utf-8")
    os.replace(temporary, target)  # never a half-written page
    return target


def main(argv: list[str] | None = None, prog: str = "python -m convert.report_page") -> int:
    """`prog` is the command as typed: `python -m convert.report_page`, or `lambda-tflite report`."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model_dir", metavar="MODEL_DIR", type=Path, help="a directory convert wrote")
    parser.add_argument("--output", metavar="FILE.html", type=Path, help=f"where to write it (default: "
                        f"MODEL_DIR/{PAGE_FILE})")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        target = write_page(args.model_dir, args.output)
    except ReportPageError as error:
        print(f"report: error: {error.message} [{error.code}]", file=sys.stderr)
        return EXIT_USER_ERROR
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
