"""One weight of a bundled article made a symbol: every command completes, and the
certified correct-rounding sets of the symbol hold the article's own value.

The interval ends are checked against an independent forward pass in mpmath at
100 digits (the models are read here from the TOML text by hand, not by symtf):
each reported end bracket must hold a crossing of a rounding boundary, and the
article's own value must lie strictly inside the certified part of its interval.
"""

from __future__ import annotations

import contextlib
import io
import json
import tomllib
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import mpmath
import pytest

from symtf import roots
from symtf.cli import main
from symtf.numbers import Interval

ROOT = Path(__file__).resolve().parent.parent
DERIVATIONS = ROOT / "derivations"

mp = mpmath.mp


def _rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.strip().splitlines()]


def _mat(text: str, a: Any = None) -> list[list[Any]]:
    return [[a if c == "a" else mp.mpf(c) for c in row] for row in _rows(text)]


def _matmul(x: list[list[Any]], w: list[list[Any]]) -> list[list[Any]]:
    return [[mp.fsum(x[i][k] * w[k][j] for k in range(len(w))) for j in range(len(w[0]))]
            for i in range(len(x))]  # fmt: skip


def _softmax(row: list[Any]) -> list[Any]:
    finite = [v for v in row if v is not None]
    top = max(finite)
    ex = [mp.e ** (v - top) if v is not None else mp.mpf(0) for v in row]
    s = mp.fsum(ex)
    return [v / s for v in ex]


def _pattern(
    x: list[list[Any]], wq: list[list[Any]], wk: list[list[Any]], scale: Any, causal: bool
) -> list[list[Any]]:
    q, k = _matmul(x, wq), _matmul(x, wk)
    out = []
    for i in range(len(x)):
        row = [mp.fsum(q[i][t] * k[j][t] for t in range(len(q[0]))) / scale for j in range(len(x))]
        if causal:
            row = [v if j <= i else None for j, v in enumerate(row)]
        out.append(_softmax(row))
    return out


# ----------------------------------------------------------------------------- the two articles


def _i_love_ai_text() -> str:
    text = (DERIVATIONS / "i_love_ai.toml").read_text(encoding="utf-8")
    old = 'W_Q = """\n1 0\n0 1\n'
    assert text.count(old) == 1
    return text.replace(old, 'W_Q = """\na 0\n0 1\n')  # head 1's W_Q[0, 0], 1 in the file


def _i_love_ai_model(a: Any) -> dict[str, Any]:
    d = tomllib.loads(_i_love_ai_text())
    m = d["model"]
    embed, pos = _mat(m["embed"]), _mat(m["pos"])
    x = [[embed[t][j] + pos[i][j] for j in range(6)] for i, t in enumerate((0, 1, 2))]
    head = m["layers"][0]["heads"][0]
    wq, wk = _mat(head["W_Q"], a), _mat(head["W_K"])
    scores_scaled = _matmul(x, wq)
    k = _matmul(x, wk)
    scaled = [[mp.fsum(scores_scaled[i][t] * k[j][t] for t in range(2)) / mp.sqrt(2)
               for j in range(3)] for i in range(3)]  # fmt: skip
    return {"l0.h0.scaled": scaled, "l0.h0.pattern": _pattern(x, wq, wk, mp.sqrt(2), True)}


def _birds_text() -> str:
    text = (DERIVATIONS / "birds_build_nests.toml").read_text(encoding="utf-8")
    old = 'W_Q = """\n0 0 1\n'
    assert text.count(old) == 1
    return text.replace(old, 'W_Q = """\n0 0 a\n')  # W_Q[0, 2], 1 in the file


def _birds_model(a: Any) -> dict[str, Any]:
    d = tomllib.loads(_birds_text())
    m = d["model"]
    embed = _mat(m["embed"])
    head = m["layers"][0]["heads"][0]
    wq, wk = _mat(head["W_Q"], a), _mat(head["W_K"])
    q, k = _matmul(embed, wq), _matmul(embed, wk)
    scaled = [[mp.fsum(q[i][t] * k[j][t] for t in range(3)) / mp.sqrt(3) for j in range(3)]
              for i in range(3)]  # fmt: skip
    return {"l0.h0.scaled": scaled, "l0.h0.pattern": _pattern(embed, wq, wk, mp.sqrt(3), False)}


CASES = {
    "i_love_ai": (_i_love_ai_text, _i_love_ai_model, "0 0 1 0 0 0"),
    "birds_build_nests": (_birds_text, _birds_model, None),
}


@pytest.fixture(scope="module", params=list(CASES))
def checked(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    name = request.param
    text, model, _ = CASES[name]
    folder = tmp_path_factory.mktemp(name)
    path = folder / f"{name}_a.toml"
    path.write_text(text(), encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["check", "--format", "json", "--timeout", "600", str(path)])
    assert code in (0, 1)
    report = json.loads(out.getvalue())
    return name, path, model, report


def _value(model: Callable[[Any], dict[str, Any]], step: str, ij: tuple[int, int], a: Any) -> Any:
    return model(a)[step][ij[0]][ij[1]]


def _boundaries(printed: str) -> tuple[Any, Any]:
    p = Fraction(printed)
    u = Fraction(1, 10 ** len(printed.partition(".")[2]))
    return p - u / 2, p + u / 2


def _crossing(f: Callable[[Any], Any], lo: str, hi: str, boundaries: tuple[Any, Any]) -> bool:
    """Whether ``f − c`` changes sign (or vanishes) on ``[lo, hi]`` for a boundary ``c``."""
    for c in boundaries:
        c = mp.mpf(c.numerator) / c.denominator
        a, b = f(mp.mpf(lo)) - c, f(mp.mpf(hi)) - c
        if a == 0 or b == 0 or (a < 0) != (b < 0):
            return True
    return False


#: (claim label, step, index) followed in each article: softmax weights and a scaled score.
FOLLOWED = {
    "i_love_ai": [
        ("A_1", "l0.h0.pattern", (1, 0)),
        ("A_1", "l0.h0.pattern", (2, 0)),
        ("A_1", "l0.h0.pattern", (2, 2)),
        ("S_1", "l0.h0.scaled", (1, 0)),
    ],
    "birds_build_nests": [
        ("pattern Birds row", "l0.h0.pattern", (0, 0)),
        ("pattern Birds row", "l0.h0.pattern", (0, 2)),
        ("scaled Birds row", "l0.h0.scaled", (0, 2)),
    ],
}


def test_the_files_own_value_is_inside_an_interval_whose_ends_mpmath_confirms(checked) -> None:
    name, _, model, report = checked
    checks = {(c["claim"], tuple(c["index"] or ())): c for c in report["derivations"][0]["checks"]}
    with mpmath.workdps(100):
        for label, step, ij in FOLLOWED[name]:
            c = checks[(label, ij)]
            assert c["verdict"] == "symbolic" and c["depends_on"] == ["a"], c
            pieces = c["solutions"]
            assert c["solutions_range"] == ["-10", "10"]
            own = [
                s for s in pieces if Fraction(s["lo_within"][1]) < 1 < Fraction(s["hi_within"][0])
            ]
            assert len(own) == 1, (label, ij, pieces)  # a = 1 is certified inside one interval
            s = own[0]

            def f(a: Any, step: str = step, ij: tuple[int, int] = ij) -> Any:
                return _value(model, step, ij, a)

            bounds = _boundaries(c["printed"])
            p = mp.mpf(c["printed"])
            u = mp.mpf((bounds[1] - bounds[0]).numerator) / (bounds[1] - bounds[0]).denominator
            assert abs(f(mp.mpf(1)) - p) <= u / 2  # the article's value prints as printed
            for side in ("lo", "hi"):
                assert s[f"{side}_end"] == "root", (label, ij, s)
                lo, hi = s[f"{side}_within"]
                assert _crossing(f, lo, hi, bounds), (label, ij, side, lo, hi)
            # Just inside each end the value still prints as printed; just outside it does not.
            inner_lo, inner_hi = mp.mpf(s["lo_within"][1]), mp.mpf(s["hi_within"][0])
            for t in (inner_lo, inner_hi, (inner_lo + inner_hi) / 2):
                assert abs(f(t) - p) <= u / 2
            step_out = (inner_hi - inner_lo) * mp.mpf("1e-6")
            assert abs(f(mp.mpf(s["lo_within"][0]) - step_out) - p) > u / 2
            assert abs(f(mp.mpf(s["hi_within"][1]) + step_out) - p) > u / 2


def test_no_entry_is_an_internal_error_and_symbolic_values_are_not_off(checked) -> None:
    _, _, _, report = checked
    d = report["derivations"][0]
    assert not report["errors"]
    verdicts = {c["verdict"] for c in d["checks"]}
    assert "symbolic" in verdicts
    for c in d["checks"]:
        if c["verdict"] == "symbolic":
            assert c["explanation"].count("depends on a") >= 1
            assert "is symbolic" not in c["explanation"] and "(undecided)" not in c["explanation"]


@pytest.mark.parametrize("command", ["latex", "html"])
def test_latex_and_html_complete_and_show_symbolic_values_in_their_own_words(
    checked, command: str, tmp_path: Path
) -> None:
    _, path, _, report = checked
    out = tmp_path / f"out.{'tex' if command == 'latex' else 'html'}"
    code = main([command, "--timeout", "600", "-o", str(out), str(path)])
    assert code in (0, 1)
    text = out.read_text(encoding="utf-8")
    verdicts = [c["verdict"] for c in report["derivations"][0]["checks"]]
    symbolic = verdicts.count("symbolic")
    off = sum(v in ("slip", "wrong", "undecided") for v in verdicts)
    assert "depends on a" in text
    if command == "html":  # each number: once in its grid, once in its details table; a legend
        assert text.count('class="v v-symbolic"') == 2 * symbolic + 1
        assert text.count('class="v v-wrong"') <= 1 + 3 * verdicts.count("wrong")  # 1: legend
    else:  # each printed number once, coloured as what it is: no symbolic one underlined
        assert text.count(r"\symtfdepends{") >= symbolic
        assert text.count(r"\symtfwrong{") == off


def test_explain_completes_on_a_symbolic_claim(checked, capsys: pytest.CaptureFixture[str]) -> None:
    name, path, _, _ = checked
    label = FOLLOWED[name][0][0]
    code = main(["explain", "--timeout", "600", str(path), label])
    out = capsys.readouterr().out
    assert code in (0, 1)
    assert "depends on a" in out and "rounds to     None" not in out


def test_one_symbolic_embedding_entry_completes(tmp_path: Path) -> None:
    text = (DERIVATIONS / "birds_build_nests.toml").read_text(encoding="utf-8")
    old = 'embed = """\n1 1 0 1\n'
    assert text.count(old) == 1
    path = tmp_path / "embed_a.toml"
    path.write_text(text.replace(old, 'embed = """\na 1 0 1\n'), encoding="utf-8")
    for command in ("check", "latex", "html"):
        args = [command, "--timeout", "600", str(path)]
        if command != "check":
            args[1:1] = ["-o", str(tmp_path / f"out.{command}")]
        assert main(args) in (0, 1), command


# ----------------------------------------------------------------------------- the search itself


def test_a_search_cut_short_claims_no_interval_across_what_it_left_undecided() -> None:
    import sympy

    a = sympy.Symbol("a", real=True)
    # The constant 0.26446 in disguise: the derivative's enclosure never excludes 0, so no
    # cell is monotone, and 4/10^5 from a boundary only tiny cells can be excluded.
    e = (a + 1) ** 2 - a**2 - 2 * a - sympy.Rational(73554, 10**5)
    iv = Interval(Fraction(2635, 10**4), Fraction(2645, 10**4), True, True)
    dual = roots.Dual({}, a)
    found = roots.rounding_set(dual, e, iv, Fraction(-10), Fraction(10), roots.Budget(200))
    assert found.stopped
    assert found.unresolved
    for piece in found.pieces:  # every interval claimed lies between decided edges
        lo, hi = piece.inner
        assert not any(u_lo < hi and lo < u_hi for u_lo, u_hi in found.unresolved)


def test_the_notes_typeset_a_symbolic_value_and_its_set_as_maths(tmp_path: Path) -> None:
    """y = 6a/5 printed as 1.2 (one decimal): by hand, it is a correct rounding exactly for
    6a/5 in [1.15, 1.25], so for a in [23/24, 25/24] = [0.958333…, 1.041666…]."""
    path = tmp_path / "one.toml"
    path.write_text(
        'title = "one symbol"\nsource = "by hand"\n\n[tensors]\nx = "a 2"\n\n[steps]\n'
        'y = "x * 6 / 5"\n\n[[claims]]\nlabel = "y"\nstep = "y"\nprinted = "1.2 2.4"\n',
        encoding="utf-8",
    )
    out = tmp_path / "one.tex"
    assert main(["latex", "-q", "-o", str(out), str(path)]) == 0
    text = out.read_text(encoding="utf-8")
    assert r"The exact value is $\frac{6 a}{5}$" in text
    assert r"for $a \in [0.9583333{\scriptstyle\ldots}, 1.0416666{\scriptstyle\ldots}]$" in text
    assert "6*a/5" not in text  # no ASCII maths in the prose


# ----------------------------------------------------------------------------- scale = "t"


def _with_scale(text: str, anchor: str) -> str:
    assert text.count(anchor) == 1
    return text.replace(anchor, anchor + '\nscale = "t"', 1)


def _inputs(name: str) -> tuple[list[list[Any]], dict[str, Any]]:
    """An article's attention input (embeddings, plus positions where it has them) and
    its first head, read from the TOML text by hand."""
    m = tomllib.loads((DERIVATIONS / f"{name}.toml").read_text(encoding="utf-8"))["model"]
    x = _mat(m["embed"])
    if "pos" in m:  # i_love_ai: the tokens 0, 1, 2 plus learned positions
        pos = _mat(m["pos"])
        x = [[x[tok][j] + pos[i][j] for j in range(len(pos[0]))] for i, tok in enumerate((0, 1, 2))]
    return x, m["layers"][0]["heads"][0]


def _scaled_model(name: str, causal: bool) -> Callable[[Any], dict[str, Any]]:
    """The scaled scores and the pattern of the article's first head, with divisor ``t``."""

    def model(t: Any) -> dict[str, Any]:
        x, head = _inputs(name)
        wq, wk = _mat(head["W_Q"]), _mat(head["W_K"])
        q, k = _matmul(x, wq), _matmul(x, wk)
        n, d = len(x), len(q[0])
        scaled = [[mp.fsum(q[i][s] * k[j][s] for s in range(d)) / t for j in range(n)]
                  for i in range(n)]  # fmt: skip
        return {"l0.h0.scaled": scaled, "l0.h0.pattern": _pattern(x, wq, wk, t, causal)}

    return model


SCALED = {
    "i_love_ai": ('mask = "causal"', _scaled_model("i_love_ai", True), 2),
    "birds_build_nests": ('mask = "none"', _scaled_model("birds_build_nests", False), 3),
}


@pytest.mark.parametrize("name", list(SCALED))
def test_with_scale_t_the_files_own_divisor_is_inside_each_interval(
    name: str, tmp_path: Path
) -> None:
    """Case (c): every head's score divisor the symbol t. The file's own divisor is
    √d_k (√2, √3), irrational: mpmath at 100 digits confirms that each followed entry
    prints as the article printed it at t = √d_k, that √d_k lies inside the certified
    part of one interval, and that each end brackets a rounding-boundary crossing of the
    independent forward pass."""
    anchor, model, dk = SCALED[name]
    path = tmp_path / f"{name}_t.toml"
    text = (DERIVATIONS / f"{name}.toml").read_text(encoding="utf-8")
    path.write_text(_with_scale(text, anchor), encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["check", "--format", "json", "--timeout", "600", str(path)])
    assert code in (0, 1)
    report = json.loads(out.getvalue())
    checks = {(c["claim"], tuple(c["index"] or ())): c for c in report["derivations"][0]["checks"]}
    with mpmath.workdps(100):
        own_t = mp.sqrt(dk)
        for label, step, ij in FOLLOWED[name]:
            c = checks[(label, ij)]
            assert c["verdict"] == "symbolic" and c["depends_on"] == ["t"], c

            def f(t: Any, step: str = step, ij: tuple[int, int] = ij) -> Any:
                return model(t)[step][ij[0]][ij[1]]

            bounds = _boundaries(c["printed"])
            p = mp.mpf(c["printed"])
            u = mp.mpf((bounds[1] - bounds[0]).numerator) / (bounds[1] - bounds[0]).denominator
            assert abs(f(own_t) - p) <= u / 2  # the article's value prints as printed
            brackets = [(_end(s, "lo"), _end(s, "hi")) for s in c["solutions"]]
            own = [(lo, hi) for lo, hi in brackets if lo[1] < own_t < hi[0]]
            assert len(own) == 1, (label, ij, c["solutions"])
            (lo_a, lo_b), (hi_a, hi_b) = own[0]
            # Inside the certified part the value prints as printed; a little beyond each
            # end's bracket it does not.
            for t in (lo_b, hi_a, (lo_b + hi_a) / 2):
                assert abs(f(t) - p) <= u / 2, (label, ij, t)
            step_out = (hi_a - lo_b) * mp.mpf("1e-6")
            assert abs(f(lo_a - step_out) - p) > u / 2
            assert abs(f(hi_b + step_out) - p) > u / 2


def _end(s: dict[str, Any], side: str) -> tuple[Any, Any]:
    """An interval end as a bracket ``(a, b)`` holding it: the search's ``*_within``, or an
    exact end's decimal: exact, or its certain leading digits (``*_truncated``)."""
    if f"{side}_within" in s:
        a, b = s[f"{side}_within"]
        return mp.mpf(a), mp.mpf(b)
    text = s[side]
    assert text is not None
    v = mp.mpf(text)
    if not s.get(f"{side}_truncated"):
        return v, v
    unit = mp.mpf(10) ** -len(text.partition(".")[2])
    return v - unit, v + unit
