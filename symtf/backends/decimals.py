"""Certified decimal strings: the digits a ball proves of its exact value, truncated (``…``
marks an expansion that goes on), positional or with an exponent.
"""

from __future__ import annotations

import math

from flint import arb, ctx, fmpz


def decimal_string(x: arb, digits: int = 20) -> str | None:
    """The value of a ball to ``digits`` significant digits, if the ball pins them.

    Returns the digits of the truncated decimal expansion followed by ``…`` when
    the value is not exhausted, or ``None`` when the ball is too wide.
    """
    if not x.is_finite():
        return None
    if x.is_exact() and x.is_zero():
        return "0"
    saved = ctx.prec
    ctx.prec = 4096  # read the endpoints without rounding them
    try:
        lo, hi = x.lower(), x.upper()
    finally:
        ctx.prec = saved
    a, b = _truncated(lo, digits), _truncated(hi, digits)
    if a is None or a != b:
        return None
    return a


#: Decimal exponents beyond which a certified decimal is written in scientific notation.
POSITIONAL_EXPONENTS = 60


def _leading_digits(man: int, exp: int, digits: int) -> tuple[int, int, bool]:
    """The first ``digits`` digits of ``man·2^exp > 0``: ``(n, k, exact)``.

    ``n`` has exactly ``digits`` digits, ``10^k <= man·2^exp < 10^(k+1)`` and
    ``exact`` tells whether ``n·10^(k−digits+1)`` is the whole value. Integer
    arithmetic only (shifts and one division): ``e^-1000000`` has a binary
    exponent of −1.4 million, and Fractions of that size take minutes.
    """
    k = math.floor(math.log10(man) + exp * math.log10(2))
    for _ in range(4):
        s = digits - 1 - k  # n = floor(man · 2^exp · 10^s)
        num = man * 10 ** max(s, 0)
        den = 10 ** max(-s, 0)
        if exp >= 0:
            num <<= exp
        else:
            den <<= -exp
        n, rest = divmod(num, den)
        if n >= 10**digits:
            k += 1
        elif n < 10 ** (digits - 1):
            k -= 1
        else:
            return n, k, rest == 0
    raise ArithmeticError("decimal exponent did not settle")  # pragma: no cover


#: Binary exponents beyond which leading digits come from ball arithmetic, not integers.
INTEGER_DIGITS_EXPONENT = 1 << 16


def _leading_digits_ball(x: arb, digits: int) -> tuple[int, int, bool]:
    """:func:`_leading_digits` for an exact ``x > 0`` of huge binary exponent.

    The decimal exponent ``k`` is ``floor(log10 x)`` and the digits are
    ``floor(x·10^(digits−1−k))``, both read from balls whose precision grows
    with the size of the exponent: the time is independent of how tiny or huge
    ``x`` is (``e^-10^50`` included). Such an ``x = m·2^e`` is never a short
    decimal (that needs ``5^|e|`` to divide ``m``), so ``exact`` is False.
    """
    saved = ctx.prec
    man, exp = x.mid().man_exp()
    base = abs(int(exp)).bit_length()
    try:
        ctx.prec = abs(int(man)).bit_length() + 64
        x = abs(x)  # exact at this precision (python-flint rounds even abs to ctx.prec)
        for extra in (64, 256, 1024, 4096):
            ctx.prec = 2 * base + extra + int(digits * 3.33)
            lg = (x.log() / arb(10).log()).floor()
            lz = lg.unique_fmpz()
            if not lg.is_exact() or lz is None:
                continue
            k = int(lz)
            y = (x * arb(10) ** fmpz(digits - 1 - k)).floor()
            yz = y.unique_fmpz()
            if not y.is_exact() or yz is None:
                continue
            # 10^k <= x < 10^(k+1) is certified, so n has exactly `digits` digits.
            return int(yz), k, False
    finally:
        ctx.prec = saved
    raise ArithmeticError("decimal digits did not settle")  # pragma: no cover


def _truncated(x: arb, digits: int) -> str | None:
    # x is an exact ball (an endpoint); read it as man·2^exp through its mid.
    man, exp = x.mid().man_exp()
    if man == 0:
        return None
    sign = "-" if man < 0 else ""
    if abs(int(exp)) > INTEGER_DIGITS_EXPONENT:
        n, k, exact = _leading_digits_ball(x, digits)
    else:
        n, k, exact = _leading_digits(abs(int(man)), int(exp), digits)
    more = "" if exact else "…"
    s = str(n)  # exactly `digits` digits
    if abs(k) > POSITIONAL_EXPONENTS:  # e^-1000000 is not written with 434,294 zeros
        mantissa = (s[0] + "." + s[1:]).rstrip("0").rstrip(".")
        return f"{sign}{mantissa}{more}e{k:+d}"
    point = k + 1
    if point <= 0:
        text = "0." + "0" * (-point) + s
    elif point >= len(s):
        text = s + "0" * (point - len(s))
    else:
        text = s[:point] + "." + s[point:]
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return sign + text + more
