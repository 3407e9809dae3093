"""Numbers in prose that name what the article works with rather than print a result:
the largest of the raw scores it names, and an entry value of a matrix it gives.

Expectations are worked by hand from the made-up article below: ``Q = X W_Q`` and
``K = X W_K`` give the raw scores ``Q Kᵀ = [[1.0, 1.75], [1.75, 1.5]]``, whose largest
entry is 1.75; the weights are 0/1 matrices, so "a 1" and "a 0" name their entries.
"""

from __future__ import annotations

from pathlib import Path

from symtf.commands.draft import check_article
from tests.article_checks import placed_verdicts

ARTICLE = r"""# Scores of one head

The inputs are two tokens:

$$X=\left[\begin{array}{cc}0.5& 1.0\\ 1.5& 0.5\end{array}\right]$$

The weights select features; every entry is a 0 or a 1:

$$W_Q=\left[\begin{array}{cc}1& 0\\ 0& 1\end{array}\right],W_K=\left[\begin{array}{cc}0& 1\\ 1& 0\end{array}\right]$$

A $1$ keeps a feature and a $0$ drops it.

$$Q=XW_Q=\left[\begin{array}{cc}0.5& 1.0\\ 1.5& 0.5\end{array}\right],K=XW_K=\left[\begin{array}{cc}1.0& 0.5\\ 0.5& 1.5\end{array}\right]$$

The raw scores stay small (the largest is only $LARGEST$), so the softmax below is flat.
"""


def _report(tmp_path: Path, largest: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "post.md"
    path.write_text(ARTICLE.replace("LARGEST", largest), encoding="utf-8")
    return check_article(path)


def _unchecked_lines(report) -> list[int]:  # type: ignore[no-untyped-def]
    return sorted(u.line for u in report.unchecked)


def test_the_largest_raw_score_the_sentence_names_is_checked(tmp_path: Path) -> None:
    # max(Q Kᵀ) = max(1.0, 1.75, 1.75, 1.5) = 1.75, printed exactly
    found = placed_verdicts(tmp_path, ARTICLE.replace("LARGEST", "1.75"))
    assert (15, "1.75", "exact") in found


def test_a_rounded_largest_score_is_rounded(tmp_path: Path) -> None:
    found = placed_verdicts(tmp_path, ARTICLE.replace("LARGEST", "1.8"))
    assert (15, "1.8", "rounded") in found


def test_a_largest_score_that_is_no_entry_is_not_guessed(tmp_path: Path) -> None:
    # 2.25 is the largest of no reading of the scores: left unchecked, never flagged
    report = _report(tmp_path, "2.25")
    assert 15 in _unchecked_lines(report)
    assert all(c.printed != "2.25" for r in report.results for c in r.checks)


def test_a_one_and_a_zero_named_as_tokens_are_entries_the_article_gives(
    tmp_path: Path,
) -> None:
    report = _report(tmp_path, "1.75")
    assert 11 not in _unchecked_lines(report)
    # the 14 entries of X, W_Q and W_K, and the two tokens on line 11
    assert report.given == 4 + 4 + 4 + 2


def test_a_number_in_a_sentence_that_is_no_token_stays_unchecked(tmp_path: Path) -> None:
    text = ARTICLE.replace("A $1$ keeps a feature", "Feature $1$ is kept")
    path = tmp_path / "post.md"
    path.write_text(text.replace("LARGEST", "1.75"), encoding="utf-8")
    report = check_article(path)
    assert 11 in _unchecked_lines(report)


def test_the_mask_value_named_in_prose_is_the_given_mask_entry(tmp_path: Path) -> None:
    text = r"""# A mask

$$M=\left[\begin{array}{cc}0& -\mathrm{\infty }\\ 0& 0\end{array}\right]$$

A lone visible score gets all the weight, and $-\mathrm{\infty }$ gets none.
"""
    path = tmp_path / "post.md"
    path.write_text(text, encoding="utf-8")
    report = check_article(path)
    assert _unchecked_lines(report) == []
    assert report.given == 4 + 1
