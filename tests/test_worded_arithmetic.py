"""Arithmetic a sentence says in words: the absolute maximum of a vector, ``divide A by B
and obtain C``, ``multiplying the original vector by it gives [...]``.

Each fixture is written here; the expected values are worked by hand. The vector is
[0.6, -2.2, 1.32, 4.0]:

- its absolute maximum is 4.0;
- 127 / 4.0 = 31.75;
- the vector times 31.75: 19.05, -69.85, 41.91, 127, printed to no decimals 19, -70, 42,
  127 (127 exactly); ``24`` for 41.91 is wrong.
"""

from __future__ import annotations

from pathlib import Path

from article_checks import placed_verdicts

ARTICLE = """\
# Scaling a vector to 8 bits

Take the vector `[0.6, -2.2, 1.32, 4.0]`. You extract the absolute maximum of it, which is `4.0` here. The range is `[-127, 127]`, so we divide 127 by `4.0` and obtain `31.75` for the scale. Therefore SAYING `[19, -70, THIRD, 127]`.
"""

SAYS = "multiplying the original vector by it gives the scaled vector"


def _verdicts(tmp_path: Path, saying: str = SAYS, third: str = "42") -> list[tuple[str, str]]:
    text = ARTICLE.replace("SAYING", saying).replace("THIRD", third)
    return [(p, v) for line, p, v in placed_verdicts(tmp_path, text) if line == 3]


def test_the_absolute_maximum_and_the_quotient_a_sentence_names_are_checked(
    tmp_path: Path,
) -> None:
    got = _verdicts(tmp_path)
    assert ("4.0", "exact") in got
    assert ("31.75", "exact") in got


def test_the_vector_multiplied_by_the_quotient_is_checked_entry_by_entry(
    tmp_path: Path,
) -> None:
    got = _verdicts(tmp_path)
    assert [x for x in got if x[0] in ("19", "-70", "42")] == [
        ("19", "rounded"),
        ("-70", "rounded"),
        ("42", "rounded"),
    ]
    assert ("127", "exact") in got
    assert ("24", "wrong") in _verdicts(tmp_path, third="24")


def test_a_list_no_sentence_says_how_to_compute_is_left_an_input(tmp_path: Path) -> None:
    got = _verdicts(tmp_path, saying="we keep the vector")
    assert not [x for x in got if x[0] in ("19", "-70", "42")]
