"""Both expression languages read through :mod:`symtf.language.syntax`: one set of limits and messages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sympy import Integer, Rational

from symtf.errors import ExpressionError
from symtf.language import expr, lang
from symtf.spec.steps import SIGNATURES


def _displayed(text: str) -> Any:
    return expr.parse(text, where="f.toml: claims[0].expression").root


def _step(text: str) -> Any:
    return lang.parse(text, SIGNATURES, where="f.toml: steps.y")


PARSERS = [
    pytest.param(_displayed, "f.toml: claims[0].expression", id="displayed"),
    pytest.param(_step, "f.toml: steps.y", id="step"),
]

# (text, message, column): what each language must say, worked out by hand.
BAD = [
    ("1" * 61, "expected a number of at most 60 characters but found one of 61", 1),
    (
        "2 * 3e101",
        "expected an exponent of at most 100 in absolute value but found 101 in 3e101",
        5,
    ),
    ("(" * 51 + "1" + ")" * 51, "expected at most 50 levels of nesting but found more", 51),
    ("-" * 51 + "1", "expected at most 50 levels of nesting but found more", 51),
    ("1 $ 2", "expected a number, a name, an operator or a bracket but found '$'", 3),
    (
        "1 + ٣",
        "expected a number written in ASCII digits 0-9 but found the character '٣'"
        " (U+0663 ARABIC-INDIC DIGIT THREE)",
        5,
    ),
    ("(1 + 2", "expected ')' to close the '(' at column 1 but found the end of the expression", 7),
    ("[1, 2", "expected ']' to close the '[' at column 1 but found the end of the expression", 6),
    ("exp(", "expected a number, a name, '(' or '[' but found the end of the expression", 5),
    ("1 +", "expected a number, a name, '(' or '[' but found the end of the expression", 4),
    ("2 3", "expected an operator or the end of the expression but found '3'", 3),
    ("x⁻", "expected a superscript digit after the sign but found the end of the expression", 3),
    ("", "expected an expression but found the end of the expression", 1),
]


@pytest.mark.parametrize(("parse", "where"), PARSERS)
@pytest.mark.parametrize(("text", "message", "column"), BAD, ids=[b[0][:12] for b in BAD])
def test_both_languages_reject_alike_naming_where_and_column(
    parse: Callable[[str], Any], where: str, text: str, message: str, column: int
) -> None:
    with pytest.raises(ExpressionError) as info:
        parse(text)
    first = str(info.value).splitlines()[0]
    assert first == f"{where}: {message} (at column {column})"


@pytest.mark.parametrize(("parse", "where"), PARSERS)
def test_both_languages_bound_the_length(parse: Callable[[str], Any], where: str) -> None:
    text = "+".join(["1"] * 1001)  # 2001 characters
    with pytest.raises(ExpressionError, match="at most 2000 characters but found 2001"):
        parse(text)
    assert parse(text[2:]) is not None  # 1999 characters are fine
    with pytest.raises(ExpressionError, match="expected the expression as a string but found int"):
        parse(3)  # type: ignore[arg-type]


@pytest.mark.parametrize(("parse", "where"), PARSERS)
def test_both_languages_accept_the_limits_themselves(
    parse: Callable[[str], Any], where: str
) -> None:
    assert parse("(" * 50 + "1" + ")" * 50).value == 1
    assert parse("1" * 60).value == Integer(int("1" * 60))
    assert parse("1e-100").value == Rational(1, 10**100)
    assert parse(".5E+2").value == 50
    assert parse("1.732").value == Rational(433, 250)


def test_the_languages_differ_where_documented() -> None:
    # √ binds tighter than a superscript in displayed arithmetic, (√x)², and takes the
    # whole postfix in a step, √(x²).
    shown = _displayed("√x²")
    assert isinstance(shown, expr.Power) and isinstance(shown.base, expr.Call)
    step = _step("√x²")
    assert isinstance(step, lang.Call) and isinstance(step.args[0], lang.Power)
    # ^T before '[' is a power of the reference T[0] on a page, the transpose in a step
    # (which then cannot be indexed without brackets).
    assert isinstance(_displayed("x^T[0]"), expr.Power)
    assert isinstance(_step("(x^T)[0]"), lang.Index)
    with pytest.raises(ExpressionError, match="expected an operator or the end"):
        _step("x^T[0]")
