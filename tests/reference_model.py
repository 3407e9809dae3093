"""An independent reference for symtf's tests: a decoder forward pass in mpmath.

Nothing here imports symtf or SymPy. Weights are :class:`fractions.Fraction`
values; everything up to the attention scores is exact rational arithmetic,
and from the √d_k division on the values are mpmath numbers carried at
:data:`DPS` significant digits. This is a test oracle, not a certified
computation: it is accurate far beyond three printed decimals, and
:func:`classify` refuses (``"boundary"``) to decide a number that lies within
:data:`BOUNDARY_TOL` of a rounding boundary.

The model functions work inside ``mp.workdps(DPS)`` and the rounding
functions are exact on the rational value of their argument, so this module
never changes mpmath's global precision.

Example:
    >>> trace = forward(i_love_ai_weights())
    >>> round_half_up(trace["l0.h0.pattern"][1][0], 3)
    '0.496'
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Any, ParamSpec, TypeVar

from mpmath import mp, mpf

DPS = 60
"""Working precision of the reference, in significant decimal digits."""

BOUNDARY_TOL = mpf("1e-40")
"""Distance to a rounding boundary below which :func:`classify` does not decide."""

Number = Fraction | mpf
Matrix = list[list[Any]]

_P = ParamSpec("_P")
_R = TypeVar("_R")

NEG_INF = mpf("-inf")


def _at_dps(func: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run ``func`` at :data:`DPS` digits without changing the global precision."""

    @functools.wraps(func)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with mp.workdps(DPS):
            return func(*args, **kwargs)

    return wrapper


# --------------------------------------------------------------------------- conversions


def to_mpf(value: Number | int) -> mpf:
    """Convert a Fraction, int or mpf to an mpf at the current precision.

    Args:
        value: The number to convert; a Fraction is divided out in mpmath.

    Returns:
        The value as an mpf.
    """
    if isinstance(value, Fraction):
        return mpf(value.numerator) / value.denominator
    return mpf(value)


def _frac_matrix(text: str) -> list[list[Fraction]]:
    """Parse a whitespace-separated matrix into Fractions (rows are lines)."""
    return [[Fraction(tok) for tok in line.split()] for line in text.strip().splitlines()]


def _zeros(rows: int, cols: int) -> list[list[Fraction]]:
    return [[Fraction(0)] * cols for _ in range(rows)]


def _identity(n: int) -> list[list[Fraction]]:
    return [[Fraction(int(i == j)) for j in range(n)] for i in range(n)]


# --------------------------------------------------------------------------- matrix helpers


def _matmul(a: Matrix, b: Matrix) -> Matrix:
    """``a @ b`` for list matrices; shapes (m, k) x (k, n) -> (m, n)."""
    if len(a[0]) != len(b):
        raise ValueError(f"matmul shapes do not fit: {len(a)}x{len(a[0])} @ {len(b)}x{len(b[0])}")
    return [[sum(row[t] * b[t][j] for t in range(len(b))) for j in range(len(b[0]))] for row in a]


def _transpose(a: Matrix) -> Matrix:
    return [list(col) for col in zip(*a, strict=True)]


def _add(a: Matrix, b: Matrix) -> Matrix:
    return [[x + y for x, y in zip(ra, rb, strict=True)] for ra, rb in zip(a, b, strict=True)]


def _add_bias(a: Matrix, bias: Sequence[Any]) -> Matrix:
    return [[x + y for x, y in zip(row, bias, strict=True)] for row in a]


def _to_mpf_matrix(a: Matrix) -> list[list[mpf]]:
    return [[to_mpf(x) for x in row] for row in a]


# --------------------------------------------------------------------------- steps


@_at_dps
def softmax_row(row: Sequence[mpf]) -> list[mpf]:
    """Softmax of one row; ``-inf`` entries get weight exactly 0.

    Args:
        row: Scores, possibly containing ``-inf``.

    Returns:
        The probabilities, summing to 1 (to working precision).
    """
    finite = [x for x in row if x != NEG_INF]
    top = max(finite)
    exps = [mpf(0) if x == NEG_INF else mp.exp(x - top) for x in row]
    total = sum(exps)
    return [e / total for e in exps]


@_at_dps
def layer_norm(
    rows: Matrix, gamma: Sequence[Fraction], beta: Sequence[Fraction], eps: Fraction
) -> dict[str, list[list[mpf]]]:
    """LayerNorm of each row with its worked pieces (biased variance).

    ``std`` is the divisor ``sqrt(var + eps)``.

    Args:
        rows: (seq, d) input.
        gamma: (d,) scale.
        beta: (d,) shift.
        eps: Added to the variance before the square root.

    Returns:
        ``{"mean": (seq,1), "centered": (seq,d), "var": (seq,1), "std": (seq,1),
        "out": (seq,d)}``.
    """
    means, centered, variances, stds, out = [], [], [], [], []
    for row in rows:
        vals = [to_mpf(x) for x in row]
        n = len(vals)
        mu = sum(vals) / n
        cen = [v - mu for v in vals]
        var = sum(c * c for c in cen) / n
        std = mp.sqrt(var + to_mpf(eps))
        means.append([mu])
        centered.append(cen)
        variances.append([var])
        stds.append([std])
        out.append(
            [to_mpf(g) * c / std + to_mpf(b) for c, g, b in zip(cen, gamma, beta, strict=True)]
        )
    return {"mean": means, "centered": centered, "var": variances, "std": stds, "out": out}


@_at_dps
def forward(weights: dict[str, Any]) -> dict[str, list[list[mpf]]]:
    """Run a post-norm decoder and return every named intermediate.

    Keys follow the canonical step names (``embed``, ``pos``, ``x``,
    ``l0.h0.q`` ... ``l0.h0.z``, ``l0.concat`` ... ``l0.ln2``, ``final``,
    ``last``, ``logits``, ``probs``, ``next_token``, plus ``tokens``,
    ``d_head`` and ``l0.hH.sqrt_dk``). Every value is a list of rows of mpf;
    scalars are 1x1 and per-row statistics (``.mean``, ``.var``, ``.std``) are
    seq x 1. Masked scores are ``-inf`` and masked pattern entries are exactly
    0. ``next_token`` is ``[[index]]`` of the largest logit.

    Args:
        weights: A dict shaped like :func:`i_love_ai_weights` returns:
            ``token_ids``, ``embed`` (vocab x d), ``pos`` (>= seq x d, or
            absent), ``d_head``, ``mask`` ("causal" | "none"), ``eps``,
            ``unembed`` (d x vocab) and ``layers``: a list of dicts with
            ``heads`` (each ``W_Q``, ``W_K``, ``W_V``, d x d_head), ``W_O``,
            ``W1``, ``b1``, ``W2``, ``b2``, ``ln1_gamma``, ``ln1_beta``,
            ``ln2_gamma``, ``ln2_beta``. Matrices are lists of rows of
            Fractions; biases and LayerNorm parameters are flat lists.

    Returns:
        Step name -> matrix of mpf.
    """
    ids: list[int] = list(weights["token_ids"])
    seq = len(ids)
    d_head: int = weights["d_head"]
    causal = weights.get("mask", "causal") == "causal"
    eps = Fraction(weights.get("eps", 0))

    out: dict[str, list[list[mpf]]] = {"tokens": [[mpf(i) for i in ids]], "d_head": [[mpf(d_head)]]}
    embed = [list(weights["embed"][i]) for i in ids]
    d_model = len(embed[0])
    pos = [list(r) for r in weights["pos"][:seq]] if weights.get("pos") else _zeros(seq, d_model)
    x_exact = _add(embed, pos)
    out["embed"] = _to_mpf_matrix(embed)
    out["pos"] = _to_mpf_matrix(pos)
    out["x"] = _to_mpf_matrix(x_exact)

    resid: Matrix = x_exact
    for li, layer in enumerate(weights["layers"]):
        p = f"l{li}."
        z_heads: list[list[list[mpf]]] = []
        for hi, head in enumerate(layer["heads"]):
            h = f"{p}h{hi}."
            q = _matmul(resid, head["W_Q"])
            k = _matmul(resid, head["W_K"])
            v = _matmul(resid, head["W_V"])
            scores = _matmul(q, _transpose(k))
            root = mp.sqrt(d_head)
            scaled = [[to_mpf(s) / root for s in row] for row in scores]
            masked = [
                [NEG_INF if causal and j > i else s for j, s in enumerate(row)]
                for i, row in enumerate(scaled)
            ]
            pattern = [softmax_row(row) for row in masked]
            z = _matmul(pattern, _to_mpf_matrix(v))
            for name, value in (("q", q), ("k", k), ("v", v), ("scores", scores)):
                out[h + name] = _to_mpf_matrix(value)
            out[h + "sqrt_dk"] = [[root]]
            out[h + "scaled"] = scaled
            out[h + "masked"] = masked
            out[h + "pattern"] = pattern
            out[h + "z"] = z
            z_heads.append(z)
        concat = [[x for z in z_heads for x in z[i]] for i in range(seq)]
        attn_out = _matmul(concat, _to_mpf_matrix(layer["W_O"]))
        resid_mid = _add(_to_mpf_matrix(resid), attn_out)
        ln1 = layer_norm(resid_mid, layer["ln1_gamma"], layer["ln1_beta"], eps)
        ffn_pre = _add_bias(
            _matmul(ln1["out"], _to_mpf_matrix(layer["W1"])), [to_mpf(b) for b in layer["b1"]]
        )
        ffn_act = [[max(mpf(0), x) for x in row] for row in ffn_pre]
        ffn_out = _add_bias(
            _matmul(ffn_act, _to_mpf_matrix(layer["W2"])), [to_mpf(b) for b in layer["b2"]]
        )
        resid_post = _add(ln1["out"], ffn_out)
        ln2 = layer_norm(resid_post, layer["ln2_gamma"], layer["ln2_beta"], eps)
        out[p + "concat"] = concat
        out[p + "attn_out"] = attn_out
        out[p + "resid_mid"] = resid_mid
        for name, stage in (("ln1", ln1), ("ln2", ln2)):
            for piece in ("mean", "centered", "var", "std"):
                out[f"{p}{name}.{piece}"] = stage[piece]
            out[p + name] = stage["out"]
        out[p + "ffn_pre"] = ffn_pre
        out[p + "ffn_act"] = ffn_act
        out[p + "ffn_out"] = ffn_out
        out[p + "resid_post"] = resid_post
        resid = ln2["out"]

    out["final"] = [list(r) for r in resid]
    out["last"] = [list(resid[-1])]
    out["logits"] = _matmul(out["last"], _to_mpf_matrix(weights["unembed"]))
    out["probs"] = [softmax_row(out["logits"][0])]
    logits = out["logits"][0]
    out["next_token"] = [[mpf(max(range(len(logits)), key=lambda j: logits[j]))]]
    return out


# --------------------------------------------------------------------------- the article's model


def i_love_ai_weights() -> dict[str, Any]:
    """The "I love AI" -> "too" model, typed in by hand from the article.

    Only rows 0..2 of the embedding table are printed as text; rows 3..6 are
    zeros here (the input uses tokens 0, 1, 2 only, so they never matter).

    Returns:
        A weights dict for :func:`forward`.
    """
    d = 6

    def select(rows: tuple[int, int]) -> list[list[Fraction]]:
        """A d x 2 matrix picking input features ``rows[0]`` and ``rows[1]``."""
        m = _zeros(d, 2)
        m[rows[0]][0] = Fraction(1)
        m[rows[1]][1] = Fraction(1)
        return m

    embed = _frac_matrix("""
        1 0 1 0 0 0
        0 1 1 0 0 0
        1 1 0 1 0 0
    """) + _zeros(4, d)
    pos = [[Fraction(k, 10)] * d for k in range(3)]
    heads = [
        {"W_Q": select((0, 1)), "W_K": select((0, 2)), "W_V": select((1, 3))},
        {"W_Q": select((2, 3)), "W_K": select((1, 3)), "W_V": select((0, 2))},
        {"W_Q": select((4, 5)), "W_K": select((3, 4)), "W_V": select((2, 5))},
    ]
    unembed = _frac_matrix("""
        1 0 0 1 0 0 1
        0 1 0 1 0 0 0
        0 0 1 0 0 1 0
        0 0 0 0 1 0 1
        0 0 0 0 1 0 0
        0 0 0 0 0 1 0
    """)
    ones = [Fraction(1)] * d
    zeros = [Fraction(0)] * d
    layer = {
        "heads": heads,
        "W_O": _identity(d),
        "W1": _identity(d),
        "b1": zeros,
        "W2": _identity(d),
        "b2": zeros,
        "ln1_gamma": ones,
        "ln1_beta": zeros,
        "ln2_gamma": ones,
        "ln2_beta": zeros,
    }
    return {
        "vocab": ["I", "love", "AI", "and", "data", "math", "too"],
        "token_ids": [0, 1, 2],
        "embed": embed,
        "pos": pos,
        "d_head": 2,
        "mask": "causal",
        "eps": Fraction(0),
        "layers": [layer],
        "unembed": unembed,
    }


# --------------------------------------------------------------------------- rounding and verdicts


def to_fraction(x: Number) -> Fraction:
    """The exact rational value of a Fraction or of a finite mpf (a binary float).

    Args:
        x: The number.

    Returns:
        The same value as a Fraction.
    """
    if isinstance(x, Fraction):
        return x
    man, exp = x.man_exp  # the magnitude only: man_exp drops the sign
    magnitude = Fraction(man) * Fraction(2) ** exp
    return -magnitude if x < 0 else magnitude


def _round_fraction_half_up(x: Fraction, decimals: int) -> Fraction:
    """Round half away from zero (Python's ``decimal.ROUND_HALF_UP``), exactly."""
    scale = Fraction(10) ** decimals
    n = int(abs(x) * scale + Fraction(1, 2))  # int() floors a non-negative value
    return Fraction(n if x >= 0 else -n) / scale


def round_half_up(x: Number, decimals: int) -> str:
    """Round half away from zero and format with exactly ``decimals`` places.

    The rounding is exact: a Fraction as the rational it is, an mpf as the
    binary number it is (use :func:`classify` to be told when an mpf lies so
    close to a boundary that its last digits matter).

    Args:
        x: The value.
        decimals: Number of decimal places (>= 0).

    Returns:
        The rounded value as a string, e.g. ``"0.050"``; never ``"-0.000"``.

    Example:
        >>> round_half_up(Fraction("-0.2405"), 3)
        '-0.241'
    """
    if decimals < 0:
        raise ValueError(f"decimals must be >= 0, got {decimals}")
    r = _round_fraction_half_up(to_fraction(x), decimals)
    text = f"{Decimal(r.numerator) / Decimal(r.denominator):.{decimals}f}"
    return text[1:] if r == 0 and text.startswith("-") else text


def _near(x: Number, y: Fraction) -> bool:
    """Whether an mpf ``x`` is within :data:`BOUNDARY_TOL` of ``y`` (never for a Fraction)."""
    if isinstance(x, Fraction):
        return False
    with mp.workdps(DPS):
        return abs(x - to_mpf(y)) < BOUNDARY_TOL


def classify(printed: str, x: Number, decimals: int | None = None) -> str:
    """Classify a printed number against its exact value, by the classes ``symtf check --help`` defines.

    With ``ulp`` the unit of the last printed digit (``0.001`` for ``"0.050"``;
    ``10**-decimals`` for a printed integer when ``decimals`` is given):

    - ``"exact"``: ``printed`` equals ``x`` (for an mpf: within BOUNDARY_TOL);
    - ``"rounded"``: ``printed`` is the half-up rounding of ``x``;
    - ``"slip"``: ``printed`` is one ulp away from that rounding;
    - ``"wrong"``: further away;
    - ``"boundary"``: an mpf ``x`` within BOUNDARY_TOL of a rounding or slip
      boundary, where this oracle declines to decide.

    ``"-inf"`` (or ``"−∞"``) printed for ``x = -inf`` is ``"exact"``; a printed
    fraction such as ``"5/6"`` is ``"exact"`` or ``"wrong"``.

    Args:
        printed: The number as the article prints it.
        x: The exact value (Fraction) or a DPS-digit approximation (mpf).
        decimals: Precision for a printed integer, e.g. 3 for ``"1"`` among
            three-decimal numbers; ignored when ``printed`` has a decimal point.

    Returns:
        One of ``"exact"``, ``"rounded"``, ``"slip"``, ``"wrong"``, ``"boundary"``.

    Example:
        >>> classify("1", Fraction("0.9994"), decimals=3)
        'slip'
    """
    text = printed.strip().replace("−", "-").replace("\\infty", "inf").replace("∞", "inf")
    if text in ("-inf", "inf", "+inf"):
        target = mpf("-inf") if text == "-inf" else mpf("inf")
        return "exact" if not isinstance(x, Fraction) and x == target else "wrong"
    if not isinstance(x, Fraction) and not mp.isfinite(x):
        return "wrong"
    if "/" in text:  # an exact fraction such as "5/6" is either exact or wrong
        q = Fraction(text)
        return "exact" if (x == q if isinstance(x, Fraction) else _near(x, q)) else "wrong"
    p_dec = Decimal(text)
    p = Fraction(p_dec)
    places = -p_dec.as_tuple().exponent
    if places == 0 and "." not in text and decimals is not None:
        places = decimals
    ulp = Fraction(10) ** -places
    if x == p if isinstance(x, Fraction) else _near(x, p):
        return "exact"
    # Edges of "rounds to p" and of "rounds to p +- 1 ulp".
    if any(_near(x, p + k * ulp / 2) for k in (-3, -1, 1, 3)):
        return "boundary"
    off = abs(_round_fraction_half_up(to_fraction(x), places) - p)
    if off == 0:
        return "rounded"
    return "slip" if off == ulp else "wrong"
