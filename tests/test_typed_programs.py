"""Random op chains over the whole registry, checked in-process: never an internal error.

:func:`fuzzing.typed_program` builds a derivation whose steps the registry's own shape
rules accept (every op a step can write, with typed parameters), on small decimals with
zeros and ties, and prints random claims on some steps. Unlike the grammar fuzzer's
programs, most of them evaluate, so they reach the verdict rule, the diagnosis and the
accepted-formats path. A program may still be a user error (``ln 0``, a gradient of a
step that does not depend on the tensor): that is a :class:`~symtf.errors.SymtfError`
(exit 2). Anything else is a bug.
"""

from __future__ import annotations

import random

import pytest
from fuzzing import typed_program

import symtf
from symtf.errors import SymtfError

#: Seeds whose programs once reached an internal error: a printed −∞ against a finite
#: rounded-inputs enclosure (2), ln and √ of a negative number read as complex (34, 102),
#: SymPy's √ of a product and tanh of a sum recursing without end (60, 91, 99), and a
#: float32 enclosure with an infinite end (228, 384).
REGRESSIONS = [2, 34, 60, 91, 99, 102, 228, 384]

#: Fresh seeds run in every suite (the hypothesis fuzzer in test_fuzz.py runs more, forked).
FRESH = list(range(1000, 1030))


def _outcome(seed: int) -> str:
    text = typed_program(random.Random(seed))
    try:
        report = symtf.check(symtf.loads(text, f"typed-{seed}.toml"))
    except SymtfError:
        return "user error"
    except RecursionError:  # the CLI's "input nested too deeply": wrong for these small files
        pytest.fail(f"seed {seed}: RecursionError on a small program\n{text}")
    except Exception as e:  # any other exception is the bug under test
        pytest.fail(f"seed {seed}: {type(e).__name__}: {e}\n{text}")
    assert report.derivations, text
    return "checked"


@pytest.mark.parametrize("seed", REGRESSIONS)
def test_programs_that_once_failed_end_in_a_report_or_a_user_error(seed: int) -> None:
    _outcome(seed)


def test_fresh_programs_mostly_reach_verdicts() -> None:
    outcomes = [_outcome(s) for s in FRESH]
    # the generator is typed by the registry's shape rules: most programs evaluate
    # (on seeds 0-399, 227 of 400 did; the rest are ln 0, 0 as a divisor and the like)
    assert outcomes.count("checked") >= len(FRESH) // 2, outcomes


@pytest.mark.parametrize(
    "expr", ["log(K)", "sqrt(K)", "log2(K)", "log1p(K - 3)", "K ** 0.5", "bce(K, K)"]
)
def test_a_negative_argument_of_a_real_function_is_an_error_naming_the_step(expr: str) -> None:
    # K[0] = −1/4 < 0: ln, √, log₂ and a fractional power of it are not real numbers
    text = (
        'title = "t"\n[tensors]\nK = { shape = [2], values = "-0.25 2" }\n'
        f'[steps]\ns = "{expr}"\n'
    )
    with pytest.raises(
        SymtfError, match=r"steps\.s: .* is negative, so the value is not a real number"
    ):
        symtf.check(symtf.loads(text, "neg.toml"))
