"""symtf's errors: one small hierarchy rooted at :class:`SymtfError`.

Every message says where (file and key), what was expected and what was found.
"""


class SymtfError(Exception):
    """Root of symtf's errors."""


class SpecError(SymtfError, ValueError):
    """A derivation file is malformed."""


class ExpressionError(SymtfError, ValueError):
    """An expression could not be parsed or evaluated."""


class ShapeError(SymtfError, ValueError):
    """Two operands have shapes that do not fit together."""


class ModelError(SymtfError, ArithmeticError):
    """A well-formed model cannot be evaluated (e.g. a LayerNorm row of variance 0 with eps 0)."""


class LimitError(SymtfError):
    """Work exceeded a configured time or size budget."""


class Undecided(SymtfError):
    """A certified computation could not decide a sign or a comparison (yet)."""


class BudgetExpired(BaseException):
    """The time budget (``--timeout``) ran out: raised by the timer, turned into a LimitError.

    Not a :class:`SymtfError` and not even an ``Exception``, so that no ``except``
    meant for a failed computation (which falls back to another method and goes on)
    can swallow it and keep the work going past the budget.
    """


class Unsupported(Undecided):
    """A backend cannot run an op at all; evaluation escalates to the next certified backend.

    Attributes:
        op: The op's name.
        backend: The backend's name.
        reason: Why, for people (``no float32 error model for sort``).
    """

    def __init__(self, op: str, backend: str, reason: str) -> None:
        super().__init__(f"{op} cannot run in the {backend} backend: {reason}")
        self.op = op
        self.backend = backend
        self.reason = reason
