"""Values a notebook draws from numpy's legacy seeded stream are read as numpy draws them.

``np.random.seed(s)`` and then ``np.random.randn``, ``rand`` or ``normal`` give the values
numpy documents as stable across versions: the draft takes them from numpy's own
``RandomState(s)`` in the notebook's order (the notebook itself is never run), each float64
as its exact rational. The notebooks here are made up for these tests; their printed
output is what numpy printed for them, and every expected value is computed with mpmath
at 50 digits from the exact draws. The first draws of seed 0 are also checked against the
values numpy's documentation and countless tutorials show (1.76405235, 0.40015721, …).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
from mp_reference import rounds_to

from symtf.commands.draft import check_article, checked_article

MPMATH_DIGITS = 50

SOURCE = [
    "import numpy as np\n",
    "np.random.seed(0)\n",
    "x = np.random.randn(4)\n",
    "W = np.random.rand(4, 3) / 2\n",
    "b = np.random.normal(1.0, 0.5, size=3)\n",
    "h = x @ W + b\n",
    "p = np.exp(h) / np.sum(np.exp(h))\n",
    "print(x)\n",
    "print(h)\n",
    "print(p)",
]
X = ["1.76405235", "0.40015721", "0.97873798", "2.2408932"]
H = ["3.19855822", "2.26775786", "2.58532848"]
P = ["0.51657245", "0.20365252", "0.27977503"]


def _notebook(path: Path, source: list[str], p: list[str]) -> Path:
    out = f"[{' '.join(X)} ]\n[{' '.join(H)}]\n[{' '.join(p)}]\n"
    cell = {
        "cell_type": "code",
        "execution_count": 1,
        "metadata": {},
        "outputs": [{"name": "stdout", "output_type": "stream", "text": [out]}],
        "source": source,
    }
    nb = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb))
    return path


def _verdicts(path: Path) -> dict[str, str]:
    report = check_article(path)
    return {c.printed: c.verdict for r in report.results for c in r.checks}


def _reference() -> tuple[list[mpmath.mpf], list[mpmath.mpf], list[mpmath.mpf]]:
    """x, h and p at 50 digits from the exact float64 values numpy's RandomState(0) draws."""
    rs = np.random.RandomState(0)
    mp = mpmath.mp.clone()
    mp.dps = MPMATH_DIGITS

    def exact(a: np.ndarray) -> list[mpmath.mpf]:
        ratios = [Fraction(*float(v).as_integer_ratio()) for v in a.ravel()]
        return [mp.mpf(r.numerator) / r.denominator for r in ratios]

    x = exact(rs.randn(4))
    w = [v / 2 for v in exact(rs.rand(4, 3))]
    b = exact(rs.normal(1.0, 0.5, size=3))
    h = [mp.fsum(x[i] * w[3 * i + j] for i in range(4)) + b[j] for j in range(3)]
    e = [mp.exp(v) for v in h]
    return x, h, [v / mp.fsum(e) for v in e]


def test_the_reference_is_what_the_notebook_printed() -> None:
    """The printed output rounds the 50-digit values of the exact draws (the fixture is
    consistent), and seed 0's first normal draws are the widely published ones."""
    x, h, p = _reference()
    assert [mpmath.nstr(v, 9) for v in x[:2]] == ["1.76405235", "0.400157208"]
    for values, printed in ((x, X), (h, H), (p, P)):
        assert all(rounds_to(v, s) for v, s in zip(values, printed, strict=True))


def test_draws_after_a_seed_are_checked(tmp_path: Path) -> None:
    """Every printed number gets a verdict: the draws' own print and what is computed from
    them; the draft says where the inputs come from."""
    path = _notebook(tmp_path / "seeded.ipynb", SOURCE, P)
    verdicts = _verdicts(path)
    assert {v: verdicts.get(v) for v in X + H + P} == {v: "rounded" for v in X + H + P}
    draft = checked_article(path).toml
    assert "drawn by numpy's RandomState(0)" in draft


def test_a_slip_after_seeded_draws_is_flagged(tmp_path: Path) -> None:
    """p's first entry printed one unit of its fifth decimal off is off."""
    _, _, p = _reference()
    off = ["0.51658245", *P[1:]]
    assert abs(p[0] - mpmath.mpf(off[0])) > mpmath.mpf("0.000009")
    verdicts = _verdicts(_notebook(tmp_path / "slip.ipynb", SOURCE, off))
    assert verdicts["0.51658245"] in ("slip", "wrong")
    assert all(verdicts[v] == "rounded" for v in P[1:] + H)


def test_without_a_known_stream_the_draws_stay_unread(tmp_path: Path) -> None:
    """No seed, or code not translated between the seed and the draws (it may draw from
    the same stream): the draws and h are not checked (h's print is then an input, which
    p is checked against), and nothing is flagged."""
    unseeded = [s for s in SOURCE if "seed" not in s]
    shuffled = [*SOURCE[:2], "np.random.shuffle([1, 2, 3])\n", *SOURCE[2:]]
    for k, source in enumerate((unseeded, shuffled)):
        verdicts = _verdicts(_notebook(tmp_path / f"unknown{k}.ipynb", source, P))
        assert not any(v in verdicts for v in X + H)
        assert all(v in ("rounded", "exact") for v in verdicts.values())
