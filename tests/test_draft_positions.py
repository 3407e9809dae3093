"""Position terms an article works by hand, read as it stands: the ALiBi distance penalty.

Each article here is written for its test, with numbers of its own; every expected value is
derived by hand with exact fractions (``B[i, j] = −m·|i − j|``, Press et al.'s linear bias,
added to the printed scores), never taken from the draft.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from symtf.commands.draft import check_article

SCORES = (
    ("0.42", "1.10", "-0.35", "0.80"),
    ("0.15", "0.66", "0.27", "-0.48"),
    ("-0.90", "0.33", "1.25", "0.61"),
    ("0.05", "-0.72", "0.44", "0.93"),
)


def _bias(m: Fraction, n: int = 4) -> list[list[Fraction]]:
    return [[-m * abs(i - j) for j in range(n)] for i in range(n)]


def _print(x: Fraction) -> str:
    """Two decimals, exactly (every value here is a multiple of 1/100)."""
    assert (x * 100).denominator == 1
    sign = "-" if x < 0 else ""
    cents = abs(int(x * 100))
    return f"{sign}{cents // 100}.{cents % 100:02d}"


def _table(rows: list[list[str]]) -> str:
    return "\n".join(f"q{i + 1} " + " ".join(f"{v:>5}" for v in row) for i, row in enumerate(rows))


def _article(slope_sentence: str, bias: list[list[str]], biased: list[list[str]]) -> str:
    return (
        "# Linear biases on four tokens\n\n"
        "Raw attention scores for the four tokens (rows are queries):\n\n"
        f"```\n{_table([list(r) for r in SCORES])}\n```\n\n"
        f"{slope_sentence}\n\n"
        "Bias matrix:\n\n"
        f"```\n{_table(bias)}\n```\n\n"
        "Biased scores (scores + bias):\n\n"
        f"```\n{_table(biased)}\n```\n"
    )


def _by_hand(m: Fraction) -> tuple[list[list[str]], list[list[str]]]:
    bias = _bias(m)
    biased = [
        [_print(Fraction(s) + b) for s, b in zip(row, brow, strict=True)]
        for row, brow in zip(SCORES, bias, strict=True)
    ]
    return [[_print(b) for b in row] for row in bias], biased


def _verdicts(tmp_path: Path, text: str) -> tuple[dict[tuple[int, str], list[str]], list]:
    path = tmp_path / "post.md"
    path.write_text(text, encoding="utf-8")
    report = check_article(path)
    out: dict[tuple[int, str], list[str]] = {}
    for r in report.results:
        for c in r.checks:
            out.setdefault((r.claim.source_line or 0, c.printed), []).append(c.verdict)
    return out, list(report.unchecked)


def _bias_lines(text: str) -> range:
    lines = text.splitlines()
    start = lines.index("Bias matrix:") + 4  # 1-based: past the label, a blank line, the fence
    return range(start, start + 4)


def test_a_stated_slope_makes_the_distance_penalty_a_step(tmp_path: Path) -> None:
    """ "slope m = 0.25 … the slope times the distance, subtracted": the bias table is
    −0.25·|i − j| (by hand), so all 16 entries get a verdict, not only the sum after it."""
    bias, biased = _by_hand(Fraction(1, 4))
    assert bias[3] == ["-0.75", "-0.50", "-0.25", "0.00"]  # the hand derivation, spelled out
    text = _article(
        "We use one head with slope m = 0.25. The bias of query i on key j is the slope\n"
        "times the distance between them, subtracted from the score.",
        bias,
        biased,
    )
    verdicts, unchecked = _verdicts(tmp_path, text)
    lines = _bias_lines(text)
    on_bias = [v for (line, _), vs in verdicts.items() if line == lines[0] for v in vs]
    assert len(on_bias) == 16 and set(on_bias) == {"exact"}
    assert not any(u.line in lines for u in unchecked)
    assert sum(len(vs) for vs in verdicts.values()) == 32  # bias and biased scores


def test_a_negative_slope_times_the_distance_reads_the_same(tmp_path: Path) -> None:
    """ "Let slope = **-0.25**. Penalty = slope × distance": the sign is the article's."""
    bias, biased = _by_hand(Fraction(1, 4))
    text = _article("Let slope = **-0.25**.\nPenalty = slope × distance.", bias, biased)
    verdicts, _ = _verdicts(tmp_path, text)
    first = _bias_lines(text)[0]
    assert sorted(v for (line, _), vs in verdicts.items() if line == first for v in vs) == (
        ["exact"] * 16
    )


def test_a_wrong_entry_of_the_penalty_is_flagged(tmp_path: Path) -> None:
    """A transposed −0.25 printed as −0.52 is off by 27 units of the last digit: wrong; the
    biased scores are still judged against the exact bias (by hand: −0.72 − 0.50 = −1.22)."""
    bias, biased = _by_hand(Fraction(1, 4))
    bias[3][2] = "-0.52"
    text = _article("We use one head with slope m = 0.25.", bias, biased)
    verdicts, _ = _verdicts(tmp_path, text)
    first = _bias_lines(text)[0]
    assert verdicts[(first, "-0.52")] == ["wrong"]
    assert sorted(v for (line, _), vs in verdicts.items() if line == first for v in vs) == (
        ["exact"] * 15 + ["wrong"]
    )


def test_without_a_stated_slope_the_table_is_given(tmp_path: Path) -> None:
    """The same table with no slope named is an input: no step is guessed from its pattern,
    so an entry off the pattern is never flagged."""
    bias, biased = _by_hand(Fraction(1, 4))
    bias[3][2] = "-0.52"
    biased[3][2] = _print(Fraction(SCORES[3][2]) - Fraction(52, 100))
    text = _article("Each head adds a fixed bias to its scores.", bias, biased)
    verdicts, _ = _verdicts(tmp_path, text)
    lines = _bias_lines(text)
    assert not any(line in lines for line, _ in verdicts)
    assert all(v in ("exact", "rounded") for vs in verdicts.values() for v in vs)
