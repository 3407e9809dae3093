"""Evaluate a derived formula exactly at a worked example's values.

``symtf derive softmax-jacobian --at derivations/i_love_ai.toml:l0.h0.pattern[2]``
takes row 2 of the step ``l0.h0.pattern`` of that example's exact trace, builds
the formula on it (node symbols and all) and prints certified decimals.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sympy

from symtf.certify import decimal_string
from symtf.derive.core import Check

#: Significant digits shown for certified values.
DIGITS = 12
#: Exact closed forms longer than this (in characters) are not printed.
MAX_SHOWN = 90

_REF = re.compile(r"^(?P<step>[^\[\]]+?)(?:\[(?P<row>-?\d+)\])?$")


@dataclass(frozen=True)
class Quantity:
    """A named exact value at the worked example.

    Attributes:
        label: What it is (``J``, ``GELU(x_2)``).
        value: Exact SymPy scalar or matrix (may contain the trace's node symbols).
        decimals: Certified decimals, entry by entry (rows of strings).
        exact: Short exact closed forms, ``(entry, text)``.
    """

    label: str
    value: Any
    decimals: tuple[tuple[str, ...], ...]
    exact: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class AtResult:
    """A formula evaluated at a worked example.

    Attributes:
        ref: The reference as given (``PATH:STEP[ROW]``).
        description: What the row was taken as (``s = row 2 of l0.h0.pattern``).
        quantities: The evaluated values.
        checks: Properties confirmed at these values (certified).
    """

    ref: str
    description: str
    quantities: tuple[Quantity, ...]
    checks: tuple[tuple[str, Check], ...] = ()

    @property
    def ok(self) -> bool:
        """Every property held."""
        return all(c.ok for _, c in self.checks)


def parse_ref(ref: str) -> tuple[Path, str, int | None]:
    """Split ``PATH:STEP[ROW]``; PATH may name a bundled derivation (``i_love_ai``).

    Raises:
        DeriveError: When the reference is malformed or the file is missing.
    """
    from symtf.derive.core import DeriveError

    if ":" not in ref:
        raise DeriveError(
            f"--at expects PATH:STEP[ROW], e.g. derivations/i_love_ai.toml:l0.h0.pattern[2]; got {ref!r}"
        )
    path, rest = ref.rsplit(":", 1)
    m = _REF.match(rest.strip())
    if m is None:
        raise DeriveError(f"--at: cannot read the step {rest!r}; expected STEP or STEP[ROW]")
    from symtf import bundled

    p = Path(path)
    if not p.exists():
        found = bundled.named(path)
        if found is None:
            raise DeriveError(
                f"--at: no such file {path!r}, nor a bundled derivation "
                f"(bundled: {', '.join(bundled.names())})"
            )
        p = found
    row = m.group("row")
    return p, m.group("step"), int(row) if row is not None else None


def _row(trace: Any, step: str, row: int | None, ref: str) -> tuple[list[sympy.Expr], int]:
    from symtf.derive.core import DeriveError

    if step not in trace:
        close = difflib.get_close_matches(step, list(trace), n=4)
        hint = f"; similar: {', '.join(close)}" if close else ""
        raise DeriveError(f"--at {ref}: the worked example has no step {step!r}{hint}")
    value = trace.value(step)
    if not isinstance(value, sympy.MatrixBase):
        raise DeriveError(f"--at {ref}: step {step!r} is not a matrix")
    if row is None:
        if value.rows != 1:
            raise DeriveError(
                f"--at {ref}: step {step!r} has {value.rows} rows; name one as {step}[ROW]"
            )
        row = 0
    if not -value.rows <= row < value.rows:
        raise DeriveError(
            f"--at {ref}: row {row} is outside step {step!r} (rows 0..{value.rows - 1})"
        )
    row %= value.rows
    return list(value.row(row)), row


def _decimal(backend: Any, e: sympy.Expr) -> str:
    e = sympy.sympify(e)
    if e.is_Rational and e == 0:
        return "0"
    for prec in (128, 256, 512, 1024):
        s = decimal_string(backend.ball(e, prec), DIGITS)
        if s is not None:
            return s
    return "?"


def quantity(backend: Any, label: str, value: Any) -> Quantity:
    """Certified decimals and short exact forms of a value."""
    m = value if isinstance(value, sympy.MatrixBase) else sympy.ImmutableMatrix([[value]])
    decimals = tuple(
        tuple(_decimal(backend, m[i, j]) for j in range(m.cols)) for i in range(m.rows)
    )
    exact = []
    for i in range(m.rows):
        for j in range(m.cols):
            closed = backend.closed_form(m[i, j])
            if closed is None:
                continue
            text = sympy.sstr(closed)
            if len(text) <= MAX_SHOWN:
                where = f"[{i},{j}]" if m.rows * m.cols > 1 else ""
                exact.append((where, text))
    return Quantity(label, value, decimals, tuple(exact))


def contains_zero(backend: Any, e: sympy.Expr) -> bool:
    """Whether a certified ball around ``e`` contains 0 (consistent with ``e = 0``)."""
    e = sympy.sympify(e)
    if e == 0:
        return True
    b = backend.ball(e, 256)
    return bool(b.contains(0))


def _zero_check(backend: Any, what: str, entries: Sequence[sympy.Expr]) -> tuple[str, Check]:
    ok = all(contains_zero(backend, e) for e in entries)
    return what, Check(
        ok, "certified balls at 256 bits contain 0", "" if ok else "a ball excludes 0"
    )


def _softmax_of(trace: Any, step: str, row: list[sympy.Expr]) -> tuple[list[sympy.Expr], str]:
    from symtf.derive.softmax import softmax_row

    if step.endswith("pattern") or step.endswith("probs"):
        return row, f"s = row of {step} (already softmax weights)"
    return list(softmax_row(sympy.ImmutableMatrix([row]))), f"s = softmax(row of {step})"


def _softmax_jacobian(trace: Any, step: str, row: list[sympy.Expr]) -> tuple[str, list, list]:
    from symtf.derive.softmax import jacobian

    s, how = _softmax_of(trace, step, row)
    j = jacobian(s)
    n = len(s)
    xp = trace.backend
    sums = [sum(j[i, k] for k in range(n)) for i in range(n)]
    return (
        how,
        [quantity(xp, "s", sympy.ImmutableMatrix([s])), quantity(xp, "J = diag(s) - s s^T", j)],
        [_zero_check(xp, "J·1 = 0", sums)],
    )


def _cross_entropy(trace: Any, step: str, row: list[sympy.Expr]) -> tuple[str, list, list]:
    from symtf.backends import ExactBackend
    from symtf.derive.softmax import cross_entropy_gradient
    from symtf.ops import argmax

    s, how = _softmax_of(trace, step, row)
    xp = trace.backend
    picks = argmax(ExactBackend(), sympy.ImmutableMatrix([s])) if not _has_nodes(xp, s) else None
    y = picks[0] if picks else max(range(len(s)), key=lambda i: float(xp.ball(s[i], 128).mid()))
    g = cross_entropy_gradient(s, y)
    return (
        f"{how}; target y = {y} (the largest weight)",
        [quantity(xp, "s", sympy.ImmutableMatrix([s])), quantity(xp, f"dL/dz (y = {y})", g)],
        [_zero_check(xp, "sum_j dL/dz_j = 0", [sum(g)])],
    )


def _has_nodes(xp: Any, values: Sequence[sympy.Expr]) -> bool:
    defs = getattr(xp, "defs", {})
    return any(s in defs for v in values for s in sympy.sympify(v).free_symbols)


def _norm(kind: str) -> Callable[..., tuple[str, list, list]]:
    def evaluate(trace: Any, step: str, row: list[sympy.Expr], eps: Any) -> tuple[str, list, list]:
        from symtf.derive.norms import layer_norm_jacobian, rms_norm_jacobian

        n = len(row)
        x = sympy.ImmutableMatrix([row])
        xp = trace.backend
        if kind == "layernorm":
            mean = sum(row) / n
            c = x - sympy.ImmutableMatrix([[mean] * n])
            sigma = sympy.sqrt(sum(v**2 for v in c) / n + eps)
            j = layer_norm_jacobian(c / sigma, sigma)
            kernel = [sum(j[i, k] for k in range(n)) for i in range(n)]
            label, what = "J = (I - 11^T/n - xh xh^T/n)/sigma", "J·1 = 0"
            scale = quantity(xp, "sigma = sqrt(var + eps)", sigma)
        else:
            r = sympy.sqrt(sum(v**2 for v in row) / n + eps)
            j = rms_norm_jacobian(x / r, r)
            kernel = list(j * x.T - (eps / r**2) * (x / r).T)
            label, what = "J = (I - xh xh^T/n)/r", "J·x = (eps/r^2)·xh"
            scale = quantity(xp, "r = sqrt(mean(x^2) + eps)", r)
        return (
            f"x = row of {step}, eps = {eps}",
            [quantity(xp, "x", x), scale, quantity(xp, label, j)],
            [_zero_check(xp, what, kernel)],
        )

    return evaluate


def _gelu(trace: Any, step: str, row: list[sympy.Expr]) -> tuple[str, list, list]:
    from symtf.derive.gelu import gelu_ops, gelu_prime, gelu_tanh

    xp = trace.backend
    x = sympy.ImmutableMatrix([row])
    return (
        f"x = row of {step}",
        [
            quantity(xp, "x", x),
            quantity(xp, "GELU(x)", x.applyfunc(gelu_ops)),
            quantity(xp, "GELU'(x)", x.applyfunc(gelu_prime)),
            quantity(xp, "GELU_tanh(x)", x.applyfunc(gelu_tanh)),
            quantity(xp, "GELU - GELU_tanh", x.applyfunc(lambda t: gelu_ops(t) - gelu_tanh(t))),
        ],
        [],
    )


SUPPORTED = (
    "softmax-jacobian",
    "softmax-cross-entropy",
    "layernorm-jacobian",
    "rmsnorm-jacobian",
    "gelu",
)


def evaluate(derivation: Any, ref: str) -> AtResult:
    """Evaluate ``derivation``'s formula at ``PATH:STEP[ROW]``.

    Raises:
        DeriveError: When the derivation has no worked evaluation or the reference is bad.
    """
    import symtf
    from symtf.derive.core import DeriveError

    if derivation.name not in SUPPORTED:
        raise DeriveError(
            f"--at is not available for {derivation.name!r}; it is for: {', '.join(SUPPORTED)}"
        )
    path, step, row = parse_ref(ref)
    spec = symtf.load(path)
    trace = symtf.run(spec)
    values, index = _row(trace, step, row, ref)
    if derivation.name in ("layernorm-jacobian", "rmsnorm-jacobian"):
        kind = "layernorm" if derivation.name.startswith("layer") else "rms"
        eps = sympy.sympify(spec.model.eps)
        how, quantities, checks = _norm(kind)(trace, step, values, eps)
    else:
        fn = {
            "softmax-jacobian": _softmax_jacobian,
            "softmax-cross-entropy": _cross_entropy,
            "gelu": _gelu,
        }[derivation.name]
        how, quantities, checks = fn(trace, step, values)
    return AtResult(ref, f"{how} [row {index}]", tuple(quantities), tuple(checks))
