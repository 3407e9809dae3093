"""The what-if plots (matplotlib, PNG and SVG): each followed value over each symbol's range
with its rounding band shaded, and each head's softmax rows against the score divisor.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from symtf import files
from symtf.checking.wording import place
from symtf.shown import entropy, softmax_at
from symtf.teach.whatif.render import typeset
from symtf.teach.whatif.results import MAX_SYMBOL_PANELS, Output, WhatIf
from symtf.teach.whatif.symbols import WhatIfError
from symtf.visible import line

#: Most claims drawn (one row of panels each) in the plot.
MAX_PANELS = 8
#: Most heads drawn (one column each) in the sharpness plot.
MAX_HEAD_PANELS = 4


def _pyplot(out: files.OutputFolder, name: str) -> Any:
    """matplotlib's pyplot, for drawing ``name`` into ``out``.

    Raises:
        WhatIfError: matplotlib is not installed.
        files.OutputError: Its first import could not write its font cache (a full disk:
            matplotlib 3.6 raises it when the cache file is closed).
    """
    try:
        import matplotlib

        # matplotlib's own warnings (a font cache it cannot save on a full disk) are not
        # the user's business: symtf reports the failure to write the plot itself.
        logging.getLogger("matplotlib").setLevel(logging.ERROR)
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise WhatIfError(
            "plots need matplotlib: pip install 'symtf[teach]' (or leave out -o for text only)"
        ) from None
    except OSError as e:
        raise files.OutputError(
            f"{out.final(name)}: cannot write the file (matplotlib could not save its font "
            f"cache: {e.strerror or e})"
        ) from None
    return plt


def plot_values(r: WhatIf, out: files.OutputFolder) -> list[str]:
    """``whatif.png``/``.svg``: one row per claim, one column per symbol (the others held)."""
    groups: dict[str, list[Output]] = {}
    for o in r.outputs:
        if any(p.samples for p in o.partials):
            groups.setdefault(o.label, []).append(o)
    if not groups:
        return []
    plt = _pyplot(out, "whatif.png")
    groups = dict(list(groups.items())[:MAX_PANELS])
    columns = r.weights[:MAX_SYMBOL_PANELS]
    nr, nc = len(groups), len(columns)
    fig, axes = plt.subplots(nr, nc, figsize=(7 if nc == 1 else 4.2 * nc, 2.6 * nr), squeeze=False)
    held = len(r.weights) > 1
    for row, (label, outs) in zip(axes, groups.items(), strict=True):
        for ax, w in zip(row, columns, strict=True):
            a0 = float(w.value)
            drawn = False
            for k, o in enumerate(outs):
                part = next((p for p in o.partials if p.weight is w), None)
                if part is None or not part.samples:
                    continue
                xs, ys = zip(*part.samples, strict=True)
                colour = f"C{k % 10}"
                ax.plot(xs, ys, color=colour, label=place(o.index, None))
                if o.band is not None:  # where the printed value is a correct rounding
                    ax.axhspan(float(o.band[0]), float(o.band[1]), color=colour, alpha=0.3)
                    ax.axhline(
                        float(o.band[0] + o.band[1]) / 2, color=colour, linewidth=0.6, linestyle=":"
                    )
                for ol, _, _, oh in part.intervals:
                    ax.axvspan(float(ol), float(oh), alpha=0.08, color="green")
                drawn = True
            ax.axvline(a0, color="gray", linestyle="--", linewidth=1)
            # Labels are text from the file: no mathtext ($…$), no control characters in the SVG.
            ax.set_title(f"{line(label)} ({outs[0].step})", fontsize=9, parse_math=False)
            others = "; others at the file's values" if held else ""
            ax.set_xlabel(
                f"{line(str(w.symbol))}   ({w.name}; dashed: the file's value {a0:g}{others})",
                fontsize=7,
                parse_math=False,
            )
            if drawn:
                ax.legend(fontsize=7, loc="best")
            else:
                ax.text(0.5, 0.5, "does not depend on it", ha="center", transform=ax.transAxes)
    fig.suptitle(
        "bands: where each printed value is a correct rounding (y); green: the symbol's "
        "certified interval (x)",
        fontsize=8,
    )
    fig.tight_layout()
    return _save(fig, out, "whatif", ("png", "svg"))


def _save(fig: Any, out: files.OutputFolder, stem: str, exts: tuple[str, ...]) -> list[str]:
    plt = _pyplot(out, f"{stem}.{exts[0]}")
    written = []
    try:
        for ext in exts:
            name = f"{stem}.{ext}"
            try:
                fig.savefig(
                    out.path(name),
                    dpi=120 if ext == "png" else None,
                    metadata={"Date": None} if ext == "svg" else None,
                )
            except OSError as e:
                raise files.OutputError(
                    f"{out.final(name)}: cannot write the file ({e.strerror or e})"
                ) from None
            written.append(str(out.final(name)))
    finally:
        plt.close(fig)
    return written


def plot_sharpness(r: WhatIf, out: files.OutputFolder) -> list[str]:
    """``sharpness.png``: each softmax row's largest weight and entropy against the divisor."""
    if not r.sharpness:
        return []
    plt = _pyplot(out, "sharpness.png")
    heads = r.sharpness[:MAX_HEAD_PANELS]
    fig, axes = plt.subplots(
        2, len(heads), figsize=(max(6.0, 4.2 * len(heads)), 5.6), squeeze=False
    )
    for col, sh in enumerate(heads):
        s0 = float(sh.divisor)
        if not s0 > 0:
            continue
        grid = [s0 * 2 ** (k / 20) for k in range(-80, 81)]  # s0/16 … 16·s0, log-spaced
        top, bottom = axes[0, col], axes[1, col]
        for i, row in enumerate(sh.scores):
            n = sum(x != -math.inf for x in row)
            if n == 0:
                continue
            ps = softmax_at(row, grid)
            colour = f"C{i % 10}"
            top.plot(grid, [max(p) for p in ps], color=colour, label=f"row {i}")
            bottom.plot(grid, [entropy(p) for p in ps], color=colour, label=f"row {i} (max ln {n})")
        for ax in (top, bottom):
            ax.set_xscale("log", base=2)
            ax.axvline(s0, color="gray", linestyle="--", linewidth=1)
            ax.legend(fontsize=6, loc="best")
        top.set_title(f"{sh.head}: largest attention weight", fontsize=9, parse_math=False)
        top.set_ylim(0, 1.02)
        bottom.set_title(f"{sh.head}: entropy of each row (nats)", fontsize=9, parse_math=False)
        bottom.set_xlabel(
            f"score divisor (√d_k); dashed: the file's {typeset(sh.divisor)} = {s0:.4g}",
            fontsize=8,
            parse_math=False,
        )
    fig.suptitle(
        "softmax of the article's scores QKᵀ / s (float64, a picture)",
        fontsize=9,
    )
    fig.tight_layout()
    return _save(fig, out, "sharpness", ("png",))
