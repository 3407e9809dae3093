"""A result summed up by its name with fewer digits: ``KL = 0.22 nats`` below the displayed
``D_KL(P‖Q) = … ≈ 0.2231``.

By hand: 0.5·ln(0.5/0.8) + 0.5·ln(0.5/0.2) = 0.5·ln(1.5625) = ln(1.25) = 0.22314…, so
``0.2231`` and ``0.22`` are both correct roundings. The sentence names the quantity by the
subscript of the displayed line's label (KL for D_KL), and 0.22 is that line's result kept
to two decimals: it is checked as that line. A number the line's result does not round
to, or one set by another name, is not taken for it (it stays unchecked).
"""

from __future__ import annotations

from pathlib import Path

from tests.article_checks import placed_verdicts

ARTICLE = r"""# Two coins

Coin P is fair, $P(H)=0.5$, and coin Q is biased, $Q(H)=0.8$ and $Q(T)=0.2$.

$$
D_{\text{KL}}(P\|Q) = 0.5 \log \frac{0.5}{0.8} + 0.5 \log \frac{0.5}{0.2} \approx 0.2231
$$

So KL = 0.22 nats: using Q for the fair coin costs a fifth of a nat per flip.
"""


def test_a_result_summed_up_by_its_name_is_checked_as_that_line(tmp_path: Path) -> None:
    got = placed_verdicts(tmp_path, ARTICLE)
    assert (6, "0.2231", "rounded") in got
    assert (9, "0.22", "rounded") in got


def test_a_summary_wrongly_rounded_is_not_taken_for_the_line(tmp_path: Path) -> None:
    got = placed_verdicts(tmp_path, ARTICLE.replace("KL = 0.22", "KL = 0.23"))
    assert (6, "0.2231", "rounded") in got
    assert [g for g in got if g[0] == 9] == []


def test_a_summary_under_another_name_is_not_taken_for_the_line(tmp_path: Path) -> None:
    got = placed_verdicts(tmp_path, ARTICLE.replace("KL = 0.22", "H = 0.22"))
    assert (6, "0.2231", "rounded") in got
    assert [g for g in got if g[0] == 9] == []


def test_a_full_label_names_the_line_too(tmp_path: Path) -> None:
    # ``H(P, Q) = … ≈ 0.9163`` then ``H = 0.92``: the name without its arguments
    text = r"""# Cross-entropy of a guess

$$
H(P, Q) = -0.5 \log 0.8 - 0.5 \log 0.2 \approx 0.9163
$$

Rounded, H = 0.92 nats.
"""
    # by hand: -0.5·ln(0.16) = -ln(0.4) = 0.91629…
    got = placed_verdicts(tmp_path, text)
    assert (4, "0.9163", "rounded") in got
    assert (7, "0.92", "rounded") in got


def test_the_number_again_on_the_line_that_named_it(tmp_path: Path) -> None:
    text = ARTICLE.replace(
        "using Q for the fair coin costs a fifth of a nat per flip.",
        "if we use $Q$ for the fair coin $P$, each flip costs us ~0.22 nats.",
    )
    got = placed_verdicts(tmp_path, text)
    assert [g for g in got if g[0] == 9] == [(9, "0.22", "rounded"), (9, "0.22", "rounded")]


def test_a_summary_of_a_result_printed_at_a_tie_is_not_taken(tmp_path: Path) -> None:
    # ln(1.25) = 0.22314…, printed 0.2250 would be off, and 0.23 rounds 0.2250 up only
    # by its tie: the exact value behind the line may round to 0.22, so no link is made
    text = ARTICLE.replace(r"\approx 0.2231", r"\approx 0.2250").replace("0.22 nats", "0.23 nats")
    got = placed_verdicts(tmp_path, text)
    assert [g for g in got if g[0] == 9] == []
    assert (9, "0.22", "rounded") in placed_verdicts(tmp_path, ARTICLE)
