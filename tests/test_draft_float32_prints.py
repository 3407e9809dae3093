"""numpy's print of a float32 tensor pins its values: a notebook that draws float32 tensors
with TensorFlow, prints them and computes from them is checked against the float32 values
the prints stand for, computed in float32.

numpy prints a float32 array (``precision=8, floatmode='maxprec'``) with each entry's
shortest round-trip digits when they need at most 8 decimals, else rounded to 8 decimals:
so an entry lies within 5e-9 of its print (or is the float32 nearest it), and from 1/8 up
one float32 only is that near. The notebooks here are made up for these tests: their
printed values are what numpy printed for float32 values drawn once, and ``y = W @ x``
what numpy's float32 matmul printed for them; the expected verdicts follow from that
construction, and the exact values are recomputed with mpmath.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest

from symtf.backends.format_print import numpy_printed
from symtf.backends.formats import FORMATS
from symtf.commands.draft import check_article
from symtf.errors import SpecError
from symtf.spec.steps import parse_tensors

X = ["2.040919", "-2.555665", "0.41809884", "-0.5677696"]
W = [
    ["-0.4526493", "-0.21559717", "-2.0199862", "-0.23193237"],
    ["-0.8652131", "3.3229995", "0.22578661", "-0.3526308"],
    ["-0.28128743", "-0.66804636", "-1.0551505", "-0.39080098"],
    ["0.4819454", "-0.23855361", "0.9577587", "-0.19980213"],
]
#: What numpy printed for ``np.float32`` ``W @ x`` at the float32 values printed as X and W.
Y = ["-1.0856962", "-9.96369", "0.91394556", "2.107154"]
#: Y with its third entry written one unit off in the third decimal.
Y_OFF = ["-1.0856962", "-9.96369", "0.91494556", "2.107154"]


def _column(values: list[str]) -> str:
    width = max(len(s) for s in values)
    return "[" + "\n ".join(f"[{s.rjust(width)}]" for s in values) + "]"


def _matrix(rows: list[list[str]]) -> str:
    return "[" + "\n ".join("[" + " ".join(r) + "]" for r in rows) + "]"


def _notebook(path: Path, y: list[str]) -> Path:
    cells = []

    def cell(source: list[str], out: str) -> None:
        outputs = [{"name": "stdout", "output_type": "stream", "text": [out]}] if out else []
        cells.append(
            {
                "cell_type": "code",
                "execution_count": len(cells) + 1,
                "metadata": {},
                "outputs": outputs,
                "source": source,
            }
        )

    cell(["import tensorflow as tf\n", "tf.random.set_seed(3)"], "")
    cell(
        [
            "x = tf.random.normal((4, 1))\n",
            "W = tf.random.normal((4, 4))\n",
            "print(f'x:\\n{x}\\nW:\\n{W}')",
        ],
        f"x:\n{_column(X)}\nW:\n{_matrix(W)}\n",
    )
    cell(["y = tf.matmul(W, x)\n", "print(f'y:\\n{y}')"], f"y:\n{_column(y)}\n")
    path.write_text(
        json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    return path


def _exact_y() -> list[mpmath.mpf]:
    """``W @ x`` at 50 digits, at the float32 values the prints stand for."""
    mp = mpmath.mp.clone()
    mp.dps = 50

    def f32(text: str) -> mpmath.mpf:
        r = Fraction(float(np.float32(text)))
        return mp.mpf(r.numerator) / r.denominator

    return [mp.fsum(f32(W[i][j]) * f32(X[j]) for j in range(4)) for i in range(4)]


def test_the_construction_is_what_numpy_prints() -> None:
    """The prints are numpy's own of float32 values, and y is numpy's float32 matmul."""
    x = np.array([[np.float32(s)] for s in X], dtype=np.float32)
    w = np.array([[np.float32(s) for s in r] for r in W], dtype=np.float32)
    assert np.array2string(x).replace("[", "").replace("]", "").split() == X
    assert np.array2string(w).replace("[", "").replace("]", "").split() == [c for r in W for c in r]
    y = w @ x
    assert np.array2string(y).replace("[", "").replace("]", "").split() == Y


def test_exact_arithmetic_alone_would_not_print_y() -> None:
    """At the float32 values, the exact products are not what float32 printed: a check in
    exact arithmetic only would call correct numbers slips."""
    exact = _exact_y()
    off = [
        i
        for i, (e, p) in enumerate(zip(exact, Y, strict=True))
        if abs(e - mpmath.mpf(p)) > mpmath.mpf("5e-9")
    ]
    assert off  # float32 rounding moved them past the print's last digit
    # and the third entry printed as Y_OFF is off by far more than float32 can explain
    assert abs(exact[2] - mpmath.mpf(Y_OFF[2])) > mpmath.mpf("9e-4")


def test_numpy_printed_pins_float32_values() -> None:
    """The principle, against numpy: every float32 lies in what its print stands for, and
    where the print pins one value it is that value."""
    f32 = FORMATS["float32"]
    rng = np.random.default_rng(7)
    pinned = 0
    for scale in (1e-3, 0.05, 1.0, 40.0):
        values = (rng.normal(size=400) * scale).astype(np.float32)
        for chunk in values.reshape(-1, 4):
            texts = np.array2string(chunk, max_line_width=10**6)[1:-1].split()
            for text, v in zip(texts, chunk, strict=True):
                found = numpy_printed(text, f32)
                assert found is not None
                centre, width = found
                exact = Fraction(float(v))
                if width == 0:
                    pinned += 1
                    assert centre == exact, text
                else:
                    assert abs(exact - centre) <= width, text
    assert pinned > 600  # most of them (all from 1/8 up)


def test_numpy_printed_examples() -> None:
    f32 = FORMATS["float32"]
    # shortest repr of a float32: that float32 exactly
    assert numpy_printed("-0.5901138", f32) == (Fraction(float(np.float32("-0.5901138"))), 0)
    # 0.002066299 prints as 0.0020663 (rounded at 8 decimals, trailing zero dropped)
    centre, width = numpy_printed("0.0020663", f32) or (None, None)
    assert centre == Fraction("0.0020663") and width == Fraction(5, 10**9)
    assert abs(Fraction(float(np.float32("0.002066299"))) - centre) <= width
    assert numpy_printed("not a number", f32) is None


def test_a_tensor_written_as_a_float32_print() -> None:
    (t,) = parse_tensors({"x": {"values": "0.41809884 0.0020663", "float32_print": True}}, "f")
    assert Fraction(str(t.values[0])) == Fraction(float(np.float32("0.41809884")))
    assert t.rounded and t.widths == (0, Fraction(5, 10**9))
    (t,) = parse_tensors({"x": {"values": "2.040919 -2.555665", "float32_print": True}}, "f")
    assert not t.rounded and t.widths == (0, 0)
    with pytest.raises(SpecError, match="float32_print"):
        parse_tensors({"x": {"values": "1.5", "float32_print": True, "rounded": True}}, "f")
    with pytest.raises(SpecError, match="float32_print: expected true or false"):
        parse_tensors({"x": {"values": "1.5", "float32_print": "yes"}}, "f")


def _checks(path: Path) -> list[tuple[str, str, str]]:
    report = check_article(path)
    return [
        (c.printed, c.verdict, str(c.explanation))
        for r in report.results
        for c in r.checks
        if r.claim.label == "y"
    ]


def test_float32_prints_are_checked_in_float32(tmp_path: Path) -> None:
    checks = _checks(_notebook(tmp_path / "ok.ipynb", Y))
    assert [(p, v) for p, v, _ in checks] == [(p, "rounded") for p in Y]
    assert all("float32" in why for _, _, why in checks)


def test_an_entry_float32_cannot_give_is_flagged(tmp_path: Path) -> None:
    checks = _checks(_notebook(tmp_path / "off.ipynb", Y_OFF))
    verdicts = {p: v for p, v, _ in checks}
    assert verdicts.pop("0.91494556") in ("slip", "wrong")
    assert set(verdicts.values()) == {"rounded"} and len(verdicts) == 3
    (why,) = [w for p, _, w in checks if p == "0.91494556"]
    assert "float32" in why
