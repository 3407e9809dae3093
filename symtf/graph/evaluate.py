"""The user's given tensors and steps as nodes of the step graph, and how a step is evaluated.

Each given tensor becomes a node of the registry's ``given`` op, and each step a
node of :data:`STEP`, whose parameter is the step's syntax tree. A step is
evaluated by walking its tree: every operator and every call is a registry op
(:mod:`symtf.ops`), bound by the op's signature and run on
:class:`~symtf.tensor.Tensor` values. The same walk on shapes alone
(:func:`step_shape`) is the step's shape rule, run before anything is
evaluated, so a shape error names the step and the column before any number
is computed.
"""

from __future__ import annotations

from collections.abc import Callable, Container
from fractions import Fraction
from typing import Any, Generic, TypeVar, cast

from symtf import ops
from symtf.errors import ExpressionError, ModelError, ShapeError, SpecError, SymtfError, Undecided
from symtf.graph.core import Node
from symtf.language import lang
from symtf.language.syntax import Tree
from symtf.ops.core import Op, ParamError
from symtf.ops.shape import Ints
from symtf.spec.steps import GivenTensor, StepNode
from symtf.tensor import Tensor

R = TypeVar("R")
#: What a walk of a step's tree gives: its value (a Tensor) or its shape.
W = TypeVar("W")


class _Located(Exception):
    """A problem at a column of the step's expression."""

    def __init__(self, pos: int, message: str, *, model: bool = False) -> None:
        super().__init__(message)
        self.pos = pos
        self.model = model  # undefined for these numbers (ModelError), not a bad step


class _Unknown(Exception):
    """A shape that depends on the values (a slice bound computed from a tensor)."""


def given_value(xp: Any, g: GivenTensor) -> Tensor:
    """A given tensor in the backend's numbers (the registry's ``given`` op)."""
    return ops.given(xp, value=g)


def step_nodes(derivation: Any, taken: Container[str]) -> list[Node]:
    """The nodes of ``derivation``'s given tensors and user steps, after the template's.

    Args:
        derivation: The derivation (``tensors``, ``steps``, ``model``, ``path``).
        taken: The names the template's nodes already have.

    Raises:
        SpecError: A given tensor or step with the name of a template node.
    """
    tensors: tuple[GivenTensor, ...] = getattr(derivation, "tensors", ())
    steps: tuple[StepNode, ...] = getattr(derivation, "steps", ())
    out: list[Node] = []
    path = str(derivation.path)
    for g in tensors:
        if g.name == "x" and derivation.model.architecture == "attention" and "x" in taken:
            continue  # the template's input, given as a tensor: steps read the template's node
        if g.name in taken:
            raise SpecError(
                f"{g.where}: a given tensor cannot have the name of the model's step {g.name}"
            )
        out.append(Node(g.name, ops.given, (), {"value": g}, _tex_name(g.name), "given"))
    for node in steps:
        if node.name in taken:
            raise SpecError(
                f"{node.where}: a step cannot have the name of the model's step {node.name}"
            )
        out.append(
            Node(
                node.name,
                STEP,
                node.inputs,
                {"step": node, "path": path},
                f"{_tex_name(node.name)} = {lang.latex(node.tree)}",
                node.text,
            )
        )
    return out


def _located(step: StepNode, path: str, run: Callable[[], R]) -> R:
    """``run()``, a problem at a column re-raised naming the file, the step and the column."""
    try:
        return run()
    except _Located as e:
        message = str(lang.error(step.text, step.where, e.pos, str(e)))
        if e.model:  # the pipeline puts the file in front
            raise ModelError(message.removeprefix(f"{path}: ")) from None
        raise SpecError(message) from None


def _step_compute(xp: Any, *values: Tensor | None, step: StepNode, path: str) -> Tensor:
    """Evaluate one user step from the values of the names it reads.

    Raises:
        SpecError: A step that does not fit (an index out of range, an unknown name),
            naming the file, the step and the column.
        ModelError: A step undefined for these numbers (a zero variance with ε = 0).
        Undecided: (balls) a sign that cannot be decided at this precision.
    """
    env = dict(zip(step.inputs, values, strict=True))
    try:
        return _located(step, path, lambda: _Values(xp, env.get).walk(step.tree))
    except Undecided as e:
        if getattr(xp, "name", "") != "exact":
            raise  # balls: the caller retries at a higher precision or exactly
        raise ModelError(f"{step.where.removeprefix(f'{path}: ')}: {e}") from None


def step_shape(*shapes: Any, step: StepNode, path: str) -> tuple[int, ...] | None:
    """The shape of a user step from the shapes of the names it reads (``None``: not known
    before evaluating, as when a slice bound is computed from a tensor).

    Raises:
        SpecError: Shapes that do not fit, naming the file, the step, the column and the shapes.
    """
    if any(s is None for s in shapes):
        return None
    env = dict(zip(step.inputs, shapes, strict=True))
    try:
        return _located(step, path, lambda: _Shapes(env.get).walk(step.tree))
    except _Unknown:
        return None


#: The op of a user step: its expression, walked over the registry's ops.
STEP = Op(
    "step",
    "language",
    (ops.Param("inputs"),),
    _step_compute,
    step_shape,
    tex="",
    text="a step's expression over the registry's ops",
    public=False,
)


def _tex_name(name: str) -> str:
    return lang.latex(lang.Name(0, name))


def _size(shape: tuple[int, ...]) -> int:
    n = 1
    for k in shape:
        n *= k
    return n


class _Walk(Generic[W]):
    """A step's syntax tree walked over the registry's ops, on values or on shapes (``W``)."""

    def __init__(self, lookup: Callable[[str], W | None]) -> None:
        self.lookup = lookup

    # what differs between values and shapes
    def apply(self, op: Op[Any], args: list[Any], params: dict[str, Any]) -> W:
        raise NotImplementedError

    def number(self, value: Any) -> W:
        raise NotImplementedError

    def constant(self, name: str) -> W:
        raise NotImplementedError

    def shape(self, v: W) -> tuple[int, ...]:
        raise NotImplementedError

    def int_of_value(self, v: W, pos: int) -> int:
        raise NotImplementedError

    def ints_of_value(self, v: W, pos: int) -> list[int]:
        raise NotImplementedError

    def bound_of_value(self, v: W, pos: int) -> int:
        return self.int_of_value(v, pos)

    # the walk
    def walk(self, node: Tree) -> W:
        try:
            match node:
                case lang.Num():
                    return self.number(node.value)
                case lang.Name():
                    return self.name(node)
                case lang.Unary():
                    v = self.walk(node.operand)
                    return self.apply(ops.neg, [v], {}) if node.op == "-" else v
                case lang.Chain():
                    acc = self.walk(node.first)
                    for link in node.rest:
                        right = self.walk(link.node)
                        try:
                            acc = self.binary(link, acc, right)
                        except (ShapeError, IndexError) as e:
                            raise _Located(link.pos, str(e)) from None
                        except ModelError as e:
                            raise _Located(link.pos, str(e), model=True) from None
                    return acc
                case lang.Power():
                    if self._is_e(node.base):  # e ^ x is exp(x), held to its rule on x
                        return self.apply(ops.get("exp"), [self.walk(node.exponent)], {})
                    return self.apply(
                        ops.power, [self.walk(node.base), self.walk(node.exponent)], {}
                    )
                case lang.Transpose():
                    return self.apply(ops.T, [self.walk(node.operand)], {})
                case lang.Index():
                    return self.index(node)
                case lang.Call():
                    return self.call(node)
                case lang.ListLit():
                    return self.apply(ops.stack, [[self.walk(i) for i in node.items]], {"axis": 0})
                case lang.Slice() | lang.Ellipsis_() | lang.NewAxis():
                    raise _Located(node.pos, "a slice or ... can only appear inside an index")
                case lang.Word():
                    raise _Located(
                        node.pos, f"a quoted word ({node.text!r}) can only be a setting's value"
                    )
        except (ShapeError, IndexError) as e:
            raise _Located(node.pos, str(e)) from None
        except ZeroDivisionError:
            raise _Located(node.pos, "division by exactly 0", model=True) from None
        except ModelError as e:
            raise _Located(node.pos, str(e), model=True) from None
        except ParamError as e:
            raise _Located(getattr(e.where, "pos", node.pos), str(e)) from None
        raise _Located(
            getattr(node, "pos", 0), f"unexpected {type(node).__name__}"
        )  # pragma: no cover

    def _is_e(self, node: Tree) -> bool:
        """Whether ``node`` is the constant e (a name no tensor or step shadows)."""
        return isinstance(node, lang.Name) and node.name == "e" and self.lookup("e") is None

    def name(self, node: lang.Name) -> W:
        v = self.lookup(node.name)
        if v is not None:
            return v
        if node.name in lang.CONSTANTS:
            return self.constant(node.name)
        raise _Located(
            node.pos, f"unknown name {node.name!r}: no given tensor, step or model step has it"
        )

    def binary(self, link: lang.Link, a: W, b: W) -> W:
        op = link.op
        sa, sb = self.shape(a), self.shape(b)
        if op == "*" and link.text in ("×", "·", "⋅"):
            op = "@" if _size(sa) > 1 and _size(sb) > 1 and sa and sb else "*"
        if op == "@" and (not sa or not sb):
            raise _Located(link.pos, "@ needs two tensors; use * to scale")
        fn = _BINARY.get(op)
        if fn is None:  # pragma: no cover - the parser knows only these
            raise _Located(link.pos, f"unknown operator {link.text}")
        return self.apply(fn, [a, b], {})

    def index(self, node: lang.Index) -> W:
        x = self.walk(node.operand)
        items: list[Any] = []
        for it in node.items:
            if isinstance(it, lang.Ellipsis_):
                items.append(Ellipsis)
            elif isinstance(it, lang.NewAxis):
                items.append(None)
            elif isinstance(it, lang.Slice):
                parts = [
                    None if p is None else self.int_of(p, "a slice bound")
                    for p in (it.start, it.stop, it.step)
                ]
                if parts[2] == 0:
                    raise _Located(it.pos, "a slice step cannot be 0")
                items.append(slice(*parts))
            else:
                v = self.walk(it)
                s = self.shape(v)
                if len(s) == 0:
                    items.append(self.int_of_value(v, it.pos))
                elif len(s) == 1:
                    items.append(self.ints_of_value(v, it.pos))
                else:  # a tensor of indices of any shape: a gather
                    items.append(Ints(tuple(s), tuple(self.ints_of_value(v, it.pos))))
        try:
            return self.apply(ops.index, [x], {"items": items})
        except ShapeError as e:
            raise _Located(node.pos, str(e)) from None

    def int_of(self, node: Tree, what: str) -> int:
        try:
            v = lang.static_value(node, what)
        except lang.NotStatic:
            return self.bound_of_value(self.walk(node), node.pos)
        if isinstance(v, bool) or not isinstance(v, int):
            raise _Located(node.pos, f"expected an integer for {what}, found {v}")
        if abs(v) > 100_000:
            raise _Located(node.pos, f"expected {what} of at most 100000, found {v}")
        return v

    def call(self, node: lang.Call) -> W:
        op = ops.get(node.name)
        bound = op.bind(node.args, node.kwargs)
        args: list[Any] = []
        params: dict[str, Any] = {}
        for p in op.step_params:
            if p.name not in bound:
                if p.is_tensor:
                    args.append(None)
                continue
            given = bound[p.name]
            if p.is_tensor:
                if p.name == op.variadic:
                    args.append([self.walk(n) for n in given])
                else:
                    args.append(self.walk(given))
                continue
            params[p.name] = self.static(op, p, given)
        return self.apply(op, args, params)

    def static(self, op: Op[Any], p: ops.Param, given: Any) -> Any:
        """A plain parameter written in the step (checked when the file was read)."""
        what = f"{op.name}({p.name}=…)"
        try:
            if p.name == op.variadic:  # zeros(2, 3), ones([2, 3])
                dims: list[Any] = []
                for n in given:
                    v = lang.static_value(n, what)
                    dims.extend(v if isinstance(v, list) else [v])
                return p.check(op.name, dims)
            return p.check(op.name, lang.static_value(given, what))
        except lang.NotStatic as e:
            raise _Located(e.pos, str(e)) from None
        except ValueError as e:  # ParamError: the value does not fit the parameter
            where = given[0] if isinstance(given, list) and given else given
            raise _Located(getattr(where, "pos", 0), str(e)) from None


class _Values(_Walk[Tensor]):
    def __init__(self, xp: Any, lookup: Callable[[str], Tensor | None]) -> None:
        super().__init__(lookup)
        self.xp = xp

    def apply(self, op: Op[Any], args: list[Any], params: dict[str, Any]) -> Tensor:
        # A step calls only public ops (and the operators' ops), each of which computes a
        # Tensor; the registry holds ops of every value type, so it types them loosely.
        return cast(Tensor, op(self.xp, *args, **params))

    def number(self, value: Any) -> Tensor:
        return ops.scalar(self.xp.const(Fraction(int(value.p), int(value.q))))

    def constant(self, name: str) -> Tensor:
        xp = self.xp
        make = {
            "e": lambda: xp.exp(xp.const(1)),
            "pi": xp.pi,
            "π": xp.pi,
            "inf": lambda: -xp.neg_inf(),
            "∞": lambda: -xp.neg_inf(),
            "true": lambda: xp.const(1),
            "false": lambda: xp.const(0),
        }
        return ops.scalar(make[name]())

    def shape(self, v: Tensor) -> tuple[int, ...]:
        return v.shape

    def int_of_value(self, v: Tensor, pos: int) -> int:
        if v.size != 1:
            raise _Located(pos, f"expected one integer, found shape {v.shape}")
        k = ops.as_int(v.item())
        if k is None:
            raise _Located(pos, f"expected an integer index, found {v.item()}")
        return k

    def ints_of_value(self, v: Tensor, pos: int) -> list[int]:
        return [self.int_of_value(ops.scalar(s), pos) for s in v.data]


class _Shapes(_Walk[tuple[int, ...]]):
    def apply(self, op: Op[Any], args: list[Any], params: dict[str, Any]) -> tuple[int, ...]:
        shape = op.shape(*args, **params)
        if shape is None:  # a registry op's shape rule always gives one; this is a safeguard
            raise _Unknown
        return shape

    def number(self, value: Any) -> tuple[int, ...]:
        return ()

    def constant(self, name: str) -> tuple[int, ...]:
        return ()

    def shape(self, v: Any) -> tuple[int, ...]:
        return tuple(v)

    def int_of_value(self, v: Any, pos: int) -> int:
        if _size(tuple(v)) != 1:
            raise _Located(pos, f"expected one integer, found shape {tuple(v)}")
        return 0  # an integer index drops its axis; its range is checked on the values

    def ints_of_value(self, v: Any, pos: int) -> list[int]:
        return [0] * _size(tuple(v))

    def bound_of_value(self, v: Any, pos: int) -> int:
        raise _Unknown  # a slice bound computed from a tensor: the shape needs its value


_BINARY: dict[str, Op[Tensor]] = {
    "+": ops.add,
    "-": ops.sub,
    "*": ops.mul,
    "∘": ops.mul,
    "/": ops.div,
    "@": ops.matmul,
}
# ``//``, ``%`` and the comparisons: each op's spelling (``a // b``) names its operator
_BINARY.update(
    {
        op.spelling.split()[1]: op
        for op in (ops.floordiv, ops.mod, ops.lt, ops.le, ops.gt, ops.ge, ops.eq, ops.ne)
    }
)


def evaluate_text(xp: Any, text: str, values: dict[str, Tensor], *, where: str = "step") -> Tensor:
    """Evaluate one step expression on named tensors, as a derivation's step would be.

    Args:
        xp: The backend (exact, balls, …).
        text: The step's expression in the step language.
        values: The tensors its names refer to.
        where: For messages.

    Raises:
        SpecError: The expression does not parse or does not fit the tensors.
        ModelError: It is undefined for these numbers.
        Undecided: (balls) a sign that cannot be decided at this precision.
    """
    try:
        tree = lang.parse(text, ops.public_signatures(), where=where)
    except ExpressionError as e:
        raise SpecError(str(e)) from None
    try:
        return _Values(xp, values.get).walk(tree)
    except _Located as e:
        message = str(lang.error(text, where, e.pos, str(e)))
        raise (ModelError(message) if e.model else SpecError(message)) from None


def shape_text(
    text: str, shapes: Callable[[str], tuple[int, ...] | None]
) -> tuple[int, ...] | None:
    """The shape of one step expression from the shapes of the names it reads.

    ``None`` when the expression does not parse, names a tensor whose shape is not known,
    does not fit the shapes, or has a shape that depends on its values (a slice bound
    read from a tensor). Nothing is evaluated.
    """
    try:
        tree = lang.parse(text, ops.public_signatures(), where="shape")
        return _Shapes(shapes).walk(tree)
    except (_Located, _Unknown, SymtfError, ParamError, ValueError, TypeError, IndexError):
        return None


__all__ = [
    "STEP",
    "Undecided",
    "evaluate_text",
    "given_value",
    "shape_text",
    "step_nodes",
    "step_shape",
]
