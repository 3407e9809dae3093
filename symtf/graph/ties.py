"""Exact ties: certified ordering of exact values, and proved equality.

It imports only :mod:`symtf.ops`, :mod:`symtf.backends.certify` and
:mod:`symtf.errors`; decoding (:mod:`symtf.graph.generate`) and the
encoder–decoder's teacher-forcing comparison (:mod:`symtf.graph.seq2seq`) share it.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import sympy

from symtf import ops
from symtf.backends.certify import PRECISIONS, ball, compare_ball
from symtf.backends.zero import exact_zero
from symtf.errors import Undecided


def rank(xp: Any, values: Sequence[Any]) -> list[list[int]]:
    """Indices grouped by exact ties, largest first.

    Raises:
        Undecided: When two values cannot be ordered.
    """
    groups = ops.tie_groups(len(values), lambda j, k: compare(xp, values[j], values[k]))
    assert groups is not None  # compare raises Undecided rather than returning None
    return groups


def compare(xp: Any, a: Any, b: Any) -> int:
    """Certified sign of ``a - b``.

    In exact arithmetic, two values whose balls cannot be separated may still
    be provably equal (the same one-level definitions under different node
    names, e.g. two vocabulary columns with identical weights): that is an
    exact tie, decided by :func:`equal`.

    Raises:
        Undecided: When neither a sign nor an equality can be shown.
    """
    try:
        return int(xp.sign(a - b))
    except Undecided:
        if not _exact(xp) or xp.user_symbols(a - b):
            raise
        if equal(xp, a, b) is True:
            return 0
        raise


#: Pairs of expressions already compared by :func:`same_structure` -> whether they matched.
_Memo = dict[tuple[sympy.Basic, sympy.Basic], bool]


def _exact(xp: Any) -> bool:
    return getattr(xp, "name", "") == "exact"


def equal(xp: Any, a: sympy.Expr, b: sympy.Expr, memo: _Memo | None = None) -> bool | None:
    """Whether two exact values (over ``xp``'s node symbols) are the same number.

    Returns ``True`` when proved equal, ``False`` when certified different,
    ``None`` when neither could be shown.
    """
    memo = {} if memo is None else memo
    if same_structure(a, b, xp.defs, memo):
        return True
    diff = a - b
    free = xp.user_symbols(diff)
    defs, expr = xp.defs, diff
    if free:
        # Distinct functions of the symbols differ at some rational point; try a few.
        for k, point in enumerate(((1, 3), (2, 7), (-3, 5))):
            subs = {
                s: sympy.Rational(point[0] + i, point[1] + k)
                for i, s in enumerate(sorted(free, key=str))
            }
            sdefs = {n: v.xreplace(subs) for n, v in defs.items()}
            for prec in PRECISIONS[:2]:
                try:
                    c = compare_ball(ball(expr.xreplace(subs), prec, defs=sdefs), Fraction(0))
                except (Undecided, TypeError, ZeroDivisionError):
                    c = None
                if c:
                    return False
    else:
        for prec in PRECISIONS:
            try:
                c = compare_ball(xp.ball(expr, prec), Fraction(0))
            except (Undecided, TypeError):
                break
            if c:
                return False
    if exact_zero(diff, xp):
        return True
    return None


#: How deep :func:`same_structure` unfolds two values before leaving it to their values.
MAX_STRUCTURE_DEPTH = 200


def same_structure(a: sympy.Basic, b: sympy.Basic, defs: Any, memo: _Memo, depth: int = 0) -> bool:
    """Whether two expressions are the same tree once node symbols are unfolded.

    Sums and products are compared as multisets of terms (their argument order
    depends on node names). Memoised on pairs, so shared sub-DAGs cost once. A quick
    proof only: past :data:`MAX_STRUCTURE_DEPTH` levels (a chain of 2,000 steps nests its
    nodes 2,000 deep) it answers ``False`` (not shown), and the caller compares values.
    """
    if a == b:
        return True
    if depth > MAX_STRUCTURE_DEPTH:
        return False
    key = (a, b)
    hit = memo.get(key)
    if hit is not None:
        return hit
    memo[key] = False  # no cycles in a trace, but never loop
    if a.is_Symbol and a in defs:
        r = same_structure(defs[a], b, defs, memo, depth + 1)
    elif b.is_Symbol and b in defs:
        r = same_structure(a, defs[b], defs, memo, depth + 1)
    elif a.func != b.func or len(a.args) != len(b.args) or not a.args:
        r = False
    elif a.is_Add or a.is_Mul:
        rest = list(b.args)
        r = True
        for x in a.args:
            for k, y in enumerate(rest):
                if same_structure(x, y, defs, memo, depth + 1):
                    del rest[k]
                    break
            else:
                r = False
                break
    else:
        r = all(
            same_structure(x, y, defs, memo, depth + 1) for x, y in zip(a.args, b.args, strict=True)
        )
    memo[key] = r
    return r
