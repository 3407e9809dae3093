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
#: X with a third entry below 1/8, where two float32 values lie within 5e-9 of the print,
#: and what numpy printed for W @ x then.
X_SMALL = ["2.040919", "-2.555665", "0.04180988", "-0.5677696"]
Y_SMALL = ["-0.3255976", "-10.048651", "1.310987", "1.7467599"]


def _column(values: list[str]) -> str:
    width = max(len(s) for s in values)
    return "[" + "\n ".join(f"[{s.rjust(width)}]" for s in values) + "]"


def _matrix(rows: list[list[str]]) -> str:
    return "[" + "\n ".join("[" + " ".join(r) + "]" for r in rows) + "]"


def _notebook(path: Path, y: list[str], x: list[str] = X, *, tensor_form: bool = False) -> Path:
    """The notebook; ``tensor_form``: printed as ``print(x)`` prints a TensorFlow tensor
    (``tf.Tensor(<numpy's print>, shape=(4, 1), dtype=float32)``)."""
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
    drawn = ["x = tf.random.normal((4, 1))\n", "W = tf.random.normal((4, 4))\n"]
    if tensor_form:

        def tensor(text: str, shape: str) -> str:
            return f"tf.Tensor(\n{text}, shape={shape}, dtype=float32)\n"

        cell(
            [*drawn, "print(x)\n", "print(W)"],
            tensor(_column(x), "(4, 1)") + tensor(_matrix(W), "(4, 4)"),
        )
        cell(["y = tf.matmul(W, x)\n", "print(y)"], tensor(_column(y), "(4, 1)"))
    else:
        cell([*drawn, "print(f'x:\\n{x}\\nW:\\n{W}')"], f"x:\n{_column(x)}\nW:\n{_matrix(W)}\n")
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


@pytest.mark.parametrize(("xs", "ys"), [(X, Y), (X_SMALL, Y_SMALL)])
def test_the_construction_is_what_numpy_prints(xs: list[str], ys: list[str]) -> None:
    """The prints are numpy's own of float32 values, and y is numpy's float32 matmul."""
    x = np.array([[np.float32(s)] for s in xs], dtype=np.float32)
    w = np.array([[np.float32(s) for s in r] for r in W], dtype=np.float32)
    assert np.array2string(x).replace("[", "").replace("]", "").split() == xs
    assert np.array2string(w).replace("[", "").replace("]", "").split() == [c for r in W for c in r]
    y = w @ x
    assert np.array2string(y).replace("[", "").replace("]", "").split() == ys
    # 0.04180988 leaves two float32 values possible; every other entry pins one
    f32 = FORMATS["float32"]
    widths = [numpy_printed(t, f32) for t in [*xs, *[c for r in W for c in r]]]
    assert [w is not None and w[1] != 0 for w in widths].count(True) == (xs is X_SMALL)


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


@pytest.mark.parametrize("tensor_form", [False, True])
def test_float32_prints_are_checked_in_float32(tmp_path: Path, tensor_form: bool) -> None:
    checks = _checks(_notebook(tmp_path / "ok.ipynb", Y, tensor_form=tensor_form))
    assert [(p, v) for p, v, _ in checks] == [(p, "rounded") for p in Y]
    assert all("float32" in why for _, _, why in checks)


@pytest.mark.parametrize("tensor_form", [False, True])
def test_a_print_that_leaves_two_float32_values(tmp_path: Path, tensor_form: bool) -> None:
    """x's 0.04180988 stands for a float32 within 5e-9 of it, not for ±5e-9 of 0.0418099."""
    checks = _checks(_notebook(tmp_path / "small.ipynb", Y_SMALL, X_SMALL, tensor_form=tensor_form))
    assert [(p, v) for p, v, _ in checks] == [(p, "rounded") for p in Y_SMALL]
    assert all("x numpy's prints of float32 values" in why for _, _, why in checks)


@pytest.mark.parametrize("tensor_form", [False, True])
def test_an_entry_float32_cannot_give_is_flagged(tmp_path: Path, tensor_form: bool) -> None:
    checks = _checks(_notebook(tmp_path / "off.ipynb", Y_OFF, tensor_form=tensor_form))
    verdicts = {p: v for p, v, _ in checks}
    assert verdicts.pop("0.91494556") in ("slip", "wrong")
    assert set(verdicts.values()) == {"rounded"} and len(verdicts) == 3
    (why,) = [w for p, _, w in checks if p == "0.91494556"]
    assert "float32" in why


def _numpy_notebook(path: Path, y: list[str]) -> Path:
    """The same values drawn by numpy and cast to float32, printed by numpy."""
    cells = [
        ["import numpy as np\n"],
        [
            "x = np.random.randn(4, 1).astype(np.float32)\n",
            "W = np.random.randn(4, 4).astype(np.float32)\n",
            "print(x)\n",
            "print(W)",
        ],
        ["y = W @ x\n", "print(y)"],
    ]
    outs = ["", f"{_column(X)}\n{_matrix(W)}\n", f"{_column(y)}\n"]
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": k + 1,
                "metadata": {},
                "outputs": [{"name": "stdout", "output_type": "stream", "text": [out]}]
                if out
                else [],
                "source": src,
            }
            for k, (src, out) in enumerate(zip(cells, outs, strict=True))
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(nb))
    return path


def test_numpy_arrays_cast_to_float32(tmp_path: Path) -> None:
    """numpy's own float32 arrays: a correct print is rounded in float32, an off one flagged."""
    ok = _checks(_numpy_notebook(tmp_path / "ok.ipynb", Y))
    assert [(p, v) for p, v, _ in ok] == [(p, "rounded") for p in Y]
    off = {p: v for p, v, _ in _checks(_numpy_notebook(tmp_path / "off.ipynb", Y_OFF))}
    assert off.pop("0.91494556") in ("slip", "wrong")
    assert set(off.values()) == {"rounded"} and len(off) == 3


def test_draws_held_in_tf_variables(tmp_path: Path) -> None:
    """``tf.Variable(tf.random.normal(…))`` holds a float32 draw: its print pins it too."""
    path = _notebook(tmp_path / "off.ipynb", Y_OFF)
    nb = json.loads(path.read_text())
    nb["cells"][1]["source"] = [
        "x = tf.Variable(tf.random.normal((4, 1)))\n",
        "W = tf.Variable(tf.random.normal((4, 4)))\n",
        "print(f'x:\\n{x.numpy()}\\nW:\\n{W.numpy()}')",
    ]
    path.write_text(json.dumps(nb))
    checks = _checks(path)
    off = {p: v for p, v, _ in checks}
    assert off.pop("0.91494556") in ("slip", "wrong")
    assert set(off.values()) == {"rounded"} and len(off) == 3
    assert all("float32" in why for _, _, why in checks)
