"""The trace: every named intermediate of one forward pass, in order.

Like micrograd's ``Value`` remembering ``_prev`` and ``_op``, each :class:`Step`
remembers the steps it was computed from, the registry op that computed it and
that op's parameters, and the formula it shows, so that checking, LaTeX and
teaching all read the same record (and learn what ran from ``op``, never by
reading the formula).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from symtf.shown import Shown


@dataclass(frozen=True)
class Step:
    """One named intermediate.

    Attributes:
        name: Canonical name (``l0.h0.pattern``).
        value: A backend matrix, or a tuple of token ids for ``next_token``.
        inputs: Names of the steps it was computed from.
        formula: The general formula it applies, in LaTeX.
        title: A few words for people (``attention weights, head 1``).
        op: The name of the registry op that computed it (:mod:`symtf.ops`;
            ``step`` for a user step's expression, ``decide`` for a decoding decision).
        params: That op's parameters (a weight matrix, ``unbiased``, ``eps`` …).
        labels: The symbols the formula is written with (``w`` → ``W_Q``).
    """

    name: str
    value: Any
    inputs: tuple[str, ...] = ()
    formula: str = ""
    title: str = ""
    op: str = ""
    params: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    labels: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    def __repr__(self) -> str:
        shape = getattr(self.value, "shape", None)
        dims = f" {shape[0]}×{shape[1]}" if isinstance(shape, tuple) and len(shape) == 2 else ""
        came = f"; from {', '.join(self.inputs)}" if self.inputs else ""
        return f"<Step {self.name}{dims}: {self.title or 'no title'}{came}>"


class Trace(Mapping[str, Step]):
    """An ordered, read-only mapping from step names to steps.

    Args:
        steps: The steps in the order they were computed.
        backend: The number system the values live in.
    """

    def __init__(
        self,
        steps: list[Step],
        backend: Any,
        *,
        nodes: Mapping[str, Any] | None = None,
        shapes: Mapping[str, tuple[int, ...]] | None = None,
    ) -> None:
        self._steps = {s.name: s for s in steps}
        self.backend = backend
        #: Step name -> the graph node that computed it (what a later evaluation compares).
        self.nodes: Mapping[str, Any] = nodes or {}
        #: Step name -> its true shape (a 0-D step is recorded as 1×1, a 1-D one as a row).
        self.true_shapes: Mapping[str, tuple[int, ...]] = shapes or {}
        self._shown: Any = None

    @property
    def shown(self) -> Shown:
        """How each value is shown: its certified decimal, closed forms, floats for pictures.

        Renderers read every decimal and enclosure they show from here; each is computed
        when first asked for, from this trace's backend, and kept.
        """
        if self._shown is None:
            from symtf.shown import Shown

            self._shown = Shown(self)
        shown: Shown = self._shown
        return shown

    def __getitem__(self, name: str) -> Step:
        return self._steps[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._steps)

    def __len__(self) -> int:
        return len(self._steps)

    def value(self, name: str) -> Any:
        """The value of a step."""
        return self._steps[name].value

    def shape(self, name: str) -> tuple[int, ...] | None:
        """The shape of a matrix step (all N axes of a 3-D/4-D step), or ``None`` for a non-matrix step."""
        v = self._steps[name].value
        if isinstance(v, tuple) or v is None or self._steps[name].op == "teacher_forcing":
            return None  # token ids, or a claim's outcome (teacher forcing holds): no matrix
        nd = getattr(v, "ndim", None)
        if isinstance(nd, int) and nd > 2 and not hasattr(v, "__array__"):
            nd_shape: tuple[int, ...] = v.shape  # an N-D step (symtf.tensor.Tensor)
            return nd_shape
        shape: tuple[int, ...] | None = self.backend.shape(v)
        return shape

    def true_shape(self, name: str) -> tuple[int, ...] | None:
        """The step's shape as written: ``()`` for a scalar, ``(n,)`` for a vector."""
        return self.true_shapes.get(name, self.shape(name))

    def __repr__(self) -> str:
        from symtf.summary import trace_summary

        return trace_summary(self)


class TraceBuilder:
    """Collects steps while a pipeline runs, then freezes them into a :class:`Trace`."""

    def __init__(self, backend: Any, override: Callable[[str, Any], Any] | None = None) -> None:
        """Args:
        backend: The number system the values live in.
        override: ``override(name, value)`` may return a replacement value for a step
            (e.g. the article's printed numbers, to replay its own chain); downstream
            steps are then computed from the replacement.
        """
        self.backend = backend
        self.override = override
        self._steps: list[Step] = []
        self._values: dict[str, Any] = {}
        self.nodes: dict[str, Any] = {}
        self.shapes: dict[str, tuple[int, ...]] = {}

    def add(
        self,
        name: str,
        value: Any,
        inputs: tuple[str, ...] = (),
        formula: str = "",
        title: str = "",
        *,
        op: str = "",
        params: Mapping[str, Any] | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> Any:
        """Record a step and return its value (so pipelines read as assignments)."""
        if name in self._values:
            raise ValueError(f"step {name!r} recorded twice")
        if self.override is not None:
            value = self.override(name, value)
        compact = getattr(self.backend, "compact", None)
        if compact is not None:
            value = compact(name, value)
        self._steps.append(
            Step(name, value, inputs, formula, title, op, params or {}, labels or {})
        )
        self._values[name] = value
        return value

    def record(self, step: Step) -> Any:
        """Record a step as it is (taken unchanged from an earlier evaluation) and return its value."""
        if step.name in self._values:
            raise ValueError(f"step {step.name!r} recorded twice")
        self._steps.append(step)
        self._values[step.name] = step.value
        return step.value

    def __contains__(self, name: object) -> bool:
        """Whether a step of that name was recorded."""
        return name in self._values

    def value(self, name: str) -> Any:
        """The value of a step recorded so far."""
        return self._values[name]

    def freeze(self) -> Trace:
        """The finished, read-only trace."""
        return Trace(list(self._steps), self.backend, nodes=self.nodes, shapes=self.shapes)
