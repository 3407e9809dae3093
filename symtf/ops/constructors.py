"""Tensors made from nothing but settings: constants, the file's numbers, token ids, masks.

A template's inputs (``given``: a matrix of the file; ``const``: ``d_head``;
``ids``: the token ids) and the constructors a step may call (``zeros``,
``ones``, ``full``, ``arange``, ``eye``, ``one_hot``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from symtf import limits
from symtf.ops.array import as_int, full, num, wrap
from symtf.ops.core import Param, check, define, zero_vjp
from symtf.tensor import Tensor

#: Most entries a constructor may make.
MAX_ENTRIES = limits.MAX_ENTRIES


def _filled_shape(*, shape: Any) -> tuple[int, ...]:
    dims = list(shape)
    check(
        all(n >= 1 for n in dims) and 1 <= len(dims) <= 4,
        f"expected 1 to 4 positive sizes, found {dims}",
    )
    check(
        math.prod(dims) <= MAX_ENTRIES,
        f"expected at most {MAX_ENTRIES} entries, found shape {tuple(dims)}",
    )
    return tuple(dims)


def _filled(name: str, value: int) -> Any:
    def compute(xp: Any, *, shape: Any) -> Tensor:
        return full(xp, list(shape), value)

    compute.__doc__ = f"Exact {name}: ``-> shape``."
    return define(
        name,
        "constructors",
        (Param("shape", "ints"),),
        shape=_filled_shape,
        tex=r"\mathbf{" + str(value) + "}",
        text=f"a tensor of {name}",
        shapes="→ shape",
        variadic="shape",
        vjp=zero_vjp,
    )(compute)


zeros = _filled("zeros", 0)
ones = _filled("ones", 1)


def _full_shape(value: Any, *, shape: Any) -> tuple[int, ...]:
    check(
        value is None or math.prod(value) == 1,
        f"expected a single number as the value, found shape {tuple(value or ())}",
    )
    return _filled_shape(shape=shape)


def _full_vjp(xp: Any, g: Tensor, value: Tensor, *, output: Tensor, shape: Any) -> tuple[Any, ...]:
    from symtf.ops.array import total

    return (total(xp, g).reshape(value.shape),)


@define(
    "full",
    "constructors",
    (Param("shape", "ints"), Param("value")),
    shape=_full_shape,
    tex=r"c\,\mathbf{1}",
    text="a tensor of one value (a number or a one-entry tensor: full([2, 3], -inf))",
    shapes="→ shape",
    vjp=_full_vjp,
)
def full_(xp: Any, value: Tensor, *, shape: Any) -> Tensor:
    """Every entry ``value`` (a one-entry tensor): ``-> shape``."""
    v = value.item()
    return Tensor(tuple(shape), [v] * math.prod(shape))


def _arange_count(start: Any, stop: Any, step: Any) -> tuple[Any, Any, int]:
    if stop is None:
        start, stop = 0, start
    check(step != 0, "arange: expected a step that is not 0")
    count = max(0, math.ceil(Fraction(stop - start) / Fraction(step)))
    check(count >= 1, f"arange: expected at least one entry from {start} to {stop} by {step}")
    check(count <= MAX_ENTRIES, f"expected at most {MAX_ENTRIES} entries, found {count}")
    return start, stop, count


def _arange_shape(*, start: Any, stop: Any = None, step: Any = 1) -> tuple[int, ...]:
    return (_arange_count(start, stop, step)[2],)


@define(
    "arange",
    "constructors",
    (
        Param("start", "number"),
        Param("stop", "number", None),
        Param("step", "number", 1),
    ),
    shape=_arange_shape,
    tex=r"(a, a + s, \ldots)",
    text="start, start + step, … up to but not including stop (arange(n): 0 … n − 1), exact",
    shapes="(⌈(stop − start)/step⌉,)",
    vjp=lambda xp, g, *, output, **_: (),
)
def arange(xp: Any, *, start: Any, stop: Any = None, step: Any = 1) -> Tensor:
    """``start, start + step, …`` below ``stop`` (``arange(n)``: ``0 … n − 1``), exact."""
    first, _, count = _arange_count(start, stop, step)
    return Tensor((count,), [num(xp, Fraction(first) + k * Fraction(step)) for k in range(count)])


def _eye_shape(*, n: int) -> tuple[int, ...]:
    check(n * n <= MAX_ENTRIES, f"expected at most {MAX_ENTRIES} entries, found shape {(n, n)}")
    return (n, n)


@define(
    "eye",
    "constructors",
    (Param("n", "int", lo=1),),
    shape=_eye_shape,
    tex="I_n",
    text="the identity",
    shapes="(n, n)",
    vjp=zero_vjp,
)
def eye(xp: Any, *, n: int) -> Tensor:
    """The identity: ``-> (n, n)``."""
    one, zero = xp.const(1), xp.const(0)
    return Tensor((n, n), [one if i == j else zero for i in range(n) for j in range(n)])


def _one_hot_shape(ids: Any, *, n: int) -> tuple[int, ...]:
    return (*ids, n)


@define(
    "one_hot",
    "constructors",
    (Param("ids"), Param("n", "int", lo=1)),
    shape=_one_hot_shape,
    tex=r"[\,i = \mathrm{id}\,]",
    text="1 at each id",
    shapes="ids.shape + (n,)",
    vjp=zero_vjp,
)
def one_hot(xp: Any, ids: Tensor, *, n: int) -> Tensor:
    """``ids -> ids.shape + (n,)``: 1 at each id, 0 elsewhere."""
    from symtf.errors import ShapeError

    one, zero = xp.const(1), xp.const(0)
    out: list[Any] = []
    for v in ids.data:
        k = as_int(v)
        if k is None:
            raise ShapeError(f"one_hot: expected an integer, found {v}")
        check(0 <= k < n, f"one_hot: id {k} is outside 0..{n - 1}")
        out.extend(one if j == k else zero for j in range(n))
    return Tensor((*ids.shape, n), out)


# ----------------------------------------------------------------------------- a template's inputs


def _given_shape(*, value: Any) -> tuple[int, ...]:
    shape = getattr(value, "shape", None)
    return tuple(shape) if shape is not None else ()


def _given_display(params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    return labels.get("formula", "X")


@define(
    "given",
    "constructors",
    (Param("value", "value", doc="a matrix of the file, or a given tensor of [tensors]"),),
    shape=_given_shape,
    tex="X",
    text="numbers given by the file",
    shapes="as given",
    public=False,
    display=_given_display,
    vjp=zero_vjp,
    rule=r"\text{given in the file}",
)
def given(xp: Any, *, value: Any) -> Tensor:
    """Numbers the file gives, in the backend's numbers.

    A matrix (weights, embeddings) goes through the backend's ``matrix``; a given tensor
    of ``[tensors]`` is built entry by entry, except one marked ``rounded = true``,
    which goes through ``matrix`` as one row so that a backend for rounded inputs makes
    each entry its rounding interval.
    """
    if getattr(value, "texts", None) is None:  # a matrix of the file
        return wrap(xp, xp.matrix(value), value.shape)
    values = value.values
    if value.flat is not None:
        m = xp.matrix(value.flat)
        return Tensor(value.shape, [xp.entry(m, 0, k) for k in range(len(values))])
    return Tensor(value.shape, [num(xp, v) for v in values])


@define(
    "const",
    "constructors",
    (Param("value", "value"),),
    shape=lambda *, value: (1, 1),
    tex="c",
    text="a number",
    shapes="(1, 1)",
    public=False,
    display=lambda params, labels: labels.get("formula", ""),
    vjp=zero_vjp,
    rule=r"\text{a constant}",
)
def const(xp: Any, *, value: Any) -> Tensor:
    """A 1×1 constant in the backend's numbers (``d_head``, a token id)."""
    return wrap(xp, xp.from_rows([[xp.const(value)]]), (1, 1))


@define(
    "ids",
    "constructors",
    (Param("ids", "value"),),
    shape=lambda *, ids: (1, len(ids)),
    tex="",
    text="token ids",
    shapes="(1, n)",
    public=False,
    vjp=zero_vjp,
    rule=r"\text{the token ids}",
)
def ids(xp: Any, *, ids: Any) -> Tensor:
    """Token ids as a ``[1, n]`` row of the backend's numbers."""
    return wrap(xp, xp.from_rows([[xp.const(i) for i in ids]]), (1, len(ids)))


def _divisor_display(params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    return r"\sqrt{d_k}"


@define(
    "divisor",
    "constructors",
    (Param("scale", "value", None, doc="the file's scale, or √d_head"), Param("d_head", "value")),
    shape=lambda *, scale=None, d_head: (1, 1),
    tex=r"\sqrt{d_k}",
    text="√d_k, or the given scale",
    shapes="(1, 1)",
    public=False,
    display=_divisor_display,
    vjp=zero_vjp,
    rule=r"\text{the score divisor}",
)
def divisor(xp: Any, *, scale: Any = None, d_head: int) -> Tensor:
    """The score divisor as a 1×1 matrix: the given scale, or ``√d_head``."""
    d = xp.const(scale) if scale is not None else xp.sqrt(xp.const(d_head))
    return wrap(xp, xp.from_rows([[d]]), (1, 1))


__all__ = ["MAX_ENTRIES", "const", "divisor", "eye", "given", "ids", "one_hot", "ones", "zeros"]
