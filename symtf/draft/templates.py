"""Candidate steps as data: ``(op, params, inputs)`` trees, rendered to step-language text.

The search (:mod:`symtf.draft.infer.candidates`) builds candidates from these trees; the
code translation (:mod:`symtf.draft.translate`) builds the same trees from a
notebook's calls. Each op is named as the step language names it today
(``matmul`` renders ``a @ b``, ``softmax`` renders ``softmax(x, axis=-1)``), with
its parameters as a mapping, so that the op table :data:`OPS` is the one place
that knows how an op is written. When the op registry (``symtf.ops``) names the
ops, :func:`render` reads its spelling from there.

Each op the search builds is also *pre-filtered*: computed in float64 by the
op registry, many candidates per call (:mod:`symtf.draft.infer.prefilter`), only to
drop the candidates nowhere near the printed numbers. No op is computed here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "OPS",
    "Call",
    "Expr",
    "Num",
    "Ref",
    "Var",
    "bind",
    "inputs",
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
        searched: Whether the search builds it, and so pre-filters it (ops only the code
            translation writes are evaluated through the step language, never pre-filtered).
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
    "alibi": Op("alibi({n}{kw})", 4, True, needs=()),
    "concat": Op("concat({*}{kw})", 4, True),
    "index": Op("{0}[{where}]", 3, True, needs=(4,)),
    "centered": Op("{0} - mean({0}, axis=-1, keepdims=true)", 1, True),
    # the rows of a tensor of more axes (its last axis), a repeat the search looks for
    "reshape": Op("reshape({0}, {shape})", 4, True),
    # ops only the code translation writes: a translated step is evaluated through the
    # step language, never pre-filtered
    "neg": Op("-{0}", 2, needs=(3,)),
    "pow": Op("{0} ^ {1}", 3, needs=(4, 3)),
    "log": Op("ln({0})", 4),
    "log2": Op("log2({0})", 4),
    "log10": Op("log10({0})", 4),
    "log1p": Op("log1p({0})", 4),
    "expm1": Op("expm1({0})", 4),
    "abs": Op("abs({0})", 4),
    "sin": Op("sin({0})", 4),
    "cos": Op("cos({0})", 4),
    "softplus": Op("softplus({0})", 4),
    "log_softmax": Op("log_softmax({0}{kw})", 4, defaults={"axis": None}),
    "min": Op("min({0}{kw})", 4, defaults={"keepdims": False}),
    "maximum": Op("max({0}, {1})", 4),
    "minimum": Op("min({0}, {1})", 4),
    "transpose": Op("transpose({0}{kw})", 4, defaults={"axes": None}),
    "stack": Op("stack({*}{kw})", 4, defaults={"axis": 0}),
    "tril": Op("tril({0})", 4),
    "triu": Op("triu({0})", 4),
    "ones": Op("ones({shape})", 4, needs=()),
    "zeros": Op("zeros({shape})", 4, needs=()),
    "eye": Op("eye({n})", 4, needs=()),
    "one_hot": Op("one_hot({0}, n={n})", 4),
    "masked_fill": Op("masked_fill({0}, {1}, {2})", 4),
    "where": Op("where({0}, {1}, {2})", 4),
    "getitem": Op("{0}[{index}]", 3, needs=(4,)),
    "cross_entropy": Op("cross_entropy({0}, {1}{kw})", 4),
    "bce": Op("bce({0}, {1})", 4),
    "mse": Op("mse({0}, {1})", 4),
    "nll": Op("nll({0}, {1})", 4),
    "floordiv": Op("{0} // {1}", 2, needs=(2, 3)),
    "mod": Op("{0} % {1}", 2, needs=(2, 3)),
    "grad": Op("grad({0}, {1})", 4),
    "jacobian": Op("jacobian({0}, {1})", 4),
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
