"""A table column whose heading states its step from another column (``Softmax @ T=0.5``).

Each fixture is written here. The expected values come from mpmath at 30 digits (in the
comments) or by hand, never from symtf's output. Logits 2, 1, 0.5:

- softmax at T = 1: 0.6285317192, 0.2312238976, 0.1402443832
- softmax at T = 0.5 (logits 4, 2, 1): 0.8437947345, 0.1141951994, 0.04201006613
- softmax at T = 2 (logits 1, 0.5, 0.25): 0.4810242633, 0.2917559637, 0.2272197730
- exp: 7.389056099, 2.718281828, 1.648721271; sigmoid: 0.8807970780, 0.7310585786,
  0.6224593312; the logits / 2: 1, 0.5, 0.25 exactly.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from article_checks import placed_verdicts

from symtf.draft.read.columns import ColumnStep, column_step

TABLE = """\
# Temperature

Suppose a model gives these logits:

| Token | Logit | {h1} | {h2} | {h3} |
| ----- | ----- | ---- | ---- | ---- |
| "a"   | 2.0   | {r0} |
| "b"   | 1.0   | {r1} |
| "c"   | 0.5   | {r2} |
"""


def _table(headings: tuple[str, str, str], rows: list[tuple[str, str, str]]) -> str:
    h1, h2, h3 = headings
    cells = [" | ".join(r) + " " for r in rows]
    return TABLE.format(h1=h1, h2=h2, h3=h3, r0=cells[0], r1=cells[1], r2=cells[2])


SOFTMAX = ("Softmax @ T=1", "Softmax @ T=0.5", "Softmax @ T=2")


def test_softmax_columns_at_stated_temperatures_are_checked(tmp_path: Path) -> None:
    # Every entry a correct rounding of mpmath's values but one: 0.05 at T = 0.5 for
    # 0.04201 (off by about 0.8 of a unit, not a rounding).
    rows = [("0.63", "0.84", "0.48"), ("0.23", "0.11", "0.29"), ("0.14", "0.05", "0.23")]
    got = sorted(placed_verdicts(tmp_path, _table(SOFTMAX, rows)))
    assert [v for *_, v in got if v != "rounded"] == ["slip"]
    assert [(line, p) for line, p, v in got if v == "slip"] == [(9, "0.05")]
    assert len(got) == 9


def test_a_table_whose_stated_columns_are_all_off_has_every_entry_judged(
    tmp_path: Path,
) -> None:
    # The heading states the step, so each entry is judged even when none agrees: every
    # printed value is at least a unit away from mpmath's (0.80 against 0.6285, …).
    rows = [("0.80", "0.95", "0.65"), ("0.15", "0.04", "0.25"), ("0.05", "0.01", "0.10")]
    got = placed_verdicts(tmp_path, _table(SOFTMAX, rows))
    assert len(got) == 9
    assert all(v == "wrong" for *_, v in got)


def test_exp_sigmoid_and_a_constant_divisor_stated_by_headings(tmp_path: Path) -> None:
    # exp 7.389 | σ 0.881 | /2 exact; one wrong: exp(0.5) = 1.6487 printed 1.749.
    rows = [("7.389", "0.881", "1.0"), ("2.718", "0.731", "0.5"), ("1.749", "0.622", "0.25")]
    got = sorted(placed_verdicts(tmp_path, _table(("exp(Logit)", "σ(Logit)", "Logit / 2"), rows)))
    assert len(got) == 9
    assert [(line, p) for line, p, v in got if v == "wrong"] == [(9, "1.749")]
    assert {v for *_, v in got} == {"rounded", "exact", "wrong"}


def test_headings_that_only_name_data_state_no_step(tmp_path: Path) -> None:
    # "Probability", "Score" and "σ" (a deviation as often as a sigmoid) name no operation
    # of another column: the made-up numbers are inputs the table gives, never flagged.
    rows = [("0.80", "0.95", "0.65"), ("0.15", "0.04", "0.25"), ("0.05", "0.01", "0.10")]
    got = placed_verdicts(tmp_path, _table(("Probability", "Score", "σ"), rows))
    assert not any(v in ("wrong", "slip") for *_, v in got)


def test_a_stated_step_over_two_unnamed_columns_is_not_guessed(tmp_path: Path) -> None:
    # Two numeric columns and a heading "Softmax" naming neither: which one it is taken of
    # is not stated, so nothing is judged against a guess.
    text = (
        "| Token | Logit | Bias | Softmax |\n| --- | --- | --- | --- |\n"
        "| a | 2.0 | 0.1 | 0.90 |\n| b | 1.0 | 0.2 | 0.05 |\n| c | 0.5 | 0.3 | 0.05 |\n"
    )
    got = placed_verdicts(tmp_path, text)
    assert not any(v in ("wrong", "slip") for *_, v in got)


def test_a_heading_naming_its_column_picks_it(tmp_path: Path) -> None:
    # softmax(Logit / 2) of the Logit column, not of Bias: mpmath 0.4810, 0.2918, 0.2272.
    text = (
        "| Token | Logit | Bias | softmax(Logit / 2) |\n| --- | --- | --- | --- |\n"
        "| a | 2.0 | 0.1 | 0.481 |\n| b | 1.0 | 0.2 | 0.292 |\n| c | 0.5 | 0.3 | 0.227 |\n"
    )
    got = placed_verdicts(tmp_path, text)
    assert sorted(p for _, p, v in got if v == "rounded") == ["0.227", "0.292", "0.481"]


@pytest.mark.parametrize(
    ("heading", "step"),
    [
        ("Softmax @ T=0.5", ColumnStep("softmax", "0.5", None)),
        ("softmax (T = 2)", ColumnStep("softmax", "2", None)),
        ("softmax(z / 2)", ColumnStep("softmax", "2", "z")),
        ("exp(Logit)", ColumnStep("exp", None, "Logit")),
        ("sigmoid", ColumnStep("sigmoid", None, None)),
        ("Logit / 2", ColumnStep("div", "2", "Logit")),
        ("× 0.5", ColumnStep("mul", "0.5", None)),
        ("Probability", None),
        ("P(token)", None),
        ("σ", None),
        ("Exp 1", None),
        ("Score (T=2)", None),
    ],
)
def test_what_a_heading_states(heading: str, step: ColumnStep | None) -> None:
    assert column_step(heading) == step


def test_a_softmax_column_of_a_few_top_tokens_is_not_taken_over_the_rows_shown(
    tmp_path: Path,
) -> None:
    # 0.40 + 0.20 + 0.10 = 0.70, short of 1 by far more than rounding to two decimals can
    # lose (3 × 0.005): the rows are the top three of a larger vocabulary, so the softmax
    # of the three logits shown (0.63, 0.23, 0.14) says nothing about them.
    rows = [("0.40", "0.84", "0.48"), ("0.20", "0.11", "0.29"), ("0.10", "0.04", "0.23")]
    got = placed_verdicts(tmp_path, _table(SOFTMAX, rows))
    assert not any(p in ("0.40", "0.20", "0.10") for _, p, _ in got)
    assert len(got) == 6
