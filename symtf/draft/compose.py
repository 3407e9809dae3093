"""Write what the search found as a derivation: given tensors, steps and claims.

The draft is ordinary derivation text (:mod:`symtf.spec`), so it is checked by
the ordinary pipeline and can be saved, edited and checked again. Each step
carries a comment saying what it matched; each claim its article line
(``source_line``) and the place of each printed entry (``places``); a printing no
step explains is a claim with ``step = "?"``
and its best candidates in a comment. Displayed arithmetic becomes expression
claims; a literal that repeats an entry printed shortly before *stands for*
that entry (``e^{2.309}`` after the row ``[1.732, 1.732, 2.309]``), so the line
is also checked with the unrounded value.

A claim that cannot be read (an expression the parser refuses) is left out
with its reason (:class:`Unread`); every other claim is still checked.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from symtf.draft.accounting import Stated, Unmapped, Unread, account, restatements, where
from symtf.draft.article import Article, Display, Printing, ident
from symtf.draft.infer.search import Search
from symtf.draft.infer.target import Known, Outcome, Placement, parse_target
from symtf.draft.names import heading_name
from symtf.draft.read import OutputPlaces
from symtf.draft.read.toml import places_key
from symtf.draft.said import worded_claims
from symtf.draft.sizing import array_refusal, refuse_array
from symtf.draft.tabled import formula_rows
from symtf.draft.templates import Call, Expr, inputs, render
from symtf.errors import ExpressionError, LimitError
from symtf.language import latexmath
from symtf.numbers import ungrouped
from symtf.place import Place
from symtf.visible import comment, toml_block, toml_string

__all__ = ["Composed", "Stated", "Unmapped", "Unread", "compose"]


@dataclass
class Composed:
    """The draft as text, and what it could not infer."""

    toml: str
    unread: list[Unread] = field(default_factory=list)
    unmapped: list[Unmapped] = field(default_factory=list)
    stated: list[Stated] = field(default_factory=list)  # the article's inputs
    printed: int = 0  # printed numbers found in the article
    inputs: int = 0  # of them, the ones that define given tensors
    steps: int = 0
    claims: int = 0


def _s(text: str) -> str:
    """A TOML string that reads back as ``text``: what ``draft`` writes, ``check`` reads,
    and a terminal showing it is not driven by a control character of the article's."""
    return toml_string(text)


def _rows(rows: tuple[tuple[str, ...], ...]) -> str:
    if len(rows) == 1:
        return _s(" ".join(rows[0]))
    return toml_block("\n".join(" ".join(r) for r in rows))


class _Labels:
    def __init__(self) -> None:
        self.seen: set[str] = set()

    def __call__(self, label: str, line: int) -> str:
        base = label.strip() or f"line {line}"
        out = base if base not in self.seen else f"{base} (line {line})"
        k = 2
        while out in self.seen:
            out = f"{base} (line {line}, {k})"
            k += 1
        self.seen.add(out)
        return out


def _names(search: Search, article: Article | None = None) -> dict[int, str]:
    """A step name for every known tensor: its first proper label, else the heading it sits
    under in the article (``apply_causal_mask``), else what it computes (``weights``);
    never a line number."""
    taken: set[str] = set()
    out: dict[int, str] = {}
    for key in sorted(search.known):  # a notebook's names first, versioned where one is reused
        k = search.known[key]
        if k.fixed:
            # a notebook variable whose print stands for it may be called like an op (var)
            base = ident(k.fixed) or "v"
            name, i = base, 2
            while name in taken:
                name, i = f"{base}_{i}", i + 1
            taken.add(name)
            out[key] = name
    for key in sorted(search.known):
        k = search.known[key]
        if k.fixed:
            continue
        labelled = next((n for n in (ident(x) for x in k.labels) if n and n not in taken), None)
        if labelled is None:
            family = _family(k.expr) if k.expr is not None else "input"
            heading = article.heading_before(k.line) if article is not None else None
            under = heading_name(heading) if heading else None
            # the heading's name; a second step under it says what it computes as well
            tries = [under, f"{under}_{family}"] if under else [family]
            base = next((t for t in tries if t not in taken), tries[-1])
            name, i = base, 2
            while name in taken:
                name, i = f"{base}_{i}", i + 1
        else:
            name = labelled
        taken.add(name)
        out[key] = name
    return out


def _family(e: Expr) -> str:
    """A name for a step by what it computes (``scores``, ``weights``, ``norm`` …)."""
    if not isinstance(e, Call):
        return "t"
    inner = e.args[0] if e.args else None
    if e.op == "softmax":
        return "weights"
    if e.op == "div" and isinstance(inner, Call) and inner.op == "matmul":
        return "scaled"
    if e.op == "matmul":
        if isinstance(e.args[1], Call) and e.args[1].op == "T":
            return "scores"
        return "product"
    names = {
        "add": "added", "sub": "diff", "mul": "prod", "layernorm": "normed",
        "rmsnorm": "normed", "centered": "centered", "concat": "joined", "index": "part",
        "mean": "means", "var": "variances", "std": "deviations", "sum": "total",
        "max": "largest", "causal_mask": "mask", "reshape": "rows",
    }  # fmt: skip
    # a word no op is called, so that it can name a step
    return names.get(e.op) or ident(e.op) or "t"


def _placement(pl: Placement, names: dict[int, str]) -> list[str]:
    keys = [f"step = {_s(names[pl.known])}"]
    if pl.row is not None:
        keys.append(f"row = {pl.row}")
    if pl.col is not None:
        keys.append(f"col = {pl.col}")
    if pl.index is not None:
        keys.append(f"index = [{pl.index[0]}, {pl.index[1]}]")
    return keys


def _dot_terms(d: Display, terms: list[Printing]) -> list[tuple[str, str, Printing]]:
    """``[a₁, a₂]·[b₁, b₂] = t₁ + t₂``: each printed term tᵢ is the product aᵢ·bᵢ."""
    m = re.fullmatch(r"\s*\[([^\[\]]*)\]\s*(?:\\cdot|·|\\times|×)\s*\[([^\[\]]*)\]\s*", d.latex)
    if not m:
        return []
    a = [x.strip() for x in m.group(1).split(",")]
    b = [x.strip() for x in m.group(2).split(",")]
    if len(a) != len(b) or len(terms) != len(a):
        return []
    return [(f"{x}*{y}", t.rows[0][0], t) for x, y, t in zip(a, b, terms, strict=True)]


def compose(article: Article, search: Search) -> Composed:
    """The draft derivation of an article, from the search's outcomes."""
    names = _names(search, article)
    out = Composed("")
    label = _Labels()
    given = [k for k in search.known.values() if k.expr is None]
    steps = [k for k in search.known.values() if k.expr is not None]
    head = [
        comment(f"Derivation drafted by `symtf draft` from {article.path}."),
        "# Every printed string is copied verbatim, with its article line (source_line).",
        "# Steps were inferred: each says what it matched. Claims no step explains have",
        '# step = "?" with the best candidates tried; map them by hand, then check again.',
        "",
        f"title = {_s(article.title or 'Draft: ' + article.path)}",
        f"source = {_s(article.path)}",
    ]
    if search.float32 and any(b.outputs for b in article.code):
        # the code's float32 explains what the code printed; an article that shows no
        # output of its code (a marimo notebook keeps none) works its numbers by hand
        head.append('computed_in = "float32"   # the code\'s tensors are float32')
    elif any(b.outputs for b in article.code) and any(k.expr is not None for k in steps):
        # numpy's and Python's floats: a print to all 17 digits (0.1 + 0.2 printed as
        # 0.30000000000000004) shows float64's rounding, which the article's code did
        head.append('computed_in = "float64"   # the code computes in float64')
    head.append("")
    if search.notes:
        head.append("# Code not translated (what depends on it is not checked):")
        for n in search.notes:
            head.append(comment(f"  {n.where}: {n.source[:100]}: {n.reason[:160]}"))
        head.append("")
    body: list[str] = []
    if not given and not steps:  # displayed arithmetic only: a derivation with no model
        body += ["[model]", 'architecture = "none"', ""]
    if given:
        body.append("[tensors]")
        for k in sorted(given, key=lambda k: k.key):
            _within_limits(k, names[k.key], article.path)
            body.extend(_given(k, names[k.key]))
        body.append("")
    everything = sorted(
        [*article.printings, *search.extra],
        key=lambda p: (p.cell if p.cell is not None else -1, p.line),
    )
    outcomes = [search.outcomes[p.key] for p in everything if p.key in search.outcomes]
    printed = _code_places(article, [p for p in everything if p.key in search.outcomes])
    claims: list[tuple[int, list[str]]] = _sums(article, outcomes, label)
    shown: set[tuple[int | None, int, tuple[tuple[str, ...], ...]]] = set()
    worked: set[tuple[int, int | None]] = set()  # the places displayed lines' claims check
    chains: dict[int, tuple[str, str, str]] = {}  # what checks each displayed line's chain
    claims.extend(
        _display_claims(article, search, outcomes, names, label, out, (shown, worked), chains)
    )
    summed = {k for k, _ in claims}  # printings a displayed line's claim already checks
    on_shown = _on_displayed_results(search, outcomes, names, article, printed, worked)
    steps = [k for k in steps if k.key not in on_shown]
    if steps:
        body.append("[steps]")
        for k in sorted(steps, key=lambda k: k.key):
            assert k.expr is not None
            body.append(comment(k.matched))
            body.append(f"{names[k.key]} = {_s(render(k.expr, names))}")
        body.append("")
    sources: list[tuple[Printing, Placement]] = []  # what a restated value may be linked to

    def restate(p: Printing, *, results_only: bool = False) -> list[str]:
        """The claims of a printing that restates an earlier value (``[]``: none)."""
        return restatements(
            _placed(p, _places_of(article, p, printed)),
            _name(p),
            article,
            sources,
            lambda pl: _placement(pl, names),
            label,
            chains,
            results_only=results_only,
        )

    for o in outcomes:
        p = o.printing
        if p.parts:
            continue  # a run: its rows are claimed one by one
        if p.key in summed:
            out.printed += p.size
            continue
        out.printed += p.size
        if o.status == "given" and p.size > 1:
            # "multiplying the original vector by it gives the quantized vector [28, …]":
            # a list its sentence says how to compute is a result, not an input
            at = _places_of(article, p, printed)
            said = worded_claims(_placed(p, at), _name(p), article, tuple(at), label)
            if said:
                if o.placement is not None:
                    sources.append((p, o.placement))
                claims.extend((p.key, [r]) for r in said)
                continue
        if o.status == "given" and o.placement is not None and p.size > 1:
            # a table of results worked out above it (a summary of the displayed lines'
            # values): checked as those lines, though later steps may read it as given
            restated = restate(p, results_only=True) or formula_rows(
                p, _places_of(article, p, printed), article, label, places_key
            )
            if restated:
                sources.append((p, o.placement))
                claims.extend((p.key, [r]) for r in restated)
                continue
        if o.status == "given" and o.placement is None and p.role in ("operand", "weights"):
            # a list a displayed line computes from that repeats a value worked out before
            # it is that value again (checked as it); any other is an input the line states
            restated = restate(p)
            if restated:
                claims.extend((p.key, [r]) for r in restated)
                continue
        if o.status == "given" and o.placement is None and p.size == 1:
            # "d = 1.018" under "State after chunk 1", after "d_new = … = 1.018": a
            # number set by name that repeats, to the same digits, the result of a line
            # worked above it is that line's result again (checked as its chain), not a
            # constant the article chooses
            restated = restate(p, results_only=True)
            if restated:
                claims.extend((p.key, [r]) for r in restated)
                continue
        if o.placement is not None and o.status in ("mapped", "covered", "given"):
            sources.append((p, o.placement))
        if o.status == "given" or (o.status == "covered" and o.placement is None):
            out.inputs += p.size
            out.stated.append(Stated(_name(p), p.line, p.size, _places_of(article, p, printed)))
            if o.status == "given" and o.placement is None and p.size == 1:
                # a constant the article sets (w = 0.2): written as a number no step
                # computes, so a line that repeats it reads it as itself (not a rounding)
                claims.append(
                    (
                        p.key,
                        [
                            "[[claims]]",
                            f"label = {_s(label(_claim_label(p), p.line))}",
                            'step = "?"',
                            "given = true",
                            f"printed = {_rows(p.rows)}",
                            *_line(p.line, _places_of(article, p, printed)),
                            comment(f"line {p.line}: {o.note}"),
                        ],
                    )
                )
            continue
        pl = o.placement
        if pl is not None and pl.known in on_shown:
            expression, lines = on_shown[pl.known]
            shown_at = ", ".join(str(n) for n in lines)
            block = [
                "[[claims]]",
                f"label = {_s(label(_claim_label(p), p.line))}",
                f"expression = {_s(expression)}",
                f"printed = {_rows(p.rows)}",
                *_line(p.line, _places_of(article, p, printed)),
                comment(
                    f"line {p.line}: {o.note}; what it computes from is the result displayed "
                    f"at line {shown_at}, written in: checked as a displayed line"
                ),
            ]
            claims.append((p.key, block))
            continue
        if o.status in ("mapped", "covered") and o.placement is not None:
            block = [
                "[[claims]]",
                f"label = {_s(label(_claim_label(p), p.line))}",
                *_placement(o.placement, names),
                f"printed = {_rows(p.rows)}",
                f"decimals = {p.decimals}" if p.decimals is not None else "",
                "feeds = true" if o.feeds else "",
                *_line(p.line, _places_of(article, p, printed)),
                comment(f"line {p.line}: {o.note}") if o.note else "",
            ]
            claims.append((p.key, [b for b in block if b]))
            for extra in o.also:
                claims.append(
                    (
                        p.key,
                        [
                            "[[claims]]",
                            f"label = {_s(label(_claim_label(p), p.line))}",
                            *_placement(extra, names),
                            f"printed = {_rows(p.rows)}",
                            *_line(p.line, _places_of(article, p, printed)),
                        ],
                    )
                )
            continue
        scored = search.scored.get(p.key)
        if scored is not None:  # a score the code's search keeps: the expression it is
            claims.append(
                (
                    p.key,
                    [
                        "[[claims]]",
                        f"label = {_s(label(_claim_label(p), p.line))}",
                        f"expression = {_s(scored.expression)}",
                        f"printed = {_rows(p.rows)}",
                        'computed_in = "float64"',
                        *_line(p.line, _places_of(article, p, printed)),
                        comment(f"line {p.line}: {scored.note}"),
                    ],
                )
            )
            continue
        # unmapped: a claim to map by hand (when its printed strings read as numbers)
        if parse_target(p.rows, p.decimals) is None:
            text = " ".join(" ".join(r) for r in p.rows)
            out.unread.append(
                Unread(
                    _name(p),
                    p.line,
                    text,
                    "its printed values are not all numbers",
                    _places_of(article, p, printed),
                )
            )
            continue
        if p.role == "result" and (p.cell, p.line, p.rows) in shown:
            continue  # no step of the code gives it, but its displayed line's claim checks it
        at = _places_of(article, p, printed)
        if at and all(q.column is not None and (q.line, q.column) in worked for q in at):
            continue  # "[0.018, 1.000] / 1.156": each entry is a link of a displayed chain
        restated = restate(p) or formula_rows(p, at, article, label, places_key)
        if restated:  # the same value as one printed before it (or a formula's table)
            claims.extend((p.key, [r]) for r in restated)
            continue
        candidates = tuple(render(c, names) for c in o.candidates)
        out.unmapped.append(
            Unmapped(
                _name(p),
                p.line,
                p.size,
                _note(o.note),
                candidates,
                _places_of(article, p, printed),
                " ".join(" ".join(r) for r in p.rows),
            )
        )
        block = [
            "[[claims]]",
            f"label = {_s(label(_claim_label(p), p.line))}",
            'step = "?"',
            f"printed = {_rows(p.rows)}",
            *([f"decimals = {p.decimals}"] if p.decimals is not None else []),
            *_line(p.line, _places_of(article, p, printed)),
            comment(f"line {p.line}: {o.note}"),
        ]
        for c in candidates:
            block.append(comment(f"  candidate: {c}"))
        claims.append((p.key, block))
    claims.sort(key=lambda c: c[0])
    out.claims = len(claims)
    out.steps = len(steps)
    text = "\n".join(head + body) + "\n" + "\n\n".join("\n".join(b) for _, b in claims) + "\n"
    for k in given:  # the code's array literals: a print of one restates it
        if k.rows and len(k.nd_shape) <= 2 and all(k.rows):
            echo = Printing(-k.key, "matrix", names[k.key], "", k.rows, (k.line,) * len(k.rows))
            sources.insert(0, (echo, Placement(k.key)))
    restated = account(
        article,
        text,
        (out.unmapped, out.unread, out.stated),
        sources,
        lambda pl: _placement(pl, names),
        label,
        chains,
    )
    if restated:
        out.claims += len(restated)
        text += "\n" + "\n\n".join(restated) + "\n"
    if out.unread:
        text += "\n# Printed claims that could not be read (left out):\n"
        for u in out.unread:
            reason = u.reason.splitlines()[0][:200] if u.reason else ""
            text += comment(f"  line {u.line}: {u.text[:120]}: {reason}") + "\n"
    out.toml = text
    return out


#: The ops a displayed line writes as they are: elementwise arithmetic, the matrix product.
_ARITHMETIC = frozenset({"add", "sub", "mul", "div", "neg", "matmul"})


def _ops(e: Expr) -> set[str]:
    """The ops a step applies."""
    if isinstance(e, Call):
        return {e.op}.union(*(_ops(a) for a in e.args))
    return set()


def _on_displayed_results(
    search: Search,
    outcomes: list[Outcome],
    names: dict[int, str],
    article: Article,
    printed: dict[int, tuple[Place, ...]],
    worked: set[tuple[int, int | None]],
) -> dict[int, tuple[str, list[int]]]:
    """The steps of plain arithmetic over given tensors, one or more of which the draft read
    from the printed result of a displayed line (``W update = Xᵀ · grad = [[0.098, …]]``,
    then ``ΔW = −0.1 · W update``): such a tensor is no input the article states but the
    quantity that line works out. Each step, with those printed entries written in for
    the tensor, is checked as a displayed line, so that the entries are read as the
    quantities they print, through the chain, as well as as displayed.

    Returns:
        For each such step's key, its expression and the lines of those results.
    """
    shown: dict[int, tuple[tuple[str, ...], ...]] = {}
    lines: dict[int, int] = {}
    for o in outcomes:
        pl = o.placement
        if o.status != "given" or pl is None or (pl.row, pl.col, pl.index) != (None, None, None):
            continue
        k = search.known.get(pl.known)
        if k is None or k.expr is not None or not k.rows or k.value.ndim != 2:
            continue
        at = _places_of(article, o.printing, printed)
        if at and all(q.column is not None and (q.line, q.column) in worked for q in at):
            shown[k.key] = o.printing.rows
            lines[k.key] = o.printing.line
    out: dict[int, tuple[str, list[int]]] = {}
    if not shown:
        return out
    for k in search.known.values():
        if k.expr is None or not _ops(k.expr) or not _ops(k.expr) <= _ARITHMETIC:
            continue
        reads = inputs(k.expr)
        if not reads & shown.keys() or any(
            (r := search.known.get(key)) is None or r.expr is not None for key in reads
        ):
            continue
        written = dict(names)
        for key in reads & shown.keys():
            rows = [", ".join(x.replace("−", "-") for x in row) for row in shown[key]]
            written[key] = "[" + ", ".join(f"[{r}]" for r in rows) + "]"
        out[k.key] = (render(k.expr, written), sorted(lines[key] for key in reads & shown.keys()))
    # only a step nothing else reads, whose every printing is so checked, is left out of
    # the steps (a step the derivation keeps would be the one its printing computes)
    for k in search.known.values():
        if k.expr is not None and k.key not in out:
            for key in inputs(k.expr) & out.keys():
                del out[key]
    for o in outcomes:
        pl = o.placement
        if pl is None or pl.known not in out:
            continue
        whole = (pl.row, pl.col, pl.index) == (None, None, None)
        if o.status != "mapped" or not whole or o.printing.decimals is not None or o.also:
            del out[pl.known]
    return out


def _name(p: Printing | Display) -> str:
    """A printing's label, or where it stands when it has none (never an empty name)."""
    if p.label.strip():
        return p.label.strip()
    return (
        where(p.places[0])
        if p.places
        else (f"cell {p.cell}" if p.cell is not None else f"line {p.line}")
    )


def _placed(p: Printing, places: tuple[Place, ...]) -> Printing:
    """The printing with its places (a value the code printed has them only from its output)."""
    return p if p.places else dataclasses.replace(p, places=places)


def _note(note: str) -> str:
    """A note without an empty name before its colon (``": depends on …"``)."""
    return re.sub(r"^\s*:\s*", "", note)


def _line(line: int, places: tuple[Place, ...] = ()) -> list[str]:
    """``source_line = N`` when the line is known, and ``places`` when they are."""
    out = [f"source_line = {line}"] if line >= 1 else []
    if places:
        out.append(places_key(places))
    return out


def _places_of(
    article: Article, p: Printing | Display, printed: dict[int, tuple[Place, ...]] | None = None
) -> tuple[Place, ...]:
    """The places of a printing's entries, one per entry (none if they are not known).

    A printing the reader found carries its places; a value the code printed has them
    in ``printed`` (:func:`_code_places`).
    """
    size = sum(len(r) for r in p.rows)
    if len(p.places) == size:
        return p.places
    found = (printed or {}).get(p.key, ())
    return found if len(found) == size else ()


def _code_places(article: Article, printings: list[Printing]) -> dict[int, tuple[Place, ...]]:
    """The places of the values the code's translation found printed (which carry the file
    line of each row, not its columns): found in the blocks' outputs, in print order."""
    find = OutputPlaces(article.code)
    out: dict[int, tuple[Place, ...]] = {}
    for p in printings:
        if p.places or p.parts or len(p.lines) != len(p.rows):
            continue
        found = (find.in_code if p.in_code else find)(p.cell, p.lines, p.rows)
        if found:
            out[p.key] = found
    return out


def _claim_label(p: Printing) -> str:
    base = p.label.strip()
    if p.role in ("operand", "weights", "term", "before", "after"):
        return f"{base} ({p.role})"
    return base


def _within_limits(k: Known, name: str, path: str) -> None:
    """A given tensor within the limits ``check`` reads a derivation by (a code literal's
    own shape, or printed rows), else refused at the article's line."""
    if k.flat:  # a code literal: at its cell and line
        where = k.matched.split(":")[0]
        refuse_array(path, name, where, tuple(k.nd_shape), " ".join(k.flat))
        return
    shape = (len(k.rows), max((len(r) for r in k.rows), default=0))
    why = array_refusal(shape, "\n".join(" ".join(r) for r in k.rows))
    if why is not None:
        raise LimitError(
            f"{path}: the matrix {name}: {why}; a derivation holds no larger one, so its "
            f"draft could not be checked (line {k.line})"
        )


def _given(k: Known, name: str) -> list[str]:
    if k.flat:  # an array literal of the code, in its own shape
        lines = [comment(k.matched)]
        if len(k.nd_shape) == 2:
            lines.append(f"{name} = " + toml_block("\n".join(" ".join(r) for r in k.rows)))
        elif len(k.nd_shape) == 1:
            lines.append(f"{name} = [{', '.join(_s(v) for v in k.flat)}]")
        else:
            shape = ", ".join(str(n) for n in (k.nd_shape or (1,)))
            lines.append(f"{name} = {{ shape = [{shape}], values = {_s(' '.join(k.flat))} }}")
        return lines
    lines = [
        f"# line {k.line}: given"
        + (
            " (numpy's print of float32 values: each entry pins its float32 value)"
            if k.float32_print
            else " (entries known to their printed digits)"
            if k.rounded
            else ""
        )
    ]
    if k.float32_print:
        values = " ".join(" ".join(r) for r in k.rows)
        n, m = len(k.rows), len(k.rows[0])
        shape = f"[{n * m}]" if len(k.nd_shape) == 1 else f"[{n}, {m}]"
        lines.append(f"{name} = {{ shape = {shape}, values = {_s(values)}, float32_print = true }}")
    elif k.rounded:  # 163,009,536 written without its grouping: the values split at commas
        values = " ".join(" ".join(ungrouped(c) for c in r) for r in k.rows)
        n, m = len(k.rows), len(k.rows[0])
        shape = f"[{n * m}]" if len(k.nd_shape) == 1 else f"[{n}, {m}]"
        lines.append(f"{name} = {{ shape = {shape}, values = {_s(values)}, rounded = true }}")
    else:
        rows = "\n".join(" ".join(ungrouped(c) for c in r) for r in k.rows)
        lines.append(f"{name} = " + toml_block(rows))
    return lines


def _display_claims(
    article: Article,
    search: Search,
    outcomes: list[Outcome],
    names: dict[int, str],
    label: _Labels,
    out: Composed,
    seen: tuple[
        set[tuple[int | None, int, tuple[tuple[str, ...], ...]]], set[tuple[int, int | None]]
    ],
    chains: dict[int, tuple[str, str, str]],
) -> list[tuple[int, list[str]]]:
    """The claims of the displayed lines; ``seen`` gets the (cell, line, rows) each one checks,
    and the place (line, column) of each number it checks;
    ``chains`` the ``expression`` and ``stands_for`` keys of each link's chain (a result
    restated later is checked as its chain)."""
    shown, worked = seen
    claims: list[tuple[int, list[str]]] = []
    terms_by_line: dict[tuple[int | None, int], list[Printing]] = {}
    for o in outcomes:
        if o.printing.role == "term":
            terms_by_line.setdefault((o.printing.cell, o.printing.line), []).append(o.printing)
    links: dict[str, list[tuple[Display, str]]] = {}  # the readable links of each chain
    for d in article.displays:
        if d.key in search.worked_lines:
            continue  # a weighted row worked out on its line: the step's claim checks it
        expression = " ".join(d.latex.split())
        try:
            latexmath.parse(expression, where="expression")
        except ExpressionError as e:
            out.unread.append(Unread(d.label, d.line, expression, str(e), _places_of(article, d)))
            continue
        if parse_target(d.rows) is None:
            out.unread.append(
                Unread(
                    d.label,
                    d.line,
                    expression,
                    "its printed value cannot be read",
                    _places_of(article, d),
                )
            )
            continue
        links.setdefault(d.chain or f"display {d.key}", []).append((d, expression))
    for chain in links.values():
        # a chain a = b = c is one printed number: one claim, whose check reads every link
        d = chain[0][0]
        expression = " = ".join(text for _, text in chain)
        sources: dict[str, tuple[int, int, int]] = {}
        for link, _ in chain:
            for k, v in search.sources.get(link.key, {}).items():
                sources.setdefault(k, v)
        block = [
            "[[claims]]",
            f"label = {_s(label(d.label, d.line))}",
            f"expression = {_s(expression)}",
            f"printed = {_rows(d.rows)}",
        ]
        stands = ""
        if sources:
            pairs = ", ".join(
                f"{_s(k)} = {_s(f'{names[key]}[{i}, {j}]')}" for k, (key, i, j) in sources.items()
            )
            stands = f"stands_for = {{ {pairs} }}"
            block.append(stands)
        for link, _ in chain:
            chains[link.key] = (block[2], stands, block[1])
        block.extend(_line(d.line, _places_of(article, d)))
        claims.append((d.key, block))
        shown.add((d.cell, d.line, d.rows))
        worked.update((q.line, q.column) for q in _places_of(article, d))
        result = next(
            (r for link, _ in chain if (r := search.results.get(link.key)) is not None), None
        )
        if result is not None and result.placement is not None:
            claims.append(
                (
                    d.key,
                    [
                        "[[claims]]",
                        f"label = {_s(label(d.label + ' (result)', d.line))}",
                        *_placement(result.placement, names),
                        f"printed = {_rows(d.rows)}",
                        *_line(d.line, _places_of(article, d)),
                        comment(f"line {d.line}: {result.note}"),
                    ],
                )
            )
        for text, printed, term in (
            t
            for link, _ in chain
            for t in _dot_terms(link, terms_by_line.get((d.cell, d.line), []))
        ):
            claims.append(
                (
                    term.key,
                    [
                        "[[claims]]",
                        f"label = {_s(label(d.label + ' (product)', d.line))}",
                        f"expression = {_s(text)}",
                        f"printed = {_s(printed)}",
                        *_line(d.line, _places_of(article, term)),
                        comment(f"line {d.line}: a term of the dot product written out"),
                    ],
                )
            )
    return claims


_SUM_LABEL = re.compile(r"^(?:sum|total|denominator|the sum)$", re.I)


def _sums(article: Article, outcomes: list[Outcome], label: _Labels) -> list[tuple[int, list[str]]]:
    """``Sum = 21.372`` right after the terms it adds, each on a displayed line of its own."""
    out = []
    for o in outcomes:
        p = o.printing
        if p.size != 1 or not _SUM_LABEL.match(p.label.strip()):
            continue
        before = [d for d in article.displays if d.cell == p.cell and 0 < p.line - d.line <= 6]
        before.sort(key=lambda d: d.line)
        run: list[Display] = []
        for d in before:  # consecutive one-number lines just above
            if run and d.line - run[-1].line > 2:
                run = []
            if len(d.rows) == 1 and len(d.rows[0]) == 1:
                run.append(d)
        if len(run) < 2 or p.line - run[-1].line > 3:
            continue
        expression = " + ".join(d.rows[0][0] for d in run)
        out.append(
            (
                p.key,
                [
                    "[[claims]]",
                    f"label = {_s(label(p.label + ' (of the lines above)', p.line))}",
                    f"expression = {_s(expression)}",
                    f"printed = {_s(p.rows[0][0])}",
                    *_line(p.line, _places_of(article, p)),
                    comment(f"line {p.line}: the sum of the {len(run)} results printed just above"),
                ],
            )
        )
    return out
