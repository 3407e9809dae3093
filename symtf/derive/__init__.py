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
    """``proved for all n`` or ``checked for n ≤ k (…)``, from the proofs the derivation carries.

    Nothing is run here, so listing stays quick: a statement counts as proved for all n
    when the derivation carries a proof of it for every size, or when it involves no
    size (its exact check is its proof). :func:`run` checks those proofs and checks;
    the other statements are only checked at the derivation's default sizes.
    """
    d = get(name)
    if d.sizes is None:
        return "proved (no size involved)"
    proofs = {p.key for p in d.proofs()} if d.proofs is not None else set()
    statements = d.build(d.sizes[0])
    total = len(statements)
    done = sum(1 for s in statements if s.key in proofs or not s.sized)
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
