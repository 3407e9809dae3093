"""``mask_value``: a causal mask that fills with a number (GPT-2's −10000, −1e9) or a symbol.

Expectations by hand. Two tokens with 1-number embeddings 1 and 2 and
``W_Q = W_K = W_V = 1`` (``d_head = 1``, so the divisor is 1): the scores are
``[[1, 2], [2, 4]]``, and the causal mask puts its fill ``f`` at ``[0, 1]``. Row 0's
weights are then ``e/(e + e^f) = 1/(1 + e^{f−1})`` and ``e^f/(e + e^f) =
1/(1 + e^{1−f})``: for ``f = −10000`` the masked weight is ``e^{−10001}/(1 + e^{−10001})
≈ 4.18e−4344``, tiny but not 0 (computed below with mpmath). A printed ``0.000`` is a
correct rounding of it while it is at most ``0.0005``, that is for ``f ≤ 1 −
ln(1999)`` (``e^{f−1} ≤ 0.0005/0.9995``): with a symbol ``m`` that end is checked
against mpmath at 50 digits.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import mpmath
import pytest
import sympy

import symtf
from symtf.backends import BallBackend, FloatBackend
from symtf.backends.midrad import MidradBackend
from symtf.cli import main
from symtf.errors import SpecError

TEMPLATE = """title = "two tokens, one causal head"
{symbols}
[model]
architecture = "attention"
d_model = 1
mask = "{mask}"
{fill}
vocab = ["p", "q"]
embed = "1\\n2"
[[model.layers]]
[[model.layers.heads]]
W_Q = "1"
W_K = "1"
W_V = "1"
[input]
tokens = ["p", "q"]
[[claims]]
label = "masked scores"
step = "l0.h0.masked"
printed = "1 {shown}\\n2 4"
[[claims]]
label = "weights"
step = "l0.h0.pattern"
printed = "1.000 0.000\\n0.119 0.881"
"""


def _text(fill: str = "", shown: str = "-inf", symbols: str = "", mask: str = "causal") -> str:
    return TEMPLATE.format(fill=fill, shown=shown, symbols=symbols, mask=mask)


def _masked_weight(f: Any) -> Any:
    """Row 0's weight on the later token, ``1/(1 + e^{1−f})``, in mpmath."""
    return 1 / (1 + mpmath.exp(1 - mpmath.mpf(f)))


def _report(tmp_path: Path, text: str) -> tuple[int, dict[tuple[str, int, int], dict[str, Any]]]:
    path = tmp_path / "causal.toml"
    path.write_text(text, encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["check", "--format", "json", "--timeout", "600", str(path)])
    (d,) = json.loads(out.getvalue())["derivations"]
    return code, {(c["claim"], *c["index"]): c for c in d["checks"]}


# ----------------------------------------------------------------------------- reading


@pytest.mark.parametrize(
    ("fill", "expected"),
    [
        ("mask_value = -10000", sympy.Integer(-10000)),
        ('mask_value = "-1e9"', sympy.Integer(-(10**9))),
        ("mask_value = -1e9", sympy.Integer(-(10**9))),  # a TOML float, read from its text
        ('mask_value = "-3/2"', sympy.Rational(-3, 2)),
        ('mask_value = "m"', sympy.Symbol("m", real=True)),
        ('mask_value = "-inf"', None),  # −∞ written out: the default
        ("", None),
    ],
)
def test_mask_value_is_read_exactly(fill: str, expected: Any) -> None:
    m = symtf.loads(_text(fill), "causal.toml").model
    assert m.mask_value == expected and type(m.mask_value) is type(expected)


def test_minus_a_declared_positive_symbol() -> None:
    text = _text('mask_value = "-M"', symbols="[symbols]\nM = { positive = true }")
    fill = symtf.loads(text, "causal.toml").model.mask_value
    (M,) = fill.free_symbols
    assert fill == -M and M.is_positive


def test_the_default_records_no_parameter() -> None:
    t = symtf.run(symtf.loads(_text(), "causal.toml"))
    assert t["l0.h0.masked"].params == {}  # as before mask_value existed
    assert t.value("l0.h0.masked")[0, 1] == sympy.S.NegativeInfinity


@pytest.mark.parametrize(
    ("fill", "mask", "found"),
    [
        ("mask_value = -10000", "none", "found mask = 'none'"),
        ("mask_value = -10000", "causal-after-softmax", "found mask = 'causal-after-softmax'"),
        ("mask_value = 0", "causal", "found 0"),
        ('mask_value = "5"', "causal", "found '5'"),
        ('mask_value = "m + 1"', "causal", "'m + 1'"),
    ],
)
def test_a_bad_mask_value_names_the_key(fill: str, mask: str, found: str) -> None:
    with pytest.raises(SpecError, match=r"causal\.toml: model\.mask_value: ") as e:
        symtf.loads(_text(fill, mask=mask), "causal.toml")
    assert found in str(e.value)


# ----------------------------------------------------------------------------- a number


def test_minus_10000_in_every_backend(tmp_path: Path) -> None:
    d = symtf.loads(_text("mask_value = -10000", shown="-10000"), "causal.toml")
    t = symtf.run(d)
    assert t["l0.h0.masked"].params == {"value": -10000}  # the trace records the fill
    assert t.value("l0.h0.masked") == sympy.Matrix([[1, -10000], [2, 4]])
    with mpmath.workdps(50):
        want = _masked_weight(-10000)
        assert mpmath.mpf("4.17e-4344") < want < mpmath.mpf("4.18e-4344")
        # exact, then certified balls: the same tiny number
        exact = sympy.N(t.value("l0.h0.pattern")[0, 1], 30)
        assert abs(mpmath.mpf(str(exact)) / want - 1) < mpmath.mpf("1e-25")
        with BallBackend(128) as xp:
            b = symtf.run(d, xp).value("l0.h0.pattern")[0, 1]
        assert b.lower() > 0
        lo, hi = (mpmath.mpf(x.str(40, radius=False)) for x in (b.lower(), b.upper()))
        assert lo <= want * (1 + mpmath.mpf("1e-30")) and want <= hi * (1 + mpmath.mpf("1e-30"))
    with MidradBackend() as xp:  # float64 midpoint and radius: [mid − rad, mid + rad] ∋ 4.18e-4344
        mr = symtf.run(d, xp).value("l0.h0.pattern")
    assert mr.mid[0, 1] - mr.rad[0, 1] <= 0 <= mr.mid[0, 1] + mr.rad[0, 1] and mr.rad[0, 1] < 1e-300
    f = symtf.run(d, FloatBackend()).value("l0.h0.pattern")  # float64 underflows it to 0
    assert f[0, 1] == 0.0 and abs(f[1, 0] - float(1 / (1 + mpmath.e**2))) < 1e-15
    code, checks = _report(tmp_path, _text("mask_value = -10000", shown="-10000"))
    assert code == 0
    assert checks[("weights", 0, 1)]["verdict"] == "rounded"  # 0.000 rounds 4.18e-4344
    assert checks[("weights", 0, 0)]["verdict"] == "rounded"  # 1.000 rounds 1 − 4.18e-4344
    assert checks[("masked scores", 0, 1)]["verdict"] == "exact"
    assert checks[("weights", 0, 1)]["exact"].startswith("4.177")
    assert checks[("weights", 0, 1)]["exact"].endswith("e-4344")


def test_a_leaky_fill_is_caught(tmp_path: Path) -> None:
    # f = −3: the masked weight is 1/(1 + e⁴) = 0.0179…, so a printed 0.000 is wrong
    with mpmath.workdps(30):
        assert mpmath.mpf("0.0179") < _masked_weight(-3) < mpmath.mpf("0.0180")
    code, checks = _report(tmp_path, _text("mask_value = -3", shown="-3"))
    assert code == 1
    assert checks[("weights", 0, 1)]["verdict"] == "wrong"
    assert checks[("weights", 0, 1)]["expected"] == "0.018"


def test_the_default_still_masks_exactly(tmp_path: Path) -> None:
    code, checks = _report(tmp_path, _text())
    assert code == 0
    assert checks[("weights", 0, 1)]["verdict"] == "exact"  # e^−∞ = 0 exactly
    assert checks[("masked scores", 0, 1)]["verdict"] == "exact"


# ----------------------------------------------------------------------------- a symbol


def test_a_symbolic_fill_gives_the_set_of_sufficiently_negative_values(tmp_path: Path) -> None:
    symbols = "[symbols]\nm = { range = [-100000, 0], value = -10000 }"
    code, checks = _report(tmp_path, _text('mask_value = "m"', shown="-10000", symbols=symbols))
    assert code == 1
    w = checks[("weights", 0, 1)]
    assert w["verdict"] == "symbolic" and w["depends_on"] == ["m"]
    (piece,) = w["solutions"]
    assert piece["lo_end"] == "search-range" and piece["lo"] == "-100000"  # every m below …
    with mpmath.workdps(50):
        end = 1 - mpmath.log(1999)  # … 1 − ln 1999 = −6.6004…, where the weight is 0.0005
        assert abs(_masked_weight(end) - mpmath.mpf("0.0005")) < mpmath.mpf("1e-45")
        lo, hi = (mpmath.mpf(x) for x in piece["hi_within"])
        assert lo <= end <= hi and hi - lo < mpmath.mpf("1e-3")
    assert piece["hi_end"] == "root" and piece["hi_closed"] is True
    assert w["declared_value"] == {"symbol": "m", "value": "-10000", "inside": True}
    assert checks[("weights", 1, 0)]["verdict"] == "rounded"  # row 1 sees no mask
    shown = checks[("masked scores", 0, 1)]  # the fill itself prints as −10000 for m near it
    assert [(s["lo"], s["hi"]) for s in shown["solutions"]] == [("-10000.5", "-9999.5")]


def test_a_symbolic_fill_without_a_declaration_is_searched_in_the_default_range(
    tmp_path: Path,
) -> None:
    _, checks = _report(tmp_path, _text('mask_value = "m"', shown="-10000"))
    (piece,) = checks[("weights", 0, 1)]["solutions"]
    assert (piece["lo"], piece["lo_end"]) == ("-10", "search-range")
    assert piece["hi"].startswith("-6.6004")


# ----------------------------------------------------------------------------- the notes


@pytest.mark.parametrize(
    ("fill", "entry"), [("mask_value = -10000", "-10000"), ('mask_value = "m"', "m")]
)
def test_the_notes_show_the_fill(tmp_path: Path, fill: str, entry: str) -> None:
    path = tmp_path / "causal.toml"
    path.write_text(_text(fill, shown="-10000"), encoding="utf-8")
    out = tmp_path / "causal.tex"
    assert main(["latex", "-q", "-o", str(out), str(path)]) == 0
    tex = out.read_text(encoding="utf-8")
    # S + M = S + [[0, fill], [0, 0]]: the mask matrix is written from the trace's parameter
    assert rf"\begin{{bmatrix}}0 & {entry} \\ 0 & 0\end{{bmatrix}}" in tex
    assert r"-\infty" not in tex
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed; the compile step needs it")
    proc = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", out.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:]
