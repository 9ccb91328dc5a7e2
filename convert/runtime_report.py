"""The runtime part of a `--compare` report: what each mode measured served by the function, the memory sizes looked
at and the recommendation (convert/memory_advice.py), as report.json's "runtime" block, as Markdown (report.md and
the printed table) and as HTML (convert/report_page.py). The Markdown and HTML read the JSON block only, so a page
drawn from an older report.json without one just leaves the part out."""
from __future__ import annotations

import platform
from html import escape

from convert.memory_advice import ASSUMPTIONS, Advice, Candidate, ModeRuntime
from convert.runtime_worker import WARM_MAX_RUNS

HOW = ("the function itself (function.app's init, then its runner), one fresh process per mode and thread count "
       f"(MODEL_THREADS), batch 1, validation sample 0; warm p50 over up to {WARM_MAX_RUNS} answers; no TensorFlow in "
       "those processes")
HEADERS = ["mode", "gate", "cold start", "first invoke", "warm p50, 1 thread", "warm p50, 2 threads", "peak RSS",
           "over the thread line", "cheapest memory", "$ per million warm requests"]
CANDIDATE_HEADERS = ["memory", "threads", "fits", "warm request", "$ per million"]


def architecture() -> str:
    """Lambda's name for this machine's architecture, whose price applies: x86_64 or arm64."""
    return "arm64" if platform.machine().lower() in ("aarch64", "arm64") else "x86_64"


def _candidate(found: Candidate | None) -> dict | None:
    if found is None:
        return None
    return {"memory_mb": found.memory_mb, "threads": found.threads, "fits": found.fits,
            "duration_ms": found.duration_ms, "cost_per_million_usd": found.cost_per_million_usd}


def section(runtimes: list[ModeRuntime], advice: Advice, arch: str) -> dict:
    """report.json's "runtime" block."""
    modes = []
    for runtime in runtimes:
        modes.append({"mode": runtime.mode, "passed": runtime.passed, "cold_start_s": runtime.cold_start_s,
                      "first_invoke_ms": runtime.first_invoke_ms,
                      "warm_p50_ms": {"1": runtime.warm_1_thread_ms, "2": runtime.warm_2_threads_ms},
                      "peak_rss_mb": runtime.peak_rss_mb, "over_thread_line": runtime.over_thread_line,
                      "cheapest": _candidate(advice.per_mode.get(runtime.mode))})
    recommendation = {"mode": advice.mode, "memory_mb": advice.memory_mb, "threads": advice.threads,
                      "duration_ms": advice.duration_ms, "cost_per_million_usd": advice.cost_per_million_usd,
                      "reason": advice.reason}
    return {"how": HOW, "architecture": arch, "modes": modes, "recommendation": recommendation,
            "candidates": {mode: [_candidate(found) for found in found_list]
                           for mode, found_list in advice.candidates.items()},
            "assumptions": list(ASSUMPTIONS)}


def _ms(value) -> str:
    if not isinstance(value, (int, float)):
        return "-"
    return f"{value:.1f} ms" if value >= 10 else f"{value:.2f} ms" if value >= 1 else f"{value:.3f} ms"


def _mb(value) -> str:
    return f"{value:,.0f} MB" if isinstance(value, (int, float)) else "-"


def _usd(value) -> str:
    return f"${value:.4f}" if isinstance(value, (int, float)) else "-"


def mode_cells(row: dict) -> list[str]:
    cheapest = row.get("cheapest") or {}
    warm = row.get("warm_p50_ms") or {}
    memory = (f"{_mb(cheapest.get('memory_mb'))}, {cheapest.get('threads')} thread"
              f"{'s' if (cheapest.get('threads') or 1) > 1 else ''}" if cheapest else "none fits")
    cold = row.get("cold_start_s")
    return [str(row.get("mode")), "pass" if row.get("passed") else "FAIL",
            f"{cold:.2f} s" if isinstance(cold, (int, float)) else "-", _ms(row.get("first_invoke_ms")),
            _ms(warm.get("1")), _ms(warm.get("2")), _mb(row.get("peak_rss_mb")),
            "yes" if row.get("over_thread_line") else "no", memory, _usd(cheapest.get("cost_per_million_usd"))]


def candidate_cells(found: dict) -> list[str]:
    return [_mb(found.get("memory_mb")), str(found.get("threads")), "yes" if found.get("fits") else "no",
            _ms(found.get("duration_ms")), _usd(found.get("cost_per_million_usd"))]


def headline(block: dict) -> str:
    advice = block.get("recommendation") or {}
    if advice.get("mode") is None:
        return f"No recommendation: {advice.get('reason', 'nothing was measured')}."
    return f"Recommended: {advice['reason']}."


def _table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows]) + "\n"


def markdown(block: dict) -> str:
    """The runtime table, the recommendation, the sizes looked at for the recommended mode, the assumptions."""
    rows = [mode_cells(row) for row in block.get("modes", []) if isinstance(row, dict)]
    text = (f"## Served by the function: runtime and Lambda memory\n\nMeasured with {block.get('how', '-')}; "
            f"prices for {block.get('architecture', 'x86_64')}.\n\n" + _table(HEADERS, rows)
            + f"\n**{headline(block)}**\n")
    mode = (block.get("recommendation") or {}).get("mode")
    found = (block.get("candidates") or {}).get(mode)
    if found:
        text += (f"\nLambda memory sizes looked at for {mode}:\n\n"
                 + _table(CANDIDATE_HEADERS, [candidate_cells(item) for item in found if isinstance(item, dict)]))
    assumptions = block.get("assumptions") or []
    if assumptions:
        text += "\nAssumptions:\n\n" + "".join(f"- {line}\n" for line in assumptions)
    return text


def _html_table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{escape(name)}</th>" for name in headers)
    body = "".join("<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def html(block: dict | None) -> str:
    """The report page's section; nothing for a report without a runtime block (a single-mode conversion)."""
    if not isinstance(block, dict):
        return ""
    rows = [mode_cells(row) for row in block.get("modes", []) if isinstance(row, dict)]
    parts = [f"<h2>Served by the function: runtime and Lambda memory</h2><p>Measured with "
             f"{escape(str(block.get('how', '-')))}; prices for {escape(str(block.get('architecture', 'x86_64')))}."
             f"</p>{_html_table(HEADERS, rows)}<p><b>{escape(headline(block))}</b></p>"]
    mode = (block.get("recommendation") or {}).get("mode")
    found = (block.get("candidates") or {}).get(mode)
    if found:
        parts.append(f"<details><summary>Lambda memory sizes looked at for {escape(str(mode))}</summary>"
                     + _html_table(CANDIDATE_HEADERS, [candidate_cells(item) for item in found
                                                       if isinstance(item, dict)]) + "</details>")
    assumptions = block.get("assumptions") or []
    if assumptions:
        parts.append("<details><summary>Assumptions</summary><ul>"
                     + "".join(f"<li>{escape(str(line))}</li>" for line in assumptions) + "</ul></details>")
    return "".join(parts)
