"""Every op of the registry, in every backend, against an independent mpmath reference.

The ops are read from :data:`symtf.ops.REGISTRY`, so a newly registered op is tested
without touching this file, and fails until ``tests/op_references.py`` gives it a
sample generator and an mpmath reference. On random small rationals (zeros and ties
included, ``−∞`` where the op allows it), with the tensors given entry by entry and,
when they have at most two axes, as the backend's native matrices:

- exact arithmetic equals the reference (its certified value agrees to 50 digits);
- certified balls (128 bits) and midpoint–radius enclosures contain the reference;
- float64 is within ``1e-9·(1 + |x|)`` of the reference, and float32 (numpy, and the
  midpoint of the certified float32 enclosure) within ``1e-4·(1 + |x|)``.

A certified backend may decline a sign it cannot decide (``Undecided``: evaluation
escalates); it may never give a value that excludes the reference.
"""

from __future__ import annotations

import warnings
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from op_references import REFERENCES, Case

from symtf.backends import BallBackend, ExactBackend, FloatBackend
from symtf.backends.format_sim import FormatSimBackend
from symtf.backends.formats import FB, FormatBallBackend
from symtf.backends.midrad import MidradBackend
from symtf.errors import Undecided
from symtf.ops import REGISTRY, as_int
from symtf.tensor import Tensor, matrix_shape

#: The backends every op runs in: name -> (factory, kind).
BACKENDS = {
    "exact": (ExactBackend, "exact"),
    "ball": (lambda: BallBackend(128), "certified"),
    "midrad": (MidradBackend, "certified"),
    "float64": (FloatBackend, "float"),
    "float32": (lambda: FormatSimBackend("float32"), "float"),
    "float32-ball": (lambda: FormatBallBackend("float32"), "float"),
}
#: The stated bound of each float backend: |got − x| <= bound · (1 + |x|).
FLOAT_BOUND = {"float64": 1e-9, "float32": 1e-4, "float32-ball": 1e-4}


def _sympy(x: Any) -> sympy.Expr:
    if isinstance(x, float):
        return sympy.S.NegativeInfinity if x < 0 else sympy.oo
    return sympy.Rational(x.numerator, x.denominator)


def _tensor(xp: Any, a: Any, native: bool) -> Any:
    if a is None:
        return None
    if isinstance(a, list):
        return [_tensor(xp, p, native) for p in a]
    from symtf.ops.array import num

    shape = np.shape(a)
    values = [_sympy(x) for x in np.asarray(a, dtype=object).flat]
    ms = matrix_shape(shape)
    if native and ms is not None:
        n, m = ms
        mat = xp.matrix(sympy.ImmutableMatrix(n, m, values))
        return Tensor.wrap(xp, mat, shape)
    return Tensor(shape, [num(xp, v) for v in values])


def _entries(out: Any) -> tuple[tuple[int, ...], list[Any]]:
    assert isinstance(out, Tensor), type(out)
    return out.shape, list(out.data)


def _mp_of_ball(b: Any) -> tuple[mpmath.mpf, mpmath.mpf]:
    return (
        mpmath.mpf(b.mid().str(70, radius=False)),
        mpmath.mpf(b.rad().str(10, radius=False)),
    )


def _close(want: Any, got: Any, kind: str, name: str, xp: Any) -> str | None:
    """Why ``got`` (one backend scalar) does not agree with ``want``, or ``None``."""
    tol = mpmath.mpf(10) ** -50 * (1 + (abs(want) if mpmath.isfinite(want) else 0))
    if kind == "exact":
        if isinstance(got, sympy.Basic) and got.is_infinite:
            return (
                None
                if (mpmath.isinf(want) and (want < 0) == bool(got.is_extended_negative))
                else "∞"
            )
        if mpmath.isinf(want):
            return "expected ±∞"
        b = xp.ball(got, 300)
        mid, rad = _mp_of_ball(b)
        return None if abs(mid - want) <= rad + tol else f"{got} ≠ {want}"
    if kind == "certified":
        if mpmath.isinf(want):
            if not got.is_finite() and got.rad() != 0:
                return None  # unknown ([±∞], as arb's −∞ + 1/3 gives): wide, and true
            return (
                None
                if (not got.is_finite() and got.rad() == 0 and float(got.mid()) == float(want))
                else "∞"
            )
        if not got.is_finite():
            return None  # an unknown entry (infinite radius) is a wide, true enclosure
        mid, rad = _mp_of_ball(got)
        return None if abs(mid - want) <= rad + tol else f"{got} excludes {want}"
    f = float(got.b.mid()) if isinstance(got, FB) else float(got)
    if mpmath.isinf(want):
        return None if f == float(want) else f"{f} ≠ ∞"
    bound = FLOAT_BOUND[name] * (1 + abs(float(want)))
    return (
        None if abs(f - float(want)) <= bound else f"{f} is {abs(f - float(want)):.3g} from {want}"
    )


def _in_format(case: Case, backend: str) -> Case:
    """The case with every finite entry rounded to the float backend's format."""
    to = np.float32 if backend.startswith("float32") else np.float64

    def rounded(a: Any) -> Any:
        if a is None:
            return None
        if isinstance(a, list):
            return [rounded(x) for x in a]
        out = np.empty(np.shape(a), dtype=object)
        for idx in np.ndindex(*np.shape(a)):
            x = a[idx]
            out[idx] = x if isinstance(x, float) else Fraction(float(to(x)))
        return out

    return Case([rounded(t) for t in case.tensors], case.params, case.native)


def _run(op: Any, case: Case, xp: Any, native: bool) -> Any:
    tensors = [_tensor(xp, a, native) for a in case.tensors]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return op(xp, *tensors, **case.params)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_registered_op_has_a_reference_and_samples(name: str) -> None:
    assert name in REFERENCES, (
        f"op {name!r} is registered but tests/op_references.py gives it no mpmath reference "
        "and sample generator"
    )


@pytest.mark.parametrize("name", sorted(REGISTRY))
@settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_op_agrees_with_mpmath_in_every_backend(name: str, data: st.DataObject) -> None:
    ref = REFERENCES.get(name)
    if ref is None:
        pytest.fail(f"no reference for {name!r} in tests/op_references.py")
    op = REGISTRY[name]
    case = data.draw(ref.sample, label="case")
    native = data.draw(st.booleans(), label="native matrices")
    with mpmath.workdps(60):
        want = ref.expect(case)
        for bname, (make, kind) in BACKENDS.items():
            xp = make()
            with xp:
                try:
                    out = _run(op, case, xp, native)
                except Undecided:
                    assert kind != "exact", f"{name}: exact arithmetic could not decide"
                    continue
                if isinstance(want, tuple):  # token ids
                    assert (out is None and bname == "midrad") or out == want, (bname, out, want)
                    continue
                want_a = np.asarray(want, dtype=object)
                shape, got = _entries(out)
                assert shape == want_a.shape, (bname, shape, want_a.shape)
                # A float backend computes on its format's inputs: where the op jumps
                # (⌊1 / (1/3)⌋ is 3, but 2 at float32's 1/3, as torch gives), the
                # reference at those inputs is right too.
                at_inputs = (
                    np.asarray(ref.expect(_in_format(case, bname)), dtype=object).flat
                    if kind == "float" and not ref.integer
                    else want_a.flat
                )
                for k, (g, w, w_in) in enumerate(zip(got, want_a.flat, at_inputs, strict=True)):
                    if ref.integer:
                        assert as_int(g) == int(w), (bname, k, g, w)
                        continue
                    why = _close(mpmath.mpf(w), g, kind, bname, xp)
                    if why is not None and kind == "float":
                        why = _close(mpmath.mpf(w_in), g, kind, bname, xp) and why
                    assert why is None, f"{name} in {bname}, entry {k}: {why}"


ELEMENTWISE = sorted(n for n, op in REGISTRY.items() if op.elementwise)


@pytest.mark.parametrize("name", ELEMENTWISE)
@settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_an_elementwise_op_moves_only_the_entries_at_the_moved_position(
    name: str, data: st.DataObject
) -> None:
    """The registry's ``elementwise`` flag, checked against the op's mpmath reference (not
    symtf): moving one entry of one tensor argument changes no output entry except those
    at its (broadcast) position."""
    ref = REFERENCES[name]
    case = data.draw(ref.sample, label="case")
    slots = [k for k, a in enumerate(case.tensors) if isinstance(a, np.ndarray) and a.size]
    if not slots:
        return
    k = data.draw(st.sampled_from(slots), label="argument")
    arg = case.tensors[k]
    pos = data.draw(st.sampled_from(list(np.ndindex(*arg.shape))), label="entry")
    moved = arg.copy()
    if isinstance(moved[pos], float):  # -inf: move it to a finite value
        moved[pos] = Fraction(-5, 2)
    else:
        moved[pos] = moved[pos] + Fraction(1, 7)
    other = Case([moved if j == k else a for j, a in enumerate(case.tensors)], case.params)
    with mpmath.workdps(60):
        try:
            before = np.asarray(ref.expect(case), dtype=object)
            after = np.asarray(ref.expect(other), dtype=object)
        except (ValueError, ZeroDivisionError, ArithmeticError):
            return  # the moved input left the op's domain
    assert before.shape == after.shape
    lead = before.ndim - arg.ndim
    for idx in np.ndindex(*before.shape):
        reached = all(arg.shape[a] == 1 or idx[lead + a] == pos[a] for a in range(arg.ndim))
        if not reached:
            b, a = before[idx], after[idx]
            same = (mpmath.isnan(b) and mpmath.isnan(a)) or b == a
            assert same, f"{name}: moving argument {k} at {pos} changed output {idx}"
