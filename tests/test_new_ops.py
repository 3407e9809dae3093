"""Rounding, ``//``, ``%``, comparisons and large powers, as a derivation's steps use them.

Expected values come from Python's exact ``Fraction`` arithmetic (``round`` on a Fraction
rounds half to even, ``//`` and ``%`` keep the divisor's sign) or mpmath at 60 digits,
never from symtf. The per-backend agreement of every op with its reference is
``tests/test_op_registry.py``; this file checks the language, the verdicts, the errors
and the escalation of certified backends at a rounding boundary.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import mpmath
import pytest

from symtf import ops
from symtf.backends import BallBackend, ExactBackend
from symtf.backends.midrad import MidradBackend
from symtf.cli import main
from symtf.errors import Undecided
from symtf.ops.array import tensor

X = ["-2.5", "-0.5", "0.5", "1.5", "2.5", "0.3", "-7.25"]
XQ = [Fraction(v) for v in X]


def _write(tmp_path: Path, steps: dict[str, str], claims: dict[str, list[Any]]) -> Path:
    lines = ['title = "new ops"', "[tensors]", f'x = "{" ".join(X)}"', 'i = "0 1 2 3 4 5 6"']
    lines.append("[steps]")
    lines += [f"{k} = {json.dumps(v)}" for k, v in steps.items()]
    for name, printed in claims.items():
        lines += [
            "[[claims]]",
            f'label = "{name}"',
            f'step = "{name}"',
            f'printed = "{" ".join(_text(v) for v in printed)}"',
        ]
    p = tmp_path / "d.toml"
    p.write_text("\n".join(lines) + "\n")
    return p


def _text(v: Any) -> str:
    q = Fraction(v)
    if q.denominator == 1:
        return str(q.numerator)
    return str(float(q))  # every value here is a short binary fraction: exact as printed


def _check(tmp_path: Path, steps: dict[str, str], claims: dict[str, list[Any]], capsys: Any) -> Any:
    code = main(["check", str(_write(tmp_path, steps, claims)), "--format", "json"])
    out = capsys.readouterr().out
    return code, json.loads(out)["derivations"][0]["checks"]


def _half_up(q: Fraction) -> int:
    return int(math.copysign(math.floor(abs(q) + Fraction(1, 2)), q))


STEPS = {
    "r": "round(x)",
    "ru": "round(x, mode='half_up')",
    "rh": "round(x, mode='half-up') - round(x, mode='half-even')",
    "fl": "floor(x)",
    "ce": "ceil(x)",
    "tr": "trunc(x)",
    "sg": "sign(x)",
    "cl": "clip(x, -1, 1)",
    "fd": "2*(i // 2)",
    "md": "i % 4 - x % -2",
    "ab": "where(x < 0, -x, x)",
    "cm": "(x <= 0.5) + (x == 0.5) + (x != 1.5) + (x >= 2.5) + (x > 0)",
    "rd": "round(x * 0.1, decimals=2)",
}


def _expected() -> dict[str, list[Any]]:
    ii = list(range(7))
    return {
        "r": [round(q) for q in XQ],
        "ru": [_half_up(q) for q in XQ],
        "rh": [_half_up(q) - round(q) for q in XQ],
        "fl": [math.floor(q) for q in XQ],
        "ce": [math.ceil(q) for q in XQ],
        "tr": [math.trunc(q) for q in XQ],
        "sg": [(q > 0) - (q < 0) for q in XQ],
        "cl": [min(max(q, -1), 1) for q in XQ],
        "fd": [2 * (i // 2) for i in ii],
        "md": [i % 4 - q % -2 for i, q in zip(ii, XQ, strict=True)],
        "ab": [abs(q) for q in XQ],
        "cm": [(q <= 0.5) + (q == 0.5) + (q != 1.5) + (q >= 2.5) + (q > 0) for q in XQ],
        "rd": [round(q * Fraction(1, 10), 2) for q in XQ],
    }


def test_rounding_division_and_comparisons_agree_with_python_fractions(
    tmp_path: Path, capsys: Any
) -> None:
    code, checks = _check(tmp_path, STEPS, _expected(), capsys)
    assert code == 0, [c for c in checks if c["verdict"] not in ("exact", "rounded")]
    assert len(checks) == 7 * len(STEPS)
    assert {c["verdict"] for c in checks} <= {"exact", "rounded"}


def test_half_to_even_differs_from_half_up_only_on_ties(tmp_path: Path, capsys: Any) -> None:
    want = _expected()
    wrong = dict(want, r=want["ru"])  # half-up printed where the step rounds half to even
    code, checks = _check(tmp_path, {"r": "round(x)"}, {"r": wrong["r"]}, capsys)
    assert code == 1
    off = [c["index"] for c in checks if c["verdict"] == "wrong"]
    ties = [[0, k] for k, q in enumerate(XQ) if (2 * q).denominator == 1 and q.denominator == 2]
    assert off == [k for k in ties if round(XQ[k[1]]) != _half_up(XQ[k[1]])]
    assert len(off) == 4  # -2.5, -0.5, 0.5 and 2.5 differ; 1.5 goes to 2 either way


def test_a_big_integer_power_is_certified_and_never_an_internal_error(
    tmp_path: Path, capsys: Any
) -> None:
    steps = {"p": "1 - 0.999**13000", "q": "1 - 0.999^1000000", "s": "(-1)^999999"}
    with mpmath.workdps(60):
        printed_p = mpmath.nstr(1 - mpmath.mpf(999) ** 13000 / mpmath.mpf(1000) ** 13000, 10)
    code, checks = _check(tmp_path, steps, {"p": [printed_p], "q": [1], "s": [-1]}, capsys)
    assert code == 0, checks
    by = {c["claim"]: c for c in checks}
    assert by["p"]["verdict"] == "rounded"
    assert by["q"]["verdict"] == "rounded"  # 1 − 0.999^10⁶ is not 1, but prints as 1
    assert by["s"]["verdict"] == "exact"


@pytest.mark.parametrize(
    ("step", "column", "message"),
    [
        ("x ^ 1000001", 3, "expected an integer exponent of at most 1000000, found 1000001"),
        ("x < 1 < 2", 7, "expected one comparison but found a chain of them"),
        (
            "round(x, mode='half_down')",
            15,
            "expected one of 'half_even', 'half_up', 'half-even', 'half-up' for mode",
        ),
        ("round(x, decimals=0.5)", 19, "round: expected an integer decimals, found 1/2"),
        ("round(x, mode='half_up)", 15, "expected a quoted word"),
        ("'half_up' + x", 1, "a quoted word ('half_up') can only be a setting's value"),
        ("x // 0", 3, "exactly 0"),
    ],
)
def test_bad_arguments_name_the_file_the_step_and_the_column(
    tmp_path: Path, capsys: Any, step: str, column: int, message: str
) -> None:
    code = main(["check", str(_write(tmp_path, {"bad": step}, {}))])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "d.toml" in err and "steps.bad" in err, err
    assert message in err, err
    assert f"(at column {column})" in err, err


def _straddling(xp: Any) -> Any:
    """``(1/3)·3`` computed in ``xp``: exactly 1, a ball around 1 in certified backends."""
    third = ops.div(xp, tensor(xp, [1]), tensor(xp, [3]))
    return ops.mul(xp, third, tensor(xp, [3]))


@pytest.mark.parametrize("make", [lambda: BallBackend(64), MidradBackend])
@pytest.mark.parametrize(
    "run",
    [
        lambda xp, v: ops.floor(xp, v),
        lambda xp, v: ops.round_(xp, ops.sub(xp, v, tensor(xp, [Fraction(1, 2)]))),
        lambda xp, v: ops.eq(xp, v, tensor(xp, [1])),
        lambda xp, v: ops.floordiv(xp, v, tensor(xp, [1])),
    ],
)
def test_an_enclosure_on_a_boundary_is_undecided_never_wrong(make: Any, run: Any) -> None:
    xp = make()
    with xp:
        v = _straddling(xp)
        assert not xp.is_zero(v.data[0] - xp.const(1))  # a ball, not the exact 1
        with pytest.raises(Undecided):
            run(xp, v)
    exact = ExactBackend()
    assert run(exact, _straddling(exact)).data[0] in (0, 1)


def test_a_boundary_case_escalates_to_the_exact_answer(tmp_path: Path, capsys: Any) -> None:
    steps = {
        "t": "x / x / 3 * 3",  # exactly 1, a ball around 1 in balls
        "f": "floor(t)",
        "r": "round(t - 0.5)",  # a tie at 0.5: half to even gives 0
        "e": "t == 1",
        "m": "(x / x / 3 * 3) % 1",
    }
    claims = {"f": [1] * 7, "r": [0] * 7, "e": [1] * 7, "m": [0] * 7}
    code, checks = _check(tmp_path, steps, claims, capsys)
    assert code == 0, checks
    assert {c["verdict"] for c in checks} == {"exact"}


def test_comparisons_read_as_python_and_render_as_relations() -> None:
    from symtf.language import lang

    sigs = ops.public_signatures()
    tree = lang.parse("a + 1 <= b // 2 % 3", sigs)
    assert lang.unparse(tree) == "((a + 1) <= (b // 2 % 3))"
    assert lang.latex(tree) == r"a + 1 \le b \mathbin{//} 2 \bmod 3"
    assert lang.unparse(lang.parse("(a < b) * (b != c)", sigs)) == "((a < b) * (b != c))"
    assert lang.unparse(lang.parse('round(x, mode="half_up")', sigs)) == (
        "round(x, mode='half_up')"
    )


def test_the_new_ops_are_in_the_readme_table() -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    for spelled in ("`a // b`", "`a % b`", "`a <= b`", "`a != b`", "`round(x, decimals=0"):
        assert spelled in readme, spelled


def test_logarithms_are_exact_on_powers_of_their_base_and_certified_elsewhere(
    tmp_path: Path, capsys: Any
) -> None:
    steps = {
        "a": "log2(abs(x) * 8)",  # 8·|x|: 20, 4, 4, 12, 20, 2.4, 58
        "b": "log10(i * 10 + 10) - log1p(i * 10 + 9) / log(10)",  # exactly 0
        "c": "expm1(log1p(x / 10))",  # x / 10 again
        "d": "logsumexp(x)",
    }
    with mpmath.workdps(60):
        a = [mpmath.log(abs(mpmath.mpf(v)) * 8, 2) for v in X]
        d = mpmath.log(sum(mpmath.exp(mpmath.mpf(v)) for v in X))
    claims = {
        "a": [mpmath.nstr(v, 12) for v in a],
        "b": [0] * 7,
        "c": [q / 10 for q in XQ],
        "d": [mpmath.nstr(d, 12)],
    }
    code, checks = _check(tmp_path, steps, claims, capsys)
    assert code == 0, [c for c in checks if c["verdict"] not in ("exact", "rounded")]
    by = [(c["claim"], c["index"], c["verdict"]) for c in checks]
    assert ("a", [0, 1], "exact") in by  # log2(4) = 2 exactly
    assert {v for n, _, v in by if n in ("b", "c")} == {"exact"}


A = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]


def _eval(text: str, **values: Any) -> Any:
    from symtf.graph.evaluate import evaluate_text

    xp = ExactBackend()
    env = {k: tensor(xp, v) for k, v in values.items()}
    out = evaluate_text(xp, text, env)
    return out.shape, [int(v) if v.is_Integer else Fraction(int(v.p), int(v.q)) for v in out.data]


def _np(a: Any) -> tuple[tuple[int, ...], list[Any]]:
    import numpy as np

    arr = np.asarray(a)
    return arr.shape, [
        Fraction(x).limit_denominator() if isinstance(x, float) else int(x)
        for x in arr.flatten().tolist()
    ]


@pytest.mark.parametrize(
    ("text", "numpy"),
    [
        ("a[idx, targ]", lambda a, i, t: a[i, t]),
        ("a[:, None]", lambda a, i, t: a[:, None]),
        ("a[None, 1]", lambda a, i, t: a[None, 1]),
        ("a[idx, 1:]", lambda a, i, t: a[i, 1:]),
        ("a[idx][:, None, 0]", lambda a, i, t: a[i][:, None, 0]),
        ("a[[[0, 2], [1, 1]]]", lambda a, i, t: a[[[0, 2], [1, 1]]]),
        ("a[idx[:, None], targ[None, :]]", lambda a, i, t: a[i[:, None], t[None, :]]),
        ("a[..., None, -1]", lambda a, i, t: a[..., None, -1]),
        ("triu(a, diagonal=1)", lambda a, i, t: __import__("numpy").triu(a, 1)),
        ("tril(a, diagonal=-1)", lambda a, i, t: __import__("numpy").tril(a, -1)),
        ("arange(1, 3, 0.5)", lambda a, i, t: __import__("numpy").arange(1, 3, 0.5)),
        (
            "arange(4)[:, None] * arange(3)",
            lambda a, i, t: __import__("numpy").outer(range(4), range(3)),
        ),
        ("full([2, 3], 7) - a[0]", lambda a, i, t: 7 - __import__("numpy").tile(a[0], (2, 1))),
    ],
)
def test_indexing_and_constructors_agree_with_numpy(text: str, numpy: Any) -> None:
    import numpy as np

    a, idx, targ = np.array(A), np.array([0, 2, 2]), np.array([1, 0, 2])
    assert _eval(text, a=A, idx=[0, 2, 2], targ=[1, 0, 2]) == _np(numpy(a, idx, targ))


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ("a[idx, [0, 1]]", "shapes (1, 3) and (2,) do not broadcast together"),
        ("a[idx, [0, 3, 1]]", "index 3 is out of range for axis 1 of size 3"),
        ("arange(2, 1)", "arange: expected at least one entry from 2 to 1 by 1"),
        ("arange(0, 1, 0)", "arange: expected a step that is not 0"),
        ("full([2], a)", "expected a single number as the value, found shape (3, 3)"),
        ("triu(a, diagonal=0.5)", "triu: expected an integer diagonal, found 1/2"),
    ],
)
def test_bad_indices_and_constructor_settings_are_exit_2(
    tmp_path: Path, capsys: Any, step: str, message: str
) -> None:
    p = tmp_path / "d.toml"
    p.write_text(
        'title = "t"\n[tensors]\na = """\n1 2 3\n4 5 6\n7 8 9\n"""\nidx = "0 2 2"\n'
        f"[steps]\nbad = {json.dumps(step)}\n"
    )
    code = main(["check", str(p)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "d.toml" in err and "steps.bad" in err and "(at column" in err, err
    assert message in err, err
