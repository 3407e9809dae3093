"""Evaluate a derived formula exactly at a worked example's values.

``symtf derive softmax-jacobian --at derivations/i_love_ai.toml:l0.h0.pattern[2]``
takes row 2 of the step ``l0.h0.pattern`` of that example's exact trace, builds
the formula on it (node symbols and all) and prints certified decimals.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sympy

from symtf.backends.decimals import decimal_string
from symtf.derive.core import Check, DeriveError

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
    if step not in trace:
        from symtf.suggest import hint

        raise DeriveError(
            f"--at {ref}: the worked example has no step {step!r}{hint(step, list(trace), steps=True)}"
        )
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
    index: int = row % value.rows
    return list(value.row(index)), index


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


def _is_softmax_output(trace: Any, step: str) -> bool:
    """Whether the trace recorded a step as the softmax of its (single) input (or as a
    renaming of one, like a decoding step's ``probs``)."""
    st = trace[step]
    if len(st.inputs) != 1:
        return False
    if st.op == "identity" and st.inputs[0] in trace:
        return _is_softmax_output(trace, st.inputs[0])
    return bool(st.op == "softmax")


def _softmax_of(
    trace: Any, step: str, row: list[sympy.Expr], index: int
) -> tuple[list[sympy.Expr], str, list[tuple[str, Check]]]:
    """The softmax weights ``s`` a softmax derivation is evaluated at, and what was taken.

    A softmax output (an attention pattern, ``probs``, a stand-alone softmax) is
    differentiated with respect to its input: that input row is read and softmaxed,
    and the result is checked against the step's own row. Any other step is read as
    the softmax input itself.
    """
    from symtf.derive.softmax import softmax_row

    if _is_softmax_output(trace, step):
        src = trace[step].inputs[0]
        z = list(trace.value(src).row(index))
        s = list(softmax_row(sympy.ImmutableMatrix([z])))
        same = [a - b for a, b in zip(s, row, strict=True)]
        how = f"z = row {index} of {src} (the input of the softmax {step}); s = softmax(z), row {index} of {step}"
        return s, how, [_zero_check(trace.backend, f"softmax(z) = row {index} of {step}", same)]
    if step.endswith((".pattern", "probs")):
        # attention weights renormalised after a mask: already a row of weights
        return (
            row,
            f"s = row {index} of {step} (weights renormalised after the mask, taken as they are)",
            [],
        )
    s = list(softmax_row(sympy.ImmutableMatrix([row])))
    return s, f"z = row {index} of {step} (taken as the softmax input); s = softmax(z)", []


def _softmax_jacobian(
    trace: Any, step: str, row: list[sympy.Expr], index: int
) -> tuple[str, list[Quantity], list[tuple[str, Check]]]:
    from symtf.derive.softmax import jacobian

    s, how, same = _softmax_of(trace, step, row, index)
    j = jacobian(s)
    n = len(s)
    xp = trace.backend
    sums = [sum(j[i, k] for k in range(n)) for i in range(n)]
    return (
        how,
        [quantity(xp, "s", sympy.ImmutableMatrix([s])), quantity(xp, "J = diag(s) - s s^T", j)],
        [*same, _zero_check(xp, "J·1 = 0", sums)],
    )


def _cross_entropy(
    trace: Any, step: str, row: list[sympy.Expr], index: int
) -> tuple[str, list[Quantity], list[tuple[str, Check]]]:
    from symtf.backends import ExactBackend
    from symtf.derive.softmax import cross_entropy_gradient
    from symtf.ops import largest

    s, how, same = _softmax_of(trace, step, row, index)
    xp = trace.backend
    picks = largest(ExactBackend(), list(s)) if not _has_nodes(xp, s) else None
    y = picks[0] if picks else max(range(len(s)), key=lambda i: float(xp.ball(s[i], 128).mid()))
    g = cross_entropy_gradient(s, y)
    return (
        f"{how}; target y = {y} (the largest weight)",
        [quantity(xp, "s", sympy.ImmutableMatrix([s])), quantity(xp, f"dL/dz (y = {y})", g)],
        [*same, _zero_check(xp, "sum_j dL/dz_j = 0", [sum(g)])],
    )


def _has_nodes(xp: Any, values: Sequence[sympy.Expr]) -> bool:
    defs = getattr(xp, "defs", {})
    return any(s in defs for v in values for s in sympy.sympify(v).free_symbols)


_NORM_PIECES = (".mean", ".centered", ".var", ".std", ".ms", ".rms")


def _norm_input(trace: Any, step: str, kind: str) -> str | None:
    """The input of the norm whose output (or worked piece) ``step`` is, or ``None``."""
    base = step
    for piece in _NORM_PIECES:
        if step.endswith(piece) and step[: -len(piece)] in trace:
            base = step[: -len(piece)]
    first = f"{base}.mean" if kind == "layernorm" else f"{base}.ms"
    if first in trace and trace[first].inputs:
        name: str = trace[first].inputs[0]
        return name
    return None


def _norm_settings(spec: Any, norm: str) -> tuple[Any, str]:
    """The ε and variance of the norm recorded as ``norm`` (the model's by default)."""
    m = spec.model
    eps = getattr(m, "eps", 0)
    variance = getattr(m, "variance", "biased")
    hit = re.match(r"^l(\d+)\.ln(\d)$", norm)
    if hit and int(hit.group(1)) < len(getattr(m, "layers", ())):
        layer = m.layers[int(hit.group(1))]
        k = hit.group(2)
        own_eps = getattr(layer, f"ln{k}_eps", None)
        own_var = getattr(layer, f"ln{k}_variance", None)
        return (eps if own_eps is None else own_eps), (variance if own_var is None else own_var)
    if norm == "ln_f":
        lnf_eps, lnf_var = getattr(m, "lnf_eps", None), getattr(m, "lnf_variance", None)
        return (eps if lnf_eps is None else lnf_eps), (variance if lnf_var is None else lnf_var)
    for s in getattr(m, "standalone", ()):
        if s.name == norm:
            return (eps if s.eps is None else s.eps), s.variance
    return eps, variance


def _norm(kind: str) -> Callable[..., tuple[str, list[Quantity], list[tuple[str, Check]]]]:
    def evaluate(
        trace: Any, step: str, row: list[sympy.Expr], spec: Any, index: int
    ) -> tuple[str, list[Quantity], list[tuple[str, Check]]]:
        from symtf.derive.norms import rms_norm_jacobian

        src = _norm_input(trace, step, kind)
        if src is not None:
            norm = _norm_name(trace, step)
            row = list(trace.value(src).row(index))
            eps, variance = _norm_settings(spec, norm)
            took = f"x = row {index} of {src} (the input of the norm {norm})"
        else:
            eps, variance = _norm_settings(spec, "")
            took = f"x = row {index} of {step} (taken as the norm's input)"
        eps = sympy.sympify(eps)
        n = len(row)
        x = sympy.ImmutableMatrix([row])
        xp = trace.backend
        if kind == "layernorm":
            mean = sum(row) / n
            c = x - sympy.ImmutableMatrix([[mean] * n])
            m = n - 1 if variance == "unbiased" else n
            sigma = sympy.sqrt(sum(v**2 for v in c) / m + eps)
            xhat = c / sigma
            col = sympy.Matrix(list(xhat))
            j = sympy.ImmutableMatrix(
                (sympy.eye(n) - sympy.ones(n, n) / n - col * col.T / m) / sigma
            )
            kernel = [sum(j[i, k] for k in range(n)) for i in range(n)]
            label, what = (
                f"J = (I - 11^T/n - xh xh^T/{'(n-1)' if m != n else 'n'})/sigma",
                "J·1 = 0",
            )
            scale = quantity(xp, "sigma = sqrt(var + eps)", sigma)
            took += f", eps = {eps}, {variance} variance"
        else:
            r = sympy.sqrt(sum(v**2 for v in row) / n + eps)
            j = rms_norm_jacobian(x / r, r)
            kernel = list(j * x.T - (eps / r**2) * (x / r).T)
            label, what = "J = (I - xh xh^T/n)/r", "J·x = (eps/r^2)·xh"
            scale = quantity(xp, "r = sqrt(mean(x^2) + eps)", r)
            took += f", eps = {eps}"
        return (
            took,
            [quantity(xp, "x", x), scale, quantity(xp, label, j)],
            [_zero_check(xp, what, kernel)],
        )

    return evaluate


def _norm_name(trace: Any, step: str) -> str:
    for piece in _NORM_PIECES:
        if step.endswith(piece) and step[: -len(piece)] in trace:
            return step[: -len(piece)]
    return step


def _activation_input(trace: Any, step: str, op: str) -> str | None:
    """The input of ``step`` when it is recorded as that activation of one input."""
    st = trace[step]
    if len(st.inputs) != 1:
        return None
    if st.title == op or (st.title == "FFN activation" and step.endswith("ffn_act")):
        name: str = st.inputs[0]
        return name
    return None


def _gelu(
    trace: Any, step: str, row: list[sympy.Expr], spec: Any, index: int
) -> tuple[str, list[Quantity], list[tuple[str, Check]]]:
    from symtf.derive.gelu import gelu_ops, gelu_prime, gelu_tanh

    xp = trace.backend
    act = getattr(spec.model, "activation", None)
    src = _activation_input(trace, step, "gelu")
    if src is not None and (trace[step].title == "gelu" or act in ("gelu", "gelu_tanh")):
        row = list(trace.value(src).row(index))
        took = f"x = row {index} of {src} (the input of the activation {step})"
    else:
        took = f"x = row {index} of {step} (taken as the activation's input)"
    x = sympy.ImmutableMatrix([row])
    return (
        took,
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
        how, quantities, checks = _norm(kind)(trace, step, values, spec, index)
    elif derivation.name == "gelu":
        how, quantities, checks = _gelu(trace, step, values, spec, index)
    else:
        fn = {
            "softmax-jacobian": _softmax_jacobian,
            "softmax-cross-entropy": _cross_entropy,
        }[derivation.name]
        how, quantities, checks = fn(trace, step, values, index)
    return AtResult(ref, how, tuple(quantities), tuple(checks))
