"""What an op is: one definition that every part of symtf reads.

Modelled on JAX primitives (``jax/_src/lax/lax.py``): an :class:`Op` is declared
once with

- its **signature**: tensor arguments and typed keyword parameters with their
  defaults (:class:`Param`), which the step parser reads to check a call when
  the file is read (errors name the file, the step and the column);
- its **shape rule** ``shape(*shapes, **params)``, run on shapes alone before
  anything is evaluated, whose errors name the shapes that do not fit;
- its **computation** ``compute(xp, *tensors, **params)``, written once against
  the backend protocol (:mod:`symtf.backends.protocol`) on N-D
  :class:`~symtf.tensor.Tensor` values whose 2-D case keeps the backend's
  native matrix (:mod:`symtf.ops.array`);
- its **formula**, in LaTeX and in plain text, the formula a template node
  shows (``display``, from the node's parameters and symbol labels), and its
  **worked substitution** (``substitute``: the formula with the operands'
  values written in), and the **working of one entry** (``work``: how entry
  ``[i, j]`` of a step is computed by hand, :mod:`symtf.ops.working`);
- its **vector–Jacobian product** (``vjp``), the backward rule of reverse mode.

Calling an op (``softmax(xp, x, axis=-1)``) checks the shapes, honours a
backend's own kernel for it (:attr:`Backend.kernels`) and refuses a backend that
cannot run it (:class:`~symtf.errors.Unsupported`, which escalates).

The VJP contract: ``vjp(xp, g, *inputs, output=y, **params)`` returns one
cotangent per tensor argument, in signature order (``None`` for an argument
that does not depend on the inputs' values, like an index or a mask), each of
that argument's shape, where ``g`` has the output's shape and ``y`` is the
output the op computed from ``inputs``. Broadcasting ops sum the cotangent
back to each argument's shape (:func:`symtf.ops.array.unbroadcast`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import Any, Generic, TypedDict, TypeVar, cast

from symtf.errors import ShapeError, Unsupported
from symtf.ops.working import Work

#: What an op computes: a :class:`~symtf.tensor.Tensor` for almost every op (``greedy``
#: gives token ids), so that calling an op is typed by its computation.
V = TypeVar("V")


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: The default of a parameter that must be given.
REQUIRED: Any = _Required()

#: Where a worked substitution may break its line (the LaTeX renderer splits there).
BREAK = "\x00"

#: Parameter kinds: what the step parser accepts for each (see :meth:`Param.check`).
KINDS = (
    "tensor",  # an expression evaluated to a tensor
    "int",  # an integer written in the step (a size, a count)
    "axis",  # an integer, or a list of integers, or none (all axes)
    "ints",  # a list of integers (a shape, a permutation)
    "bool",  # true or false
    "number",  # an exact number (int or Fraction) written in the step
    "choice",  # one of ``choices``
    "value",  # a template's setting (a matrix from the file, token ids): never from a step
)


class ParamError(ValueError):
    """A call's argument that does not fit the op's signature (the message says why)."""

    def __init__(self, message: str, where: Any = None) -> None:
        super().__init__(message)
        self.where = where  # the offending argument's syntax node, or None for the call


@dataclass(frozen=True)
class Param:
    """One argument of an op.

    Attributes:
        name: Its keyword name.
        kind: One of :data:`KINDS`.
        default: Its default, or :data:`REQUIRED`.
        choices: The accepted values of a ``choice``.
        lo: The smallest accepted ``int``.
        hi: The largest accepted ``|int|``.
        doc: A few words for the README's op table.
        label: The key of its symbol in a node's labels, when not its name (``b`` for
            ``bias``): the worked notes name the values they substitute by it.
    """

    name: str
    kind: str = "tensor"
    default: Any = REQUIRED
    choices: tuple[Any, ...] = ()
    lo: int | None = None
    hi: int = 100_000
    doc: str = ""
    label: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown parameter kind {self.kind!r}")

    @property
    def required(self) -> bool:
        """Whether a call must give it."""
        return self.default is REQUIRED

    @property
    def is_tensor(self) -> bool:
        """Whether it is evaluated as an expression (not written as a plain value)."""
        return self.kind == "tensor"

    def check(self, op: str, value: Any) -> Any:
        """``value`` as this parameter accepts it.

        Raises:
            ParamError: Naming the op, the parameter, what was expected and what was found.
        """
        if self.kind in ("int", "ints", "axis"):
            what = f"{op}: expected an integer {self.name}, found {_shown(value)}"
        else:
            what = f"{op}: expected {self._expected()} for {self.name}, found {_shown(value)}"
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise ParamError(what)
            return value
        if self.kind == "int":
            return self._int(op, value, what)
        if self.kind == "ints":
            vals = value if isinstance(value, list) else [value]
            return [self._int(op, v, what) for v in vals]
        if self.kind == "axis":
            if value is None:
                return None
            if isinstance(value, list):
                return [self._int(op, v, what) for v in value]
            return self._int(op, value, what)
        if self.kind == "number":
            if isinstance(value, bool) or not isinstance(value, (int, Fraction)):
                raise ParamError(what)
            return value
        if self.kind == "choice":
            if value not in self.choices:
                raise ParamError(what)
            return value
        return value

    def _int(self, op: str, v: Any, what: str) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise ParamError(what)
        if self.lo is not None and v < self.lo:
            raise ParamError(f"{op}: expected {self.name} of at least {self.lo}, found {v}")
        if abs(v) > self.hi:
            raise ParamError(f"{op}: expected {self.name} of at most {self.hi}, found {v}")
        return v

    def _expected(self) -> str:
        return {
            "bool": "true or false",
            "int": "an integer",
            "ints": "a list of integers",
            "axis": "an integer or a list of integers",
            "number": "a number written in the step",
            "choice": "one of " + ", ".join(repr(c) for c in self.choices),
        }.get(self.kind, self.kind)


def _shown(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, Fraction):
        return str(v)
    if v is None:
        return "none"
    return str(v)


@dataclass(frozen=True)
class Substitution:
    """What an op's worked substitution is written from (filled in by a renderer).

    Attributes:
        args: The LaTeX of each tensor argument's value, in signature order.
        params: The node's parameters as they are.
        labels: The node's symbol labels (``w`` → ``W_Q``).
        shapes: The shapes of the tensor arguments.
        shape: The output's shape.
        value: ``value(name, transposed)`` writes the matrix parameter ``name`` (a weight
            matrix, ``gamma``) as the renderer shows matrices.
        matrix: Writes rows of LaTeX entries as a matrix (the renderer's layout).
        latex: Writes an exact number in LaTeX.
    """

    args: Sequence[str]
    params: Mapping[str, Any]
    labels: Mapping[str, str]
    shapes: Sequence[tuple[int, ...] | None]
    shape: tuple[int, ...] | None
    value: Callable[[str, bool], str]
    matrix: Callable[[list[list[str]]], str]
    latex: Callable[[Any], str]


@dataclass(frozen=True)
class Op(Generic[V]):
    """One op: signature, shape rule, computation, formula, substitution and VJP.

    Attributes:
        name: Its name in steps and in traces.
        family: The registry file it belongs to (``attention``, ``norms``, …).
        signature: Its arguments in positional order.
        compute: ``compute(xp, *tensors, **params) -> Tensor`` (tensor arguments
            positionally, in signature order; the others by keyword).
        shape: ``shape(*shapes, **params) -> shape`` (``None`` for a tensor argument
            not given); raises :class:`~symtf.errors.ShapeError`. A graph's own ops (a
            user step, a derivative) give ``None`` for a shape known only from values.
        tex: The general formula in LaTeX (the README and the renderers).
        text: The same in plain text.
        shapes: The shape rule in words, for the README (``(n, k), (k, m) → (n, m)``).
        doc: One line for people.
        variadic: The argument that takes every positional (``concat``'s tensors).
        public: Whether steps may call it (template-only ops are not).
        aliases: Other names steps may call it by (``ln`` for ``log``).
        display: ``display(params, labels) -> LaTeX``: the formula a node of this op
            shows, from its parameters and symbol labels (default: :attr:`tex`).
        substitute: ``substitute(Substitution) -> LaTeX | None``: the worked
            substitution (``None`` where there is none).
        vjp: The vector–Jacobian product (see the module docstring), or ``None``.
        unsupported: Backend name -> why it cannot run this op (it escalates).
        tensor_out: Whether the value is a tensor (``greedy`` gives token ids).
        spelling: How a step writes an op it reaches by syntax, not by name (``a @ b``;
            several spellings separated by ``;``).
        elementwise: Whether each output entry is a function of the entries at the same
            position of its (broadcast) tensor arguments alone (``round``, ``a + b``,
            ``where``), so a consumer may reason entry by entry where the op cannot run
            (the reveal rules treat one that does not evaluate on symbols as an unknown
            function of those entries).
        rule: What the op does to its operands, in a few words of math-mode LaTeX written
            here (``\\text{matrix product}``), or ``rule(params, labels) -> LaTeX`` when
            it depends on them (``softmax of each row``): the worked notes set it beside
            the result line, as a proof names its rule (see :meth:`rule_of`).
        work: ``work(ctx, step, i, j) -> (formula, substituted) | None``: the working of
            entry ``[i, j]`` of a step of this op, by hand, each line in LaTeX and plain
            text (:mod:`symtf.ops.working`; ``None`` where there is none): what the
            exercises of ``symtf teach`` show for one entry.
    """

    name: str
    family: str
    signature: tuple[Param, ...]
    compute: Callable[..., V] = field(repr=False)
    shape: Callable[..., tuple[int, ...] | None] = field(repr=False)
    tex: str = ""
    text: str = ""
    shapes: str = ""
    doc: str = ""
    variadic: str | None = None
    public: bool = True
    aliases: tuple[str, ...] = ()
    display: Callable[[Mapping[str, Any], Mapping[str, str]], str] | None = field(
        default=None, repr=False
    )
    substitute: Callable[[Substitution], str | None] | None = field(default=None, repr=False)
    vjp: Callable[..., tuple[Any, ...]] | None = field(default=None, repr=False)
    unsupported: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    tensor_out: bool = True
    spelling: str = ""
    elementwise: bool = False
    rule: str | Callable[[Mapping[str, Any], Mapping[str, str]], str] = field(
        default="", repr=False
    )
    work: Work | None = field(default=None, repr=False)
    #: Shapes and parameters the shape rule has accepted (see :meth:`check_shapes`).
    _accepted: dict[Any, bool] = field(default_factory=dict, init=False, repr=False, compare=False)

    # ---- the signature
    @property
    def tensor_args(self) -> tuple[Param, ...]:
        """The tensor arguments, in order."""
        return tuple(p for p in self.signature if p.is_tensor)

    @property
    def static_params(self) -> tuple[Param, ...]:
        """The plain-valued parameters."""
        return tuple(p for p in self.signature if not p.is_tensor)

    def param(self, name: str) -> Param | None:
        """The parameter called ``name``."""
        return next((p for p in self.signature if p.name == name), None)

    @property
    def step_params(self) -> tuple[Param, ...]:
        """The arguments a step may write (a template's ``value`` settings are not among them)."""
        return tuple(p for p in self.signature if p.kind != "value")

    def arity(self) -> tuple[int, int | None, tuple[str, ...]]:
        """For the parser: ``(fewest positionals, most positionals or None, keyword names)``.

        Required arguments may come by keyword, so only a variadic op needs a positional.
        """
        names = tuple(p.name for p in self.step_params)
        if self.variadic is not None:
            return (1, None, tuple(n for n in names if n != self.variadic))
        return (0, len(names), names)

    def bind(
        self, positional: Sequence[Any], keywords: Sequence[tuple[str, Any]]
    ) -> dict[str, Any]:
        """Arguments of a call by parameter name (variadic ones as a list).

        Raises:
            ParamError: An argument given twice or missing (``where`` is its node).
        """
        bound: dict[str, Any] = {}
        if self.variadic is not None:
            bound[self.variadic] = list(positional)
        else:
            for p, v in zip(self.step_params, positional, strict=False):
                bound[p.name] = v
        for k, v in keywords:
            if k in bound:
                raise ParamError(f"{self.name}: {k} given twice", v)
            bound[k] = v
        for p in self.step_params:
            if p.required and p.name not in bound:
                names = ", ".join(q.name for q in self.step_params)
                raise ParamError(f"{self.name}: missing argument {p.name} (it takes {names})")
        return bound

    def defaults(self) -> dict[str, Any]:
        """The default of every optional plain parameter."""
        return {p.name: p.default for p in self.static_params if not p.required}

    # ---- running it
    def __call__(self, xp: Any, *tensors: Any, **params: Any) -> V:
        """Compute the op in backend ``xp`` (shapes checked first).

        Raises:
            ShapeError: Shapes that do not fit (both named).
            Unsupported: A backend that cannot run this op.
        """
        if self.unsupported:
            reason = self.unsupported.get(getattr(xp, "name", ""))
            if reason is not None:
                raise Unsupported(self.name, xp.name, reason)
        self.check_shapes(tensors, params)
        kernels = xp.kernels
        if kernels:
            kernel = kernels.get(self.name)
            if kernel is not None:
                out = kernel(xp, *tensors, **params)
                if out is not NotImplemented:
                    # A kernel is this backend's own computation of this op: it gives what
                    # ``compute`` gives (the protocol types kernels loosely, one table for all ops).
                    return cast("V", out)
        return self.compute(xp, *tensors, **params)

    def check_shapes(self, tensors: Sequence[Any], params: Mapping[str, Any]) -> None:
        """Run the shape rule on the tensors' shapes and the parameters.

        The rule is a function of shapes and plain parameters alone, so a combination it
        accepted once is remembered and not run again (the draft's search calls a few ops
        on a few shapes tens of thousands of times); one it refuses is run, and raises,
        every time. Parameters that are not plain values (a weight matrix, a tensor of
        indices) are never remembered.

        Raises:
            ShapeError: Shapes that do not fit (both named).
        """
        try:
            shapes = tuple([t.shape for t in tensors])
            key: Any = shapes
        except AttributeError:  # an argument not given (None), or a variadic op's list
            shapes = tuple([_shape_of(t) for t in tensors])
            key = tuple([tuple(s) if type(s) is list else s for s in shapes])
        if params:
            key = _accepted_key(key, params)
        accepted = self._accepted
        if key is not None:
            try:
                if key in accepted:
                    return
            except TypeError:  # a shape that is not a tuple of ints: not remembered
                key = None
        self.shape(*shapes, **params)
        if key is not None:
            if len(accepted) >= _ACCEPTED_MAX:
                accepted.clear()
            accepted[key] = True

    def rule_of(self, params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
        """The rule a node of this op applies, as math-mode LaTeX (for a result line).

        An op without a :attr:`rule` of its own is named: ``\\operatorname{log1p}``, and
        ``of each entry`` for an element-wise one.
        """
        rule = self.rule(params, labels) if callable(self.rule) else self.rule
        if rule:
            return rule
        name = r"\operatorname{" + self.name.replace("_", r"\_") + "}"
        return name + (r"\text{ of each entry}" if self.elementwise else "")

    def formula(self, params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
        """The LaTeX a node of this op shows."""
        if self.display is not None:
            return self.display(params, labels)
        return self.tex


def _shape_of(t: Any) -> Any:
    if t is None:
        return None
    if isinstance(t, list):
        return [x.shape for x in t]
    return t.shape


#: How many accepted combinations an op remembers (then it starts again).
_ACCEPTED_MAX = 4096

#: Parameter values a shape rule's memory may hold: compared by value, cheap to hash.
_PLAIN = frozenset({int, bool, float, str, Fraction, type(None), type(Ellipsis)})


def _accepted_key(shapes: tuple[Any, ...], params: Mapping[str, Any]) -> Any:
    """A hashable key for the shapes and parameters, or ``None`` when one is not plain."""
    items = []
    for k, v in params.items():
        # the type is part of the key: True == 1 == 1.0, but a rule may tell them apart
        if type(v) in _PLAIN:
            items.append((k, type(v), v))
            continue
        plain = _plain_sequence(v)
        if plain is None:
            return None
        items.append((k, type(v), plain))
    return (shapes, tuple(items))


def _plain_sequence(v: Any) -> tuple[Any, ...] | None:
    """A list, tuple or slice of plain values as a hashable tuple (typed), or ``None``."""
    if type(v) is slice:
        v = (v.start, v.stop, v.step)
    elif type(v) not in (list, tuple):
        return None
    out = []
    for x in v:
        if type(x) in _PLAIN:
            out.append((type(x), x))
            continue
        inner = _plain_sequence(x)
        if inner is None:
            return None
        out.append((type(x), inner))
    return tuple(out)


def zero_vjp(xp: Any, g: Any, *tensors: Any, output: Any, **params: Any) -> tuple[Any, ...]:
    """The VJP of an op whose value is piecewise constant in its tensor arguments, or has
    none (an index, a mask, ``argmax``, ``one_hot``, a constant): no cotangent for any."""
    return (None,) * len(tensors)


# ----------------------------------------------------------------------------- the registry

_REGISTRY: dict[str, Op[Any]] = {}
_ALIASES: dict[str, str] = {}

#: Every op by name (read-only).
REGISTRY: Mapping[str, Op[Any]] = MappingProxyType(_REGISTRY)


def register(op: Op[V]) -> Op[V]:
    """Add an op to the registry (its name and aliases must be new)."""
    for n in (op.name, *op.aliases):
        if n in _REGISTRY or n in _ALIASES:
            raise ValueError(f"op {n!r} registered twice")
    _REGISTRY[op.name] = op
    for a in op.aliases:
        _ALIASES[a] = op.name
    return op


#: Ops a step may call that act on the step graph rather than on values (``grad`` and
#: ``jacobian`` take names and are resolved when the graph is built): the step parser
#: reads their signatures; they are not in :data:`REGISTRY`, which holds value ops.
_GRAPH_OPS: dict[str, Op[Any]] = {}
GRAPH_OPS: Mapping[str, Op[Any]] = MappingProxyType(_GRAPH_OPS)


def register_graph_op(op: Op[V]) -> Op[V]:
    """Add an op the step parser accepts but the graph resolves (see :data:`GRAPH_OPS`)."""
    if op.name in _REGISTRY or op.name in _ALIASES or op.name in _GRAPH_OPS:
        raise ValueError(f"op {op.name!r} registered twice")
    _GRAPH_OPS[op.name] = op
    return op


#: A step-callable name -> ``(fewest positionals, most or None, keyword names)``.
Arity = tuple[int, int | None, tuple[str, ...]]


class _Signatures(TypedDict, total=False):
    key: tuple[str, ...]
    table: dict[str, Arity]


_SIGNATURES: _Signatures = {}


def get(name: str) -> Op[Any]:
    """The op called ``name`` (or by an alias).

    Raises:
        KeyError: For an unknown name.
    """
    name = _ALIASES.get(name, name)
    return _GRAPH_OPS[name] if name in _GRAPH_OPS else _REGISTRY[name]


def public_signatures() -> dict[str, Arity]:
    """For the step parser: every name a step may call -> its arity (aliases included).

    Read afresh when an op was registered since the last call.
    """
    key = (*_REGISTRY, *_GRAPH_OPS)
    if _SIGNATURES.get("key") != key:
        out = {name: op.arity() for name, op in _GRAPH_OPS.items()}
        for op in _REGISTRY.values():
            if op.public:
                out[op.name] = op.arity()
                for a in op.aliases:
                    out[a] = op.arity()
        _SIGNATURES["key"] = key
        _SIGNATURES["table"] = out
    return _SIGNATURES["table"]


def define(
    name: str,
    family: str,
    signature: Sequence[Param],
    *,
    shape: Callable[..., tuple[int, ...]],
    tex: str = "",
    text: str = "",
    shapes: str = "",
    doc: str = "",
    variadic: str | None = None,
    public: bool = True,
    aliases: tuple[str, ...] = (),
    display: Callable[[Mapping[str, Any], Mapping[str, str]], str] | None = None,
    substitute: Callable[[Substitution], str | None] | None = None,
    vjp: Callable[..., tuple[Any, ...]] | None = None,
    unsupported: Mapping[str, str] | None = None,
    registered: bool = True,
    tensor_out: bool = True,
    spelling: str = "",
    elementwise: bool = False,
    rule: str | Callable[[Mapping[str, Any], Mapping[str, str]], str] = "",
    work: Work | None = None,
) -> Callable[[Callable[..., V]], Op[V]]:
    """Decorator: the function below is the op's computation; returns the registered :class:`Op`."""

    def wrap(compute: Callable[..., V]) -> Op[V]:
        op = Op(
            name,
            family,
            tuple(signature),
            compute,
            shape,
            tex,
            text,
            shapes,
            doc or (compute.__doc__ or "").strip().splitlines()[0],
            variadic,
            public,
            aliases,
            display,
            substitute,
            vjp,
            MappingProxyType(dict(unsupported or {})),
            tensor_out,
            spelling,
            elementwise,
            rule,
            work,
        )
        return register(op) if registered else op

    return wrap


# ----------------------------------------------------------------------------- shape helpers


def check(cond: bool, message: str) -> None:
    """Raise :class:`ShapeError` with ``message`` unless ``cond``."""
    if not cond:
        raise ShapeError(message)


def fmt(s: Sequence[int]) -> str:
    """A shape as numpy prints it: ``(2, 3)``, ``(3,)``, ``()``."""
    return _fmt(tuple(s))


@functools.lru_cache(maxsize=1024)
def _fmt(s: tuple[int, ...]) -> str:
    # shape rules write their messages eagerly, on every call: a shape is formatted once
    return "(" + ", ".join(str(n) for n in s) + ("," if len(s) == 1 else "") + ")"


def axis_of(axis: int, ndim: int, what: str = "axis") -> int:
    """``axis`` counted from the front (negative from the end)."""
    if not -ndim <= axis < ndim:  # the message is built only when it is needed (a hot path)
        raise ShapeError(f"{what} {axis} is out of range for {ndim} axes")
    return axis % ndim


_F = TypeVar("_F", bound=Callable[..., Any])


def shape_cached(maxsize: int) -> Callable[[_F], _F]:
    """Remember a function of shapes, axes and flags per arguments, a list taken as its tuple.

    Shape rules and plans depend on shapes alone, and ops ask for the same few on every
    call (the draft's search, tens of thousands of times). An error is not remembered: it
    is raised every time. An argument that is not hashable even as a tuple is passed on
    uncached.
    """

    def decorate(fn: _F) -> _F:
        cached = functools.lru_cache(maxsize=maxsize, typed=True)(fn)

        @functools.wraps(fn)
        def call(*args: Any) -> Any:
            try:
                return cached(*args)
            except TypeError:  # an unhashable argument (a list of axes, a shape as a list)
                pass
            hashable = tuple(tuple(a) if isinstance(a, list) else a for a in args)
            try:
                return cached(*hashable)
            except TypeError:
                return fn(*args)

        return cast("_F", call)

    return decorate


def axes_of(axis: int | Sequence[int] | None, nd: int) -> list[int]:
    """Sorted distinct axes (every axis for ``None``)."""
    return list(_axes_once(axis, nd))


@shape_cached(1024)
def _axes_once(axis: int | Sequence[int] | None, nd: int) -> tuple[int, ...]:
    return tuple(_axes(axis, nd))


def _axes(axis: int | Sequence[int] | None, nd: int) -> list[int]:
    if axis is None:
        return list(range(nd))
    axes = [axis] if isinstance(axis, int) else list(axis)
    out = sorted({axis_of(a, nd) for a in axes})
    check(len(out) == len(axes), f"repeated axis in {axes}")
    return out


@shape_cached(4096)
def broadcast_shape(*shapes: Sequence[int]) -> tuple[int, ...]:
    """numpy's broadcast of several shapes.

    Raises:
        ShapeError: Naming every shape when they do not broadcast.
    """
    nd = max(len(s) for s in shapes)
    out = []
    for k in range(nd):
        dims = {s[len(s) - nd + k] for s in shapes if len(s) - nd + k >= 0} - {1}
        if len(dims) > 1:  # the message is built only when it is needed (a hot path)
            raise ShapeError(
                "shapes " + " and ".join(fmt(s) for s in shapes) + " do not broadcast together"
            )
        out.append(dims.pop() if dims else 1)
    return tuple(out)


@shape_cached(4096)
def elementwise_shape(*shapes: Sequence[int] | None) -> tuple[int, ...]:
    """The broadcast shape, a one-entry operand mixing with a larger one like a scalar."""
    given = [tuple(s) for s in shapes if s is not None]
    if any(_size(s) > 1 for s in given):
        given = [() if _size(s) == 1 else s for s in given]
    return broadcast_shape(*given)


def _size(s: Sequence[int]) -> int:
    n = 1
    for k in s:
        n *= k
    return n


def along(axis: Any) -> str:
    """Where a reduction or a row-wise op acts, in words (``of each row``), for a rule.

    Example:
        >>> along(-1), along(0), along(None)
        ('of each row', 'of each column', 'of all entries')
    """
    if axis is None:
        return "of all entries"
    if axis == -1:
        return "of each row"
    if axis == 0:
        return "of each column"
    return f"along axis {axis}"


def same_shape(x: Sequence[int], *_: Any, **__: Any) -> tuple[int, ...]:
    """The shape rule of an op that keeps its first argument's shape."""
    return tuple(x)


__all__ = [
    "BREAK",
    "GRAPH_OPS",
    "REGISTRY",
    "REQUIRED",
    "Op",
    "Param",
    "ParamError",
    "Substitution",
    "along",
    "axes_of",
    "axis_of",
    "broadcast_shape",
    "check",
    "define",
    "elementwise_shape",
    "fmt",
    "get",
    "public_signatures",
    "register",
    "register_graph_op",
    "same_shape",
    "zero_vjp",
]
