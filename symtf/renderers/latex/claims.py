"""What the article printed beside each step, with its verdict: the printed matrix with its
wrong entries marked, the table of claims, displayed arithmetic as written, and the
symbolic and searched readings of a value that depends on a symbol.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, cast

import sympy

from symtf.checking.wording import place
from symtf.renderers._wording import (
    also_text,
    depends_words,
    once_each,
    printed_grid,
    sentence,
    short_decimal,
    symbolic_detail,
    where_in_step,
)
from symtf.renderers.latex.expressions import expression_latex
from symtf.renderers.latex.matrices import bmatrix
from symtf.renderers.latex.names import label_tex
from symtf.renderers.latex.numbers import num
from symtf.renderers.latex.options import GOOD, MARKS, LatexOptions
from symtf.renderers.tex import escape, math_text

if TYPE_CHECKING:
    from symtf.checking.report import Check, ClaimResult


def printed_cell(text: str) -> str:
    if text.strip().lower() in ("-inf", "-∞", "−∞") or "infty" in text:
        return r"-\infty"
    if re.fullmatch(r"[+-]?\d+(\.\d*)?([eE][+-]?\d+)?|[+-]?\d+/\d+|[+-]?\.\d+", text):
        return text
    return math_text(text)


def _printed_matrix(result: ClaimResult, opts: LatexOptions) -> str:
    """What the article printed, shaped as printed; entries that are off are underlined in red."""
    cells = [[_mark_printed(c) for c in row] for row in printed_grid(result)]
    if len(cells) == 1 and len(cells[0]) == 1:
        return cells[0][0]
    return bmatrix(cells, opts.max_rows, opts.max_cols)


def _mark_printed(c: Check) -> str:
    cell = printed_cell(c.printed)
    if c.verdict in GOOD:
        return cell
    if c.verdict == "symbolic":  # its own colour: a value that depends on a symbol is no error
        return r"\symtfdepends{" + cell + "}"
    return r"\symtfwrong{" + cell + "}"


def counts_text(checks: Sequence[Check]) -> str:
    counts: dict[str, int] = {}
    for c in checks:
        counts[c.verdict] = counts.get(c.verdict, 0) + 1
    return ", ".join(f"{n} {k}" for k, n in counts.items())


def _verdict_cell(result: ClaimResult) -> str:
    checks = result.checks
    mark = MARKS[result.verdict]
    if len(checks) == 1:
        c = checks[0]
        text = f"{mark}~{escape(c.verdict if c.verdict != 'symbolic' else depends_words(c))}"
        if c.verdict == "rounded" and c.exact:
            text += r" {\footnotesize(exact " + _exact_text(short_decimal(c.exact, 10)) + ")}"
        elif c.verdict not in GOOD and c.expected:
            text += ": " + _bold(c.expected)
        return text
    text = f"{mark}~{escape(counts_text(checks))}"
    depends = sorted({s for c in checks for s in c.extra.get("depends_on") or ()})
    if depends:
        text += r" \symtfdepends{(" + escape("depend on " + ", ".join(depends)) + ")}"
    return text


def _bold(s: str) -> str:
    """A corrected value, in bold (math included)."""
    return r"\textbf{\boldmath " + _exact_text(s) + "}"


def _exact_text(s: str) -> str:
    """A certified decimal string in text mode (math digits, ``\\ldots``)."""
    if s in ("inf", "-inf"):
        return "$" + ("-" if s.startswith("-") else "") + r"\infty$"
    return "$" + num(s if len(s) <= 26 else s[:24] + "…") + "$"


#: A symbol of the file, as the notes typeset it (the names a derivation may give).
_SYMBOL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def _symbolic_tex(c: Check) -> str:
    """A symbolic check's value and solution set, with the maths typeset as maths.

    The closed form is the verdict's own LaTeX of it (``symbolic_latex``); an exact
    solution set over all reals is set from its recorded ends (cut short with ``…``,
    as every certified decimal here); anything else keeps the explanation's words.
    """
    detail = sentence(symbolic_detail(c))
    tex = c.extra.get("symbolic_latex")
    names = c.extra.get("depends_on") or []
    value = _said_value(c)
    lead = f"The exact value is {value}"
    if (
        value is None
        or not detail.startswith(lead)
        or not all(isinstance(n, str) and _SYMBOL_NAME.fullmatch(n) for n in names)
    ):
        return escape(detail)
    out = "The exact value is " + ("$" + tex + "$" if isinstance(tex, str) else escape(value))
    rest = detail[len(lead) :]
    sols = c.extra.get("solutions")
    plain = isinstance(sols, list) and all(
        isinstance(x, dict) and x.get("lo_end", "root") == x.get("hi_end", "root") == "root"
        for x in sols
    )
    if len(names) == 1 and plain and "solutions_range" not in c.extra:
        assert isinstance(sols, list)
        sym = sympy.latex(sympy.Symbol(names[0]))
        printed = "$" + printed_cell(c.printed) + "$"
        if sols:
            sets = r" \cup ".join(_interval_tex(s) for s in sols)
            return out + f"; it prints as {printed} for ${sym} \\in {sets}$."
        return out + f"; no value of ${sym}$ prints as {printed}."
    searched = _searched_tex(c, names)
    if searched is not None:
        return out + searched
    return out + escape(rest)


def _said_value(c: Check) -> str | None:
    """The value as a symbolic check's explanation says it: its short form, or the words
    for one too long to write out (:func:`~symtf.checking.verdict.long_value_words`)."""
    from symtf.checking.verdict import long_value_words

    names = c.extra.get("depends_on") or []
    if c.extra.get("symbolic_latex") is None and all(isinstance(n, str) for n in names):
        long = long_value_words(", ".join(names))
        if long in c.explanation:
            return long
    value = c.extra.get("symbolic_value")
    return value if isinstance(value, str) else None


def _decimal_field(text: Any) -> tuple[Fraction, Fraction] | None:
    """A verdict's decimal field as exact bounds: ``(x, x)``, or the ``…`` cut's bounds."""
    if not isinstance(text, str) or not re.fullmatch(r"-?[0-9]+(\.[0-9]+)?…?", text):
        return None
    digits = text.rstrip("…")
    x = Fraction(digits)
    if not text.endswith("…"):
        return x, x
    ulp = Fraction(1, 10 ** len(digits.partition(".")[2]))
    return (x - ulp, x) if x < 0 else (x, x + ulp)  # a cut goes toward zero


#: Most decimals a searched interval's ends are printed with.
SEARCHED_DECIMALS = 12


def searched_ends(s: dict[str, Any]) -> tuple[Fraction, Fraction, int] | None:
    """A searched interval's ends rounded outward, and the decimals they are printed with.

    Each end is certified to lie within its ``lo_within`` / ``hi_within`` bounds; the
    lower end is rounded down from the lowest place it can be, the upper end up from the
    highest, so the printed interval holds the certified one. The decimals are the fewest
    for which rounding widens the interval by at most a tenth of its certain width
    (``[0.99914, 1.00056]``), at most :data:`SEARCHED_DECIMALS`. ``None`` when a field
    is missing or is not a decimal.
    """
    lo_in, hi_in = s.get("lo_within"), s.get("hi_within")
    if not (isinstance(lo_in, list) and isinstance(hi_in, list) and len(lo_in) == len(hi_in) == 2):
        return None
    bounds = [_decimal_field(x) for x in (*lo_in, *hi_in)]
    if any(b is None for b in bounds):
        return None
    (lo_a, _), (_, lo_b), (hi_a, _), (_, hi_b) = cast(list[tuple[Fraction, Fraction]], bounds)
    width = hi_a - lo_b  # the stretch certainly inside
    n = 1
    while n < SEARCHED_DECIMALS and (width <= 0 or 20 * Fraction(1, 10**n) > width):
        n += 1
    scale = 10**n
    return Fraction(math.floor(lo_a * scale), scale), Fraction(math.ceil(hi_b * scale), scale), n


def _searched_tex(c: Check, names: Sequence[str]) -> str | None:
    """A searched solution set as maths: ``; it prints as 0.707 for a ∈ [0.99914, 1.00056]
    (searched a ∈ [−10, 10])``, from the verdict's fields (``None`` if one is missing)."""
    from symtf.numbers import format_fixed

    sols, searched = c.extra.get("solutions"), c.extra.get("solutions_range")
    if len(names) != 1 or not isinstance(sols, list) or not isinstance(searched, list):
        return None
    ends = [_decimal_field(x) for x in searched]
    if len(ends) != 2 or any(e is None or e[0] != e[1] for e in ends):
        return None
    sym = sympy.latex(sympy.Symbol(names[0]))
    pieces, notes = [], []
    for s in sols:
        got = searched_ends(s) if isinstance(s, dict) else None
        if got is None:
            return None
        lo, hi, n = got
        exact_lo = _decimal_field(s["lo_within"][0]) == _decimal_field(s["lo_within"][1])
        exact_hi = _decimal_field(s["hi_within"][0]) == _decimal_field(s["hi_within"][1])
        # an end known exactly and printed as it is keeps its own bracket; a rounded one is closed
        left = (
            "("
            if exact_lo and not s.get("lo_closed") and lo == Fraction(s["lo_within"][0])
            else "["
        )
        right = (
            ")"
            if exact_hi and not s.get("hi_closed") and hi == Fraction(s["hi_within"][1])
            else "]"
        )
        pieces.append(left + num(format_fixed(lo, n)) + r",\ " + num(format_fixed(hi, n)) + right)
        for side, word in (("lo", "lower"), ("hi", "upper")):
            kind = s.get(side + "_end", "root")
            if kind == "unresolved":
                notes.append(f"its {word} end is not certain: the set may go on past it")
            elif kind == "search-range":
                notes.append(f"its {word} end is the search range's end")
    printed = "$" + printed_cell(c.printed) + "$"
    rng = rf"${sym} \in [{num(str(searched[0]))},\ {num(str(searched[1]))}]$"
    if pieces:
        text = f"; it prints as {printed} for ${sym} \\in " + r" \cup ".join(pieces) + "$"
    else:
        text = f"; no value of ${sym}$ is certified to print as {printed}"
    text += " (searched " + rng
    cells = c.extra.get("solutions_unresolved") or []
    if cells:
        text += escape(f"; {len(cells)} stretch(es) undecided")
        stopped = c.extra.get("solutions_stopped")
        if isinstance(stopped, str):
            text += escape(": " + stopped)
    text += ")"
    if notes:
        text += escape("; " + "; ".join(once for once in dict.fromkeys(notes)))
    return text + "."


def _interval_tex(s: dict[str, Any]) -> str:
    """One interval of a solution set in maths (``[0.958333…, 1.04166…]``)."""

    def end(v: Any) -> str:
        text = str(v)
        if len(text) <= 10 or "e" in text.lower():
            return num(text)
        return num(text.rstrip("…")[:9] + "…")

    lo = r"(-\infty" if s.get("lo") is None else ("[" if s["lo_closed"] else "(") + end(s["lo"])
    hi = r"\infty)" if s.get("hi") is None else end(s["hi"]) + ("]" if s["hi_closed"] else ")")
    return lo + ", " + hi


def _correction_items(results: Sequence[ClaimResult]) -> list[str]:
    items = []
    off = [(r, c) for r in results for c in r.checks if c.verdict not in GOOD]
    for r, c, also in once_each(off):
        where = "" if c.index is None or len(r.checks) == 1 else f", {place(c.index, None)}"
        head = rf"{MARKS[c.verdict]}~{{\itshape {label_tex(r.claim.label)}}}{escape(where)}: printed ${printed_cell(c.printed)}$"
        if c.verdict == "symbolic" and not c.extra.get("as_displayed"):
            items.append(
                head + r", \symtfdepends{" + escape(depends_words(c)) + "}. " + _symbolic_tex(c)
            )
            continue
        if c.expected is not None and c.verdict not in ("undecided", "symbolic"):
            head += ", correct value " + _bold(c.expected)
        if c.exact:
            head += ", exact value " + _exact_text(c.exact)
        head += ". " + escape(sentence(c.explanation))
        if also:
            head += " " + escape(also_text(also))
        items.append(head)
    return items


def claims_table(results: Sequence[ClaimResult], opts: LatexOptions) -> str:
    rows = []
    for r in results:
        where = where_in_step(r)
        label = label_tex(r.claim.label) + (
            r" {\footnotesize(" + escape(where) + ")}" if where else ""
        )
        printed = _printed_matrix(r, opts)
        rows.append(
            f"{label} & \\symtffitto{{0.4\\linewidth}}{{${printed}$}} & {_verdict_cell(r)} \\\\"
        )
    out = (
        "\\begin{center}\\small\n"
        "\\begin{tabular}{>{\\raggedright\\arraybackslash}p{0.27\\linewidth} c >{\\raggedright\\arraybackslash}p{0.25\\linewidth}}\n"
        "\\toprule\nIn the article & Printed & Verdict \\\\\n\\midrule\n"
        + "\n".join(rows)
        + "\n\\bottomrule\n\\end{tabular}\n\\end{center}\n"
    )
    items = _correction_items(results)
    if items:
        # long certified decimals and labels cannot be hyphenated: let the lines go loose
        out += (
            "\\begin{itemize}\\sloppy\n"
            + "\n".join(f"\\item {i}" for i in items)
            + "\n\\end{itemize}\n"
        )
    return out


def displayed_block(
    results: Sequence[ClaimResult], opts: LatexOptions, names: dict[str, str] | None = None
) -> str:
    """Displayed arithmetic: the line as the article wrote it, its verdict and any correction."""
    parts = ["\\paragraph{Arithmetic as displayed in the article.}\n"]
    parts.append("\\begin{itemize}\\sloppy\n")
    for r in results:
        expr = expression_latex(r.claim.expression or "", names)
        printed = _printed_matrix(r, opts)
        line = (
            rf"\item {MARKS[r.verdict]}~{{\itshape {label_tex(r.claim.label)}}}:"
            rf"\par{{\centering\symtfpick{{$\displaystyle {expr} \approx {printed}$}}"
            rf"{{$\displaystyle {expr} \approx {printed}$}}"
            rf"{{$\displaystyle\begin{{aligned}}&{expr} \\ &\approx {printed}\end{{aligned}}$}}\par}}"
        )
        for c in r.checks:
            where = "" if len(r.checks) == 1 or c.index is None else f"entry {c.index[1] + 1}: "
            bits = _prose(where + sentence(c.explanation), r.claim.expression or "", c, names)
            if c.verdict not in GOOD and c.expected is not None:
                bits += " Correct value " + _bold(c.expected) + "."
            if len(r.checks) == 1 or c.verdict not in GOOD:
                line += "\n" + bits
        if len(r.checks) > 1 and r.verdict in GOOD:
            line += "\n" + escape(f"All {len(r.checks)} entries: {counts_text(r.checks)}.")
        parts.append(line + "\n")
    parts.append("\\end{itemize}\n")
    return "".join(parts)


def _prose(text: str, expression: str, c: Check, names: dict[str, str] | None) -> str:
    r"""An explanation of a displayed line, with the line itself typeset as maths.

    The explanation is plain text; the places where it quotes the line (as written, or
    with its unrounded operands), each followed by ``= value``, are rendered by
    :func:`expression_latex`, and everything else is escaped. The text is split at
    those known strings, never searched for markup.
    """
    from symtf.language.latexmath import split_chain

    text, tail = _searched_tail(text, c)
    reading = c.extra.get("exact_reading") or {}
    # each piece: the text quoted, the line it quotes, and the digits it shows in place
    # of that line's literals (by position in the line)
    links = [link for _, link in split_chain(expression)[0]]
    pieces: list[tuple[str, str, dict[int, str] | None]] = [(expression, expression, None)]
    if len(links) > 1:  # a chain's explanation quotes its links one at a time
        pieces += [(link, link, None) for link in links]
    subs: dict[int, str] | None
    if reading.get("unrounded"):
        j = c.extra.get("link")
        # a chain's reading is its deciding link's: the positions are in that link
        line = (
            links[j]
            if len(links) > 1 and isinstance(j, int) and 0 <= j < len(links)
            else expression
        )
        subs = {int(o["position"]): str(o["unrounded"]) for o in reading.get("operands", ())}
        pieces.insert(0, (str(reading["unrounded"]), line, subs))
    out, k = [], 0
    number = re.compile(r" = (\(?-?[0-9][0-9.]*(?:e-?[0-9]+)?…?\)?|\(undecided\))")
    while k < len(text):
        hits = [(_quoted(text, p, k), p, line, subs) for p, line, subs in pieces if p]
        hits = [h for h in hits if h[0] >= 0]
        if not hits:
            break
        at, p, line, subs = min(hits, key=lambda h: (h[0], -len(h[1])))
        end = at + len(p)
        m = number.match(text, end)
        maths = expression_latex(line, names, subs)
        if m is not None:
            value = m.group(1)
            shown = (
                escape(value) if value.startswith("(undecided") else value.replace("…", r"\ldots")
            )
            maths += " = " + shown
            end = m.end()
        out += [escape(text[k:at]), f"${maths}$"]
        k = end
    out.append(escape(text[k:]))
    return "".join(out) + tail


def _quoted(text: str, piece: str, start: int) -> int:
    """Where ``text`` quotes ``piece`` from ``start`` on, as a whole (not inside a longer
    number or name: ``0.6`` is not quoted by ``0.65``); -1 when it does not."""
    at = text.find(piece, start)
    while at >= 0:
        before = text[at - 1] if at > 0 else " "
        after = text[at + len(piece)] if at + len(piece) < len(text) else " "
        if not (before.isalnum() or before in "._" or after.isalnum() or after == "_"):
            return at
        at = text.find(piece, at + 1)
    return -1


def _searched_tail(text: str, c: Check) -> tuple[str, str]:
    """A symbolic explanation's value and searched set, set as maths (see :func:`_searched_tex`).

    The explanation is cut where it says the value the verdict records
    (``symbolic_value``); what follows it is the searched set, written from the
    verdict's fields. Returns the text before, and the LaTeX of the rest (``""`` when
    there is no searched set to write).
    """
    value, names = _said_value(c), c.extra.get("depends_on") or []
    if c.verdict != "symbolic" or value is None:
        return text, ""
    if not all(isinstance(n, str) and _SYMBOL_NAME.fullmatch(n) for n in names):
        return text, ""
    said = "the exact value is " + value
    k = text.find(said)
    rest = text[k + len(said) :] if k >= 0 else ""
    searched = _searched_tex(c, names) if rest.startswith("; ") else None
    if searched is None or not rest.rstrip(".").endswith(")"):
        return text, ""
    tex = c.extra.get("symbolic_latex")
    shown = "$" + tex + "$" if isinstance(tex, str) else escape(value)
    return text[:k], "the exact value is " + shown + searched
