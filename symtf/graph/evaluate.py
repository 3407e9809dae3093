"""The user's given tensors and steps as nodes of the step graph, and their evaluation.

Each given tensor and each step becomes a :class:`~symtf.graph.core.Node`
after the template's nodes, with its formula (LaTeX from its expression) and
the names it reads as inputs. Its op evaluates the step's syntax tree on
:class:`~symtf.tensor.Tensor` values; the graph's evaluator records a 0-,
1- or 2-D result as the backend's native matrix (so checking, replay and LaTeX
read it like any step) and hands later steps what was recorded (perhaps the
article's printed numbers, during replay) in its true shape.
"""

from __future__ import annotations

from collections.abc import Callable, Container
from fractions import Fraction
from typing import Any

import sympy

from symtf.errors import ModelError, ShapeError, SpecError, Undecided
from symtf.graph import ops as O
from symtf.graph.core import Node
from symtf.language import lang
from symtf.spec.steps import OPS, GivenTensor, StepNode
from symtf.tensor import Tensor

#: Parameters read as plain numbers when the graph is built (not backend values).
STATIC = frozenset({"axes", "shape", "h", "axis", "keepdims", "unbiased", "n", "d", "base"})


class _Located(Exception):
    """A problem at a column of the step's expression."""

    def __init__(self, pos: int, message: str, *, model: bool = False) -> None:
        super().__init__(message)
        self.pos = pos
        self.model = model  # undefined for these numbers (ModelError), not a bad step


def given_value(xp: Any, g: GivenTensor) -> Tensor:
    """A given tensor in the backend's numbers.

    A tensor marked ``rounded = true`` goes through ``xp.matrix`` as one row, so that a
    backend for rounded inputs (symtf.backends.rounded) makes each entry its rounding interval.
    """
    if g.flat is not None:
        m = xp.matrix(g.flat)
        return Tensor(g.shape, [xp.entry(m, 0, k) for k in range(len(g.values))])
    return Tensor(g.shape, [_const(xp, v) for v in g.values])


def _const(xp: Any, v: sympy.Expr) -> Any:
    if v is sympy.S.NegativeInfinity:
        return xp.neg_inf()
    if v is sympy.oo:
        return -xp.neg_inf()
    if v.is_Rational:
        return xp.const(Fraction(int(v.p), int(v.q)))
    return xp.const(v)


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
        out.append(
            Node(g.name, _given_op, (), {"given": g}, _tex_name(g.name), "given", tensors=True)
        )
    for node in steps:
        if node.name in taken:
            raise SpecError(
                f"{node.where}: a step cannot have the name of the model's step {node.name}"
            )
        out.append(
            Node(
                node.name,
                _step_op,
                node.inputs,
                {"step": node, "path": path},
                f"{_tex_name(node.name)} = {lang.latex(node.tree)}",
                node.text,
                tensors=True,
            )
        )
    return out


def _given_op(xp: Any, *, given: GivenTensor) -> Tensor:
    return given_value(xp, given)


def _step_op(xp: Any, *values: Tensor | None, step: StepNode, path: str) -> Tensor:
    """Evaluate one user step from the values of the names it reads.

    Raises:
        SpecError: A step that does not fit (shapes, an index out of range, an unknown
            name), naming the file, the step and the column.
        ModelError: A step undefined for these numbers (a zero variance with ε = 0).
        Undecided: (balls) a sign that cannot be decided at this precision.
    """
    env = dict(zip(step.inputs, values, strict=True))
    try:
        return _Interp(xp, env.get).value(step.tree)
    except _Located as e:
        message = str(lang.error(step.text, step.where, e.pos, str(e)))
        if e.model:  # the pipeline puts the file in front
            raise ModelError(message.removeprefix(f"{path}: ")) from None
        raise SpecError(message) from None
    except Undecided as e:
        if getattr(xp, "name", "") != "exact":
            raise  # balls: the caller retries at a higher precision or exactly
        raise ModelError(f"{step.where.removeprefix(f'{path}: ')}: {e}") from None


def _tex_name(name: str) -> str:
    return lang.latex(lang.Name(0, name))


class _Interp:
    """Evaluates one step's syntax tree to a :class:`Tensor`."""

    def __init__(self, xp: Any, lookup: Callable[[str], Tensor | None]) -> None:
        self.xp = xp
        self.lookup = lookup

    # -- numbers the graph needs as plain Python values --
    def static(self, node: lang.Node, what: str) -> Any:
        match node:
            case lang.Num():
                v = node.value
                return int(v) if v.is_Integer else Fraction(int(v.p), int(v.q))
            case lang.Name() if node.name in ("true", "false"):
                return node.name == "true"
            case lang.Name() if node.name in ("None", "none"):
                return None
            case lang.Unary():
                v = self.static(node.operand, what)
                return -v if node.op == "-" else v
            case lang.ListLit():
                return [self.static(i, what) for i in node.items]
            case lang.Chain():
                acc = self.static(node.first, what)
                for link in node.rest:
                    k = self.static(link.node, what)
                    if link.op == "+":
                        acc = acc + k
                    elif link.op == "-":
                        acc = acc - k
                    elif link.op in ("*", "∘"):
                        acc = acc * k
                    elif link.op == "/":
                        if k == 0:
                            raise _Located(link.pos, f"division by zero in {what}")
                        acc = Fraction(acc) / k
                        if acc.denominator == 1:
                            acc = int(acc)
                    else:
                        raise _Located(link.pos, f"expected a plain number for {what}")
                return acc
            case lang.Power():
                b, e = self.static(node.base, what), self.static(node.exponent, what)
                if not isinstance(e, int) or abs(e) > 64:
                    raise _Located(node.pos, f"expected a small integer power in {what}")
                return Fraction(b) ** e if e < 0 else b**e
        raise _Located(
            node.pos, f"expected a number written in the step for {what} (like 2, -1 or [2, 3])"
        )

    def static_int(self, node: lang.Node, what: str, lo: int | None = None) -> int:
        v = self.static(node, what)
        if isinstance(v, bool) or not isinstance(v, int):
            raise _Located(node.pos, f"expected an integer for {what}, found {v}")
        if lo is not None and v < lo:
            raise _Located(node.pos, f"expected {what} of at least {lo}, found {v}")
        if abs(v) > 100_000:
            raise _Located(node.pos, f"expected {what} of at most 100000, found {v}")
        return v

    # -- values --
    def value(self, node: lang.Node) -> Tensor:
        xp = self.xp
        try:
            match node:
                case lang.Num():
                    return O.scalar(xp.const(Fraction(int(node.value.p), int(node.value.q))))
                case lang.Name():
                    return self.name(node)
                case lang.Unary():
                    v = self.value(node.operand)
                    return O.neg(xp, v) if node.op == "-" else v
                case lang.Chain():
                    acc = self.value(node.first)
                    for link in node.rest:
                        right = self.value(link.node)
                        try:
                            acc = self.binary(link, acc, right)
                        except (ShapeError, IndexError) as e:
                            raise _Located(link.pos, str(e)) from None
                        except ModelError as e:
                            raise _Located(link.pos, str(e), model=True) from None
                    return acc
                case lang.Power():
                    return O.power(xp, self.value(node.base), self.value(node.exponent))
                case lang.Transpose():
                    return O.T(xp, self.value(node.operand))
                case lang.Index():
                    return self.index(node)
                case lang.Call():
                    return self.call(node)
                case lang.ListLit():
                    items = [self.value(i) for i in node.items]
                    return O.stack(xp, items, 0)
                case lang.Slice() | lang.Ellipsis_():
                    raise _Located(node.pos, "a slice or ... can only appear inside an index")
        except (ShapeError, IndexError) as e:
            raise _Located(node.pos, str(e)) from None
        except ZeroDivisionError:
            raise _Located(node.pos, "division by exactly 0", model=True) from None
        except ModelError as e:
            raise _Located(node.pos, str(e), model=True) from None
        raise _Located(
            getattr(node, "pos", 0), f"unexpected {type(node).__name__}"
        )  # pragma: no cover

    def name(self, node: lang.Name) -> Tensor:
        xp = self.xp
        v = self.lookup(node.name)
        if v is not None:
            return v
        constants = {
            "e": lambda: xp.exp(xp.const(1)),
            "pi": xp.pi,
            "π": xp.pi,
            "inf": lambda: -xp.neg_inf(),
            "∞": lambda: -xp.neg_inf(),
            "true": lambda: xp.const(1),
            "false": lambda: xp.const(0),
        }
        if node.name in constants:
            return O.scalar(constants[node.name]())
        raise _Located(
            node.pos, f"unknown name {node.name!r}: no given tensor, step or model step has it"
        )

    def binary(self, link: lang.Link, a: Tensor, b: Tensor) -> Tensor:
        xp = self.xp
        op = link.op
        if op == "*" and link.text in ("×", "·", "⋅"):
            op = "@" if a.size > 1 and b.size > 1 and a.ndim >= 1 and b.ndim >= 1 else "*"
        if op == "+":
            return O.add(xp, a, b)
        if op == "-":
            return O.sub(xp, a, b)
        if op in ("*", "∘"):
            return O.mul(xp, a, b)
        if op == "/":
            return O.div(xp, a, b)
        if op == "@":
            if a.ndim == 0 or b.ndim == 0:
                raise _Located(link.pos, "@ needs two tensors; use * to scale")
            return O.matmul(xp, a, b)
        raise _Located(link.pos, f"unknown operator {link.text}")  # pragma: no cover

    def index(self, node: lang.Index) -> Tensor:
        x = self.value(node.operand)
        items: list[Any] = []
        for it in node.items:
            if isinstance(it, lang.Ellipsis_):
                items.append(Ellipsis)
            elif isinstance(it, lang.Slice):
                parts = [
                    None if p is None else self.int_of(p, "a slice bound")
                    for p in (it.start, it.stop, it.step)
                ]
                if parts[2] == 0:
                    raise _Located(it.pos, "a slice step cannot be 0")
                items.append(slice(*parts))
            else:
                v = self.value(it)
                if v.ndim == 0:
                    items.append(self.int_of_value(v, it.pos))
                elif v.ndim == 1:
                    items.append([self.int_of_value(O.scalar(s), it.pos) for s in v.data])
                else:
                    raise _Located(
                        it.pos,
                        f"expected an integer or a 1-D tensor of integers as an index, found shape {v.shape}",
                    )
        try:
            return O.index(self.xp, x, items)
        except ShapeError as e:
            raise _Located(node.pos, str(e)) from None

    def int_of(self, node: lang.Node, what: str) -> int:
        try:
            return self.static_int(node, what)
        except _Located:
            return self.int_of_value(self.value(node), node.pos)

    def int_of_value(self, v: Tensor, pos: int) -> int:
        if v.size != 1:
            raise _Located(pos, f"expected one integer, found shape {v.shape}")
        k = O.as_int(v.data[0])
        if k is None:
            raise _Located(pos, f"expected an integer index, found {v.data[0]}")
        return k

    # -- calls --
    def call(self, node: lang.Call) -> Tensor:
        xp = self.xp
        params, required, variadic = OPS[node.name]
        bound: dict[str, lang.Node] = {}
        parts: list[lang.Node] = list(node.args) if variadic else []
        if not variadic:
            bound.update(zip(params, node.args, strict=False))
        for k, v in node.kwargs:
            if k in bound:
                raise _Located(v.pos, f"{node.name}: {k} given twice")
            bound[k] = v
        if not variadic:
            missing = [p for p in params[:required] if p not in bound]
            if missing:
                raise _Located(
                    node.pos,
                    f"{node.name}: missing argument {missing[0]} (it takes {', '.join(params)})",
                )

        def arg(name: str, default: Any = None) -> Any:
            if name not in bound:
                return default
            n = bound[name]
            if name in STATIC:
                return self.static(n, f"{node.name}({name}=…)")
            return self.value(n)

        name = node.name
        if name in ("zeros", "ones", "eye", "causal_mask", "sinusoidal"):
            return self.constructor(node, parts, arg)
        if name in ("concat", "stack"):
            tensors = [self.value(p) for p in parts]
            axis = arg("axis", -1 if name == "concat" else 0)
            return (O.concat if name == "concat" else O.stack)(
                xp, tensors, self._int(axis, node, "axis")
            )
        x = arg(params[0])
        unary = {
            "exp": O.exp,
            "ln": O.log,
            "log": O.log,
            "sqrt": O.sqrt,
            "abs": O.absolute,
            "sin": O.sin,
            "cos": O.cos,
            "tanh": O.tanh,
            "sigmoid": O.sigmoid,
            "relu": O.relu,
            "gelu": O.gelu,
            "gelu_tanh": O.gelu_tanh,
            "silu": O.silu,
            "softplus": O.softplus,
            "merge_heads": O.merge_heads,
            "tril": O.tril,
            "triu": O.triu,
        }
        if name in unary:
            return unary[name](xp, x)
        if name == "transpose":
            axes = arg("axes")
            return O.transpose(xp, x, None if axes is None else self._ints(axes, node, "axes"))
        if name in ("reshape", "view"):
            return O.reshape(xp, x, self._ints(arg("shape"), node, "shape"))
        if name == "split_heads":
            return O.split_heads(xp, x, self._int(arg("h"), node, "h"))
        if name in ("max", "min"):
            y = arg("y")
            if y is not None:
                if "axis" in bound or "keepdims" in bound:
                    raise _Located(node.pos, f"{name}(a, b) is element-wise and takes no axis")
                return (O.maximum if name == "max" else O.minimum)(xp, x, y)
            return (O.max_ if name == "max" else O.min_)(
                xp, x, self._axis_arg(arg("axis"), node), self._bool(arg("keepdims", False), node)
            )
        if name in ("sum", "mean"):
            fn = O.sum_ if name == "sum" else O.mean
            return fn(
                xp, x, self._axis_arg(arg("axis"), node), self._bool(arg("keepdims", False), node)
            )
        if name == "argmax":
            ax = arg("axis")
            return O.argmax(
                xp,
                x,
                None if ax is None else self._int(ax, node, "axis"),
                self._bool(arg("keepdims", False), node),
            )
        if name in ("var", "std"):
            fn = O.var if name == "var" else O.std
            return fn(
                xp,
                x,
                self._axis_arg(arg("axis"), node),
                self._bool(arg("keepdims", False), node),
                self._bool(arg("unbiased", False), node),
            )
        if name in ("softmax", "log_softmax"):
            fn = O.softmax if name == "softmax" else O.log_softmax
            return fn(xp, x, self._int(arg("axis", -1), node, "axis"))
        if name == "layernorm":
            return O.layernorm(
                xp,
                x,
                arg("eps"),
                arg("gamma"),
                arg("beta"),
                self._bool(arg("unbiased", False), node),
            )
        if name == "rmsnorm":
            return O.rmsnorm(xp, x, arg("eps"), arg("gamma"))
        if name == "masked_fill":
            return O.masked_fill(xp, x, arg("mask"), arg("value"))
        if name == "dropout":
            return O.dropout(xp, x, arg("keep_mask"), arg("p"))
        if name == "one_hot":
            return O.one_hot(xp, x, self._int(arg("n"), node, "n", 1))
        if name == "cross_entropy":
            return O.cross_entropy(xp, x, arg("target"))
        if name == "nll":
            return O.nll(xp, x, arg("target"))
        if name == "bce":
            return O.bce(xp, x, arg("y"))
        if name == "mse":
            return O.mse(xp, x, arg("b"))
        if name == "rope":
            return O.rope(xp, x, arg("angles"))
        if name == "where":
            return O.where(xp, x, arg("a"), arg("b"))
        raise _Located(node.pos, f"unknown op {name}")  # pragma: no cover

    def constructor(
        self, node: lang.Call, parts: list[lang.Node], arg: Callable[..., Any]
    ) -> Tensor:
        xp = self.xp
        name = node.name
        if name in ("zeros", "ones"):
            dims: list[Any] = []
            for p in parts:
                v = self.static(p, f"{name}(shape)")
                dims.extend(v if isinstance(v, list) else [v])
            shape = self._ints(dims, node, "shape")
            if any(n < 1 for n in shape) or len(shape) > 4:
                raise _Located(node.pos, f"{name}: expected 1 to 4 positive sizes, found {shape}")
            self._size(shape, node)
            return (O.zeros if name == "zeros" else O.ones)(xp, shape)
        n = self._int(arg("n"), node, "n", 1)
        if name == "eye":
            self._size((n, n), node)
            return O.eye(xp, n)
        if name == "causal_mask":
            self._size((n, n), node)
            return O.causal_mask(xp, n)
        d = self._int(arg("d"), node, "d", 1)
        self._size((n, d), node)
        base = arg("base", 10000)
        if isinstance(base, bool) or not isinstance(base, (int, Fraction)) or base <= 0:
            raise _Located(node.pos, f"sinusoidal: expected a positive base, found {base}")
        return O.sinusoidal(xp, n, d, base)

    def _size(self, shape: Any, node: lang.Node) -> None:
        total = 1
        for k in shape:
            total *= k
        if total > 20_000:
            raise _Located(node.pos, f"expected at most 20000 entries, found shape {tuple(shape)}")

    def _int(self, v: Any, node: lang.Node, what: str, lo: int | None = None) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise _Located(node.pos, f"{node.name}: expected an integer {what}, found {v}")
        if lo is not None and v < lo:
            raise _Located(node.pos, f"{node.name}: expected {what} of at least {lo}, found {v}")
        if abs(v) > 100_000:
            raise _Located(node.pos, f"{node.name}: expected {what} of at most 100000, found {v}")
        return v

    def _ints(self, v: Any, node: lang.Node, what: str) -> list[int]:
        if not isinstance(v, list):
            v = [v]
        return [self._int(k, node, what) for k in v]

    def _axis_arg(self, v: Any, node: lang.Node) -> Any:
        if v is None:
            return None
        return self._ints(v, node, "axis") if isinstance(v, list) else self._int(v, node, "axis")

    def _bool(self, v: Any, node: lang.Node) -> bool:
        if not isinstance(v, bool):
            raise _Located(node.pos, f"{node.name}: expected true or false, found {v}")
        return v


__all__ = ["Undecided", "given_value", "step_nodes"]
