"""Inline SVG charts for the HTML page: attention heatmaps and softmax sharpness.

Both are inline SVG elements (in HTML they need no namespace URL), written here with
every piece of text escaped as it is placed, so the page needs no script and fetches
nothing (its CSP allows inline SVG).
Colours and curves come from float approximations of the trace's exact values, which
the trace gives (:mod:`symtf.shown`): they are pictures, never verdicts; the numbers
printed in the cells are the certified values rounded to the page's decimals.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from symtf.shown import Sharpness

#: Cell size and margins of a heatmap, in SVG user units (px).
CELL = 46
LEFT = 78
TOP = 70


def esc(s: object) -> str:
    """Text for SVG: escaped, quotes included."""
    return html.escape(str(s), quote=True)


def _shade(w: float) -> str:
    """White (0) to deep blue (1), for a weight in [0, 1]."""
    w = min(max(w, 0.0), 1.0)
    r, g, b = (round(255 + (c - 255) * w) for c in (33, 102, 172))
    return f"rgb({r},{g},{b})"


def heatmap_svg(
    weights: Sequence[Sequence[float]],
    cells: Sequence[Sequence[str]],
    rows: Sequence[str],
    cols: Sequence[str],
    title: str,
) -> str:
    """One attention pattern as a heatmap: query tokens down, key tokens across.

    Args:
        weights: The weights (floats in [0, 1]) that set each cell's colour.
        cells: The text written in each cell (the value, rounded).
        rows: Row labels (the query tokens).
        cols: Column labels (the key tokens).
        title: The caption above the map.
    """
    n, m = len(weights), len(weights[0]) if weights else 0
    width = max(LEFT + CELL * m + 10, 8 + 8 * len(title))
    height = TOP + CELL * n + 10
    out = [
        f'<svg class="heatmap" style="max-width:100%;height:auto" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{esc(title)}"><title>{esc(title)}</title>',
        f'<text x="4" y="16" font-size="13" font-weight="bold">{esc(title)}</text>',
        f'<text x="{LEFT + CELL * m / 2:.0f}" y="32" font-size="11" text-anchor="middle" '
        f'fill="#555">key (attended to)</text>',
    ]
    out.append(
        f'<text x="{LEFT - 8}" y="{TOP - 8}" font-size="11" text-anchor="end" '
        f'fill="#555">query</text>'
    )
    for j, c in enumerate(cols):
        x = LEFT + CELL * j + CELL / 2
        out.append(
            f'<text x="{x:.0f}" y="{TOP - 8}" font-size="12" text-anchor="middle">{esc(c)}</text>'
        )
    for i, r in enumerate(rows):
        y = TOP + CELL * i + CELL / 2 + 4
        out.append(
            f'<text x="{LEFT - 8}" y="{y:.0f}" font-size="12" text-anchor="end">{esc(r)}</text>'
        )
        for j in range(m):
            w = weights[i][j]
            x0, y0 = LEFT + CELL * j, TOP + CELL * i
            ink = "#fff" if w > 0.55 else "#111"
            out.append(
                f'<rect x="{x0}" y="{y0}" width="{CELL}" height="{CELL}" fill="{_shade(w)}" '
                f'stroke="#999" stroke-width="0.5"><title>{esc(rows[i])} → {esc(cols[j])}: '
                f"{esc(cells[i][j])}</title></rect>"
                f'<text x="{x0 + CELL / 2:.0f}" y="{y0 + CELL / 2 + 4:.0f}" font-size="11" '
                f'text-anchor="middle" fill="{ink}">{esc(cells[i][j])}</text>'
            )
    out.append("</svg>")
    return "".join(out)


def sharpness_svg(curve: Sharpness, title: str) -> str:
    """Max weight and entropy of the article's score rows against the divisor √d_k.

    The divisor runs from √d_k / 4 to 4·√d_k on a log scale; the article's own √d_k is
    marked. Dividing by a larger number flattens the softmax: the largest weight falls
    and the entropy rises towards log n.

    Args:
        curve: The curve, as the trace gives it (:func:`symtf.shown.sharpness_curve`).
        title: The caption.
    """
    sqrt_dk = curve.sqrt_dk
    lo, hi = sqrt_dk / 4, sqrt_dk * 4
    ts = curve.divisors
    n = curve.width
    emax = math.log(n) if n > 1 else 1.0
    w, h, left, top, pw, ph = 460, 292, 52, 34, 360, 170
    peak, ent = curve.peak, curve.entropy
    rows = curve.rows

    def px(t: float) -> float:
        return left + pw * math.log(t / lo) / math.log(hi / lo)

    def py(v: float, vmax: float) -> float:
        return top + ph * (1 - v / vmax)

    def path(vs: Sequence[float], vmax: float) -> str:
        return " ".join(
            f"{'M' if i == 0 else 'L'}{px(t):.1f},{py(v, vmax):.1f}"
            for i, (t, v) in enumerate(zip(ts, vs, strict=True))
        )

    out = [
        f'<svg class="sharpness" style="max-width:100%;height:auto" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" role="img" aria-label="{esc(title)}"><title>{esc(title)}</title>',
        f'<text x="{left}" y="16" font-size="13" font-weight="bold">{esc(title)}</text>',
        f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>',
        f'<path d="{path(peak, 1.0)}" fill="none" stroke="rgb(33,102,172)" stroke-width="2"/>',
        f'<path d="{path(ent, emax)}" fill="none" stroke="rgb(178,24,43)" stroke-width="2" '
        f'stroke-dasharray="5,3"/>',
    ]
    x = px(sqrt_dk)
    out.append(
        f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + ph}" stroke="#333" '
        f'stroke-dasharray="2,2"/><text x="{x:.1f}" y="{top + ph + 28}" font-size="11" '
        f'text-anchor="middle">√d_k = {esc(f"{sqrt_dk:.3g}")}</text>'
    )
    for t in (lo, sqrt_dk / 2, sqrt_dk * 2, hi):
        out.append(
            f'<text x="{px(t):.1f}" y="{top + ph + 14}" font-size="10" text-anchor="middle">'
            f"{esc(f'{t:.3g}')}</text>"
        )
    for v in (0.0, 0.5, 1.0):
        out.append(
            f'<text x="{left - 6}" y="{py(v, 1.0) + 4:.1f}" font-size="10" text-anchor="end" '
            f'fill="rgb(33,102,172)">{v:g}</text>'
            f'<text x="{left + pw + 6}" y="{py(v, 1.0) + 4:.1f}" font-size="10" '
            f'fill="rgb(178,24,43)">{esc(f"{v * emax:.2f}")}</text>'
        )
    below = top + ph + 44
    out.append(
        f'<text x="{left + pw / 2}" y="{below}" font-size="11" text-anchor="middle">'
        f"divisor of the scores (log scale)</text>"
        f'<line x1="{left}" y1="{below + 14}" x2="{left + 22}" y2="{below + 14}" '
        f'stroke="rgb(33,102,172)" stroke-width="2"/>'
        f'<text x="{left + 28}" y="{below + 18}" font-size="11">largest weight, mean over '
        f"{rows} row{'s' if rows != 1 else ''} (left axis)</text>"
        f'<line x1="{left}" y1="{below + 30}" x2="{left + 22}" y2="{below + 30}" '
        f'stroke="rgb(178,24,43)" stroke-width="2" stroke-dasharray="5,3"/>'
        f'<text x="{left + 28}" y="{below + 34}" font-size="11">entropy in nats (right axis, '
        f"at most log {n})</text>"
    )
    out.append("</svg>")
    return "".join(out)
