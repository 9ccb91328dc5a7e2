"""BENCHMARKS.md read back into sections: what a rerun of one section on a fresh checkout keeps of the others."""
from __future__ import annotations

from bench.report import SectionResult, published_sections, render


def test_published_sections_read_back_what_render_wrote():
    written = [SectionResult(1, "Cold start", "| a | b |\n|---|---|\n| 1 | 2 |", ["met: fast", "**missed**: small"],
                             44.0, "2026-11-29 21:43 UTC"),
               SectionResult(3, "Cache", "text\n\n## not a section heading, a sub-part", [], 6.0,
                             "2026-11-29 21:43 UTC")]
    document = render(written, 50.0, "make bench")
    read = published_sections(document)
    assert [(s.number, s.title, s.markdown, s.seconds, s.run_started) for s in read] == [
        (s.number, s.title, s.markdown, s.seconds, s.run_started) for s in written]
    assert read[0].verdicts == ["met: fast", "**missed**: small"] and read[1].verdicts == []
    assert render(read, 50.0, "make bench").split("\n", 3)[3] == document.split("\n", 3)[3]


def test_docs_benchmarks_lists_every_section_with_its_module():
    from pathlib import Path  # noqa: PLC0415

    from bench.__main__ import SECTIONS  # noqa: PLC0415

    rows = {int(line.split("|")[1]): line for line in
            (Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md").read_text().splitlines()
            if line.startswith("| ") and line.split("|")[1].strip().isdigit()}
    assert sorted(rows) == sorted(SECTIONS)
    for number, module in SECTIONS.items():
        assert f"`{module.replace('.', '/')}.py`" in rows[number], number
