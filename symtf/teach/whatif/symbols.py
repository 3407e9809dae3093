"""Which weights and settings become symbols: ``--symbol`` targets read (one entry
``l0.h0.W_Q[0,0]=a``, a whole matrix ``l0.h0.W_Q=w``, a setting ``scale=t``, or a symbol the
file declares), located in the model and substituted into a copy of the derivation, and
the ``--range`` of each symbol.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy

from symtf.errors import SpecError, SymtfError
from symtf.numbers import parse_exact
from symtf.spec import Derivation, Model
from symtf.spec.symbols import name_refusal
from symtf.spec.weights import HEAD_MATRICES, LAYER_MATRICES, MODEL_MATRICES

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
