"""The report page's pictures as inline SVG text: no plotting library, no file beside the page."""
from __future__ import annotations

from html import escape

import numpy as np

MAX_POINTS = 4000  # per scatter: more circles slow the page without showing more
TOP_CLASSES = 5  # a classifier's scatter: each sample's five best classes by expected score
SIZE = 320
MARGIN = 44


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    return [low + (high - low) * i / (count - 1) for i in range(count)]


def _tick_label(value: float) -> str:
    return f"{value:.3g}"


def scatter_points(expected: np.ndarray, served: np.ndarray, labelled: bool
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, y, kind) of the points to draw: kind 2 a sample's top score where served picks another top-1, 1 a top
    score, 0 any other score. A classifier draws each sample's best classes by expected score; anything else every
    value, evenly thinned to MAX_POINTS."""
    rows = np.arange(len(expected))
    if labelled:
        order = np.argsort(-expected, axis=1, kind="stable")[:, :TOP_CLASSES]
        top = order[:, 0]
        disagree = served.argmax(axis=1) != top
        x = expected[rows[:, None], order]
        y = served[rows[:, None], order]
        kind = np.zeros(order.shape, np.int8)
        kind[:, 0] = np.where(disagree, 2, 1)
        x, y, kind = x.ravel(), y.ravel(), kind.ravel()
    else:
        x, y = expected.ravel(), served.ravel()
        kind = np.zeros(x.shape, np.int8)
    if len(x) > MAX_POINTS:
        keep = np.unique(np.concatenate([np.linspace(0, len(x) - 1, MAX_POINTS).astype(int), np.flatnonzero(kind)]))
        x, y, kind = x[keep], y[keep], kind[keep]
    return x, y, kind


def scatter(expected: np.ndarray, served: np.ndarray, labelled: bool, x_title: str, y_title: str,
            title: str) -> str:
    """Served (y) against expected (x), one point per score, the diagonal where they agree."""
    x, y, kind = scatter_points(expected, served, labelled)
    both = np.concatenate([x, y]) if len(x) else np.zeros(1)
    low, high = float(np.min(both)), float(np.max(both))
    if labelled:
        low, high = min(low, 0.0), max(high, 1.0)
    if high <= low:
        low, high = low - 1.0, high + 1.0
    span = SIZE - 2 * MARGIN

    def px(value: np.ndarray | float) -> np.ndarray | float:
        return MARGIN + (np.asarray(value) - low) / (high - low) * span

    def py(value: np.ndarray | float) -> np.ndarray | float:
        return SIZE - MARGIN - (np.asarray(value) - low) / (high - low) * span

    parts = [f'<svg class="scatter" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {SIZE} {SIZE}" '
             f'width="{SIZE}" height="{SIZE}" role="img" aria-label="{escape(title)}">',
             f'<title>{escape(title)}</title>',
             f'<rect x="{MARGIN}" y="{MARGIN}" width="{span}" height="{span}" fill="#fff" stroke="#999"/>']
    for tick in _ticks(low, high):
        tx, ty = float(px(tick)), float(py(tick))
        parts.append(f'<line x1="{tx:.1f}" y1="{SIZE - MARGIN}" x2="{tx:.1f}" y2="{SIZE - MARGIN + 4}" '
                     f'stroke="#999"/><text x="{tx:.1f}" y="{SIZE - MARGIN + 15}" font-size="9" '
                     f'text-anchor="middle">{_tick_label(tick)}</text>')
        parts.append(f'<line x1="{MARGIN - 4}" y1="{ty:.1f}" x2="{MARGIN}" y2="{ty:.1f}" stroke="#999"/>'
                     f'<text x="{MARGIN - 6}" y="{ty + 3:.1f}" font-size="9" text-anchor="end">'
                     f'{_tick_label(tick)}</text>')
    parts.append(f'<line x1="{MARGIN}" y1="{SIZE - MARGIN}" x2="{SIZE - MARGIN}" y2="{MARGIN}" stroke="#bbb" '
                 'stroke-dasharray="4 3"/>')
    colours = {0: ("#9aa5b1", 0.5), 1: ("#1f5fa8", 0.8), 2: ("#d0312d", 1.0)}
    for value in (0, 1, 2):  # disagreeing points last, on top
        chosen = kind == value
        radius = 2.0 if value == 0 else 2.6
        colour, opacity = colours[value]
        circles = "".join(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{radius}"/>'
                          for cx, cy in zip(px(x[chosen]), py(y[chosen])))
        parts.append(f'<g class="points-{value}" fill="{colour}" fill-opacity="{opacity}">{circles}</g>')
    parts.append(f'<text x="{SIZE / 2}" y="{SIZE - 8}" font-size="11" text-anchor="middle">{escape(x_title)}</text>')
    parts.append(f'<text x="12" y="{SIZE / 2}" font-size="11" text-anchor="middle" '
                 f'transform="rotate(-90 12 {SIZE / 2})">{escape(y_title)}</text>')
    parts.append(f'<text x="{SIZE / 2}" y="16" font-size="12" font-weight="bold" text-anchor="middle">'
                 f'{escape(title)}</text></svg>')
    return "".join(parts)


def bar(fraction: float, text: str) -> str:
    """A value's cell with a bar as long as its share of the column's largest."""
    width = max(0.0, min(1.0, fraction)) * 100
    return (f'<div class="bar"><span style="width:{width:.1f}%"></span></div><div class="value">'
            f'{escape(text)}</div>')
