"""Property tests: exact invariants of the ops, certified verdicts against slow oracles,
and hostile text that may only ever raise symtf's own errors.

The oracles here share no code with symtf: verdicts are recomputed with
:class:`fractions.Fraction` and integer square roots, and the forward pass of
the bundled ``i_love_ai`` derivation is compared with the independent mpmath
model in ``tests/reference_model.py``. A mutation check breaks three ops on
purpose and asserts that these tests notice.

Hypothesis runs derandomized (the same examples on every run) with no deadline.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import sympy
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from mpmath import mp, mpf
from reference_model import forward, i_love_ai_weights

import symtf
from symtf import ops
from symtf.backends import BallBackend, ExactBackend
from symtf.backends.certify import ball
from symtf.backends.zero import exact_zero
from symtf.checking.evaluation import Quantity, classify
from symtf.errors import ModelError, SymtfError
from symtf.language import expr
from symtf.numbers import parse_printed

DERIVATIONS = Path(__file__).parent.parent / "derivations"


def fast(n: int) -> Any:
    """Hypothesis settings: ``n`` examples, reproducible, no deadline."""
    return settings(
        max_examples=n,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        database=None,
    )


#: Properties and their example counts, for the report.
EXAMPLES = {
    "softmax_rows_sum_to_one": 60,
    "layernorm_eps0_mean0_var1": 60,
    "constant_row_is_a_model_error": 20,
    "attention_permutation_equivariant": 25,
    "causal_row0_is_v0": 25,
    "rational_chain_verdicts": 300,
    "printed_strings_at_random_precisions": 300,
    "scores_end_to_end_verdicts": 15,
    "random_text_as_printed": 300,
    "random_bytes_as_expression": 300,
    "random_tokens_as_expression": 400,
    "random_text_in_a_derivation": 60,
}

# ----------------------------------------------------------------------------- strategies

small_rationals = st.fractions(min_value=-5, max_value=5, max_denominator=20)


def matrices(
    rows: st.SearchStrategy[int], cols: st.SearchStrategy[int]
) -> st.SearchStrategy[list[list[Fraction]]]:
    """Rectangular matrices of small rationals."""
    return st.tuples(rows, cols).flatmap(
        lambda rc: st.lists(
            st.lists(small_rationals, min_size=rc[1], max_size=rc[1]),
            min_size=rc[0],
            max_size=rc[0],
        )
    )


def to_sympy(m: list[list[Fraction]]) -> sympy.ImmutableMatrix:
    """An exact SymPy matrix from rows of Fractions."""
    return sympy.ImmutableMatrix(
        [[sympy.Rational(x.numerator, x.denominator) for x in r] for r in m]
    )


def certified_equal(a: sympy.Expr, b: sympy.Expr) -> bool:
    """``a == b`` exactly: structurally, or by exact algebra on the difference."""
    return a == b or exact_zero(sympy.cancel(sympy.together(a - b)))


# ----------------------------------------------------------------------------- ops invariants


@fast(EXAMPLES["softmax_rows_sum_to_one"])
@given(matrices(st.integers(1, 3), st.integers(1, 4)), st.data())
def test_softmax_rows_sum_to_exactly_one(m: list[list[Fraction]], data: st.DataObject) -> None:
    s = to_sympy(m).as_mutable()
    for i in range(s.rows):  # mask some entries, keep one finite per row
        keep = data.draw(st.integers(0, s.cols - 1))
        for j in range(s.cols):
            if j != keep and data.draw(st.booleans()):
                s[i, j] = -sympy.oo
    xp = ExactBackend()
    p = ops.on_matrices(ops.softmax, xp, sympy.ImmutableMatrix(s))
    for i in range(p.rows):
        total = sympy.Add(*p.row(i))
        assert sympy.cancel(sympy.together(total)) == 1
        for j in range(p.cols):
            if s[i, j] == -sympy.oo:
                assert p[i, j] == 0
    with BallBackend(128) as bx:  # balls certify the same: every row sum contains 1
        pb = ops.on_matrices(ops.softmax, bx, bx.matrix(sympy.ImmutableMatrix(s)))
        for i in range(p.rows):
            assert sum((pb[i, j] for j in range(p.cols)), start=bx.const(0)).contains(1)


@fast(EXAMPLES["layernorm_eps0_mean0_var1"])
@given(matrices(st.integers(1, 3), st.integers(2, 5)))
def test_layernorm_eps0_has_mean_exactly_0_and_variance_exactly_1(m: list[list[Fraction]]) -> None:
    assume(all(len(set(r)) > 1 for r in m))
    xp = ExactBackend()
    d = len(m[0])
    out = _layer_norm(xp, to_sympy(m), sympy.S.Zero)
    for i in range(len(m)):
        row = list(out.row(i))
        mean = sympy.Add(*row) / d
        var = sympy.Add(*((e - mean) ** 2 for e in row)) / d
        assert sympy.expand(sympy.radsimp(mean)) == 0
        assert sympy.expand(sympy.radsimp(var)) == 1


@fast(EXAMPLES["constant_row_is_a_model_error"])
@given(matrices(st.integers(1, 3), st.integers(1, 4)), st.data())
def test_constant_row_with_eps0_is_a_model_error_naming_the_row(
    m: list[list[Fraction]], data: st.DataObject
) -> None:
    i = data.draw(st.integers(0, len(m) - 1))
    m[i] = [m[i][0]] * len(m[i])
    for k in range(i):  # earlier rows vary, so row i is the first bad one
        assume(len(set(m[k])) > 1)
    with pytest.raises(ModelError, match=rf"row {i}\b"):
        _layer_norm(ExactBackend(), to_sympy(m), 0)


def _layer_norm(xp: Any, x: Any, eps: Any) -> Any:
    """LayerNorm of each row with γ = 1, β = 0: the registry's worked pieces, as templates chain them."""
    d = x.cols
    mu = ops.on_matrices(ops.mean, xp, x, axis=-1, keepdims=True)
    centered = ops.on_matrices(ops.sub, xp, x, mu)
    var = ops.on_matrices(ops.mean_square, xp, centered)
    std = ops.on_matrices(ops.norm_root, xp, var, eps=eps)
    return ops.on_matrices(
        ops.normalize, xp, centered, std, gamma=sympy.ones(1, d), beta=sympy.zeros(1, d)
    )


def _attention(xp: Any, x: Any, wq: Any, wk: Any, wv: Any, *, causal: bool) -> Any:
    """One exact head built from symtf.ops, scaled by √d_k."""
    q, k, v = (ops.on_matrices(ops.linear, xp, x, w=w) for w in (wq, wk, wv))
    s = ops.on_matrices(ops.matmul, xp, q, k, transpose_b=True)
    d = sympy.ImmutableMatrix([[xp.sqrt(xp.const(wq.cols))]])
    s = ops.on_matrices(ops.scale, xp, s, d)
    if causal:
        s = ops.on_matrices(ops.mask_future, xp, s)
    return ops.on_matrices(ops.matmul, xp, ops.on_matrices(ops.softmax, xp, s), v), v


head_weights = st.integers(1, 3).flatmap(
    lambda d: st.tuples(
        matrices(st.integers(2, 3), st.just(d)),
        matrices(st.just(d), st.integers(1, 2)),
        matrices(st.just(d), st.integers(1, 2)),
        matrices(st.just(d), st.integers(1, 2)),
    ).filter(lambda w: len(w[1][0]) == len(w[2][0]))
)


@fast(EXAMPLES["attention_permutation_equivariant"])
@given(head_weights, st.randoms(use_true_random=False))
def test_attention_without_mask_is_permutation_equivariant(w: tuple, rnd: Any) -> None:
    x, wq, wk, wv = (to_sympy(a) for a in w)
    perm = list(range(x.rows))
    rnd.shuffle(perm)
    xp = ExactBackend()
    z, _ = _attention(xp, x, wq, wk, wv, causal=False)
    zp, _ = _attention(
        xp, sympy.ImmutableMatrix([list(x.row(i)) for i in perm]), wq, wk, wv, causal=False
    )
    for a, i in enumerate(perm):
        for j in range(z.cols):
            assert certified_equal(zp[a, j], z[i, j])


@fast(EXAMPLES["causal_row0_is_v0"])
@given(head_weights)
def test_causal_attention_row_0_is_v0(w: tuple) -> None:
    x, wq, wk, wv = (to_sympy(a) for a in w)
    z, v = _attention(ExactBackend(), x, wq, wk, wv, causal=True)
    assert list(z.row(0)) == list(v.row(0))


# ----------------------------------------------------------------------------- verdict oracles


def oracle_round(x: Fraction, n: int) -> Fraction:
    """Half-up (away from zero) rounding of a rational, by integer arithmetic."""
    scale = 10**n
    k = (2 * abs(x.numerator) * scale + x.denominator) // (2 * x.denominator)
    return Fraction(k if x >= 0 else -k, scale)


def oracle_verdict(
    printed: Fraction, n: int, rounded: Fraction, equal: bool, *, within: bool, tie: bool = False
) -> str:
    """The verdict classes (``symtf check --help``): ``rounded`` for the correct rounding (``tie``: the value is a
    midpoint and no rule is stated, so either neighbour is), ``slip`` when not a correct
    rounding but ``within`` one unit (|printed − exact| < u), else ``wrong``."""
    if equal:
        return "exact"
    if rounded == printed or tie:
        return "rounded"
    return "slip" if within else "wrong"


def rational_oracle(printed: Fraction, n: int, x: Fraction, *, stated: bool) -> str:
    """:func:`oracle_verdict` for a rational exact value ``x`` (half-up when ``stated``)."""
    units = abs(printed - x) * 10**n
    return oracle_verdict(
        printed,
        n,
        oracle_round(x, n),
        printed == x,
        within=units < 1,
        tie=not stated and units == Fraction(1, 2),
    )


def fmt(v: Fraction, n: int) -> str:
    """A rational with at most ``n`` decimals written with exactly ``n``."""
    k = v * 10**n
    assert k.denominator == 1
    s = str(abs(k.numerator)).rjust(n + 1, "0")
    body = s if n == 0 else f"{s[:-n]}.{s[-n:]}"
    return ("-" if v < 0 else "") + body


def rational_quantity(x: Fraction, disguise: bool) -> Quantity:
    """A Quantity for ``x``; disguised, it is ``x`` written as an irrational-looking sum."""
    e: sympy.Expr = sympy.Rational(x.numerator, x.denominator)
    if disguise:  # (1 + √2)² − 2√2 − 3 = 0, unevaluated
        r2 = sympy.sqrt(2)
        e = sympy.Add(sympy.Pow(1 + r2, 2, evaluate=False), -2 * r2, -3, e, evaluate=False)
    return Quantity(lambda prec: ball(e, prec), lambda: (e, None))


ops_ = st.sampled_from(["+", "-", "*", "/"])
decimals_ = st.fractions(min_value=-100, max_value=100, max_denominator=1).flatmap(
    lambda whole: st.integers(0, 4).flatmap(
        lambda k: st.integers(-(10**k), 10**k).map(lambda f: whole + Fraction(f, 10**k))
    )
)


@st.composite
def rational_chains(draw: Any) -> Fraction:
    """A value computed by a chain of + − × ÷ over short decimals (like an article's)."""
    x = draw(decimals_)
    for _ in range(draw(st.integers(0, 5))):
        op, y = draw(ops_), draw(decimals_)
        if op == "/" and y == 0:
            continue
        x = {"+": x + y, "-": x - y, "*": x * y, "/": x / y if y else x}[op]
    return x


@st.composite
def printed_near(draw: Any, x: Fraction) -> tuple[str, int]:
    """A printed string for ``x``: its rounding, a midpoint, or a few ulps off."""
    n = draw(st.integers(0, 9))
    r = oracle_round(x, n)
    kind = draw(st.sampled_from(["near", "near", "truncated", "exact", "far"]))
    if kind == "exact" and (x * 10**n).denominator == 1:
        return fmt(x, n), n
    if kind == "truncated":
        t = Fraction(math.trunc(x * 10**n), 10**n)
        return fmt(t, n), n
    off = draw(st.integers(-2, 2)) if kind != "far" else draw(st.integers(-(10**6), 10**6))
    return fmt(r + Fraction(off, 10**n), n), n


@fast(EXAMPLES["rational_chain_verdicts"])
@given(rational_chains(), st.data(), st.booleans())
def test_verdicts_agree_with_a_rational_oracle(
    x: Fraction, data: st.DataObject, disguise: bool
) -> None:
    if data.draw(st.booleans()):  # a value sitting exactly on a rounding midpoint
        n = data.draw(st.integers(0, 6))
        x = oracle_round(x, n) + Fraction(1 if x >= 0 else -1, 2 * 10**n)
    text, n = data.draw(printed_near(x))
    p = parse_printed(text)
    verdict, expected, _ = classify(rational_quantity(x, disguise), p, "half-up")
    r = oracle_round(x, n)
    assert verdict == rational_oracle(p.value, n, x, stated=True)
    if verdict != "exact":
        assert expected == fmt(r, n)


def sqrt_rounded(q: Fraction, n: int) -> Fraction:
    """Half-up rounding of √q (q > 0 not a rational square), by integer square roots only."""
    # floor(2·√q·10^n) = isqrt(floor(4·q·10^(2n))); a tie is impossible for an irrational.
    twice = math.isqrt(4 * q.numerator * 10 ** (2 * n) // q.denominator)
    return Fraction((twice + 1) // 2, 10**n)


@fast(EXAMPLES["printed_strings_at_random_precisions"])
@given(
    st.fractions(min_value=Fraction(1, 1000), max_value=1000, max_denominator=1000),
    st.integers(0, 12),
    st.integers(-3, 3),
    st.booleans(),
)
def test_irrational_verdicts_agree_with_an_integer_oracle(
    q: Fraction, n: int, off: int, negate: bool
) -> None:
    root = sympy.sqrt(sympy.Rational(q.numerator, q.denominator))
    assume(not root.is_Rational)
    r = sqrt_rounded(q, n)
    sign = -1 if negate else 1
    e = sign * root
    printed = sign * (r + Fraction(off, 10**n))
    p = parse_printed(fmt(printed, n))
    verdict, expected, _ = classify(Quantity(lambda prec: ball(e, prec), lambda: (e, None)), p)
    # |printed − √q| < u by squares: √q > |p| − u and √q < |p| + u (no equality: irrational).
    a, u = abs(printed), Fraction(1, 10**n)
    within = (a - u < 0 or q > (a - u) ** 2) and q < (a + u) ** 2 and (printed >= 0) == (sign > 0)
    if printed == 0:
        within = q < u**2
    assert verdict == oracle_verdict(p.value, n, sign * r, equal=False, within=within)
    assert expected == fmt(sign * r, n)


def _tiny_toml(
    x: list[list[Fraction]], wq: list[list[Fraction]], wk: list[list[Fraction]], claims: str
) -> str:
    def rows(m: list[list[Fraction]]) -> str:
        return '"""\n' + "\n".join(" ".join(str(v) for v in r) for r in m) + '\n"""'

    d, dh = len(x[0]), len(wq[0])
    return f"""title = "random"
[model]
architecture = "attention"
d_model = {d}
d_head = {dh}
mask = "none"
embed = {rows(x)}
[[model.layers]]
[[model.layers.heads]]
W_Q = {rows(wq)}
W_K = {rows(wk)}
W_V = {rows(wq)}
{claims}"""


@fast(EXAMPLES["scores_end_to_end_verdicts"])
@given(head_weights, st.data())
def test_end_to_end_verdicts_on_rational_steps(w: tuple, data: st.DataObject) -> None:
    x, wq, wk, _ = w
    q = [
        [
            sum((a * b for a, b in zip(r, c, strict=True)), Fraction(0))
            for c in zip(*wq, strict=True)
        ]
        for r in x
    ]
    k = [
        [
            sum((a * b for a, b in zip(r, c, strict=True)), Fraction(0))
            for c in zip(*wk, strict=True)
        ]
        for r in x
    ]
    scores = [
        [sum((a * b for a, b in zip(qi, kj, strict=True)), Fraction(0)) for kj in k] for qi in q
    ]
    claims, want = [], []
    for i, row in enumerate(scores):
        for j, v in enumerate(row):
            text, n = data.draw(printed_near(v))
            p = parse_printed(text)
            want.append(rational_oracle(p.value, n, v, stated=False))
            claims.append(
                f'[[claims]]\nlabel = "s{i}{j}"\nstep = "l0.h0.scores"\nindex = [{i}, {j}]\nprinted = "{text}"\n'
            )
    report = symtf.check(symtf.loads(_tiny_toml(x, wq, wk, "".join(claims))))
    assert [c.verdict for c in report.derivations[0].checks] == want


# ----------------------------------------------------------------------------- hostile text


@fast(EXAMPLES["random_text_as_printed"])
@given(st.one_of(st.text(max_size=120), st.binary(max_size=120).map(lambda b: b.decode("latin-1"))))
def test_random_text_as_a_printed_value_raises_only_symtf_errors(text: str) -> None:
    try:
        p = parse_printed(text, where="claims[0].printed")
    except SymtfError as e:
        assert "claims[0].printed" in str(e)
        return
    assert p.is_neg_inf or p.value is not None


def _evaluate_safely(text: str) -> None:
    try:
        e = expr.parse(text, where="claims[0].expression")
        e.evaluate(lambda name, index: sympy.ImmutableMatrix([[sympy.Rational(1, 3), 2]]))
    except SymtfError as err:
        assert "claims[0].expression" in str(err)


@fast(EXAMPLES["random_bytes_as_expression"])
@given(st.binary(max_size=200))
def test_random_bytes_as_an_expression_raise_only_symtf_errors(data: bytes) -> None:
    _evaluate_safely(data.decode("utf-8", errors="replace"))


TOKENS = [
    "1", "0", "2.5", "9", "1e-3", "1e99", "0.000", ".5", "e", "pi", "π", "inf", "∞", "x", "x[0, 1]",
    "x[0]", "A_1", "+", "-", "−", "*", "×", "·", "/", "÷", "^", "**", "@", "∘", ".*", "(", ")",
    "[", "]", ",", "√", "ᵀ", "²", "⁻¹", "sqrt(", "exp(", "ln(", "log(", "abs(", "relu(", "max(",
    "min(", "sum(", " ", "≈", "%", "1,000", "__import__", "'", "\\",
]  # fmt: skip


@fast(EXAMPLES["random_tokens_as_expression"])
@given(st.lists(st.sampled_from(TOKENS), max_size=40))
def test_random_token_soup_as_an_expression_raises_only_symtf_errors(tokens: list[str]) -> None:
    _evaluate_safely("".join(tokens))


def _toml_string(s: str) -> str:
    out = []
    for ch in s:
        if ch in '"\\' or ord(ch) < 0x20 or ord(ch) == 0x7F or 0xD800 <= ord(ch) <= 0xDFFF:
            if 0xD800 <= ord(ch) <= 0xDFFF:
                ch = "?"
            out.append(f"\\u{ord(ch):04x}" if ch not in '"\\' else "\\" + ch)
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


@fast(EXAMPLES["random_text_in_a_derivation"])
@given(
    st.text(max_size=60),
    st.text(max_size=60),
    st.sampled_from(["printed", "expression", "step", "W_Q"]),
)
def test_random_text_in_a_derivation_raises_only_symtf_errors(a: str, b: str, field: str) -> None:
    x = [[Fraction(1), Fraction(0)], [Fraction(1, 2), Fraction(3)]]
    eye = [[Fraction(1), Fraction(0)], [Fraction(0), Fraction(1)]]
    claim = {
        "printed": f'[[claims]]\nlabel = "c"\nstep = "x"\nrow = 0\nprinted = {_toml_string(a + b)}\n',
        "expression": f'[[claims]]\nlabel = "c"\nexpression = {_toml_string(a + b)}\nprinted = "1"\n',
        "step": f'[[claims]]\nlabel = "c"\nstep = {_toml_string(a)}\nprinted = {_toml_string(b)}\n',
        "W_Q": "",
    }[field]
    text = _tiny_toml(x, eye, eye, claim)
    if field == "W_Q":
        text = text.replace('W_Q = """\n1 0\n0 1\n"""', f"W_Q = {_toml_string(a + ' ' + b)}")
    try:
        symtf.check(symtf.loads(text, "random.toml"))
    except SymtfError as e:
        assert "random.toml" in str(e)


# ----------------------------------------------------------------------------- reference model


def reference_mismatches(max_report: int = 5) -> list[str]:
    """Steps where symtf's forward pass of i_love_ai differs from the mpmath reference."""
    ref = forward(i_love_ai_weights())
    d = symtf.load(DERIVATIONS / "i_love_ai.toml")
    with BallBackend(256) as xp:
        t = symtf.run(d, xp)
        bad = []
        with mp.workdps(60):
            for name, want in ref.items():
                if name not in t or name == "next_token" or t.shape(name) is None:
                    continue
                got = t.value(name)
                if t.shape(name) != (len(want), len(want[0])):
                    bad.append(f"{name}: shape {t.shape(name)}")
                    continue
                for i, row in enumerate(want):
                    for j, w in enumerate(row):
                        g = got[i, j]
                        if w == mpf("-inf"):
                            ok = not g.is_finite() and g.mid() < 0
                        else:
                            mid = g.mid()
                            man, exp = mid.man_exp()
                            ok = g.rad() < 1e-40 and abs(
                                mpf(int(man)) * mpf(2) ** int(exp) - w
                            ) < mpf("1e-40")
                        if not ok:
                            bad.append(f"{name}[{i},{j}]")
                            if len(bad) >= max_report:
                                return bad
    return bad


def test_bundled_i_love_ai_matches_the_independent_reference() -> None:
    assert reference_mismatches() == []


# ----------------------------------------------------------------------------- mutants


def _softmax_extra_term(original: ops.Op) -> ops.Op:
    from symtf.ops.array import apply, total
    from symtf.ops.elementwise import add, quotient

    def mutant(xp: Any, s: Any, *, axis: int = -1) -> Any:
        e = apply(xp, s, xp.exp)
        t = add(xp, total(xp, e, axis, keepdims=True), ops.scalar(xp.const(1)))  # + e^0
        return quotient(xp, e, t)

    return dataclasses.replace(original, compute=mutant)


def _variance_unbiased(original: ops.Op) -> ops.Op:
    def mutant(xp: Any, centered: Any, **kw: Any) -> Any:
        if centered.shape[-1] < 2:
            return original.compute(xp, centered, **kw)
        return original.compute(xp, centered, **{**kw, "unbiased": True})  # divides by n − 1

    return dataclasses.replace(original, compute=mutant)


def _no_divisor(original: ops.Op) -> ops.Op:
    return dataclasses.replace(original, compute=lambda xp, **kw: ops.const.compute(xp, value=1))


#: Each mutant replaces one registry op (the templates look their ops up when they build).
MUTANTS = {
    "softmax: extra term in the denominator": (ops, "softmax", _softmax_extra_term),
    "layer_norm: n − 1 variance": (ops, "mean_square", _variance_unbiased),
    "attention: missing √d_k": (ops, "divisor", _no_divisor),
}

#: The property tests that must catch each mutant (besides the reference comparison).
CATCHERS: dict[str, tuple[Callable[[], None], ...]] = {
    "softmax: extra term in the denominator": (test_softmax_rows_sum_to_exactly_one,),
    "layer_norm: n − 1 variance": (test_layernorm_eps0_has_mean_exactly_0_and_variance_exactly_1,),
    "attention: missing √d_k": (),
}


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_mutant_is_caught(mutant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    module, name, make = MUTANTS[mutant]
    monkeypatch.setattr(module, name, make(getattr(module, name)))
    assert reference_mismatches(), f"{mutant} survived the reference comparison"
    for prop in CATCHERS[mutant]:
        # Without shrinking: we only need to know that the property fails.
        used = prop._hypothesis_internal_use_settings  # type: ignore[attr-defined]
        monkeypatch.setattr(
            prop, "_hypothesis_internal_use_settings", settings(used, phases=[Phase.generate])
        )
        with pytest.raises(AssertionError):
            prop()
