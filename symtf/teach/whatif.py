"""What if a weight were different? Make it a symbol and follow the outputs.

``whatif("i_love_ai.toml", "l0.h0.W_Q[0,0]=a", -2, 2)`` replaces that weight by
the real symbol ``a`` and runs the exact pipeline, which works on symbols as on
numbers. Several ``--symbol``s may be given (``["l0.h0.W_Q[0,0]=a", "eps=e"]``),
a whole matrix (``l0.h0.W_Q=w``: one symbol ``w_{i,j}`` per entry) or a setting
(``scale=t``, ``l0.h1.scale=t``, ``eps=e``, ``temperature=T``). A bare name
(``a``) follows a symbol the file itself declares with a value in ``[symbols]``,
over its declared range unless ``--range a=…`` gives another. For each chosen
printed output it gives:

- the closed form when it is short (exact; ``together``/``cancel`` only,
  never ``simplify``; a size cap);
- its value and partial derivative in each symbol at the file's values, exact
  when the closed form is short and always as a certified decimal;
- for one or two symbols, the values of each symbol in its range (the other at
  the file's value) for which the printed number is a correct rounding, with
  certified endpoints;
- plots over the ranges (matplotlib, PNG and SVG): one column per symbol, each
  printed value's rounding band shaded; and ``sharpness.png``, each head's
  softmax rows against the score divisor.

A run cut short by the ``--timeout`` budget keeps what finished and names the
rest (:attr:`WhatIf.not_reached`, :attr:`WhatIf.cut_short`).

Certification. Values and derivatives are enclosed by forward-mode
differentiation in ball arithmetic (python-flint ``arb``) over the exact
expression DAG, with ``a`` a point or a whole interval. The roots of
``value(a) − boundary`` are isolated by subdivision: a cell whose value
enclosure excludes the boundary holds no root; a cell whose derivative
enclosure excludes 0 is monotone, so a sign change at its exact rational ends
proves exactly one root there, narrowed by bisection on exact-point
evaluations. A cell that cannot be settled within the budget is reported as
unresolved, never guessed.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import sympy

from symtf import files, roots
from symtf.backends.certify import decimal_string, time_left
from symtf.checking.evaluation import _fit, selection
from symtf.checking.wording import place
from symtf.errors import BudgetExpired, SpecError, SymtfError, Undecided
from symtf.numbers import Printed, format_fixed, parse_exact, rounding_interval
from symtf.renderers.plain import to_text
from symtf.roots import Dual, isolate
from symtf.shown import entropy, softmax_at
from symtf.spec import Derivation, Model, load
from symtf.spec.symbols import name_refusal
from symtf.spec.weights import HEAD_MATRICES, LAYER_MATRICES, MODEL_MATRICES
from symtf.trace import Trace
from symtf.visible import json_text, line

#: Longest closed form shown (characters of SymPy's text).
MAX_FORMULA_CHARS = 300
#: Largest closed form expanded from the step DAG (expression nodes).
MAX_FORMULA_OPS = 400
#: Entries followed when no ``--claims`` are given.
DEFAULT_ENTRIES = 12
#: Most printed entries ``--claims`` may ask to follow (each costs a certified root search).
MAX_ENTRIES = 200
#: Most claims drawn (one row of panels each) in the plot.
MAX_PANELS = 8
#: Most symbols drawn (one column of panels each) in the plot.
MAX_SYMBOL_PANELS = 4
#: Most heads drawn (one column each) in the sharpness plot.
MAX_HEAD_PANELS = 4
#: Seconds of the ``--timeout`` budget below which no further entry is started (the rest
#: is reported as not reached; what is left draws and writes what finished).
ENTRY_RESERVE_SECONDS = 0.5
#: Most symbols for which correct-rounding intervals are searched (each the others held).
MAX_SET_SYMBOLS = 2

#: A setting made a symbol: the model's score divisor, one head's, or the norms' ε.
_SETTING = re.compile(
    r"^\s*(?P<where>(?:l\d+\.h\d+\.)?scale|eps|temperature)\s*=\s*(?P<name>[A-Za-z][A-Za-z0-9_]{0,30})\s*$"
)

_SYMBOL = re.compile(
    r"^\s*(?P<where>[A-Za-z0-9_.]+)\s*\[\s*(?P<i>\d+)\s*,\s*(?P<j>\d+)\s*\]\s*=\s*(?P<name>[A-Za-z][A-Za-z0-9_]{0,30})\s*$"
)
#: A whole matrix made symbols: ``l0.h0.W_Q=w`` gives ``w_{0,0}``, ``w_{0,1}``, …
_WHOLE = re.compile(
    r"^\s*(?P<where>[A-Za-z][A-Za-z0-9_.]*)\s*=\s*(?P<name>[A-Za-z][A-Za-z0-9_]{0,30})\s*$"
)
#: A symbol the file declares with the article's value (``[symbols] a = { value = 0.5 }``).
_DECLARED = re.compile(r"^\s*(?P<name>[A-Za-z][A-Za-z0-9_]{0,30})\s*$")
_MALFORMED = (
    '--symbol: expected WEIGHT[i,j]=NAME like "l0.h0.W_Q[0,0]=a", a whole matrix '
    "(l0.h0.W_Q=w), a setting (scale=t, l0.h1.scale=t, eps=e, temperature=T), or a symbol "
    "the file declares with a value in [symbols] (a), found {text!r}"
)


class WhatIfError(SymtfError, ValueError):
    """The weight or range asked for does not exist or does not fit."""


# ----------------------------------------------------------------------------- the weight


def parse_range(text: str) -> tuple[Fraction, Fraction]:
    """``"-2:2"`` → ``(-2, 2)``, exact.

    Raises:
        WhatIfError: When it is not ``LO:HI`` with ``LO < HI``.
    """
    lo_s, sep, hi_s = text.partition(":")
    if not sep:
        raise WhatIfError(f"--range: expected LO:HI like -2:2, found {text!r}")
    try:
        lo, hi = parse_exact(lo_s, where="--range"), parse_exact(hi_s, where="--range")
    except SpecError as e:
        raise WhatIfError(str(e)) from None
    if not lo < hi:
        raise WhatIfError(f"--range: expected LO < HI, found {text!r}")
    return lo, hi


def _locate(
    d: Derivation, where: str
) -> tuple[sympy.MatrixBase, Callable[[sympy.ImmutableMatrix], Derivation]]:
    given = next((g for g in d.tensors if g.name == where), None)
    if given is not None:
        return _locate_given(d, given)
    m = d.model
    if not isinstance(m, Model) or m.architecture not in ("decoder", "attention"):
        raise WhatIfError(
            f"{d.path}: whatif supports decoder and attention-only models, found {m.architecture!r}"
        )
    mh = re.fullmatch(r"l(\d+)\.h(\d+)\.(\w+)", where)
    ml = re.fullmatch(r"l(\d+)\.(\w+)", where)
    if mh and mh.group(3) in HEAD_MATRICES:
        li, hi, k = int(mh.group(1)), int(mh.group(2)), mh.group(3)
        if li >= len(m.layers) or hi >= len(m.layers[li].heads):
            raise WhatIfError(f"--symbol: no head {where.rsplit('.', 1)[0]} in {d.path}")
        mat = getattr(m.layers[li].heads[hi], k)

        def set_head(new: sympy.ImmutableMatrix) -> Derivation:
            heads = list(m.layers[li].heads)
            heads[hi] = dataclasses.replace(heads[hi], **{k: new})
            layers = list(m.layers)
            layers[li] = dataclasses.replace(layers[li], heads=tuple(heads))
            return dataclasses.replace(d, model=dataclasses.replace(m, layers=tuple(layers)))

        setter = set_head
    elif ml and ml.group(2) in LAYER_MATRICES:
        li, k = int(ml.group(1)), ml.group(2)
        if li >= len(m.layers):
            raise WhatIfError(f"--symbol: no layer l{li} in {d.path}")
        mat = getattr(m.layers[li], k)

        def set_layer(new: sympy.ImmutableMatrix) -> Derivation:
            layers = list(m.layers)
            layers[li] = dataclasses.replace(layers[li], **{k: new})
            return dataclasses.replace(d, model=dataclasses.replace(m, layers=tuple(layers)))

        setter = set_layer
    elif where in MODEL_MATRICES:
        if where == "unembed" and m.tied:
            raise WhatIfError(
                "--symbol: unembed is the tied embedding here; make embed[i,j] the symbol"
            )
        mat = getattr(m, where)

        def set_model(new: sympy.ImmutableMatrix) -> Derivation:
            return dataclasses.replace(d, model=dataclasses.replace(m, **{where: new}))

        setter = set_model
    else:
        raise WhatIfError(
            f"--symbol: expected a weight like l0.h0.W_Q, l0.W1, embed or unembed, found {where!r}"
        )
    if mat is None:
        raise WhatIfError(f"--symbol: {where} is not part of this model")
    return mat, setter


def _locate_given(
    d: Derivation, given: Any
) -> tuple[sympy.MatrixBase, Callable[[sympy.ImmutableMatrix], Derivation]]:
    """A tensor the file gives (``[tensors]``, or an article's printed input), as a matrix.

    A vector is one row, a number one entry; a tensor of 3 or more axes, or one given as
    rounded prints (known only to its printed precision), cannot hold a symbol.
    """
    if len(given.shape) > 2:
        raise WhatIfError(
            f"--symbol: {given.name} has {len(given.shape)} axes; whatif follows entries of "
            "a matrix, a vector or a number"
        )
    if given.rounded:
        raise WhatIfError(
            f"--symbol: {given.name} is given as rounded prints (known only to their printed "
            "precision); make an entry of an exact tensor the symbol"
        )
    rows, cols = given.shape if len(given.shape) == 2 else (1, max(len(given.values), 1))
    mat = sympy.ImmutableMatrix(rows, cols, list(given.values))

    def set_given(new: sympy.ImmutableMatrix) -> Derivation:
        values = tuple(new[i, j] for i in range(rows) for j in range(cols))
        tensors = tuple(
            dataclasses.replace(g, values=values) if g is given else g for g in d.tensors
        )
        return dataclasses.replace(d, tensors=tensors)

    return mat, set_given


@dataclass(frozen=True)
class Weight:
    """The weight (or setting) made a symbol.

    Attributes:
        where: The weight (``l0.h0.W_Q``) or setting (``scale``, ``l0.h1.scale``, ``eps``).
        index: The weight's entry, or ``None`` for a setting.
        symbol: The real symbol that replaces it.
        value: The file's own value, exact (``√2`` for an unstated scale of a 2-wide head).
        source: The ``--symbol`` that made it (``l0.h0.W_Q=w`` for each entry of a matrix).
    """

    where: str
    index: tuple[int, int] | None
    symbol: sympy.Symbol
    value: sympy.Expr
    source: str = ""

    @property
    def name(self) -> str:
        """How the command line names it: ``l0.h0.W_Q[0,0]``, ``scale``."""
        return (
            self.where if self.index is None else f"{self.where}[{self.index[0]},{self.index[1]}]"
        )

    def bracket(self, bits: int = 200) -> tuple[Fraction, Fraction]:
        """Rationals ``lo ≤ value ≤ hi``, equal when the value is rational, else within 2⁻ᵇⁱᵗˢ."""
        if self.value.is_Rational:
            q = Fraction(int(self.value.p), int(self.value.q))
            return q, q
        from flint import ctx

        from symtf.backends.certify import ball, exact_fraction

        with ctx.workprec(bits + 20):  # the ends rounded outward at this precision, not 53 bits
            b = ball(self.value, bits + 20)
            lo, hi = b.lower(), b.upper()
        return exact_fraction(lo), exact_fraction(hi)


def substitute(d: Derivation, text: str) -> tuple[Derivation, Weight]:
    """The derivation with one weight entry (or setting) replaced by a real symbol.

    Raises:
        WhatIfError: For a malformed ``WEIGHT[i,j]=NAME``, an index out of range, a
            weight that is not a number, or a whole matrix (see :func:`substitute_all`).
    """
    new, ws = _substitute_one(d, text)
    if len(ws) != 1:
        raise WhatIfError(f"--symbol {text!r}: a whole matrix; use substitute_all")
    return new, ws[0]


def substitute_all(d: Derivation, texts: Sequence[str]) -> tuple[Derivation, list[Weight]]:
    """The derivation with every ``--symbol`` applied, in order.

    A whole matrix (``l0.h0.W_Q=w``) becomes one symbol per entry, ``w_{i,j}`` for row
    ``i``, column ``j`` counted from 1 (``w_{1,1}`` is ``l0.h0.W_Q[0,0]``).

    Raises:
        WhatIfError: Naming the ``--symbol`` at fault: a malformed one, an unknown
            weight, a name given twice, a weight (or entry) made a symbol twice, or a
            name that is a weight's or setting's own.
    """
    if not texts:
        raise WhatIfError("--symbol: expected at least one, like l0.h0.W_Q[0,0]=a")
    seen_names: dict[str, str] = {}
    seen_targets: list[tuple[str, tuple[int, int] | None, str]] = []
    weights: list[Weight] = []
    for text in texts:
        where, index, name = _target(text)
        why = None if where.startswith("symbols.") else name_refusal(name)
        if why is not None:  # the rule [symbols] keeps (a declared symbol kept it already)
            raise WhatIfError(f"--symbol {text!r}: {why}")
        if name in seen_names:
            raise WhatIfError(
                f"--symbol {text!r}: the name {name!r} is given twice (also by --symbol "
                f"{seen_names[name]!r})"
            )
        for w2, i2, t2 in seen_targets:
            if _overlap(where, index, w2, i2):
                raise WhatIfError(
                    f"--symbol {text!r}: {_target_name(where, index)} is already made a symbol "
                    f"by --symbol {t2!r}"
                )
        seen_names[name] = text
        seen_targets.append((where, index, text))
        try:
            d, ws = _substitute_one(d, text)
        except WhatIfError as e:
            msg = str(e)
            if msg.startswith("--symbol:"):
                msg = f"--symbol {text!r}:" + msg[len("--symbol:") :]
            raise WhatIfError(msg) from None
        weights += ws
    return d, weights


def _target(text: str) -> tuple[str, tuple[int, int] | None, str]:
    """(weight or setting, entry or ``None``, symbol name) that a ``--symbol`` names."""
    own = _DECLARED.match(text)
    if own:
        return f"symbols.{own.group('name')}", None, own.group("name")
    for rx in (_SETTING, _SYMBOL, _WHOLE):
        m = rx.match(text)
        if m:
            g = m.groupdict()
            index = (int(g["i"]), int(g["j"])) if g.get("i") is not None else None
            return g["where"], index, g["name"]
    raise WhatIfError(_MALFORMED.format(text=text))


def _target_name(where: str, index: tuple[int, int] | None) -> str:
    return where if index is None else f"{where}[{index[0]},{index[1]}]"


def _overlap(a: str, ai: tuple[int, int] | None, b: str, bi: tuple[int, int] | None) -> bool:
    """Whether two ``--symbol`` targets share a weight entry or a setting."""
    if a == b:
        return ai is None or bi is None or ai == bi
    head_scale = re.compile(r"l\d+\.h\d+\.scale")
    return {a, b} & {"scale"} != set() and any(head_scale.fullmatch(x) for x in (a, b))


def _substitute_one(d: Derivation, text: str) -> tuple[Derivation, list[Weight]]:
    own = _DECLARED.match(text)
    if own:
        return d, [_declared(d, own.group("name"), text)]
    setting = _SETTING.match(text)
    if setting:
        new, w = _substitute_setting(d, setting.group("where"), setting.group("name"))
        return new, [dataclasses.replace(w, source=text)]
    m = _SYMBOL.match(text)
    if m:
        where, i, j, name = m.group("where"), int(m.group("i")), int(m.group("j")), m.group("name")
        entries: list[tuple[int, int, str]] | None = [(i, j, name)]
    else:
        m = _WHOLE.match(text)
        if not m:
            raise WhatIfError(_MALFORMED.format(text=text))
        where, name, entries = m.group("where"), m.group("name"), None
    mat, setter = _locate(d, where)
    if entries is None:  # the whole matrix: w_{i,j} for row i, column j, counted from 1 as in
        # the maths (the command line's WEIGHT[i,j] counts from 0, as the step language does)
        entries = [
            (i, j, f"{name}_{{{i + 1},{j + 1}}}") for i in range(mat.rows) for j in range(mat.cols)
        ]
    taken = {str(s) for x in _all_weights(d) for s in x.free_symbols}
    new = mat.as_mutable()
    out = []
    for i, j, sym_name in entries:
        if not (i < mat.rows and j < mat.cols):
            raise WhatIfError(f"--symbol: {where} is {mat.rows}x{mat.cols}; no entry [{i},{j}]")
        v = mat[i, j]
        if not v.is_Rational:
            raise WhatIfError(f"--symbol: {where}[{i},{j}] is {v}, not a number")
        if sym_name in taken:
            raise WhatIfError(f"--symbol: the name {sym_name!r} is already a symbol of this model")
        sym = sympy.Symbol(sym_name, real=True)
        new[i, j] = sym
        out.append(Weight(where, (i, j), sym, v, text))
    return setter(sympy.ImmutableMatrix(new)), out


def _declared(d: Derivation, name: str, text: str) -> Weight:
    """A symbol of the file itself, followed from the value ``[symbols]`` gives it."""
    spec = d.symbols.get(name)
    if spec is None:
        raise WhatIfError(
            f"--symbol: {d.path} declares no symbol {name!r} in [symbols] (a bare name follows a "
            'symbol the file declares with a value; to make a weight a symbol, write "WEIGHT[i,j]=NAME")'
        )
    if spec.value is None:
        raise WhatIfError(
            f"--symbol: symbols.{name} in {d.path} gives no value to follow it from "
            f"(declare the article's value: {name} = {{ value = ... }})"
        )
    value = sympy.Rational(spec.value.numerator, spec.value.denominator)
    return Weight(f"symbols.{name}", None, spec.symbol, value, text)


def _substitute_setting(d: Derivation, where: str, name: str) -> tuple[Derivation, Weight]:
    """The derivation with the score divisor (model's or one head's) or ε as a symbol."""
    from symtf.graph.conventions import score_divisor

    m = d.model
    if not isinstance(m, Model) or m.architecture not in ("decoder", "attention"):
        raise WhatIfError(
            f"{d.path}: whatif supports decoder and attention-only models, found "
            f"{getattr(m, 'architecture', type(m).__name__)!r}"
        )
    taken = {str(s) for x in _all_weights(d) for s in x.free_symbols}
    temperature = m.generate.temperature if m.generate is not None else None
    for v in (m.scale, m.eps, temperature):
        if isinstance(v, sympy.Basic):
            taken |= {str(s) for s in v.free_symbols}
    if name in taken:
        raise WhatIfError(f"--symbol: the name {name!r} is already a symbol of this model")
    sym = sympy.Symbol(name, real=True)
    if where == "temperature":
        g = m.generate
        if g is None or g.temperature is None:
            raise WhatIfError(
                f"--symbol: temperature: {d.path} samples at no temperature (it needs [generate] "
                'strategy = "sample" with a temperature)'
            )
        if g.top_p is not None:
            raise WhatIfError(
                "--symbol: temperature: the file's top_p cut depends on the temperature, so it "
                "cannot be followed as a symbol"
            )
        value = g.temperature
        sym = sympy.Symbol(name, positive=True)  # the tempered softmax divides by it
        new = dataclasses.replace(
            d, model=dataclasses.replace(m, generate=dataclasses.replace(g, temperature=sym))
        )
    elif where == "eps":
        value = m.eps
        new = dataclasses.replace(d, model=dataclasses.replace(m, eps=sym))
        overridden = [
            f"l{i}"
            for i, layer in enumerate(m.layers)
            if layer.ln1_eps is not None or layer.ln2_eps is not None
        ]
        if overridden:
            raise WhatIfError(
                f"--symbol: eps: layers {', '.join(overridden)} set their own ε; the model's is not the one they use"
            )
    elif where == "scale":
        own = [
            f"l{i}.h{j}"
            for i, layer in enumerate(m.layers)
            for j, h in enumerate(layer.heads)
            if h.scale is not None
        ]
        if own:
            raise WhatIfError(
                f"--symbol: scale: heads {', '.join(own)} set their own scale; name one, like {own[0]}.scale=t"
            )
        heads = [h for layer in m.layers for h in layer.heads]
        if not heads:
            raise WhatIfError(f"--symbol: scale: {d.path} has no attention heads")
        value = score_divisor(m, heads[0])  # every head's, since none sets its own
        new = dataclasses.replace(d, model=dataclasses.replace(m, scale=sym))
    else:
        li, hi = (int(x) for x in re.findall(r"\d+", where)[:2])
        if li >= len(m.layers) or hi >= len(m.layers[li].heads):
            raise WhatIfError(f"--symbol: no head l{li}.h{hi} in {d.path}")
        head = m.layers[li].heads[hi]
        value = score_divisor(m, head)
        heads = list(m.layers[li].heads)
        heads[hi] = dataclasses.replace(head, scale=sym)
        layers = list(m.layers)
        layers[li] = dataclasses.replace(layers[li], heads=tuple(heads))
        new = dataclasses.replace(d, model=dataclasses.replace(m, layers=tuple(layers)))
    if isinstance(value, int):
        value = sympy.Integer(value)
    if value.free_symbols or not value.is_real:
        raise WhatIfError(f"--symbol: {where} is {value}, not a number")
    return new, Weight(where, None, sym, value)


def _all_weights(d: Derivation) -> list[Any]:
    m = d.model
    out: list[Any] = [sympy.ImmutableMatrix([list(g.values)]) for g in d.tensors if g.values]
    out += [x for x in (m.embed, m.pos, m.unembed) if x is not None]
    for layer in m.layers:
        out += [getattr(layer, k) for k in LAYER_MATRICES if getattr(layer, k, None) is not None]
        for h in layer.heads:
            out += [getattr(h, k) for k in HEAD_MATRICES if getattr(h, k) is not None]
    return out


# ----------------------------------------------------------------------------- results


@dataclass
class Partial:
    """One followed entry against one symbol, the other symbols at the file's values.

    Attributes:
        weight: The symbol.
        derivative: Certified decimal of the partial derivative at the file's values.
        derivative_exact: The same, exact, when the closed form is short.
        intervals: Where the print is a correct rounding (see :func:`rounding_set`);
            searched for one or two symbols only.
        unresolved: Stretches the search could not settle.
        searched: Whether the interval search ran for this symbol.
        stopped: Why the search stopped early ("" when it ran to the end).
        contains_value: Whether the file's value lies inside one of the intervals.
        samples: ``(symbol value, output value)`` pairs for the plot.
    """

    weight: Weight
    derivative: str | None = None
    derivative_exact: sympy.Expr | None = None
    intervals: list[tuple[Fraction, Fraction, Fraction, Fraction]] = field(default_factory=list)
    unresolved: list[tuple[Fraction, Fraction]] = field(default_factory=list)
    searched: bool = False
    stopped: str = ""
    contains_value: bool | None = None
    samples: list[tuple[float, float]] = field(default_factory=list)


@dataclass
class Output:
    """One followed entry.

    The single-symbol fields (``derivative``, ``intervals``, …) read the first
    symbol's :class:`Partial`; ``partials`` holds one per symbol the entry depends on.
    """

    label: str
    step: str
    index: tuple[int, ...]
    printed: str | None
    depends: bool
    closed: sympy.Expr | None = None
    value: str | None = None
    partials: list[Partial] = field(default_factory=list)
    #: The printed value's rounding interval (the plot's band), as exact ends.
    band: tuple[Fraction, Fraction] | None = None

    def _first(self) -> Partial:
        return self.partials[0] if self.partials else Partial(Weight("", None, sympy.Dummy(), 0))

    @property
    def derivative(self) -> str | None:
        """The first symbol's certified derivative."""
        return self._first().derivative

    @property
    def derivative_exact(self) -> sympy.Expr | None:
        """The first symbol's exact derivative (when short)."""
        return self._first().derivative_exact

    @property
    def intervals(self) -> list[tuple[Fraction, Fraction, Fraction, Fraction]]:
        """The first symbol's correct-rounding intervals."""
        return self._first().intervals

    @property
    def unresolved(self) -> list[tuple[Fraction, Fraction]]:
        """The first symbol's unsettled stretches."""
        return self._first().unresolved

    @property
    def contains_value(self) -> bool | None:
        """Whether the first symbol's intervals hold the file's value."""
        return self._first().contains_value

    @property
    def samples(self) -> list[tuple[float, float]]:
        """The first symbol's plot samples."""
        return self._first().samples


@dataclass
class Sharpness:
    """One head's attention scores at the file's values, for the sharpness plot.

    Attributes:
        head: ``l0.h1``.
        divisor: The file's score divisor (√d_k unless set), exact.
        scores: Rows of ``QKᵀ`` (before the divisor) as floats, ``-inf`` where masked.
    """

    head: str
    divisor: sympy.Expr
    scores: list[list[float]]


@dataclass
class WhatIf:
    """The result of :func:`whatif`."""

    path: str
    title: str
    weights: list[Weight]
    lo: Fraction
    hi: Fraction
    outputs: list[Output]
    plots: list[str]
    #: Search range per symbol name (the ``--range`` of each).
    ranges: dict[str, tuple[Fraction, Fraction]] = field(default_factory=dict)
    #: Entries chosen but not reached before the ``--timeout`` budget ran out.
    not_reached: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)
    #: (label, index, symbol) of interval searches the ``--timeout`` budget cut short.
    cut_short: list[tuple[str, tuple[int, ...], str]] = field(default_factory=list)
    #: Why the run stopped early ("" when everything finished).
    stopped: str = ""
    sharpness: list[Sharpness] = field(default_factory=list)
    method: str = (
        "certified subdivision with forward-mode interval derivatives (python-flint arb): a cell "
        "whose value enclosure excludes the boundary holds no root; a monotone cell whose exact "
        "ends differ in sign holds exactly one, narrowed by bisection on exact-point evaluations"
    )

    @property
    def weight(self) -> Weight:
        """The first symbol (the only one, for a single ``--symbol`` entry)."""
        return self.weights[0]

    def range_of(self, w: Weight) -> tuple[Fraction, Fraction]:
        """The search and plot range of one symbol."""
        return self.ranges.get(str(w.symbol), (self.lo, self.hi))

    @property
    def complete(self) -> bool:
        """Whether the ``--timeout`` budget left every entry and search finished."""
        return not self.not_reached and not self.cut_short

    @property
    def searched(self) -> bool:
        """Whether correct-rounding intervals were searched (one or two symbols)."""
        return len(self.weights) <= MAX_SET_SYMBOLS


def _closed(trace: Trace, e: sympy.Expr) -> sympy.Expr | None:
    closed = trace.backend.closed_form(e, MAX_FORMULA_OPS)
    if closed is None:
        return None
    if sympy.count_ops(closed) <= 120:
        shorter = sympy.together(closed)
        if len(sympy.sstr(shorter)) < len(sympy.sstr(closed)):
            closed = shorter
    return closed if len(sympy.sstr(closed)) <= MAX_FORMULA_CHARS else None


def _choose(
    d: Derivation, trace: Trace, labels: list[str] | None, syms: set[sympy.Symbol]
) -> list[tuple[str, str, tuple[int, ...], Printed]]:
    """(label, step, index, printed) of each followed entry."""
    claims = {c.label: c for c in d.claims}
    if labels is not None:
        chosen = []
        for lab in dict.fromkeys(labels):  # a label named twice is followed once
            if lab not in claims:
                import difflib

                close = difflib.get_close_matches(lab, list(claims), n=3)
                hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
                raise WhatIfError(f"--claims: no claim labelled {lab!r} in {d.path}{hint}")
            chosen.append(claims[lab])
    else:
        chosen = list(d.claims)
    out = []
    backend = trace.backend
    for c in chosen:
        if c.step is None or c.reduce is not None or c.word is not None or c.step not in trace:
            if labels is not None:
                raise WhatIfError(f"--claims: {c.label!r} is not printed numbers of a step")
            continue
        shape = trace.shape(c.step)
        if shape is None:
            continue
        for ij, p in _fit(c, selection(c, shape)):
            e = trace.value(c.step)[ij]
            if labels is None and (p.is_neg_inf or not syms & backend.user_symbols(e)):
                continue
            out.append((c.label, c.step, ij, p))
            if len(out) > MAX_ENTRIES:
                raise WhatIfError(
                    f"--claims: the claims named print more than {MAX_ENTRIES} entries; "
                    f"whatif follows at most {MAX_ENTRIES} (name fewer claims)"
                )
        if labels is None and len(out) >= DEFAULT_ENTRIES:
            break
    return out[:DEFAULT_ENTRIES] if labels is None else out


def parse_ranges(
    texts: Sequence[str] | None,
) -> tuple[tuple[Fraction, Fraction], dict[str, tuple[Fraction, Fraction]]]:
    """``["-2:2", "t=0.5:4"]`` → the default range and one per symbol name.

    Raises:
        WhatIfError: For a malformed range or a symbol given two.
    """
    default = (Fraction(-2), Fraction(2))
    own: dict[str, tuple[Fraction, Fraction]] = {}
    seen_default = False
    for text in texts or ():
        name, sep, rest = text.partition("=")
        if sep and re.fullmatch(r"\s*[A-Za-z][A-Za-z0-9_{},]*\s*", name):
            key = name.strip()
            if key in own:
                raise WhatIfError(f"--range {text!r}: a second range for {key!r}")
            own[key] = parse_range(rest)
        else:
            if seen_default:
                raise WhatIfError(f"--range {text!r}: a second default range (name one: t=LO:HI)")
            default, seen_default = parse_range(text), True
    return default, own


def whatif(
    path: Path,
    symbol: str | Sequence[str],
    lo: Fraction,
    hi: Fraction,
    *,
    claims: list[str] | None = None,
    out: Path | None = None,
    points: int = 121,
    ranges: dict[str, tuple[Fraction, Fraction]] | None = None,
    draw: bool = False,
    derivation: Derivation | None = None,
) -> WhatIf:
    """Follow printed outputs as weights or settings become symbols (see the module docstring).

    Args:
        path: The derivation file.
        symbol: One ``--symbol`` text, or several.
        lo: Lower end of the default range.
        hi: Upper end of the default range.
        claims: Labels to follow (default: the first entries that depend on a symbol).
        out: Folder for the plots and ``whatif.json`` (none written when ``None``).
        points: Plot points per symbol.
        ranges: Ranges of single symbols by name, over the default.
        draw: Whether the caller writes the plots itself (:func:`write`): the sharpness
            plot's scores are then read too, as they are with ``out``.
        derivation: The derivation, already read (an article drafted in memory);
            ``path`` is then only its name.

    Raises:
        WhatIfError: For a weight, label or range that does not fit.
    """
    from symtf.graph.pipeline import run

    if not 2 <= points <= 2001:
        raise WhatIfError(f"--points: expected 2 to 2001, found {points}")
    texts = [symbol] if isinstance(symbol, str) else list(symbol)
    d0 = derivation if derivation is not None else load(path)
    d, ws = substitute_all(d0, texts)
    names = {str(w.symbol) for w in ws}
    for key in ranges or {}:
        if key not in names:
            raise WhatIfError(f"--range {key}=…: no --symbol is named {key!r}")
    # A symbol the file declares with a range is followed over it unless --range names it.
    own = {n: s.range for n, s in d0.symbols.items() if n in names and s.range is not None}
    ranges = {**own, **(ranges or {})}
    trace = run(d)
    labels = _labels(claims, d)
    syms = {w.symbol for w in ws}
    entries = _choose(d, trace, labels, syms)
    defs = trace.backend.defs
    # The file's own symbols that are not followed are held at their declared values.
    held: dict[sympy.Symbol, sympy.Expr] = {
        s.symbol: sympy.Rational(s.value.numerator, s.value.denominator)
        for n, s in d0.symbols.items()
        if s.value is not None and n not in names
    }
    duals = {
        w.symbol: Dual(defs, w.symbol, {**held, **{v.symbol: v.value for v in ws if v is not w}})
        for w in ws
    }
    brackets = {w.symbol: w.bracket() for w in ws}  # a 2⁻²⁰⁰ rational bracket of √2
    result = WhatIf(str(path), d0.title, ws, lo, hi, [], [], dict(ranges or {}))
    values = {**held, **{w.symbol: w.value for w in ws}}
    try:
        for label, step, ij, p in entries:
            left = time_left()
            if left is not None and left < ENTRY_RESERVE_SECONDS:
                raise BudgetExpired(str(path))
            result.outputs.append(
                _follow(result, trace, d, duals, brackets, values, label, step, ij, p, points)
            )
    except BudgetExpired:  # keep what finished; the command reports the rest as not reached
        result.stopped = "the --timeout budget ran out"
        done = len(result.outputs)
        result.not_reached = [(lab, ij) for lab, _, ij, _ in entries[done:]]
    result.cut_short = [
        (o.label, o.index, str(p.weight.symbol))
        for o in result.outputs
        for p in o.partials
        if "--timeout" in p.stopped
    ]
    if result.cut_short and not result.stopped:
        result.stopped = "the --timeout budget was nearly used up"
    if (out is not None or draw) and not result.not_reached:
        try:
            result.sharpness = _sharpness(d0, trace, duals[ws[0].symbol], brackets[ws[0].symbol])
        except BudgetExpired:  # the picture only: the report stands without it
            result.sharpness = []
    if out is not None:
        write(result, out)
    return result


def write(result: WhatIf, out: Path) -> None:
    """Write the plots and ``whatif.json`` into ``out``: together, or not at all."""
    with files.OutputFolder(out) as folder:
        result.plots = _plot(result, folder) + _plot_sharpness(result, folder)
        folder.write_text("whatif.json", render_json(result))


def _follow(
    r: WhatIf,
    trace: Trace,
    d: Derivation,
    duals: dict[sympy.Symbol, Dual],
    brackets: dict[sympy.Symbol, tuple[Fraction, Fraction]],
    values: dict[sympy.Symbol, sympy.Expr],
    label: str,
    step: str,
    ij: tuple[int, ...],
    p: Printed,
    points: int,
) -> Output:
    """One entry: closed form, value, partial derivatives, intervals and samples."""
    e = trace.value(step)[ij]
    used = trace.backend.user_symbols(e)
    dep = [w for w in r.weights if w.symbol in used]
    o = Output(label, step, ij, None if p is None or p.is_neg_inf else p.text, bool(dep))
    if not dep or e == sympy.S.NegativeInfinity:
        return o
    o.closed = _closed(trace, e)
    first = dep[0].symbol
    o.value, _ = _certified(duals[first], e, *brackets[first])
    claim = next(c for c in d.claims if c.label == label)
    if o.printed is not None:
        iv = rounding_interval(p, claim.rounding)
        o.band = (iv.lo, iv.hi)
    short = o.closed is not None and sympy.count_ops(o.closed) <= 200
    for w in dep:
        part = Partial(w)
        _, part.derivative = _certified(duals[w.symbol], e, *brackets[w.symbol])
        if short:
            der = sympy.diff(o.closed, w.symbol).xreplace(values)
            if not der.has(sympy.Heaviside, sympy.DiracDelta, sympy.Derivative, sympy.Subs):
                if sympy.count_ops(der) <= 120:
                    der = min((der, sympy.together(der)), key=lambda x: len(sympy.sstr(x)))
                if len(sympy.sstr(der)) <= MAX_FORMULA_CHARS:
                    part.derivative_exact = der
        lo, hi = r.range_of(w)
        if o.printed is not None and r.searched:
            found = roots.rounding_set(
                duals[w.symbol], e, rounding_interval(p, claim.rounding), lo, hi
            )
            part.intervals = [(x.left.lo, x.left.hi, x.right.lo, x.right.hi) for x in found.pieces]
            part.unresolved, part.stopped, part.searched = found.unresolved, found.stopped, True
            part.contains_value = any(_within(w.value, a, b) for a, _, _, b in part.intervals)
        if any(w is x for x in r.weights[:MAX_SYMBOL_PANELS]):  # the plot's columns
            part.samples = _samples(duals[w.symbol], e, lo, hi, points)
        o.partials.append(part)
    return o


def _sharpness(
    d: Derivation, trace: Trace, dual: Dual, bracket: tuple[Fraction, Fraction]
) -> list[Sharpness]:
    """Each head's scores ``QKᵀ`` at the file's values (floats, for the picture only)."""
    from symtf.graph.conventions import score_divisor

    m = d.model
    if not isinstance(m, Model):
        return []
    out = []
    for li, layer in enumerate(m.layers):
        for hi_, head in enumerate(layer.heads):
            name = f"l{li}.h{hi_}"
            if f"{name}.scores" not in trace:
                continue
            scores = trace.value(f"{name}.scores")
            # without a mask there is no masked step: every score takes part
            masked = trace.value(f"{name}.masked") if f"{name}.masked" in trace else scores
            rows: list[list[float]] = []
            for i in range(scores.rows):
                row: list[float] = []
                for j in range(scores.cols):
                    if masked[i, j] == sympy.S.NegativeInfinity:
                        row.append(-math.inf)
                        continue
                    try:
                        v, _ = dual.at(scores[i, j], *bracket, 64)
                    except (ZeroDivisionError, ValueError, TypeError, Undecided):
                        return []
                    row.append(float(v.mid()))
                rows.append(row)
            out.append(Sharpness(name, score_divisor(m, head), rows))
    return out


def _labels(claims: list[str] | None, d: Derivation) -> list[str] | None:
    if not claims:
        return None
    known = {c.label for c in d.claims}
    out: list[str] = []
    for raw in claims:
        if raw in known:
            out.append(raw)
        else:
            out.extend(p.strip() for p in raw.split(",") if p.strip())
    return out


def _within(a: sympy.Expr, lo: Fraction, hi: Fraction) -> bool:
    """``lo ≤ a ≤ hi`` exactly (``a`` rational or algebraic, like √2)."""
    if a.is_Rational:
        q = Fraction(int(a.p), int(a.q))
        return lo <= q <= hi
    return bool(sympy.Rational(lo.numerator, lo.denominator) <= a) and bool(
        a <= sympy.Rational(hi.numerator, hi.denominator)
    )


def _certified(
    dual: Dual, e: sympy.Expr, a_lo: Fraction, a_hi: Fraction
) -> tuple[str | None, str | None]:
    """Certified decimals of the value and derivative at the file's value (a point, or a
    tight rational bracket of an irrational one: the enclosure over it holds the value)."""
    v_s = d_s = None
    for prec in (128, 256, 512, 1024):
        try:
            v, dv = dual.at(e, a_lo, a_hi, prec)
        except (ZeroDivisionError, ValueError, TypeError, Undecided):
            return None, None
        v_s = v_s or decimal_string(v, 16)
        d_s = d_s or decimal_string(dv, 16)
        if v_s and d_s:
            break
    return v_s, d_s


def _samples(
    dual: Dual, e: sympy.Expr, lo: Fraction, hi: Fraction, n: int
) -> list[tuple[float, float]]:
    out = []
    for k in range(n):
        a = lo + (hi - lo) * k / (n - 1)
        try:
            v, _ = dual.at(e, a, a, 64)
        except (ZeroDivisionError, ValueError, TypeError, Undecided):
            continue
        if v.is_finite():
            out.append((float(a), float(v.mid())))
    return out


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


def _plot(r: WhatIf, out: files.OutputFolder) -> list[str]:
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


def _plot_sharpness(r: WhatIf, out: files.OutputFolder) -> list[str]:
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
            f"score divisor (√d_k); dashed: the file's {_shown(sh.divisor)} = {s0:.4g}",
            fontsize=8,
            parse_math=False,
        )
    fig.suptitle(
        "softmax of the article's scores QKᵀ / s (float64, a picture)",
        fontsize=9,
    )
    fig.tight_layout()
    return _save(fig, out, "sharpness", ("png",))


def _dec(q: Fraction, digits: int = 10, *, up: bool = False) -> str:
    """``q`` to ``digits`` significant digits, rounded down (or up), trailing zeros dropped.

    Outer bounds of an interval are written outward (the lower end down, the upper
    end up), so the printed interval still contains the true one.
    """
    if q == 0:
        return "0"
    k = max(digits - 1 - math.floor(math.log10(abs(q))), 0)
    scale = Fraction(10) ** k
    n = math.ceil(q * scale) if up else math.floor(q * scale)
    text = format_fixed(Fraction(n) / scale, k)
    return text.rstrip("0").rstrip(".") if "." in text else text


def _interval_text(iv: tuple[Fraction, Fraction, Fraction, Fraction]) -> str:
    ol, il, ih, oh = iv
    slack = max(il - ol, oh - ih)
    within = "exact ends" if slack == 0 else f"each end certified within {_dec(slack, 2, up=True)}"
    return f"[{_dec(ol)}, {_dec(oh, up=True)}] ({within})"


def _shown(v: Any) -> str:
    """An expression or symbol typeset for a terminal: ``1/2``, ``√2``, ``e^(a/2)``, ``w₁,₂``."""
    return to_text(sympy.latex(v))


def _entry(label: str, index: tuple[int, ...]) -> str:
    """A followed entry for people: ``A_1, row 2, column 1`` (counted from 1)."""
    return f"{label}, {place(index, None)}"


def _header(r: WhatIf) -> list[str]:
    """One line per ``--symbol`` (a whole matrix on one line)."""
    out = []
    by_source: dict[str, list[Weight]] = {}
    for w in r.weights:
        by_source.setdefault(w.source or w.name, []).append(w)
    for ws in by_source.values():
        w = ws[0]
        lo, hi = r.range_of(w)
        if len(ws) == 1:
            out.append(
                f"{w.name} = {_shown(w.symbol)} (the file has {_shown(w.value)}); "
                f"range [{lo}, {hi}]"
            )
        else:
            stem = str(w.symbol).split("_{")[0]
            rows = 1 + max(x.index[0] for x in ws if x.index)
            cols = 1 + max(x.index[1] for x in ws if x.index)
            out.append(
                f"{w.where} = {stem}: {_shown(sympy.Symbol(stem + '_{i,j}'))} for row i, column j "
                f"({rows}x{cols} symbols, one per entry, counted from 1); range [{lo}, {hi}]"
            )
    return out


def _at(r: WhatIf) -> str:
    if len(r.weights) == 1:
        return f"{_shown(r.weight.symbol)} = {_shown(r.weight.value)}"
    if len(r.weights) <= 3:
        return ", ".join(f"{_shown(w.symbol)} = {_shown(w.value)}" for w in r.weights)
    return "the file's values"


def render_text(r: WhatIf) -> str:
    """The result as text."""
    single = len(r.weights) == 1
    out = [f"{r.title}", *_header(r), ""]
    if not r.searched:
        out += [
            f"({len(r.weights)} symbols: closed forms and partial derivatives only; correct-"
            f"rounding intervals are searched for at most {MAX_SET_SYMBOLS} symbols)",
            "",
        ]
    for o in r.outputs:
        out.append(_entry(o.label, o.index))
        if not o.depends:
            names = ", ".join(_shown(w.symbol) for w in r.weights[:3])
            more = ", …" if len(r.weights) > 3 else ""
            out.append(f"  does not depend on {names}{more}")
            continue
        out.append(
            f"  = {_shown(o.closed)}"
            if o.closed is not None
            else "  closed form: too long to show (see the plot)"
        )
        out.append(f"  at {_at(r)}: {o.value or 'not certified'}")
        for part in o.partials:
            w = part.weight
            if part.derivative_exact is not None:  # exact; its certified decimal when pinned
                exact = _shown(part.derivative_exact)
                pinned = part.derivative and part.derivative != exact  # not "1 ≈ 1"
                shown = exact + (f" ≈ {part.derivative}" if pinned else "")
            else:
                shown = part.derivative or "not certified"
            if single:
                out.append(f"  d/d{_shown(w.symbol)} at {_shown(w.value)}: {shown}")
            else:
                out.append(f"  ∂/∂{_shown(w.symbol)} at the file's values: {shown}")
        for part in o.partials:
            if o.printed is None or not part.searched:
                continue
            w = part.weight
            held = ""
            if not single:
                others = [x for x in r.weights if x is not w]
                held = (
                    " (with "
                    + ", ".join(f"{_shown(x.symbol)} = {_shown(x.value)}" for x in others)
                    + (", the file's values)" if len(others) > 1 else ", the file's value)")
                )
            if part.intervals:
                spans = "; ".join(_interval_text(iv) for iv in part.intervals)
                out.append(
                    f"  printed {o.printed} is a correct rounding for {_shown(w.symbol)} in "
                    f"{spans}{held}"
                )
            else:
                out.append(
                    f"  printed {o.printed} is a correct rounding for no {_shown(w.symbol)} in "
                    f"the range{held}"
                )
            if part.unresolved:
                out.append(
                    f"  (undecided in {len(part.unresolved)} stretch(es), no interval claimed across one; e.g. [{_dec(part.unresolved[0][0])}, {_dec(part.unresolved[0][1])}])"
                )
            if part.stopped:
                out.append(f"  (the search stopped early: {part.stopped})")
    if not r.complete:
        total = len(r.outputs) + len(r.not_reached)
        line_ = f"PARTIAL: {r.stopped}: {len(r.outputs)} of {total} entries finished"
        if r.not_reached:
            shown = "; ".join(_entry(lab, ij) for lab, ij in r.not_reached[:8])
            more = f" and {len(r.not_reached) - 8} more" if len(r.not_reached) > 8 else ""
            line_ += f"; not reached: {shown}{more}"
        if r.cut_short:
            cut = "; ".join(f"{_entry(lab, ij)} in {s}" for lab, ij, s in r.cut_short[:8])
            line_ += f"; interval search cut short (unresolved stretches listed above): {cut}"
        out += ["", line_]
    out += ["", f"roots: {r.method}"]
    if r.plots:
        out.append("plots: " + ", ".join(r.plots))
        if len(r.weights) > MAX_SYMBOL_PANELS:
            drawn = ", ".join(_shown(w.symbol) for w in r.weights[:MAX_SYMBOL_PANELS])
            out.append(
                f"  (whatif.png draws the first {MAX_SYMBOL_PANELS} of {len(r.weights)} "
                f"symbols: {drawn}; each with the others at the file's values)"
            )
    return "\n".join(out) + "\n"


def render_json(r: WhatIf) -> str:
    """The result as JSON (exact interval ends as fractions ``p/q``).

    The top-level ``weight``, ``symbol``, ``value`` and ``range`` and each output's
    ``derivative`` and ``intervals`` are the first symbol's (the only one's, with one
    ``--symbol`` entry); ``symbols`` and each output's ``partials`` give every symbol.
    """

    def q(x: Fraction) -> str:
        return f"{x.numerator}/{x.denominator}" if x.denominator != 1 else str(x.numerator)

    def spans(p: Partial) -> list[dict[str, list[str]]]:
        return [{"outer": [q(a), q(d_)], "inner": [q(b), q(c)]} for a, b, c, d_ in p.intervals]

    def exact(x: sympy.Expr | None) -> str | None:
        return None if x is None else sympy.sstr(x)

    first = r.weight
    data = {
        "file": r.path,
        "weight": first.name,
        "symbol": str(first.symbol),
        "value": str(first.value),
        "range": [q(x) for x in r.range_of(first)],
        "symbols": [
            {
                "weight": w.name,
                "symbol": str(w.symbol),
                "value": str(w.value),
                "range": [q(x) for x in r.range_of(w)],
                "from": w.source,
            }
            for w in r.weights
        ],
        "method": r.method,
        "complete": r.complete,
        "cut_short": [
            {"label": lab, "index": list(ij), "symbol": sym} for lab, ij, sym in r.cut_short
        ],
        "stopped": r.stopped or None,
        "not_reached": [{"label": lab, "index": list(ij)} for lab, ij in r.not_reached],
        "outputs": [
            {
                "label": o.label,
                "step": o.step,
                "index": list(o.index),
                "printed": o.printed,
                "depends": o.depends,
                "closed_form": exact(o.closed),
                "value": o.value,
                "derivative": o.derivative,
                "derivative_exact": exact(o.derivative_exact),
                "intervals": spans(o._first()),
                "unresolved": [[q(a), q(b)] for a, b in o.unresolved],
                "partials": [
                    {
                        "symbol": str(p.weight.symbol),
                        "derivative": p.derivative,
                        "derivative_exact": exact(p.derivative_exact),
                        "searched": p.searched,
                        "intervals": spans(p),
                        "unresolved": [[q(a), q(b)] for a, b in p.unresolved],
                        "others_at_file_values": len(r.weights) > 1,
                    }
                    for p in o.partials
                ],
            }
            for o in r.outputs
        ],
        "plots": r.plots,
    }
    return json_text(data, indent=2) + "\n"


__all__ = [
    "Dual",
    "Output",
    "Partial",
    "WhatIf",
    "WhatIfError",
    "isolate",
    "parse_range",
    "parse_ranges",
    "render_text",
    "substitute",
    "substitute_all",
    "whatif",
    "write",
]
