"""Candidate steps as data: ``(op, params, inputs)`` trees, rendered to step-language text.

The search (:mod:`symtf.draft.search`) builds candidates from these trees; the
code translation (:mod:`symtf.draft.code`) builds the same trees from a
notebook's calls. Each op is named as the step language names it today
(``matmul`` renders ``a @ b``, ``softmax`` renders ``softmax(x, axis=-1)``), with
its parameters as a mapping, so that the op table :data:`OPS` is the one place
that knows how an op is written. When the op registry (``symtf.ops``) names the
ops, :func:`render` reads its spelling from there.

Each op the search builds is also *pre-filtered* (:func:`prefilter`): the
candidate is evaluated in float64 through the registry's own ops
(:mod:`symtf.ops` on :class:`~symtf.backends.FloatBackend`), only to discard
the candidates that are nowhere near the printed numbers, tens of thousands per
article. No op is computed here: a candidate's op is the registry op of the same
name with the candidate's parameters, and the few ops spelled differently in a
step (a block of rows or columns, ``centered``, an ε written as a number) are
handed over in the registry's terms by :data:`_LOWERED`. No verdict and no
acceptance rests on the pre-filter: a kept candidate is evaluated again in
certified balls through the step language itself. Ops only the code
translation writes are never pre-filtered.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

from symtf import ops
from symtf.backends import FloatBackend
from symtf.tensor import Tensor

__all__ = [
    "OPS",
    "Call",
    "Expr",
    "Num",
    "Ref",
    "Var",
    "bind",
    "inputs",
    "prefilter",
    "prefilter_input",
    "prefilter_matrix",
    "render",
    "size",
    "variables",
]


@dataclass(frozen=True)
class Ref:
    """A known tensor, by its key (names are given when the draft is written)."""

    key: int


@dataclass(frozen=True)
class Var:
    """A notebook variable, before the tensor it names is known (the code translation's leaves)."""

    name: str


@dataclass(frozen=True)
class Num:
    """A number literal, exactly as written in a step (``2``, ``1e-05``)."""

    text: str


@dataclass(frozen=True, eq=False)
class Call:
    """One op applied to inputs: ``Call("softmax", (x,), {"axis": -1})``."""

    op: str
    args: tuple[Expr, ...]
    params: tuple[tuple[str, Any], ...] = ()
    _hash: int = field(default=0, repr=False, compare=False)

    def __post_init__(self) -> None:
        # candidates are dictionary keys by the thousand: hash a tree once
        object.__setattr__(self, "_hash", hash((self.op, self.args, self.params)))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (
            isinstance(other, Call)
            and self._hash == other._hash
            and self.op == other.op
            and self.args == other.args
            and self.params == other.params
        )

    @property
    def kw(self) -> dict[str, Any]:
        """The parameters as a dict."""
        return dict(self.params)


def _hashable(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return tuple(_hashable(x) for x in v)
    return v


Expr = Ref | Var | Num | Call


def call(op: str, *args: Expr, **params: Any) -> Call:
    """``call("softmax", x, axis=-1)``."""
    if not params:  # most candidates: no parameters to put in order
        return Call(op, args)
    return Call(op, args, tuple([(k, _hashable(params[k])) for k in sorted(params)]))


# ----------------------------------------------------------------------------- the op table


@dataclass(frozen=True)
class Op:
    """How one op is written in a step, and whether the search builds it.

    Attributes:
        text: A format: ``{0}``, ``{1}`` … the inputs, ``{*}`` all of them comma-separated,
            ``{name}`` a parameter; ``{kw}`` the keyword parameters that differ from
            ``defaults``, written ``, name=value``.
        prec: Binding strength of the result: 1 ``+ -``, 2 ``* / @``, 3 postfix, 4 atom.
        searched: Whether the search builds it, and so pre-filters it through the registry
            (ops only the code translation writes are never pre-filtered).
        defaults: Parameter values not written.
        needs: How strongly each input must bind (parenthesised below that).
    """

    text: str
    prec: int
    searched: bool = False
    defaults: Mapping[str, Any] = field(default_factory=dict)
    needs: tuple[int, ...] = (0,)


OPS: dict[str, Op] = {
    "matmul": Op("{0} @ {1}", 2, True, needs=(2, 3)),
    "add": Op("{0} + {1}", 1, True, needs=(1, 2)),
    "sub": Op("{0} - {1}", 1, True, needs=(1, 2)),
    "mul": Op("{0} * {1}", 2, True, needs=(2, 3)),
    "div": Op("{0} / {1}", 2, True, needs=(2, 3)),
    "T": Op("{0}.T", 3, True, needs=(4,)),
    "sqrt": Op("sqrt({0})", 4, True),
    "exp": Op("exp({0})", 4, True),
    "relu": Op("relu({0})", 4, True),
    "gelu": Op("gelu({0})", 4, True),
    "gelu_tanh": Op("gelu_tanh({0})", 4, True),
    "sigmoid": Op("sigmoid({0})", 4, True),
    "tanh": Op("tanh({0})", 4, True),
    "silu": Op("silu({0})", 4, True),
    "softmax": Op("softmax({0}{kw})", 4, True, {"axis": None}),
    "layernorm": Op("layernorm({0}{kw})", 4, True, {"eps": 0, "unbiased": False}),
    "rmsnorm": Op("rmsnorm({0}{kw})", 4, True, {"eps": 0}),
    "mean": Op("mean({0}{kw})", 4, True, {"keepdims": False}),
    "var": Op("var({0}{kw})", 4, True, {"keepdims": False, "unbiased": False}),
    "std": Op("std({0}{kw})", 4, True, {"keepdims": False, "unbiased": False}),
    "sum": Op("sum({0}{kw})", 4, True, {"keepdims": False}),
    "max": Op("max({0}{kw})", 4, True, {"keepdims": False}),
    "causal_mask": Op("causal_mask({n})", 4, True, needs=()),
    "concat": Op("concat({*}{kw})", 4, True),
    "index": Op("{0}[{where}]", 3, True, needs=(4,)),
    "centered": Op("{0} - mean({0}, axis=-1, keepdims=true)", 1, True),
    # ops only the code translation writes: a translated step is evaluated through the
    # step language, never pre-filtered
    "neg": Op("-{0}", 2, needs=(3,)),
    "pow": Op("{0} ^ {1}", 3, needs=(4, 3)),
    "log": Op("ln({0})", 4),
    "abs": Op("abs({0})", 4),
    "sin": Op("sin({0})", 4),
    "cos": Op("cos({0})", 4),
    "softplus": Op("softplus({0})", 4),
    "log_softmax": Op("log_softmax({0}{kw})", 4, defaults={"axis": None}),
    "min": Op("min({0}{kw})", 4, defaults={"keepdims": False}),
    "maximum": Op("max({0}, {1})", 4),
    "minimum": Op("min({0}, {1})", 4),
    "transpose": Op("transpose({0}{kw})", 4, defaults={"axes": None}),
    "reshape": Op("reshape({0}, {shape})", 4),
    "stack": Op("stack({*}{kw})", 4, defaults={"axis": 0}),
    "tril": Op("tril({0})", 4),
    "triu": Op("triu({0})", 4),
    "ones": Op("ones({shape})", 4, needs=()),
    "zeros": Op("zeros({shape})", 4, needs=()),
    "eye": Op("eye({n})", 4, needs=()),
    "masked_fill": Op("masked_fill({0}, {1}, {2})", 4),
    "where": Op("where({0}, {1}, {2})", 4),
    "getitem": Op("{0}[{index}]", 3, needs=(4,)),
    "cross_entropy": Op("cross_entropy({0}, {1}{kw})", 4),
    "bce": Op("bce({0}, {1})", 4),
    "mse": Op("mse({0}, {1})", 4),
    "grad": Op("grad({0}, {1})", 4),
    "topk": Op("topk({0}{kw})", 4, defaults={"axis": -1, "largest": True}),
    "argsort": Op("argsort({0}{kw})", 4, defaults={"axis": -1, "descending": False}),
    "argmax": Op("argmax({0}{kw})", 4, defaults={"axis": None, "keepdims": False}),
    # one comparison per step-language expression: a comparison is parenthesised in another
    **{
        op: Op("{0} " + sign + " {1}", 0, needs=(1, 1))
        for op, sign in (("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">="), ("eq", "=="))
    },
    "ne": Op("{0} != {1}", 0, needs=(1, 1)),
}


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return str(v)


def _where(params: Mapping[str, Any]) -> str:
    rows, cols = params.get("rows"), params.get("cols")
    r = f"{rows[0]}:{rows[1]}" if rows else ":"
    return r if not cols else f"{r}, {cols[0]}:{cols[1]}"


def _prec(e: Expr) -> int:
    if isinstance(e, Call):
        return OPS[e.op].prec
    if isinstance(e, Num) and e.text.startswith("-"):
        return 1
    return 4


def render(e: Expr, names: Mapping[int, str]) -> str:
    """The step-language text of a candidate; ``names`` maps known keys to step names."""
    if isinstance(e, Ref):
        return names[e.key]
    if isinstance(e, Var):
        return e.name
    if isinstance(e, Num):
        return e.text
    op = OPS[e.op]
    needs = op.needs
    args = []
    for k, a in enumerate(e.args):
        need = needs[min(k, len(needs) - 1)] if needs else 0
        text = render(a, names)
        args.append(f"({text})" if _prec(a) < need else text)
    params = e.kw
    kw = "".join(
        f", {k}={_value(v)}"
        for k, v in e.params
        if k not in ("n", "rows", "cols", "shape", "index") and op.defaults.get(k, object()) != v
    )
    out = op.text.replace("{*}", ", ".join(args)).replace("{kw}", kw)
    out = out.replace("{where}", _where(params))
    for key in ("n", "shape", "index"):
        if key in params:
            value = params[key]
            out = out.replace("{" + key + "}", value if key == "index" else _value(value))
    for k, shown in enumerate(args):
        out = out.replace("{" + str(k) + "}", shown)
    return out


class Values(Protocol):
    """Known tensors' pre-filter values (:func:`prefilter_input`), read by key."""

    def __getitem__(self, key: int, /) -> Tensor: ...


#: The backend the pre-filter runs the registry's ops in (one instance: a tensor keeps the
#: float64 matrix it wraps only for the backend that made it).
_XP = FloatBackend()


def prefilter_input(value: Any, shape: tuple[int, ...] | None = None) -> Tensor:
    """A float64 matrix (2-D array) as the pre-filter reads it: a tensor of its own shape, or
    of ``shape`` (0-D as 1 × 1, 1-D as one row), as :func:`prefilter_matrix` gave it."""
    return Tensor.wrap(_XP, value) if shape is None else Tensor.over(_XP, value, shape)


def prefilter_matrix(t: Tensor) -> Any:
    """A pre-filter value as a 2-D float64 array (a 1-D one as one row, a scalar as 1 × 1)."""
    return t.native(_XP)


@functools.lru_cache(maxsize=256)
def _number(text: str) -> Tensor:
    # a number as a step writes it (``2``, ``1e-05``): read exactly, then in float64, once
    return ops.scalar(_XP.const(Fraction(text)))


def _norm(op: ops.Op[Tensor]) -> Callable[..., Tensor]:
    def run(x: Tensor, eps: str | int = 0, **params: Any) -> Tensor:
        # ``layernorm(x, eps=1e-05)``: the ε a step writes is a number, an input of the op
        return op(_XP, x, _number(str(eps)), **params)

    return run


def _part(x: Tensor, rows: Any = None, cols: Any = None) -> Tensor:
    # ``x[0:2, 1:3]``: a block of rows and columns is the registry's indexing by slices
    items = [slice(*rows) if rows else slice(None)] + ([slice(*cols)] if cols else [])
    return ops.index(_XP, x, items=items)


def _centered(x: Tensor) -> Tensor:
    # ``x - mean(x, axis=-1, keepdims=true)``, as the op's text writes it
    return ops.sub(_XP, x, ops.mean(_XP, x, axis=-1, keepdims=True))


#: The searched ops a step writes in other terms than the registry op of the same name
#: with the same parameters: how the pre-filter hands them to the registry.
_LOWERED: dict[str, Callable[..., Tensor]] = {
    "layernorm": _norm(ops.layernorm),
    "rmsnorm": _norm(ops.rmsnorm),
    "index": _part,
    "centered": _centered,
    "concat": lambda *xs, axis=-1: ops.concat(_XP, list(xs), axis=axis),
}


def prefilter(e: Expr, values: Values, inner: Callable[[Expr], Tensor] | None = None) -> Tensor:
    """The candidate in float64 through the registry's ops (a pre-filter only; see the
    module docstring).

    Args:
        e: The candidate.
        values: Known tensors' pre-filter values by key.
        inner: How to get an argument's value (a cache of shared sub-candidates);
            by default computed here.

    Raises:
        KeyError: For a notebook variable, or an op only the code translation writes.
        ShapeError: Inputs whose shapes do not fit the op (as the registry says).
        ModelError: A value the op is undefined for (a divisor of 0).
    """
    if isinstance(e, Ref):
        return values[e.key]
    if isinstance(e, Num):
        return _number(e.text)
    if isinstance(e, Var):
        raise KeyError(e.name)
    if not OPS[e.op].searched:
        raise KeyError(e.op)
    get = inner or (lambda a: prefilter(a, values))
    args = [get(a) for a in e.args]
    lowered = _LOWERED.get(e.op)
    if lowered is not None:
        return lowered(*args, **dict(e.params))
    out: Tensor = ops.get(e.op)(_XP, *args, **dict(e.params))
    return out


def inputs(e: Expr) -> set[int]:
    """The known tensors a candidate reads."""
    if isinstance(e, Ref):
        return {e.key}
    if isinstance(e, (Num, Var)):
        return set()
    return set().union(*(inputs(a) for a in e.args)) if e.args else set()


def variables(e: Expr) -> set[str]:
    """The notebook variables a translated expression reads."""
    if isinstance(e, Var):
        return {e.name}
    if isinstance(e, Call):
        return set().union(*(variables(a) for a in e.args)) if e.args else set()
    return set()


def bind(e: Expr, keys: Mapping[str, int]) -> Expr:
    """A translated expression with its variables replaced by the known tensors they name."""
    if isinstance(e, Var):
        return Ref(keys[e.name])
    if isinstance(e, Call):
        return Call(e.op, tuple(bind(a, keys) for a in e.args), e.params)
    return e


def size(e: Expr) -> int:
    """How many ops a candidate applies (its simplicity)."""
    if isinstance(e, Call):
        return 1 + sum(size(a) for a in e.args)
    return 0
