"""The notes of a derivation with symbols: searched intervals as maths, wide matrices broken.

The symbolic case is ``i_love_ai`` with head 1's ``W_Q[0, 0] = a`` (the README's pages)
and with every entry of head 1's ``W_Q`` a symbol.
"""

from __future__ import annotations

import re
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from symtf import spec
from symtf.checking import compare
from symtf.renderers import latex as L

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "derivations" / "i_love_ai.toml"
HEAD1_WQ = 'W_Q = """\n1 0\n0 1\n0 0\n0 0\n0 0\n0 0\n"""'


def _symbolic(tmp_path: Path, wq: str) -> spec.Derivation:
    text = SEED.read_text(encoding="utf-8")
    assert text.count(HEAD1_WQ) >= 1
    f = tmp_path / "sym.toml"
    f.write_text(text.replace(HEAD1_WQ, 'W_Q = """\n' + wq + '\n"""', 1), encoding="utf-8")
    return spec.load(f)


ONE = "a 0\n0 1\n0 0\n0 0\n0 0\n0 0"
ALL = "a b\nc d\ne f\ng h\ni j\nk l"


@pytest.fixture(scope="module")
def one_symbol(tmp_path_factory: pytest.TempPathFactory) -> tuple[spec.Derivation, object]:
    d = _symbolic(tmp_path_factory.mktemp("one"), ONE)
    return d, compare.check(d)


# ----------------------------------------------------------------------------- intervals

# From the verdict of S_1[0, 0] = √2·a/2 printed 0.707 (its lo_within / hi_within fields).
S11 = {
    "lo": "0.9991418818…",
    "lo_closed": True,
    "lo_end": "root",
    "lo_within": ["0.9991418818026431836187839508056640625", "0.99914188182083307765424251556396484375"],
    "hi": "1.0005560953…",
    "hi_closed": True,
    "hi_end": "root",
    "hi_within": ["1.00055609536866541020572185516357421875", "1.000556095386855304241180419921875"],
}


def test_searched_ends_are_rounded_outward_by_hand() -> None:
    # by hand: the certain width is 1.000556… − 0.999141… = 0.0014142…; a tenth of it is
    # 0.000141…, so each end may move by up to 0.0000707…: 5 decimals (10⁻⁵ fits, 10⁻⁴ not).
    lo, hi, n = L.searched_ends(S11)  # type: ignore[misc]
    assert (lo, hi, n) == (Fraction("0.99914"), Fraction("1.00056"), 5)
    assert lo <= Fraction(S11["lo_within"][0]) and hi >= Fraction(S11["hi_within"][1])


@pytest.mark.parametrize(
    ("lo_within", "hi_within"),
    [
        (["-1.234567891", "-1.234567890"], ["-1.2000001", "-1.2"]),
        (["-0.00001", "0"], ["0.5", "0.5000000001"]),
        (["2.5", "2.5"], ["2.5000000000001", "2.5000000000002"]),  # a tiny set
        (["0.1249", "0.125"], ["7.98", "7.99"]),
    ],
)
def test_printed_interval_holds_the_certified_one(
    lo_within: list[str], hi_within: list[str]
) -> None:
    got = L.searched_ends({"lo_within": lo_within, "hi_within": hi_within})
    assert got is not None
    lo, hi, n = got
    assert lo <= Fraction(lo_within[0]) and hi >= Fraction(hi_within[1])  # exact comparisons
    assert lo < hi and 1 <= n <= L.SEARCHED_DECIMALS
    assert (lo * 10**n).denominator == 1 and (hi * 10**n).denominator == 1


def test_searched_set_is_maths_in_the_notes(one_symbol: tuple[spec.Derivation, object]) -> None:
    d, report = one_symbol
    tex = L.document(report, d)  # type: ignore[arg-type]
    assert r"for $a \in [0.99914,\ 1.00056]$ (searched $a \in [-10,\ 10]$)." in tex
    assert "0.9991418818" not in tex and "searched a in" not in tex
    # every searched interval in the notes holds the verdict's certified one
    shown = 0
    for c in report.checks:  # type: ignore[attr-defined]
        for s in c.extra.get("solutions") or ():
            if "lo_within" not in s:
                continue
            lo, hi, n = L.searched_ends(s)  # type: ignore[misc]
            assert lo <= Fraction(s["lo_within"][0]) and hi >= Fraction(s["hi_within"][1])
            text = rf"[{_fixed(lo, n)},\ {_fixed(hi, n)}]"
            assert text in tex, text
            shown += 1
    assert shown >= 9  # the nine scaled scores at least


def _fixed(q: Fraction, n: int) -> str:
    sign = "-" if q < 0 else ""
    k = abs(q) * 10**n
    assert k.denominator == 1
    digits = str(k.numerator).rjust(n + 1, "0")
    return f"{sign}{digits[:-n]}.{digits[-n:]}"
