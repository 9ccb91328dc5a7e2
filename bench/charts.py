"""PNG charts for the figures a picture reads better than a table: medians as bars, min-max as whiskers."""

from __future__ import annotations


from bench.paths import REPO_ROOT
from bench.stats import Summary

CHARTS_DIR = REPO_ROOT / "docs" / "benchmarks"


def horizontal_bars(file_name: str, title: str, unit: str, rows: list[tuple[str, Summary]],
                    target: tuple[float, str] | None = None) -> str:
    """Linear axis on purpose: bar lengths should show the ratios the tables state."""
    """Writes docs/benchmarks/<file_name> and returns the Markdown image link, relative to the repo root."""
    import matplotlib  # noqa: PLC0415  (matplotlib only when a chart is drawn; its backend is chosen first)

    matplotlib.use("Agg")  # no display here, and none needed
    import matplotlib.pyplot as plt  # noqa: PLC0415  (matplotlib only when a chart is drawn; its backend is chosen first)

    labels = [label for label, _ in rows]
    medians = [summary.median for _, summary in rows]
    whiskers = [[s.median - s.low for _, s in rows], [s.high - s.median for _, s in rows]]
    figure, axes = plt.subplots(figsize=(8, 0.6 * len(rows) + 1.2), dpi=110)
    positions = range(len(rows))
    axes.barh(positions, medians, xerr=whiskers, color="#4c72b0", ecolor="#333333", capsize=4)
    axes.set_yticks(list(positions), labels)
    axes.invert_yaxis()  # first configuration on top, as in the table
    axes.set_xlim(right=max(s.high for _, s in rows) * 1.25)  # room on the right for the value labels
    if target:
        axes.axvline(target[0], color="#c44e52", linestyle="--", linewidth=1)
        axes.annotate(target[1], (target[0], len(rows) - 0.5), color="#c44e52", fontsize=8, ha="left",
                      xytext=(3, 0), textcoords="offset points")
    for position, median in zip(positions, medians):
        axes.annotate(f" {median:,.0f} {unit}", (median, position), va="center", ha="left", fontsize=9,
                      xytext=(6, -10), textcoords="offset points")
    axes.set_xlabel(f"{unit}, median with min-max")
    axes.set_title(title, fontsize=11)
    figure.tight_layout()
    CHARTS_DIR.mkdir(parents=True, exist_ok=True)
    figure.savefig(CHARTS_DIR / file_name)
    plt.close(figure)
    return f"![{title}](docs/benchmarks/{file_name})"
