"""A quantity written out as arithmetic, and its value printed in a later display, in units.

An article writes the divergence of two distributions as a sum of literals with no value
(``D(P \\| Q) = 0.8 \\log \\frac{0.8}{0.6} + 0.2 \\log \\frac{0.2}{0.4}``), then, after a
sentence, prints its value in nats with the same value in bits beside it in brackets
(``D(P \\| Q) \\approx 0.0915 \\;\\text{nats} \\; (\\approx 0.132 \\;\\text{bits})``). A reader
takes the printed value as the value of that arithmetic, the unit words as words, and
the bracket as the conversion it states (one bit is ln 2 nats). The article is made up
for these tests; its values come from mpmath at 40 digits:
D = 0.0915162218…, D / ln 2 = 0.1320299994…, and 0.0925 / ln 2 = 0.1334489…,
0.132 · ln 2 = 0.0914958….
"""

from __future__ import annotations

from pathlib import Path

import mpmath

from symtf.commands.draft import check_article
from symtf.language import latexmath

ARTICLE = r"""# How far Q is from P

Two coins: $P = (0.8, 0.2)$ and $Q = (0.6, 0.4)$.

$$
D(P \| Q) = 0.8 \log \frac{0.8}{0.6} + 0.2 \log \frac{0.2}{0.4}
$$

Adding the two terms:

$$
D(P \| Q) \approx {value}
$$
"""


def _verdicts(tmp_path: Path, value: str) -> dict[str, str]:
    path = tmp_path / "coins.md"
    path.write_text(ARTICLE.replace("{value}", value))
    report = check_article(path)
    return {c.printed: c.verdict for r in report.results for c in r.checks}


def test_the_values_by_mpmath() -> None:
    mpmath.mp.dps = 40
    d = mpmath.mpf("0.8") * mpmath.log(mpmath.mpf("0.8") / mpmath.mpf("0.6")) + mpmath.mpf(
        "0.2"
    ) * mpmath.log(mpmath.mpf("0.2") / mpmath.mpf("0.4"))
    ln2 = mpmath.log(2)
    assert mpmath.nstr(d, 3) == "0.0915"
    assert mpmath.nstr(d / ln2, 3) == "0.132"
    assert mpmath.nstr(mpmath.mpf("0.0925") / ln2, 3) == "0.133"
    assert mpmath.nstr(mpmath.mpf("0.132") * ln2, 3) == "0.0915"


def test_a_parallel_bar_reads_in_a_label() -> None:
    assert latexmath.label_text(r"D_{\text{KL}}(P\|Q)") == "D_KL(P‖Q)"
    assert latexmath.label_text(r"D(P \parallel Q)") == "D(P‖Q)"


def test_the_value_of_the_arithmetic_above_is_judged(tmp_path: Path) -> None:
    """The printed value of ``D(P \\| Q)`` is the sum written out above it."""
    assert _verdicts(tmp_path, "0.0915") == {"0.0915": "rounded"}
    assert _verdicts(tmp_path, "0.0925") == {"0.0925": "wrong"}


def test_a_value_in_nats_and_its_bits(tmp_path: Path) -> None:
    """The unit words are read past; the bits are the nats divided by ln 2."""
    good = _verdicts(tmp_path, r"0.0915 \;\text{nats} \; (\approx 0.132 \;\text{bits})")
    assert good == {"0.0915": "rounded", "0.132": "rounded"}
    off_bits = _verdicts(tmp_path, r"0.0915 \;\text{nats} \; (\approx 0.142 \;\text{bits})")
    assert off_bits["0.0915"] == "rounded"
    assert off_bits["0.142"] in ("slip", "wrong")
    # 0.0925 nats is off, and 0.133 bits is what it converts to
    off_nats = _verdicts(tmp_path, r"0.0925 \;\text{nats} \; (\approx 0.133 \;\text{bits})")
    assert off_nats == {"0.0925": "wrong", "0.133": "rounded"}


def test_a_value_in_bits_and_its_nats(tmp_path: Path) -> None:
    """The other way round: the nats are the bits times ln 2. The \\log written out
    above is in nats, so a value in bits is not judged as its value."""
    got = _verdicts(tmp_path, r"0.132 \;\text{bits} \; (\approx 0.0915 \;\text{nats})")
    assert got == {"0.0915": "rounded"}
    off = _verdicts(tmp_path, r"0.132 \;\text{bits} \; (\approx 0.0951 \;\text{nats})")
    assert off["0.0951"] in ("slip", "wrong")
