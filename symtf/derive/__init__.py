"""Formula derivations behind the worked examples, proved and checked.

Each derivation is a sequence of steps (statement, justification, SymPy sides)
verified two ways: symbolically (the difference cancels to 0) and numerically
(mpmath at 40 digits, derivatives by central finite differences). The formulas
differentiate symtf's own :mod:`symtf.ops` where they can.

Example:
    >>> from symtf import derive
    >>> result = derive.run("softmax-jacobian", n=2)
    >>> result.ok
    True
"""

from __future__ import annotations

from typing import Any

from symtf.derive.core import (
    Check,
    Derivation,
    DeriveError,
    Identity,
    Result,
    StepResult,
    verify,
)


def _registry() -> dict[str, Derivation]:
    from symtf.derive import attention, gelu, norms, positional, scaling, softmax

    found = [
        softmax.SOFTMAX_JACOBIAN,
        softmax.SOFTMAX_CROSS_ENTROPY,
        scaling.SCALING,
        norms.LAYERNORM_JACOBIAN,
        norms.RMSNORM_JACOBIAN,
        attention.ATTENTION_BACKWARD,
        gelu.GELU,
        positional.SINUSOIDAL_RELATIVE,
        positional.ROPE_RELATIVE,
        attention.CAUSAL_PARALLEL,
    ]
    return {d.name: d for d in found}


def names() -> list[str]:
    """The names of all derivations, in teaching order."""
    return list(_registry())


def get(name: str) -> Derivation:
    """The derivation called ``name``.

    Raises:
        DeriveError: When there is no such derivation (the known names are listed).
    """
    reg = _registry()
    if name not in reg:
        import difflib

        close = difflib.get_close_matches(name, list(reg), n=2, cutoff=0.6)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        raise DeriveError(f"no derivation called {name!r}{hint} (known: {', '.join(reg)})")
    return reg[name]


def run(name: str, n: int | None = None, at: str | None = None) -> Result:
    """Build and verify a derivation.

    Args:
        name: One of :func:`names`.
        n: Size to verify at (vector length, sequence length...); by default the
            derivation's own sizes (usually 2, 3, 4).
        at: ``PATH:STEP[ROW]``: also evaluate the formula exactly at a worked
            example's values (see :mod:`symtf.derive.at`).

    Raises:
        DeriveError: For an unknown name, a size the derivation does not take,
            or a bad worked-example reference.
    """
    d = get(name)
    if n is None:
        sizes: tuple[int | None, ...] = d.sizes if d.sizes is not None else (None,)
    elif d.sizes is None:
        raise DeriveError(f"derivation {name!r} takes no size; leave out --n")
    elif n < d.min_size:
        raise DeriveError(f"derivation {name!r} needs n >= {d.min_size} ({d.size_help}); got {n}")
    elif n > 8:
        raise DeriveError(
            f"derivation {name!r} is verified symbolically; n = {n} is too large (at most 8)"
        )
    else:
        sizes = (n,)
    worked = None
    if at is not None:
        from symtf.derive.at import evaluate

        worked = evaluate(d, at)
    proved = prove(d)
    steps = verify(d, sizes, {r.proof.key: r for r in proved})
    return Result(d.name, d.title, sizes, steps, worked, d.size_help)


def status(name: str) -> str:
    """``proved for all n`` or ``checked for n ≤ k (…)``, found by running the proofs.

    The proofs for every size are checked; a statement that involves no size is
    checked exactly (that is its proof); the rest are only checked at the
    derivation's default sizes when it is run, which this does not do.
    """
    from symtf.derive.core import symbolic_check

    d = get(name)
    proved = {r.proof.key for r in prove(d) if r.ok}
    first = d.sizes[0] if d.sizes else None
    total = done = 0
    for ident in d.build(first):
        total += 1
        if ident.key in proved:
            done += 1
        elif not ident.sized or d.sizes is None:
            check = ident.symbolic() if ident.symbolic is not None else symbolic_check(ident, None)
            done += check.ok
    if d.sizes is None:
        return "proved (no size involved)" if done == total else "not proved"
    if done == total:
        return "proved for all n"
    return f"checked for n ≤ {max(d.sizes)} ({done} of {total} statements proved for all n)"


def prove(d: Derivation) -> tuple[Any, ...]:
    """Check the derivation's proofs for every size (none when it has none).

    Returns:
        One :class:`symtf.derive.proof.ProofResult` per proof, in order.
    """
    if d.proofs is None:
        return ()
    from symtf.derive.proof import check_all

    return check_all(d.proofs())


__all__ = [
    "Check",
    "Derivation",
    "DeriveError",
    "Identity",
    "Result",
    "StepResult",
    "get",
    "names",
    "prove",
    "run",
    "status",
]
