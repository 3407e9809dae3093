"""What a printed number of the article stands for, read from the printings around it.

A literal of a displayed line may repeat an entry printed shortly before it (``0.4683``
written again in ``0.4683 × 2``): :func:`stands_for` links it to that entry, so the
line's exact reading takes the entry's unrounded value. A single number the article
sets in its maths (``$d_k=2$``) is a constant it states (:func:`_stated_constant`); a
column written out as a list is the column (:func:`_column_for_row`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from symtf.draft.article import Display, Printing
from symtf.draft.infer.target import Known, Outcome, Placement
from symtf.errors import ExpressionError
from symtf.language import latexmath

__all__ = [
    "STANDS_WINDOW",
    "defined_reduction",
    "entry_mention",
    "running_repeat",
    "stands_for",
    "stated_operands",
]

#: Lines within which a displayed literal may repeat an entry printed before it.
STANDS_WINDOW = 30


def _literals(d: Display) -> list[str]:
    """The decimal literals of a displayed line, as written (``-0.728`` where a minus sign
    stands right before it: ``1.039 + (-0.728)``)."""
    try:
        parsed = latexmath.parse(d.latex, where="display")
    except ExpressionError:
        return []
    out = []
    for lit in parsed.literals:
        if "." not in lit.text:
            continue
        signed = re.search(rf"(?:^|[(\[{{,=+]|\s)\s*[-−]\s*{re.escape(lit.text)}(?![\d.])", d.latex)
        out.append(f"-{lit.text}" if signed else lit.text)
    return out


def _column_for_row(shape: tuple[int, ...], printed: tuple[int, ...]) -> bool:
    """Whether a step of shape ``shape`` (n×1) is printed as the row ``printed`` (1×n)."""
    return len(shape) == 2 and shape[1] == 1 and shape[0] > 1 and printed == (1, shape[0])


#: A constant set in the article's maths: ``d_k=2``, ``\\gamma = 1``, ``n_{heads} = 4``.
_SETTING = re.compile(
    r"(?:\\?[A-Za-z]+(?:_\{?[A-Za-z0-9]+\}?)?(?:\^\{?\d\}?)?(?:\([^()]*\))?|\|[A-Za-z\\]+\|)"
    r"\s*=\s*-?\d+(?:\.\d+)?"
)


#: The same setting in a list of prose, its meaning in words in parentheses after it:
#: ``N = 6 (number of layers)``, ``dk = dv = 64 (dimensions per head)``.
_SETTING_NAMED = re.compile(
    r"(?:\\?[A-Za-z]+(?:_\{?[A-Za-z0-9]+\}?)?\s*=\s*)+\d+(?:\.\d+)?\s*\([^()\d]*\)\.?"
)


def _stated_constant(p: Printing) -> Outcome | None:
    """A single number that the article sets as a constant in its maths (``$d_k=2$``,
    ``$\\gamma = 1$``, ``$\\sigma^2 = 1$``, a probability it gives, ``$P(X = 1) = 0.7$``, a
    count, ``$|E| = 3$``): an input it states, not a value it computes. Only the whole
    setting counts, a symbol and the number alone, never a number inside a sentence."""
    if p.size != 1 or not (
        _SETTING.fullmatch(p.context.strip()) or _SETTING_NAMED.fullmatch(p.context.strip())
    ):
        return None
    return Outcome(p, "given", None, f"a constant the article sets ({p.context.strip()})")


#: Prose right before a number that makes it a token, not a quantity: ``a $1$ keeps that
#: feature``, ``where the column has a $1$``.
_TOKEN = re.compile(r"(?i)(?:^|[\s(])an?\s*\$*\s*$")


def entry_mention(p: Printing, line: str, given: Iterable[Known]) -> Outcome | None:
    r"""A single number in prose that names an entry value of a tensor the article gives,
    not a value it computes: a whole number written as a token (``a $1$ keeps that
    feature`` under 0/1 weight matrices) or the mask's ``−∞`` (``$-\infty$ gets 0``).

    The value must be an entry of a given tensor, as printed there; the mention is then
    an input the article states, counted with its inputs."""
    if p.size != 1 or not p.places or p.cell is not None:
        return None
    text = p.rows[0][0]
    if text in ("-inf", "inf"):
        before_ok = True
    elif text.isdigit():
        col = p.places[0].column or 0
        before_ok = col > 1 and _TOKEN.search(line[: col - 1]) is not None
    else:
        return None
    if not before_ok:
        return None
    for k in given:
        if k.expr is None and any(text in row for row in k.rows):
            name = k.labels[0] if k.labels else "a given tensor"
            return Outcome(p, "given", None, f"an entry value of {name}, which the article gives")
    return None


#: A running value's name and the suffix that says which update it is (``m_new``, ``d_old``).
_RUNNING = re.compile(r"^(.+?)(?:_\{?(?:new|old|prev|cur|curr)\}?)?$")


def _running_name(name: str) -> str:
    m = _RUNNING.match(name.strip())
    return m.group(1) if m else name.strip()


def running_repeat(p: Printing, outcomes: list[Outcome], window: int) -> Outcome | None:
    """A constant set by name that restates the running value of that name computed just
    before: ``m = 9`` or ``m_old = 9`` after ``m_new = max(-∞, 5, 9) = 9``.

    The name (without ``_new``, ``_old``, ``_prev``) and the printed string must both be
    the same as those of a single number the search placed earlier, within ``window``
    lines; the latest such is repeated. Never a guess: another value keeps it a constant."""
    if p.size != 1 or not (
        _SETTING.fullmatch(p.context.strip()) or _SETTING_NAMED.fullmatch(p.context.strip())
    ):
        return None
    name = _running_name(p.context.split("=", 1)[0])
    text = p.rows[0][0]
    for q in sorted(outcomes, key=lambda o: -o.printing.key):
        qp = q.printing
        if qp.key >= p.key or qp.size != 1 or p.lines[0] - qp.lines[0] > window:
            continue
        if q.status != "mapped" or q.placement is None or qp.rows[0][0] != text:
            continue
        if _running_name(qp.label) == name:
            return Outcome(p, "mapped", q.placement, f"restates {qp.label} at line {qp.lines[0]}")
    return None


#: What a name's definition calls it, per reduction: ``m = max(…)`` in code, or a comment
#: or a line of prose naming it (``m = -inf  # running max``, ``**m**: Running maximum``).
_DEFINED = {
    "max": ("max", "maximum", "largest"),
    "sum": ("sum", "total"),
    "mean": ("mean", "average"),
}


def defined_reduction(text: str, name: str) -> str | None:
    """The reduction an article's text defines ``name`` as, if exactly one: assigned from a
    call (``m_new = max(m, m_block)``, ``np.max(x)``), or named by a comment on its
    assignment or a definition in prose (``m = -inf  # Running max``, ``**m**: Running
    maximum``). A name that is not a plain identifier gets none."""
    if not re.fullmatch(r"[A-Za-z_]\w{0,15}", name):
        return None
    n = re.escape(name)
    found = set()
    for kind, words in _DEFINED.items():
        w = "|".join(words)
        forms = (
            rf"(?m)^\s*{n}\s*=\s*(?:\w+\.)*(?:{w})\(",
            rf"(?m)^\s*{n}\s*=[^#\n]*#\s*(?:the\s+)?(?:running\s+)?(?:{w})\b",
            rf"(?im)^\s*(?:\d+\.\s*)?\W*{n}\W{{0,3}}\s*[:—–]\s*(?:the\s+)?(?:running\s+)?(?:{w})\b",
        )
        if any(re.search(f, text, re.IGNORECASE if i else 0) for i, f in enumerate(forms)):
            found.add(kind)
    return found.pop() if len(found) == 1 else None


def stands_for(
    d: Display,
    outcomes: list[Outcome],
    used: dict[tuple[int, int, int], int],
    copies: set[int] | frozenset[int] = frozenset(),
) -> dict[str, tuple[int, int, int]]:
    """Literals of ``d`` that repeat an entry of a printing mapped shortly before (or on its line).

    ``copies``: steps that only put printed values together again; a literal never stands
    for their entries (the checker finds where the value was worked out)."""
    out: dict[str, tuple[int, int, int]] = {}
    near = [
        o
        for o in outcomes
        if o.placement is not None
        and o.placement.known not in copies
        and o.status in ("mapped", "covered", "given")
        and (o.printing.size > 1 or o.printing.role == "result")
        and o.printing.key != d.key
        and o.printing.cell == d.cell
        and 0 <= d.line - o.printing.line <= STANDS_WINDOW
        and not _at_or_after(o.printing, d)
    ]
    near.sort(key=lambda o: (o.printing.line != d.line, d.line - o.printing.line, -o.printing.key))
    expr_text = d.latex
    for text in dict.fromkeys(_literals(d)):
        digits = text.lstrip("-").replace(".", "").lstrip("0")
        if len(digits) < 2 and text.count(".") == 1 and len(text.split(".")[1]) < 2:
            continue  # "0.1": too short to tell one printed entry from another
        for o in near:
            pl = o.placement
            assert pl is not None
            hits = [
                (i, j) for i, r in enumerate(o.printing.rows) for j, c in enumerate(r) if c == text
            ]
            if not hits:
                continue
            place = [_at(pl, i, j) for i, j in hits]
            fresh = [x for x in place if used.get(x, 0) == 0]
            chosen = (fresh or place)[0]
            used[chosen] = used.get(chosen, 0) + 1
            sign_text = text
            if f"-{text}" in expr_text.replace(" ", "") and not text.startswith("-"):
                pass  # the key is the literal as written; a minus sign in front stays an operator
            out[sign_text] = chosen
            break
    return out


def _at_or_after(p: Printing, d: Display) -> bool:
    """Whether ``p`` stands where the display's printed result does, or after it: its
    own result (``[1.0; 2.0]·[0.098, …] = [[…]] = [[0.098, …], [0.196, …]]``) is no value
    its literals repeat."""
    if not p.places or not d.places:
        return False
    a, b = p.places[0], d.places[0]
    if a.line != b.line:
        return a.line > b.line
    return (a.column or 0) >= (b.column or 0)


def _at(pl: Placement, i: int, j: int) -> tuple[int, int, int]:
    if pl.row is not None:
        return (pl.known, pl.row, j)
    if pl.col is not None:
        return (pl.known, i, pl.col)
    if pl.index is not None:
        return (pl.known, *pl.index)
    return (pl.known, i, j)


#: The roles of the literals a displayed line computes from (``[0.4, 0.4] + [0.1, 0]``,
#: ``0.5 × [0.1, 0.0] + …``).
_OPERAND_ROLES = ("operand", "weights")


def _written_numbers(d: Display) -> list[str]:
    """Every number literal of a displayed line's expression, without its sign, in order."""
    try:
        parsed = latexmath.parse(d.latex, where="display")
    except ExpressionError:
        return []
    return [lit.text for lit in parsed.literals]


def _within(entries: list[str], numbers: list[str], *, contiguous: bool) -> bool:
    """Whether ``entries`` are written in ``numbers`` in order (one after another, for the
    entries of one bracketed list; anywhere after each other, for the weights of a sum)."""
    if contiguous:
        n = len(entries)
        return any(numbers[i : i + n] == entries for i in range(len(numbers) - n + 1))
    it = iter(numbers)
    return all(any(e == x for x in it) for e in entries)


def stated_operands(displays: Iterable[Display], outcomes: Iterable[Outcome]) -> list[Outcome]:
    """The operands of displayed lines that no step reproduces, as the inputs they are.

    A line that writes ``[0.45, −0.32] + [0.00, 1.00] = [0.45, 0.68]`` states both vectors
    it adds: they are the line's inputs, read as written, and only its result is a claim.
    Only the first link of a chain computes from inputs: in ``0.4 × [0, 2] + … = [0, 0.8]
    + … = …`` the later link's lists are the values of the earlier link's terms, results
    (checked as such), not inputs. An operand a step of the article already places (a
    repeat of an earlier result) keeps that step; only one left unexplained, its entries
    written in order in the first link of a displayed line on its line, is given.
    """
    first: dict[tuple[int | None, int, str], list[str]] = {}
    for d in displays:
        if (d.cell, d.line, d.chain) not in first:  # a chain's links come in order
            first[(d.cell, d.line, d.chain)] = _written_numbers(d)
    written: dict[tuple[int | None, int], list[list[str]]] = {}
    for (cell, line, _), numbers in first.items():
        written.setdefault((cell, line), []).append(numbers)
    out = []
    for o in outcomes:
        p = o.printing
        if p.role not in _OPERAND_ROLES or p.parts or o.status != "unmapped":
            continue
        if o.placement is not None:
            continue
        entries = [c.lstrip("-−") for r in p.rows for c in r]
        firsts = written.get((p.cell, p.line), [])
        if p.role == "weights":  # the scales of a sum, written apart: each term's own
            firsts = [[x for numbers in firsts for x in numbers]]
        if any(_within(entries, numbers, contiguous=p.role == "operand") for numbers in firsts):
            note = "a literal the displayed line computes from: an input it states"
            out.append(Outcome(p, "given", None, note))
    return out
