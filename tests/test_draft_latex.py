"""Ways posts lay out hand-worked arithmetic in LaTeX, read as they stand.

Each article here is written for its test, with numbers of its own; every
expected value is computed with mpmath at 50 digits (or exactly with
fractions) from the numbers the article prints, never taken from the draft.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import mpmath
from mp_reference import rounds_to

from symtf.commands.draft import check_article

MPMATH_DIGITS = 50


def _check(tmp_path: Path, text: str) -> list[tuple[int | None, str, str]]:
    path = tmp_path / "post.md"
    path.write_text(text, encoding="utf-8")
    report = check_article(path)
    return [(r.claim.source_line, c.printed, c.verdict) for r in report.results for c in r.checks]


MIXED = r"""# One softmax row

The scores are $[0, 0.5, 1.5]$.

Exponentials: $e^{0} = 1$, $e^{0.5} = 1.649$, $e^{1.5} = 4.482$. Sum $= 7.131$.

The last weight is $\frac{4.482}{7.131} = 0.629$.
"""


def test_a_line_read_with_only_some_values_unrounded_does_not_call_a_right_line_a_slip(
    tmp_path: Path,
) -> None:
    """4.482 repeats the result of e^{1.5} and was read as e^{1.5}, but 7.131 (their sum,
    printed in prose) stayed as printed: 4.481689…/7.131 = 0.62848 rounds to 0.628, and the
    line was called a slip. Yet 4.482/7.131 = 0.62852 and the true weight
    e^{1.5}/(1 + e^{0.5} + e^{1.5}) = 0.62853 both print as 0.629."""
    e05, e15 = mpmath.e ** mpmath.mpf("0.5"), mpmath.e ** mpmath.mpf("1.5")
    assert rounds_to(e05, "1.649") and rounds_to(e15, "4.482")
    assert 1 + mpmath.mpf("1.649") + mpmath.mpf("4.482") == mpmath.mpf("7.131")
    assert rounds_to(mpmath.mpf("4.482") / mpmath.mpf("7.131"), "0.629")
    assert rounds_to(e15 / (1 + e05 + e15), "0.629")
    assert rounds_to(e15 / mpmath.mpf("7.131"), "0.628")  # the mixed reading
    checks = _check(tmp_path, MIXED)
    assert (7, "0.629", "rounded") in checks
    assert [c for c in checks if c[2] not in ("exact", "rounded")] == []


SPACED = r"""# Weights

$$w = \left[\frac{1}{8}, \; \frac{3}{8}, \; \frac{4}{8}\right] = [0.125, \; 0.375, \; 0.500]$$

$$\frac{0.375}{0.125} = 3 \qquad 2 \times 0.375 = 0.75$$
"""


def test_thin_spaces_between_entries_and_a_qquad_between_equations(tmp_path: Path) -> None:
    r"""``[0.125, \; 0.375]`` is a row of numbers (``\;``, ``\,``, ``\!`` are spacing), and
    ``\qquad`` separates two equations: ``0.375/0.125 = 3`` was chained with
    ``2 × 0.375 = 0.75`` and checked against 0.75, a false "wrong"."""
    checks = _check(tmp_path, SPACED)
    got = {(line, printed, verdict) for line, printed, verdict in checks}
    assert {(3, "0.125", "exact"), (3, "0.375", "exact"), (3, "0.500", "exact")} <= got
    assert {(5, "3", "exact"), (5, "0.75", "exact")} <= got
    assert [c for c in checks if c[2] not in ("exact", "rounded")] == []


ALIGNED = r"""# A mean and two exponentials

$$\begin{aligned}
\mu &= \frac{0.2 + 0.6 + 1.3}{3} \\
&= 0.7
\end{aligned}$$

$$
\begin{align*}
e^{0.6} &\approx 1.822 \\
e^{1.3} &\approx 3.669 \nonumber
\end{align*}
$$

$$1.822 + 3.669$$
$$= 5.491$$
"""


def test_aligned_rows_are_equations_at_their_own_lines(tmp_path: Path) -> None:
    """Rows of ``aligned``/``align*`` are equations of their own (``&`` marks where they
    align); a row starting with ``&=`` carries on the row above and is read at the line of
    its result; a display starting with ``=`` carries on the display right above it. None
    of these was read: a ``\\\\`` row break and ``&`` made the chain unreadable."""
    assert (Fraction("0.2") + Fraction("0.6") + Fraction("1.3")) / 3 == Fraction("0.7")
    assert rounds_to(mpmath.e ** mpmath.mpf("0.6"), "1.822")
    assert rounds_to(mpmath.e ** mpmath.mpf("1.3"), "3.669")
    assert Fraction("1.822") + Fraction("3.669") == Fraction("5.491")
    checks = _check(tmp_path, ALIGNED)
    got = {(line, printed, verdict) for line, printed, verdict in checks}
    assert {(5, "0.7", "exact"), (10, "1.822", "rounded"), (11, "3.669", "rounded")} <= got
    # the sum of the two rounded terms, read as written and with their unrounded values
    total = mpmath.e ** mpmath.mpf("0.6") + mpmath.e ** mpmath.mpf("1.3")
    assert rounds_to(total, "5.491")
    assert (16, "5.491", "rounded") in got
    assert [c for c in checks if c[2] not in ("exact", "rounded")] == []


POSITIONS = r"""# The encoding of position 2

With $d_{\text{model}} = 4$:

$$PE_{(2, 0)} = \sin\!\left(\frac{2}{10000^{0/4}}\right) = \sin(2) = 0.909$$

$$PE_{(2, 3)} = \cos\!\left(\frac{2}{10000^{2/4}}\right) = \cos(0.02) = 1.000$$

$$PE_2 = [\sin(2), \cos(2), \sin(0.02), \cos(0.02)] = [0.909, \; -0.416, \; 0.020, \; 1.000]$$

$$\tanh(0.5) \approx 0.462$$
"""


def test_sines_and_cosines_of_a_positional_encoding_are_checked(tmp_path: Path) -> None:
    """``\\sin``, ``\\cos`` and ``\\tanh`` were no functions symtf knew: every line of a
    worked sinusoidal encoding was left unread."""
    sin, cos = mpmath.sin, mpmath.cos
    assert rounds_to(sin(2), "0.909") and rounds_to(cos(mpmath.mpf("0.02")), "1.000")
    want = [sin(2), cos(2), sin(mpmath.mpf("0.02")), cos(mpmath.mpf("0.02"))]
    printed = ["0.909", "-0.416", "0.020", "1.000"]
    assert all(rounds_to(w, p) for w, p in zip(want, printed, strict=True))
    assert rounds_to(mpmath.tanh(mpmath.mpf("0.5")), "0.462")
    checks = _check(tmp_path, POSITIONS)
    got = {(line, printed, verdict) for line, printed, verdict in checks}
    assert {(5, "0.909", "rounded"), (7, "1.000", "rounded"), (11, "0.462", "rounded")} <= got
    assert {(9, p, "rounded") for p in ("0.909", "-0.416", "0.020", "1.000")} <= got
    assert [c for c in checks if c[2] not in ("exact", "rounded")] == []
