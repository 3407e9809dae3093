"""The ``[symbols]`` table: declared assumptions reach every symbol, the declared range bounds
the reported correct-rounding set, and the article's declared value is marked in it.

Expectations by hand. The model is one head over two 1-number embeddings (1 and 0)
with ``W_Q = a``, ``W_K = W_V = 1`` and no mask, so query row 0's scores are
``[a, 0]`` and its weights ``[σ(a), 1 − σ(a)]``; its query is ``q = a``. A printed
``0.6`` is a correct rounding of ``σ(a)`` for ``σ(a)`` in ``[0.55, 0.65]`` (an exact
tie accepts either neighbour), that is for ``a`` in ``[ln(11/9), ln(13/7)]``
(logit of each end), and the reported bracket of each end must hold those numbers,
computed here in mpmath at 50 digits. A printed ``0.5`` for ``q = a`` holds for ``a``
in ``[0.45, 0.55]``; a declared range ``[0, 1/2]`` cuts it to ``[0.45, 0.5]``.
"""

from __future__ import annotations

import contextlib
import io
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import mpmath
import pytest
import sympy

import symtf
from symtf.cli import main
from symtf.errors import SpecError

TEMPLATE = """title = "one head, one symbolic weight"
{symbols}
[model]
architecture = "attention"
d_model = 1
mask = "none"
vocab = ["p", "q"]
embed = "1\\n0"
[[model.layers]]
[[model.layers.heads]]
W_Q = "a"
W_K = "1"
W_V = "1"
[input]
tokens = ["p", "q"]
[[claims]]
label = "weights"
step = "l0.h0.pattern"
row = 0
printed = "0.6 0.4"
[[claims]]
label = "query"
step = "l0.h0.q"
row = 0
printed = "0.5"
"""


def _checks(
    tmp_path: Path, symbols: str, *, w_k: str = "1"
) -> dict[tuple[str, int], dict[str, Any]]:
    path = tmp_path / "one_head.toml"
    text = TEMPLATE.format(symbols=symbols).replace('W_K = "1"', f'W_K = "{w_k}"')
    path.write_text(text, encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["check", "--format", "json", "--timeout", "600", str(path)])
    assert code == 1  # symbolic verdicts are not decided
    (d,) = json.loads(out.getvalue())["derivations"]
    return {(c["claim"], (c["index"] or [0, 0])[-1]): c for c in d["checks"]}


def _brackets(end: list[str], x: Any) -> bool:
    lo, hi = (Decimal(v) for v in end)
    return mpmath.mpf(str(lo)) <= x <= mpmath.mpf(str(hi))


def test_declared_range_bounds_the_search_and_the_value_is_marked(tmp_path: Path) -> None:
    checks = _checks(tmp_path, "[symbols]\na = { range = [0, 2], value = 0.5 }")
    with mpmath.workdps(50):
        lo, hi = mpmath.log(mpmath.mpf(11) / 9), mpmath.log(mpmath.mpf(13) / 7)
        for k in (0, 1):  # 0.6 = σ(a) and 0.4 = 1 − σ(a): the same set
            c = checks[("weights", k)]
            assert c["verdict"] == "symbolic"
            assert c["solutions_range"] == ["0", "2"]
            (piece,) = c["solutions"]
            assert piece["lo_end"] == piece["hi_end"] == "root"
            assert _brackets(piece["lo_within"], lo) and _brackets(piece["hi_within"], hi)
            # σ(1/2) = 0.6224…, which prints as 0.6: the article's value is inside
            assert mpmath.mpf("0.55") <= 1 / (1 + mpmath.exp(-0.5)) <= mpmath.mpf("0.65")
            assert c["declared_value"] == {"symbol": "a", "value": "0.5", "inside": True}
            assert "a = 0.5 is inside that set" in c["explanation"]
            assert "declared range [0, 2]" in c["explanation"]


def test_a_value_outside_the_set_is_marked_outside(tmp_path: Path) -> None:
    # σ(1.5) = 0.817…, which prints as 0.8, not 0.6; a = 1.5 prints q as 1.5, not 0.5
    checks = _checks(tmp_path, '[symbols]\na = { range = [0, 2], value = "1.5" }')
    for key in (("weights", 0), ("weights", 1), ("query", 0)):
        assert checks[key]["declared_value"] == {"symbol": "a", "value": "1.5", "inside": False}
        assert "is outside that set" in checks[key]["explanation"]


def test_a_range_past_the_set_finds_none(tmp_path: Path) -> None:
    # ln(13/7) = 0.619… < 1: nothing in [1, 2] prints 0.6; q = a ≥ 1 never prints 0.5
    checks = _checks(tmp_path, '[symbols]\na = { range = [1, 2], value = "1.5" }')
    assert checks[("weights", 0)]["solutions"] == []
    assert checks[("weights", 0)]["solutions_range"] == ["1", "2"]
    assert checks[("query", 0)]["solutions"] == []
    assert checks[("query", 0)]["declared_value"]["inside"] is False


def test_a_rational_value_is_cut_to_the_declared_range(tmp_path: Path) -> None:
    declared = _checks(tmp_path, '[symbols]\na = { range = ["0", "1/2"], value = "0.47" }')
    q = declared[("query", 0)]
    assert [(s["lo"], s["hi"], s["lo_closed"], s["hi_closed"]) for s in q["solutions"]] == [
        ("0.45", "0.5", True, True)
    ]
    assert q["solutions"][0]["hi_end"] == "search-range" and "lo_end" not in q["solutions"][0]
    assert q["solutions_range"] == ["0", "0.5"]
    assert q["declared_value"] == {"symbol": "a", "value": "0.47", "inside": True}


def test_an_undeclared_symbol_reports_as_before(tmp_path: Path) -> None:
    checks = _checks(tmp_path, "")
    q = checks[("query", 0)]
    assert [(s["lo"], s["hi"]) for s in q["solutions"]] == [("0.45", "0.55")]  # over all reals
    assert "solutions_range" not in q and "declared_value" not in q
    assert checks[("weights", 0)]["solutions_range"] == ["-10", "10"]  # the default search
    assert "declared_value" not in checks[("weights", 0)]


def test_a_positive_symbol_is_searched_from_zero(tmp_path: Path) -> None:
    checks = _checks(tmp_path, "[symbols]\na = { positive = true }")
    assert checks[("weights", 0)]["solutions_range"] == ["0", "10"]


ASSUMED = """title = "one positive symbol everywhere"
[symbols]
s = { positive = true }
[model]
architecture = "attention"
d_model = 1
mask = "none"
scale = "s"
eps = "s"
vocab = ["p"]
embed = "s"
[[model.layers]]
[[model.layers.heads]]
W_Q = "s"
W_K = "1"
W_V = "1"
scale = "s"
[input]
tokens = ["p"]
[[claims]]
label = "x"
step = "x"
printed = "1"
"""

STEPS = """title = "a declared symbol in a given tensor"
[symbols]
w = { nonnegative = true }
[tensors]
w = "w 1"
[steps]
y = "2 * w"
[[claims]]
label = "y"
step = "y"
printed = "1 2"
"""


def test_declared_assumptions_reach_every_cell() -> None:
    d = symtf.loads(ASSUMED, "assumed.toml")
    m = d.model
    head = m.layers[0].heads[0]
    found = [m.scale, m.eps, m.embed[0, 0], head.W_Q[0, 0], head.scale]
    assert all(x.is_Symbol and x.name == "s" and x.is_positive for x in found)
    assert len(set(found)) == 1  # one symbol, not one per place
    t = symtf.loads(STEPS, "steps.toml").tensors[0]
    (w,) = (v for v in t.values if v.is_Symbol)
    assert w.is_nonnegative and w.is_positive is None


def test_a_declared_positive_temperature_is_the_file_symbol() -> None:
    text = DECODER.format(decl='T = { positive = true, range = ["1/2", 2] }')
    d = symtf.loads(text, "decoder.toml")
    assert d.model.generate.temperature.is_positive
    assert d.symbols["T"].range is not None


DECODER = """title = "sampling at a symbolic temperature"
[symbols]
{decl}
[model]
d_model = 2
vocab = ["a", "b"]
embed = "1 0\\n0 1"
unembed = "identity"
positional = "none"
[[model.layers]]
[[model.layers.heads]]
W_Q = "identity"
W_K = "identity"
W_V = "identity"
[input]
tokens = ["a"]
[generate]
strategy = "sample"
temperature = "T"
max_len = 1
[[claims]]
label = "x"
step = "x"
printed = "1 0"
"""


@pytest.mark.parametrize("decl", ["T = {}", "T = { nonnegative = true }"])
def test_a_temperature_declared_not_positive_is_refused(decl: str) -> None:
    with pytest.raises(SpecError, match=r"decoder\.toml: generate\.temperature: .*positive"):
        symtf.loads(DECODER.format(decl=decl), "decoder.toml")


# ----------------------------------------------------------------------------- whatif


def test_whatif_follows_a_declared_symbol_over_its_declared_range(tmp_path: Path) -> None:
    from fractions import Fraction

    from symtf.teach.whatif import whatif

    path = tmp_path / "one_head.toml"
    path.write_text(
        TEMPLATE.format(symbols='[symbols]\na = { range = ["0", "1/2"], value = "0.47" }'),
        encoding="utf-8",
    )
    r = whatif(path, "a", Fraction(-2), Fraction(2))
    (w,) = r.weights
    assert w.value == sympy.Rational(47, 100) and w.symbol.name == "a"
    assert r.range_of(w) == (Fraction(0), Fraction(1, 2))  # the declared range, not -2:2
    q = next(o for o in r.outputs if o.label == "query")
    ((a, _, _, d),) = q.intervals  # q = a prints 0.5 for a in [0.45, 0.55], cut at 1/2
    assert a <= Fraction(45, 100) <= a + Fraction(1, 10**6) and d == Fraction(1, 2)
    assert q.contains_value is True
    wider = whatif(path, "a", Fraction(-2), Fraction(2), ranges={"a": (Fraction(0), Fraction(2))})
    assert wider.range_of(wider.weights[0]) == (Fraction(0), Fraction(2))  # --range a=… wins


@pytest.mark.parametrize(
    ("symbols", "message"),
    [("", "declares no symbol 'a'"), ("[symbols]\na = { range = [0, 1] }", "gives no value")],
)
def test_whatif_refuses_a_bare_name_it_cannot_follow(
    tmp_path: Path, symbols: str, message: str
) -> None:
    from fractions import Fraction

    from symtf.teach.whatif import WhatIfError, whatif

    path = tmp_path / "one_head.toml"
    path.write_text(TEMPLATE.format(symbols=symbols), encoding="utf-8")
    with pytest.raises(WhatIfError, match=message):
        whatif(path, "a", Fraction(-2), Fraction(2))


def test_whatif_holds_the_other_declared_symbols_at_their_values(tmp_path: Path) -> None:
    from fractions import Fraction

    from symtf.teach.whatif import whatif

    # W_K = b, held at its declared 1: row 0's weight is σ(a·b) = σ(a), as above
    symbols = "[symbols]\na = { range = [0, 2], value = 0.5 }\nb = { value = 1 }"
    text = TEMPLATE.format(symbols=symbols).replace('W_K = "1"', 'W_K = "b"')
    path = tmp_path / "two_symbols.toml"
    path.write_text(text, encoding="utf-8")
    r = whatif(path, "a", Fraction(-2), Fraction(2))
    o = next(o for o in r.outputs if o.label == "weights" and o.index == (0, 0))
    ((a, b, c, d),) = o.intervals
    with mpmath.workdps(50):
        lo, hi = mpmath.log(mpmath.mpf(11) / 9), mpmath.log(mpmath.mpf(13) / 7)
        q = [mpmath.mpf(x.numerator) / x.denominator for x in (a, b, c, d)]
        assert q[0] <= lo <= q[1] and q[2] <= hi <= q[3]
    assert o.contains_value is True


def test_two_symbols_each_get_a_set_with_the_other_held_at_its_declared_value(
    tmp_path: Path,
) -> None:
    # W_Q = a, W_K = b: query row 0's scores are [a·b, 0] (d_head 1), its weights
    # [σ(ab), 1 − σ(ab)]. 0.6 holds for ab in [ln(11/9), ln(13/7)] (as above): with b held
    # at 2, a in [ln(11/9)/2, ln(13/7)/2]; with a held at 1/4, b in [4 ln(11/9), 4 ln(13/7)].
    # The articles' values give ab = 1/2, σ(1/2) = 0.622…: inside both sets.
    declared = "[symbols]\na = { range = [0, 2], value = 0.25 }\nb = { range = [0, 4], value = 2 }"
    checks = _checks(tmp_path, declared, w_k="b")
    weight = checks[("weights", 0)]
    assert weight["verdict"] == "symbolic" and weight["depends_on"] == ["a", "b"]
    held = {h["symbol"]: h for h in weight["held_solutions"]}
    assert held["a"]["held"] == {"b": "2"} and held["b"]["held"] == {"a": "0.25"}
    with mpmath.workdps(50):
        lo, hi = mpmath.log(mpmath.mpf(11) / 9), mpmath.log(mpmath.mpf(13) / 7)
        for sym, scale in (("a", mpmath.mpf(1) / 2), ("b", mpmath.mpf(4))):
            (piece,) = held[sym]["solutions"]
            assert _brackets(piece["lo_within"], lo * scale), (sym, piece)
            assert _brackets(piece["hi_within"], hi * scale), (sym, piece)
            assert held[sym]["declared_value"]["inside"] is True
    assert "with b held at the article's value 2" in weight["explanation"]
    # the query q = a depends on a alone: its set is the one-symbol one, as before
    query = checks[("query", 0)]
    assert "held_solutions" not in query and query["solutions"]


def test_two_symbols_without_declared_values_say_how_to_get_a_set(tmp_path: Path) -> None:
    weight = _checks(tmp_path, "", w_k="b")[("weights", 0)]
    assert "held_solutions" not in weight
    assert "its article's value in [symbols]" in weight["explanation"]
