"""Lay out an exercise: the student sheet and the answer key (LaTeX and HTML), and the
answer template a student fills in.

Renderers only: every number here was computed and certified in
:mod:`symtf.teach.exercise`. The HTML pages are self-contained (inline CSS, no
JavaScript, nothing fetched from the network) and readable on a phone.
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

import sympy

from symtf.renderers.html import head
from symtf.renderers.latex import escape, standalone
from symtf.spec import Derivation
from symtf.teach.exercise import KeyEntry, blanked_cells, hidden_expressions, hidden_reductions
from symtf.teach.worked import number
from symtf.trace import Trace


@dataclass(frozen=True)
class Exercise:
    """Everything a sheet and a key are drawn from."""

    derivation: Derivation
    trace: Trace
    key: list[KeyEntry]
    seed: int
    fresh: bool


# ----------------------------------------------------------------------------- model data


def _weights(d: Derivation) -> list[tuple[str, sympy.MatrixBase]]:
    """Every matrix of the model a student needs, named by its path (``layers[0].heads[1].W_Q``).

    Read from the model's fields, so decoders, attention-only and encoder–decoder
    models are all listed the same way; a tied unembedding is left out (it is the
    embedding transposed).
    """
    out: list[tuple[str, sympy.MatrixBase]] = []

    def walk(obj: object, path: str) -> None:
        if isinstance(obj, sympy.MatrixBase):
            out.append((path, obj))
        elif isinstance(obj, tuple) and obj and all(dataclasses.is_dataclass(x) for x in obj):
            for k, x in enumerate(obj):
                walk(x, f"{path}[{k}]")
        elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            for f in dataclasses.fields(obj):
                if f.name in ("generate", "standalone"):
                    continue
                walk(getattr(obj, f.name), f"{path}.{f.name}" if path else f.name)

    walk(d.model, "")
    m = d.model
    if getattr(m, "tied", False):
        out = [(k, v) for k, v in out if k != "unembed"]
    for s in getattr(m, "standalone", ()):
        out.append((f"{s.name} (input)", s.input))
    return out


def _settings(d: Derivation) -> list[tuple[str, str]]:
    """The model's settings (text, numbers and switches), as written in its fields."""
    m = d.model
    out = []
    positional = getattr(m, "positional", "")
    skip = set()
    if positional not in ("rope", "sinusoidal"):
        skip.add("pos_base")
    if positional != "rope":
        skip.add("rope_pairs")
    for f in dataclasses.fields(m):
        if f.name in skip:
            continue
        v = getattr(m, f.name)
        if f.name in ("vocab", "source_vocab") and v:
            out.append((f.name, ", ".join(v)))
        elif isinstance(v, (str, int, bool)) and not isinstance(v, sympy.Basic):
            out.append((f.name, str(v)))
        elif isinstance(v, sympy.Expr) and not isinstance(v, sympy.MatrixBase):
            out.append((f.name, sympy.sstr(v)))
    if getattr(m, "scale", None) is None and m.architecture != "none":
        out.append(("score divisor", "√d_head"))
    if m.architecture == "decoder" and m.vocab:
        out.append(("input", " ".join(m.vocab[i] for i in d.tokens)))
    return out


def _dec(n: int) -> str:
    return f"{n} decimal" + ("" if n == 1 else "s")


def _cell_text(trace: Trace, e: sympy.Expr) -> str:
    return number(trace, e)[0].text


def _cell_tex(trace: Trace, e: sympy.Expr) -> str:
    return number(trace, e)[0].tex


# ----------------------------------------------------------------------------- LaTeX


def _tex_table(rows: Sequence[Sequence[str]]) -> str:
    cols = max(len(r) for r in rows)
    body = " \\\\\n".join(" & ".join(r) for r in rows)
    return "\\[\\left[\\begin{array}{" + "r" * cols + "}\n" + body + "\n\\end{array}\\right]\\]\n"


def _blank_tex(bid: str) -> str:
    return r"\fbox{\rule{0pt}{1.6ex}\scriptsize\,\texttt{" + bid + r"}\,}"


def _steps_tex(ex: Exercise, *, key: bool) -> str:
    d, t = ex.derivation, ex.trace
    blanks = [k.blank for k in ex.key]
    cells = blanked_cells(blanks, d, t)
    hidden = hidden_expressions(d, blanks, t) | hidden_reductions(d, blanks, t)
    out = []
    for c in d.claims:
        if c.assertion is not None:
            continue
        head = r"\paragraph{" + escape(c.label) + "}"
        if c.step is not None and c.step in t:
            st = t[c.step]
            head += " " + escape(st.title) + r" \hfill{\small\texttt{" + escape(c.step) + "}}"
        out.append(head + "\n")
        if c.label in hidden:
            out.append(r"\emph{(left out: it would show a blank's value)}" + "\n\n")
            continue
        if c.expression is not None:
            shown = escape(c.expression)
            res = " ".join(p.text for row in c.printed for p in row)
            out.append(r"\texttt{" + shown + r"} $=$ " + escape(res) + "\n\n")
            continue
        if c.word is not None:
            out.append(escape(f"printed: {c.word}") + "\n\n")
            continue
        rows = []
        for r_, row in enumerate(c.printed):
            line = []
            for k, p in enumerate(row):
                bid = cells.get((c.label, r_, k))
                line.append(_blank_tex(bid) if bid else (r"-\infty" if p.is_neg_inf else p.text))
            rows.append(line)
        out.append(_tex_table(rows))
    return "".join(out)


def sheet_tex(ex: Exercise) -> str:
    """The student sheet as a LaTeX document."""
    d, t = ex.derivation, ex.trace
    parts = [
        r"\sloppy",
        r"\section*{Instructions}",
        "Work out each boxed blank by hand from the model below and the numbers before it. "
        "Give each answer rounded to the decimals asked (half up), and write it into the "
        r"answer file (\texttt{answers.toml}) under its name.",
        r"\section*{The model}",
        r"\begin{itemize}",
        *[r"\item " + escape(f"{k}: {v}") for k, v in _settings(d)],
        r"\end{itemize}",
    ]
    for name, m in _weights(d):
        parts.append(r"\paragraph{" + escape(name) + "}")
        parts.append(
            _tex_table([[_cell_tex(t, m[i, j]) for j in range(m.cols)] for i in range(m.rows)])
        )
    parts.append(r"\section*{The worked example}")
    parts.append(_steps_tex(ex, key=False))
    parts.append(r"\section*{Blanks}")
    parts.append(r"\begin{itemize}")
    for k in ex.key:
        b = k.blank
        parts.append(
            r"\item \texttt{"
            + b.id
            + "}: "
            + escape(f"{b.label} [{b.index[0]}, {b.index[1]}], ")
            + escape(k.title)
            + escape(f" — {_dec(b.decimals)}")
        )
    parts.append(r"\end{itemize}")
    return standalone(f"Exercise: {d.title}", "\n".join(parts), subtitle=_subtitle(ex))


def _subtitle(ex: Exercise) -> str:
    s = ex.derivation.source or ""
    return (s + (" — " if s else "") + f"seed {ex.seed}").strip()


#: Widest line of working, in rough printed characters, before it is broken.
_MAX_TEX_LINE = 62


def _visible(tex: str) -> int:
    return len(re.sub(r"\\[A-Za-z]+|[{}_^&]", "", tex))


def _break(rel: str, tex: str) -> list[str]:
    """``rel + tex`` as align lines, broken before a top-level ``+``/``-`` when too wide."""
    pieces, depth, start = [], 0, 0
    for k, ch in enumerate(tex):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif depth == 0 and tex.startswith((" + ", " - "), k) and k > start:
            pieces.append(tex[start:k])
            start = k + 1
    pieces.append(tex[start:])
    lines, cur = [], rel + pieces[0]
    for p in pieces[1:]:
        if _visible(cur + p) > _MAX_TEX_LINE:
            lines.append(cur)
            cur = r"&\quad " + p
        else:
            cur += " " + p
    lines.append(cur)
    return lines


def key_tex(ex: Exercise) -> str:
    """The answer key as a LaTeX document."""
    parts = []
    for k in ex.key:
        b = k.blank
        parts.append(
            r"\subsection*{\texttt{"
            + b.id
            + "}: "
            + escape(f"{b.label} [{b.index[0]}, {b.index[1]}]")
            + "}"
        )
        parts.append(escape(k.title) + r" \hfill{\small\texttt{" + escape(b.step) + "}}\n")
        lines = []
        lhs = r"\texttt{" + escape(f"{b.step}[{b.index[0]},{b.index[1]}]") + "}"
        w = k.worked
        if w.formula is not None:
            first = _break("&= ", w.formula.tex)
            lines += [lhs + " " + first[0], *first[1:]]
        if w.substituted is not None:
            lines += _break("&\\approx " if w.approximate else "&= ", w.substituted.tex)
        if k.closed_tex is not None:
            lines.append("&= " + k.closed_tex)
        if k.exact is not None:
            exact = k.exact.replace("…", r"\ldots")
            lines.append(("&\\approx " if "…" in k.exact else "&= ") + exact)
        if w.formula is None and ex.trace[b.step].formula:
            lines.insert(0, f"{lhs} &: {ex.trace[b.step].formula}")
        elif lines and w.formula is None:
            lines[0] = lhs + " " + lines[0]
        if lines:
            parts.append("\\begin{align*}\n" + " \\\\\n".join(lines) + "\n\\end{align*}\n")
        ans = k.answer if k.answer is not None else "(undecided)"
        parts.append(
            r"\textbf{Answer: "
            + escape(ans)
            + "}"
            + escape(f" (the exact value rounded {b.rounding} to {_dec(b.decimals)})")
            + "\n\n"
        )
        if k.printed_verdict not in ("exact", "rounded"):
            parts.append(
                escape(f"The derivation printed {b.printed} here: {k.printed_verdict}.") + "\n\n"
            )
    title = f"Answer key: {ex.derivation.title}"
    return standalone(title, "\n".join(parts), subtitle=_subtitle(ex))


# ----------------------------------------------------------------------------- HTML

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:52rem;margin:auto;
padding:1rem;line-height:1.45;color:#222}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ccc}
h3{font-size:1rem;margin:1.2rem 0 .3rem}
.scroll{overflow-x:auto}table.m{border-collapse:collapse;margin:.3rem 0;font-variant-numeric:tabular-nums}
table.m td{padding:.15rem .5rem;text-align:right;border-left:1px solid #eee;font-family:ui-monospace,monospace}
.blank{display:inline-block;min-width:3.5rem;border:1.5px solid #333;border-radius:3px;
text-align:center;font-size:.8rem;color:#555}
.step{color:#777;font-size:.85rem;font-family:ui-monospace,monospace}
.work{font-family:ui-monospace,monospace;white-space:pre-wrap;background:#f7f7f7;padding:.4rem .6rem;
border-radius:4px;overflow-x:auto}
.answer{font-weight:bold}.note{color:#a33}
"""


def _page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n{head(title, _CSS)}\n<body>\n'
        f"<h1>{html.escape(title)}</h1>\n{body}\n</body>\n</html>\n"
    )


def _html_table(rows: Sequence[Sequence[str]]) -> str:
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<div class="scroll"><table class="m">{body}</table></div>\n'


def sheet_html(ex: Exercise) -> str:
    """The student sheet as one self-contained HTML page."""
    d, t = ex.derivation, ex.trace
    e = html.escape
    blanks = [k.blank for k in ex.key]
    cells = blanked_cells(blanks, d, t)
    hidden = hidden_expressions(d, blanks, t) | hidden_reductions(d, blanks, t)
    out = [
        f"<p>{e(_subtitle(ex))}</p>",
        "<h2>Instructions</h2><p>Work out each boxed blank by hand from the model below and the "
        "numbers before it. Give each answer rounded to the decimals asked (half up), and write "
        "it into the answer file (<code>answers.toml</code>) under its name.</p>",
        "<h2>The model</h2><ul>",
    ]
    out += [f"<li>{e(k)}: {e(v)}</li>" for k, v in _settings(d)]
    out.append("</ul>")
    for name, m in _weights(d):
        out.append(f"<h3>{e(name)}</h3>")
        out.append(
            _html_table([[e(_cell_text(t, m[i, j])) for j in range(m.cols)] for i in range(m.rows)])
        )
    out.append("<h2>The worked example</h2>")
    for c in d.claims:
        if c.assertion is not None:
            continue
        step = (
            f' <span class="step">{e(t[c.step].title)} · {e(c.step)}</span>' if c.step in t else ""
        )
        out.append(f"<h3>{e(c.label)}{step}</h3>")
        if c.label in hidden:
            out.append("<p><em>(left out: it would show a blank's value)</em></p>")
            continue
        if c.expression is not None:
            res = " ".join(p.text for row in c.printed for p in row)
            out.append(f"<p><code>{e(c.expression)}</code> = {e(res)}</p>")
            continue
        if c.word is not None:
            out.append(f"<p>printed: {e(c.word)}</p>")
            continue
        rows = []
        for r_, row in enumerate(c.printed):
            line = []
            for k, p in enumerate(row):
                bid = cells.get((c.label, r_, k))
                line.append(
                    f'<span class="blank">{bid}</span>'
                    if bid
                    else e("−∞" if p.is_neg_inf else p.text)
                )
            rows.append(line)
        out.append(_html_table(rows))
    out.append("<h2>Blanks</h2><ul>")
    for k in ex.key:
        b = k.blank
        out.append(
            f"<li><b>{b.id}</b>: {e(b.label)} [{b.index[0]}, {b.index[1]}], {e(k.title)} — "
            f"{_dec(b.decimals)}</li>"
        )
    out.append("</ul>")
    return _page(f"Exercise: {d.title}", "\n".join(out))


def key_html(ex: Exercise) -> str:
    """The answer key as one self-contained HTML page."""
    e = html.escape
    out = [f"<p>{e(_subtitle(ex))}</p>"]
    for k in ex.key:
        b = k.blank
        out.append(
            f'<h3 id="{b.id}">{b.id}: {e(b.label)} [{b.index[0]}, {b.index[1]}] '
            f'<span class="step">{e(k.title)} · {e(b.step)}</span></h3>'
        )
        lhs = f"{b.step}[{b.index[0]},{b.index[1]}]"
        lines = []
        w = k.worked
        if w.formula is not None:
            lines.append(f"{lhs} = {w.formula.text}")
        if w.substituted is not None:
            lines.append(("  ≈ " if w.approximate else "  = ") + w.substituted.text)
        if k.closed is not None:
            lines.append("  = " + k.closed)
        if k.exact is not None:
            lines.append(("  ≈ " if "…" in k.exact else "  = ") + k.exact)
        if lines and w.formula is None:
            lines[0] = lhs + lines[0]
        out.append(f'<div class="work">{e(chr(10).join(lines))}</div>')
        ans = k.answer if k.answer is not None else "(undecided)"
        out.append(
            f'<p><span class="answer">Answer: {e(ans)}</span> (the exact value rounded '
            f"{e(b.rounding)} to {_dec(b.decimals)})</p>"
        )
        if k.printed_verdict not in ("exact", "rounded"):
            out.append(
                f'<p class="note">The derivation printed {e(b.printed)} here: '
                f"{e(k.printed_verdict)}.</p>"
            )
    return _page(f"Answer key: {ex.derivation.title}", "\n".join(out))


# ----------------------------------------------------------------------------- answers


def answer_template(ex: Exercise, key_file: str) -> str:
    """The TOML file a student fills in and ``symtf grade`` reads."""
    lines = [
        f"# Answers for: {ex.derivation.title}",
        '# Write each answer as a string with the decimals asked, e.g. b1 = "0.496".',
        '# Leave a blank empty ("") if you did not work it out.',
        f"# Graded with: symtf grade {key_file} THIS_FILE",
        "",
        'student = ""',
        "",
        "[answers]",
    ]
    for k in ex.key:
        b = k.blank
        note = f"{b.label} [{b.index[0]}, {b.index[1]}], {k.title}, {_dec(b.decimals)}"
        lines.append(f'{b.id} = ""  # {json.dumps(note, ensure_ascii=False)[1:-1]}')
    return "\n".join(lines) + "\n"


__all__ = ["Exercise", "answer_template", "key_html", "key_tex", "sheet_html", "sheet_tex"]
