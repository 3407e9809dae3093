"""What the translation knows while it walks the code: names, imports, and what it made.

:class:`Scope` holds the state a walk through the code builds (each variable's step,
its Python constants, what is not translated and why, the notebook's functions and
modules), emits the steps, and reads dotted names through the imports. The plain values
the code writes are read by the layers above it: Python numbers computed from literals
(:mod:`~symtf.draft.translate.constants`) and array literals with their entries as
written (:mod:`~symtf.draft.translate.literals`: ``0.1`` stays the text ``0.1``, never a
binary float). This module also holds the records the whole translation shares.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from symtf.draft.names import ident
from symtf.draft.templates import Call, Expr, Num, Ref, Var, render
from symtf.draft.translate.draws import NumpyStream
from symtf.draft.translate.events import SIZE, Given, Note, Step
from symtf.draft.translate.sources import Block
from symtf.draft.translate.table import FAMILIES, Translation
from symtf.graph.evaluate import shape_text

#: Longest comprehension unrolled, and deepest inlining of notebook functions.
MAX_UNROLL = 64
MAX_INLINE = 8
#: Longest ``for`` loop unrolled (``for i in range(num_pairs)`` over 128 pairs of a 256-wide
#: embedding), and most iterations of nested loops together (64 × 64, as comprehensions).
MAX_LOOP = 256
MAX_ITERATIONS = 4096


#: numpy's and PyTorch's default print precision.
NUMPY_PRECISION = 8
TORCH_PRECISION = 4


class Untranslated(Exception):
    """A construct with no translation (the message says which).

    ``stands_for``: a name the value's print stands for from here on (the mask a dropout
    drew, shown by dropping out a tensor of ones), else ``None``.
    """

    def __init__(self, message: str, stands_for: str | None = None) -> None:
        super().__init__(message)
        self.stands_for = stands_for


@dataclass(frozen=True)
class Unknown:
    """A value the translation could not make (an argument, or one value of a tuple a
    function returns): what does not depend on it is still translated; what does says why."""

    reason: str


@dataclass
class NnModule:
    """An ``nn`` module the code made: its kind, settings and weights set by hand."""

    kind: str
    settings: dict[str, Any] = field(default_factory=dict)
    weight: Expr | None = None
    bias: Expr | None = None
    #: A class the code declares without bodies, read by its name as this kind.
    stub: bool = False


@dataclass
class NotebookFunction:
    """A function the notebook defines: translated where it is called (inlined)."""

    params: list[str]
    body: list[ast.stmt]
    #: Default values of parameters, as written (``def layer_norm(x, eps=1e-5)``).
    defaults: dict[str, ast.expr] = field(default_factory=dict)


@dataclass(frozen=True)
class ModuleClass:
    """What an instance of a module class the notebook defines computes: one function, and
    which of its parameters are the inputs of ``forward`` (the others are ``__init__``'s
    settings); see :mod:`symtf.draft.translate.classes`."""

    function: NotebookFunction
    inputs: tuple[str, ...]


@dataclass
class Buffer:
    """An array filled entry by entry: ``np.zeros((n, m))`` then ``a[i, j] = …`` in a loop.

    Attributes:
        shape: Its shape, from the call that made it.
        base: ``zeros``, ``ones`` (what an entry not assigned holds) or ``empty`` (unknown).
        entries: Each assigned index (a prefix of the shape's axes) and its value.
        integer: Made with an integer dtype (an assigned value would be truncated).
    """

    shape: tuple[int, ...]
    base: str | None
    entries: dict[tuple[int, ...], Expr] = field(default_factory=dict)
    integer: bool = False
    #: An array computed before being changed in place: what an entry not assigned holds.
    source: Expr | None = None


@dataclass
class Leaf:
    """A tensor created with ``requires_grad=True``, and what its ``.grad`` holds.

    Attributes:
        versions: The steps the variable has named since it was created: its value, then
            each value an in-place change (``w -= lr * w.grad`` under ``no_grad``) gave it.
            It stays one leaf for autograd, so a gradient stops at any of them.
        terms: ``(y, x)`` of each ``y.backward()`` that reached it since ``.grad`` was last
            reset: ``.grad`` is their sum (PyTorch accumulates).
        base: What ``.grad`` is with no term: ``none`` (never reached), ``zero`` (after
            ``.grad.zero_()``), ``either`` (after ``optimizer.zero_grad()``: None or zeros
            by PyTorch version).
        unknown: Why ``.grad`` cannot be told (until it is reset), or ``""``.
    """

    versions: list[str]
    terms: list[tuple[str, str]] = field(default_factory=list)
    base: str = "none"
    unknown: str = ""

    def reset(self, base: str) -> None:
        """``.grad`` set to None, zeroed, or either."""
        self.terms, self.base, self.unknown = [], base, ""


ARRAY_MAKERS = {
    ("numpy", "array"),
    ("numpy", "asarray"),
    ("jax.numpy", "array"),
    ("jax.numpy", "asarray"),
    ("torch", "tensor"),
    ("torch", "as_tensor"),
    ("torch", "Tensor"),
    ("torch", "FloatTensor"),
    ("tensorflow", "constant"),
    ("tensorflow", "Variable"),
    ("tensorflow", "convert_to_tensor"),
}


@dataclass(frozen=True)
class DecimalText:
    """A decimal literal and its text as written (``0.1``, never the binary float)."""

    text: str
    value: float


def const_of_num(e: Num) -> Any:
    try:
        return int(e.text)
    except ValueError:
        return DecimalText(e.text, float(e.text))


def step_number(text: str) -> str:
    """A decimal as the step language reads it: ``0.`` is ``0.0`` and ``.5`` is ``0.5``."""
    sign = "-" if text.startswith("-") else ""
    body = text.removeprefix("-")
    mantissa, e, exponent = body.partition("e") if "e" in body else body.partition("E")
    if mantissa.endswith("."):
        mantissa += "0"
    if mantissa.startswith("."):
        mantissa = "0" + mantissa
    return sign + mantissa + e + exponent


def num_text(v: Any) -> str:
    """A Python number as a step writes it (a decimal literal as written)."""
    if isinstance(v, DecimalText):
        return step_number(v.text)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    return str(v)


@dataclass(frozen=True)
class Origin:
    """The block a node was parsed from, and that block's text as parsed (by line, in
    UTF-8 bytes: the columns :mod:`ast` gives)."""

    src: str
    block: Block
    lines: tuple[bytes, ...] = ()

    def segment(self, node: ast.AST) -> str:
        """The text of ``node`` (``""`` when it has no place in this block's text).

        As :func:`ast.get_source_segment`, without splitting the whole text again for each
        node (an array literal of thousands of entries reads each entry's text).
        """
        first, last = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        col, end = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if first is None or last is None or col is None or end is None:
            return ""
        if not 1 <= first <= last <= len(self.lines):
            return ""
        if first == last:
            return str(self.lines[first - 1][col:end].decode("utf-8", "replace"))
        parts = [self.lines[first - 1][col:], *self.lines[first : last - 1]]
        parts.append(self.lines[last - 1][:end])
        return b"".join(parts).decode("utf-8", "replace")


#: The attribute every parsed node carries its :class:`Origin` in.
_ORIGIN = "symtf_origin"


def stamp(tree: ast.AST, src: str, block: Block) -> None:
    """Mark every node of a parsed block with where it comes from (:func:`origin_of`)."""
    # lines as the parser counts them: ends of line only (a form feed is no line break)
    ends = [m.end() for m in re.finditer(r"\r\n|\r|\n", src)]
    starts = [0, *ends]
    lines = tuple(src[a:b].encode("utf-8") for a, b in zip(starts, [*ends, len(src)], strict=True))
    origin = Origin(src, block, lines)
    for node in ast.walk(tree):
        setattr(node, _ORIGIN, origin)


def placed_as(new: ast.expr, old: ast.AST) -> ast.expr:
    """``new`` at ``old``'s place and from ``old``'s block (a node rewritten in place)."""
    ast.copy_location(new, old)
    origin = getattr(old, _ORIGIN, None)
    if origin is not None:
        setattr(new, _ORIGIN, origin)
    return new


def origin_of(node: ast.AST) -> Origin | None:
    """Where a node was parsed from; ``None`` for a node the translation made itself."""
    origin = getattr(node, _ORIGIN, None)
    return origin if isinstance(origin, Origin) else None


def is_expr(v: Any) -> bool:
    """Whether a value the translation holds is a translated expression (not a constant)."""
    return isinstance(v, (Var, Num, Call, Ref))


class Scope:
    """The state of a walk through code blocks, the steps it emits and the names it reads.

    Args:
        shape_of: The shape of a translated variable's value so far (``None`` if unknown);
            the translation asks it for ``x.shape``, ``len(x)`` and axis permutations.
    """

    def __init__(self, shape_of: Callable[[str], tuple[int, ...] | None]) -> None:
        self.shape_of = shape_of
        self.aliases: dict[str, str] = {}  # local name → canonical module or module.function
        self.consts: dict[str, Any] = {}  # python numbers (and tuples of them)
        self.names: dict[str, str] = {}  # variable → its current step name
        self.opaque: dict[str, str] = {}  # variable → why its value is unknown
        self.modules: dict[str, NnModule] = {}
        self.functions: dict[str, NotebookFunction] = {}
        #: Module classes the notebook defines, each as the function an instance computes
        #: (:mod:`symtf.draft.translate.classes`), and their instances with the call that
        #: made them (``ln = LayerNorm(emb_dim=6)``).
        self.classes: dict[str, ModuleClass] = {}
        self.instances: dict[str, tuple[ModuleClass, ast.Call]] = {}
        #: Functions of no parameters that return nothing (a script's ``def main():`` or
        #: ``def example():``): their bodies are walked where a statement calls them.
        self.procedures: dict[str, list[ast.stmt]] = {}
        #: Functions written without a body, read by their names (:data:`STUBS`).
        self.stubs: dict[str, Translation] = {}
        #: Module classes declared without bodies, read as the ``torch.nn`` module named so.
        self.module_stubs: set[str] = set()
        self.taken: set[str] = set()
        self.float32 = False
        #: Variables TensorFlow drew at random in float32 (its default dtype) and not
        #: assigned since: numpy prints them, so each printed entry pins its float32 value
        #: (:func:`symtf.backends.format_print.numpy_printed`).
        self.f32_drawn: set[str] = set()
        self.np_precision = NUMPY_PRECISION
        self.torch_precision = TORCH_PRECISION
        self._block: Block | None = None
        self._src = ""
        self._inline = 0
        self._iterations = 1  # iterations of the loops around the statement walked
        self._events: list[Any] = []
        self._cutting = False  # the statement being translated detaches a value
        self._pair = False  # a topk call is being read as its values and indices
        #: Variables with no translated value whose printed value a later print gives.
        self.printed_opaque: set[str] = set()
        #: Each variable's last assigned expression (idioms such as a mask built before use).
        self.defs: dict[str, ast.expr] = {}
        #: Autograd: tensors created with requires_grad=True, by variable (see :class:`Leaf`).
        self.leaves: dict[str, Leaf] = {}
        #: Each step's expression and the given tensors, by step name: what a gradient
        #: flows through (a name that is neither is a print standing for untranslated code).
        self.exprs: dict[str, Expr] = {}
        self.givens: set[str] = set()
        #: Steps a gradient does not flow through: computed under ``torch.no_grad()``, or
        #: from a detached value (``.detach()``, ``.data``, ``.item()``, ``torch.tensor(x)``).
        self.cut: set[str] = set()
        self.no_grad = 0
        #: PyTorch's random state where known: (the seed ``torch.manual_seed`` set, draws
        #: since); ``None`` after anything that may draw or was not translated.
        self.rng: tuple[int, int] | None = None
        #: numpy's legacy global stream where known: the seed ``np.random.seed`` set and
        #: the draws since; ``None`` after anything not translated (it may have drawn).
        self.np_stream: NumpyStream | None = None
        #: Every given the translation wrote, by name, and the certified values of steps
        #: evaluated where the code decides a whole number from them (an argmax).
        self.given_events: dict[str, Given] = {}
        self._decided_values: dict[str, Any] = {}
        #: Strings built from words and formatted entries, by variable: what each shows,
        #: part by part, as a print's arguments (see :mod:`symtf.draft.translate.texts`).
        self.texts: dict[str, list[Any]] = {}
        #: Dropout masks shown (a tensor of ones dropped out and printed), by (seed, draw,
        #: p, shape): the name their print stands for.
        self.dropout_masks: dict[tuple[Any, ...], str] = {}
        #: The prints of the statements inside a ``with`` block, in order (its body is not
        #: a cell's top level, but what it prints is the cell's output all the same).
        self._inner_prints: list[tuple[str, list[Any]]] = []
        #: Variables holding a tuple of tensors (``torch.autograd.grad`` returns one): each
        #: element's expression, or why it has none.
        self.tuples: dict[str, list[Expr | str]] = {}
        #: Optimizers built on a written-out list of tensors: variable → their variables.
        self.optimizers: dict[str, list[str]] = {}
        #: ``grad(y, x)`` steps already written, and sums of them, by what they compute.
        self._grad_steps: dict[tuple[tuple[str, str], ...], str] = {}
        #: The shape of each given and step the translation wrote, from the registry's
        #: shape rules (the search's ``shape_of`` knows a step only once its statement ends).
        self.shapes: dict[str, tuple[int, ...]] = {}
        #: Dicts written with constant keys: variable → key → a translated value or a constant.
        self.dicts: dict[str, dict[Any, Any]] = {}
        #: Arrays filled entry by entry (``a = np.zeros(n)`` then ``a[i] = …``), by variable.
        self.buffers: dict[str, Buffer] = {}
        #: Steps whose translation reads an op loosely (a dtype change read as no change, a
        #: rounding for display dropped), with why: a print that disagrees may be right.
        self.loose: dict[str, str] = {}
        self._loosened: list[str] = []
        #: Names whose values are not translated but whose shapes are (``W = torch.rand(3, 2)``,
        #: ``keys = x @ W``): ``keys.shape[1]`` is known.
        self.opaque_shapes: dict[str, tuple[int, ...]] = {}
        #: While only a shape is wanted: random draws stand for zeros of their shape.
        self._dry = False
        #: Names bound to an expression no step holds yet (a loop's item, ``x_i = inputs[i]``):
        #: its step is written where the name is first read.
        self.lazy: dict[str, tuple[Expr, str, str]] = {}
        #: Array literals written inline (not assigned to a name), by their entries (and,
        #: for a row standing alone, its line): the same literal read again (in an unrolled
        #: loop) is the same given.
        self._anonymous: dict[tuple[Any, ...], str] = {}
        #: Notes already written (a statement in an unrolled loop fails once per iteration).
        self._noted_once: set[tuple[str, str, str]] = set()

    def _emit(self, event: Any) -> None:
        if isinstance(event, Note) and event.reason != SIZE:
            self.np_stream = None  # code not translated may have drawn from numpy's stream
        if isinstance(event, Note):
            key = (event.where, event.source, event.reason)
            if key in self._noted_once:
                return
            self._noted_once.add(key)
        if isinstance(event, Step):
            if self._loosened:
                self.loose[event.name] = "; ".join(dict.fromkeys(self._loosened))
                self._loosened = []
            self.exprs[event.name] = event.expr
            if self.no_grad or self._cutting:
                self.cut.add(event.name)
            shape = self._shape(event.expr)
            if shape is not None:
                self.shapes[event.name] = shape
        elif isinstance(event, Given):
            self.givens.add(event.name)
            if not self._dry:
                self.given_events[event.name] = event
            self.shapes[event.name] = event.shape or (1,)
        self._events.append(event)

    def _aliases(self, name: str) -> list[str]:
        """The other names that hold the same array as ``name`` (``b = a`` makes ``b`` name
        ``a``'s array: changing one in place changes both)."""
        step = self.names.get(name)
        if step is None:
            return []
        same = {step}
        for s, e in self.exprs.items():  # steps that are the array itself: b = a
            if isinstance(e, Var) and (e.name == step or s == step):
                same.update({s, e.name})
        return [n for n, s in self.names.items() if s in same and n != name]

    def _shape_only(self, node: ast.expr) -> tuple[int, ...] | None:
        """The shape of an expression whose values are not translated: random draws read as
        zeros of their shape, and names not translated as placeholders of theirs. Nothing
        it would write is kept."""
        kept = (
            self._events,
            dict(self.names),
            dict(self.consts),
            dict(self.lazy),
            dict(self.buffers),
            set(self.taken),
            dict(self.shapes),
            dict(self.exprs),
            set(self.givens),
            dict(self.loose),
            dict(self._anonymous),
            set(self._noted_once),
            set(self.cut),
            self.float32,
            list(self._loosened),
        )
        self._events, self._dry = [], True
        try:
            for name, shape in self.opaque_shapes.items():
                if name in self.opaque:
                    self.names[name] = placeholder = f"opaque_{len(self.shapes)}_{ident(name)}"
                    self.shapes[placeholder] = shape
            return self._shape(self._expr(node))
        except Untranslated:
            return None
        finally:
            self._dry = False
            (
                self._events,
                self.names,
                self.consts,
                self.lazy,
                self.buffers,
                self.taken,
                self.shapes,
                self.exprs,
                self.givens,
                self.loose,
                self._anonymous,
                self._noted_once,
                self.cut,
                self.float32,
                self._loosened,
            ) = kept

    def _known_shape(self, name: str) -> tuple[int, ...] | None:
        """The shape of a step or given, from the search or from the registry's shape rules."""
        shape = self.shape_of(name)
        return shape if shape is not None else self.shapes.get(name)

    def _shape(self, e: Expr) -> tuple[int, ...] | None:
        """The shape of a translated expression (``None`` if a name's shape is not known)."""
        return shape_text(render(e, {}), self._known_shape)

    def _where(self, node: ast.AST) -> str:
        origin = origin_of(node)
        block = origin.block if origin is not None else self._block
        assert block is not None
        return block.where(getattr(node, "lineno", 1))

    def _segment(self, node: ast.AST) -> str:
        """The text of a node as written, read from the block it was parsed from.

        A node of an earlier block (the body of a function defined in an earlier cell, a
        mask's definition) is read from that block's text, never from the current one's:
        its line numbers count that block's lines.
        """
        origin = origin_of(node)
        if origin is not None:
            return origin.segment(node)
        try:  # a node the translation made, placed at a node of the current block
            return ast.get_source_segment(self._src, node) or ""
        except (IndexError, ValueError):
            return ""

    def _source(self, node: ast.AST) -> str:
        """A node's text as written (one line, at most 160 characters); a node the
        translation rewrote (``self.heads`` in a class's method) as ``ast`` writes it."""
        text = self._segment(node)
        if not text.strip():
            try:
                text = ast.unparse(node)
            except (AttributeError, TypeError, ValueError):
                text = ""
        return " ".join(text.split())[:160]

    def _import(self, stmt: ast.Import | ast.ImportFrom) -> None:
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                self.aliases[a.asname or a.name.split(".")[0]] = (
                    a.name if a.asname else a.name.split(".")[0]
                )
        else:
            base = stmt.module or ""
            for a in stmt.names:
                self.aliases[a.asname or a.name] = f"{base}.{a.name}"

    def _fresh(self, name: str) -> str:
        base = ident(name) or "v"
        out, k = base, 2
        while out in self.taken:
            out, k = f"{base}_{k}", k + 1
        self.taken.add(out)
        return out

    def _bind(self, name: str, step: str) -> None:
        self.opaque_shapes.pop(name, None)
        self.names[name] = step
        self.consts.pop(name, None)
        self.opaque.pop(name, None)
        self.lazy.pop(name, None)

    def _dotted(self, node: ast.expr | None) -> str | None:
        """``np.exp`` → ``numpy.exp`` (through the notebook's imports); ``None`` if not a name."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        head = self.aliases.get(node.id, node.id)
        return ".".join([head, *reversed(parts)])

    def _module_name(self, dotted: str) -> tuple[str, str] | None:
        mod, _, fname = dotted.rpartition(".")
        canon = {
            "tf": "tensorflow",
            "jnp": "jax.numpy",
            "np": "numpy",
            "F": "torch.nn.functional",
        }.get(mod, mod)
        if canon.startswith("tensorflow"):
            canon = (
                "tensorflow.math"
                if canon == "tensorflow.math"
                else ("tensorflow.nn" if canon == "tensorflow.nn" else "tensorflow")
            )
        if not canon:
            return None
        return canon, fname

    def _is_module_call(self, func: ast.expr) -> bool:
        """Whether ``a.b.f(…)`` calls a function of an imported module (not a tensor's method)."""
        node = func
        while isinstance(node, ast.Attribute):
            node = node.value
        if not isinstance(node, ast.Name) or node is func:
            return isinstance(node, ast.Name) and node.id in self.aliases
        return node.id in self.aliases and node.id not in self.names and node.id not in self.consts

    def _array_family(self, method: str) -> str:
        """``torch`` or ``numpy``: the one of the two the code imports, for ``x.method()``.

        Raises:
            Untranslated: When the code imports both, or neither.
        """
        imported = {FAMILIES.get(m.split(".")[0], "") for m in self.aliases.values()}
        families = sorted(imported & {"torch", "numpy"})
        if len(families) != 1:
            raise Untranslated(
                f"x.{method}() differs between PyTorch tensors and numpy arrays, and "
                + ("the code imports both" if families else "the code imports neither")
            )
        return families[0]

    # -- defined by the stages above (expressions, autograd, the walk) --
    def _expr(self, node: ast.expr) -> Expr:
        raise NotImplementedError

    def _operand(self, node: ast.expr) -> Expr:
        raise NotImplementedError

    def _tensor(self, node: ast.expr) -> Expr:
        raise NotImplementedError

    def _ndim(self, x: Expr) -> int | None:
        raise NotImplementedError

    def _grad_of(self, node: ast.Attribute) -> Expr:
        raise NotImplementedError

    def _tuple_parts(self, node: ast.expr) -> list[Expr | str] | None:
        raise NotImplementedError

    def _items(self, node: ast.expr) -> list[Expr] | None:
        raise NotImplementedError

    def _statement(self, stmt: ast.stmt, *, is_last: bool) -> Any:
        raise NotImplementedError

    def _nested_statement(self, stmt: ast.stmt) -> None:
        """A statement inside a loop, an ``if``, a ``with`` or a function: what it prints
        is printed by the statement around it, in order."""
        shown = self._statement(stmt, is_last=False)
        if shown is not None:
            self._inner_prints.append(shown)
