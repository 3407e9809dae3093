"""Candidate steps as data: ``(op, params, inputs)`` trees, rendered to step-language text.

The search (:mod:`symtf.draft.search`) builds candidates from these trees; the
code translation (:mod:`symtf.draft.code`) builds the same trees from a
notebook's calls. Each op is named as the step language names it today
(``matmul`` renders ``a @ b``, ``softmax`` renders ``softmax(x, axis=-1)``), with
its parameters as a mapping, so that the op table :data:`OPS` is the one place
that knows how an op is written. When the op registry (``symtf.ops``) names the
ops, :func:`render` reads its spelling from there.

Each op the search builds also has a float64 *pre-filter* (:attr:`Op.screen`):
a numpy computation used only to discard candidates that are nowhere near the
printed numbers, tens of thousands per article, where the registry's float64
backend costs more per call (``benchmarks/bench_registry_float.py``: 1.5–3× for
softmax and the norms, more for the cheap element-wise ops). Run through the
registry instead, the pre-filter made drafting the seed article about a quarter
slower, past the draft's speed target. No verdict and no acceptance rests
on it: a kept candidate is evaluated again in certified balls through the step
language itself. It is the one second body of these ops, and
``tests/test_draft_prefilter.py`` pins each to the registry's op: the text a
candidate renders, evaluated exactly, agrees with its pre-filter. Ops only the
code translation writes have no pre-filter.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

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
    "screen",
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
    """How one op is written in a step and pre-filtered in float64.

    Attributes:
        text: A format: ``{0}``, ``{1}`` … the inputs, ``{*}`` all of them comma-separated,
            ``{name}`` a parameter; ``{kw}`` the keyword parameters that differ from
            ``defaults``, written ``, name=value``.
        prec: Binding strength of the result: 1 ``+ -``, 2 ``* / @``, 3 postfix, 4 atom.
        screen: The float64 pre-filter: inputs and parameters → an array (``None`` for the
            ops only the code translation writes, which are never pre-filtered).
        defaults: Parameter values not written.
        needs: How strongly each input must bind (parenthesised below that).
    """

    text: str
    prec: int
    screen: Callable[..., np.ndarray] | None = None
    defaults: Mapping[str, Any] = field(default_factory=dict)
    needs: tuple[int, ...] = (0,)


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(x - m)
    out: np.ndarray = e / np.sum(e, axis=axis, keepdims=True)
    return out


def _layernorm(x: np.ndarray, eps: float = 0.0, unbiased: bool = False) -> np.ndarray:
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True, ddof=1 if unbiased else 0)
    out: np.ndarray = (x - mu) / np.sqrt(var + eps)
    return out


def _rmsnorm(x: np.ndarray, eps: float = 0.0) -> np.ndarray:
    out: np.ndarray = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    return out


def _gelu(x: np.ndarray) -> np.ndarray:
    erf = np.vectorize(math.erf, otypes=[float])
    out: np.ndarray = x / 2 * (1 + erf(x / math.sqrt(2)))
    return out


def _gelu_tanh(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = x / 2 * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return out


def _reduce(fn: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    def run(
        x: np.ndarray, axis: int | None = None, keepdims: bool = False, unbiased: bool = False
    ) -> Any:
        if fn in (np.var, np.std):
            return fn(x, axis=axis, keepdims=keepdims, ddof=1 if unbiased else 0)
        return fn(x, axis=axis, keepdims=keepdims)

    return run


@functools.cache
def _causal(n: int) -> np.ndarray:
    out = np.where(np.tril(np.ones((n, n))) > 0, 0.0, -np.inf)
    out.flags.writeable = False
    return out


def _index(
    x: np.ndarray, rows: tuple[int, int] | None = None, cols: tuple[int, int] | None = None
) -> np.ndarray:
    r = slice(*rows) if rows else slice(None)
    c = slice(*cols) if cols else slice(None)
    out: np.ndarray = x[r, c]
    return out


def _centered(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = x - x.mean(axis=-1, keepdims=True)
    return out


OPS: dict[str, Op] = {
    "matmul": Op("{0} @ {1}", 2, np.matmul, needs=(2, 3)),
    "add": Op("{0} + {1}", 1, np.add, needs=(1, 2)),
    "sub": Op("{0} - {1}", 1, np.subtract, needs=(1, 2)),
    "mul": Op("{0} * {1}", 2, np.multiply, needs=(2, 3)),
    "div": Op("{0} / {1}", 2, np.divide, needs=(2, 3)),
    "T": Op("{0}.T", 3, lambda x: np.swapaxes(x, -1, -2), needs=(4,)),
    "sqrt": Op("sqrt({0})", 4, np.sqrt),
    "exp": Op("exp({0})", 4, np.exp),
    "relu": Op("relu({0})", 4, lambda x: np.maximum(x, 0.0)),
    "gelu": Op("gelu({0})", 4, _gelu),
    "gelu_tanh": Op("gelu_tanh({0})", 4, _gelu_tanh),
    "sigmoid": Op("sigmoid({0})", 4, lambda x: 1 / (1 + np.exp(-x))),
    "tanh": Op("tanh({0})", 4, np.tanh),
    "silu": Op("silu({0})", 4, lambda x: x / (1 + np.exp(-x))),
    "softmax": Op("softmax({0}{kw})", 4, _softmax, {"axis": None}),
    "layernorm": Op("layernorm({0}{kw})", 4, _layernorm, {"eps": 0, "unbiased": False}),
    "rmsnorm": Op("rmsnorm({0}{kw})", 4, _rmsnorm, {"eps": 0}),
    "mean": Op("mean({0}{kw})", 4, _reduce(np.mean), {"keepdims": False}),
    "var": Op("var({0}{kw})", 4, _reduce(np.var), {"keepdims": False, "unbiased": False}),
    "std": Op("std({0}{kw})", 4, _reduce(np.std), {"keepdims": False, "unbiased": False}),
    "sum": Op("sum({0}{kw})", 4, _reduce(np.sum), {"keepdims": False}),
    "max": Op("max({0}{kw})", 4, _reduce(np.max), {"keepdims": False}),
    "causal_mask": Op("causal_mask({n})", 4, _causal, needs=()),
    "concat": Op("concat({*}{kw})", 4, lambda *xs, axis=-1: np.concatenate(xs, axis=axis)),
    "index": Op("{0}[{where}]", 3, _index, needs=(4,)),
    "centered": Op("{0} - mean({0}, axis=-1, keepdims=true)", 1, _centered),
    # ops only the code translation writes: a translated step is evaluated through the
    # step language, never pre-filtered, so these have no float64 body of their own
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
    """Known tensors' float values, read by key."""

    def __getitem__(self, key: int, /) -> np.ndarray: ...


def screen(
    e: Expr, values: Values, inner: Callable[[Expr], np.ndarray] | None = None
) -> np.ndarray:
    """The candidate in float64 (a pre-filter only; see the module docstring).

    Args:
        e: The candidate.
        values: Known tensors' float values by key.
        inner: How to get an argument's value (a cache of shared sub-candidates);
            by default computed here.

    Raises:
        KeyError: For a notebook variable, or an op only the code translation writes
            (it has no pre-filter).
    """
    if isinstance(e, Ref):
        return values[e.key]
    if isinstance(e, Num):
        return np.array(float(e.text))
    if isinstance(e, Var):
        raise KeyError(e.name)
    body = OPS[e.op].screen
    if body is None:
        raise KeyError(e.op)
    get = inner or (lambda a: screen(a, values))
    args = [get(a) for a in e.args]
    params = {k: v for k, v in e.params if k != "where"}
    if e.op == "causal_mask":
        return _causal(params["n"])
    if e.op == "index":
        return _index(args[0], params.get("rows"), params.get("cols"))
    if "eps" in params:
        params["eps"] = float(params["eps"])
    return np.asarray(body(*args, **params), dtype=float)


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
