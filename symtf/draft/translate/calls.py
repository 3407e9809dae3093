"""Calls in the code translated onto ops: framework calls looked up in the table, ``nn``
modules applied, the notebook's own functions inlined, and ``arange`` as a given.

A framework call is looked up in the table (:mod:`symtf.draft.translate.frameworks`);
a call the table does not hold, or whose arguments it does not know, raises
:class:`~symtf.draft.translate.scope.Untranslated` with a reason the draft shows.
"""

from __future__ import annotations

import ast
import re
from typing import Any, cast

from symtf.draft.templates import Expr, Num, Var, call, render
from symtf.draft.translate.composed import Composed
from symtf.draft.translate.events import Given
from symtf.draft.translate.frameworks import lookup, method
from symtf.draft.translate.iteration import (
    Iteration,
    assigned_names,
    quiet_assignment,
    returns_tuple,
    whole_numbers,
)
from symtf.draft.translate.literals import MAX_LITERAL_ENTRIES
from symtf.draft.translate.numpy import Numpy
from symtf.draft.translate.scope import (
    ARRAY_MAKERS,
    MAX_INLINE,
    DecimalText,
    NotebookFunction,
    Unknown,
    Untranslated,
    num_text,
)
from symtf.draft.translate.table import FAMILY_METHODS, Translation
from symtf.draft.translate.tensorflow import Tensorflow
from symtf.draft.translate.torch import Torch

#: dtypes an arange may be asked for: each holds every whole number up to 2**24 exactly
#: (an arange past it is not translated).
_WHOLE_DTYPES = frozenset(
    {"float", "float32", "float64", "double", "int", "int32", "int64", "long"}
)

IDENTITY_METHODS = {
    "detach",
    "numpy",
    "float",
    "double",
    "cpu",
    "clone",
    "copy",
    "contiguous",
    "data",
    "squeeze_",
    "requires_grad_",
}


RANDOM = re.compile(
    r"(?:^|\.)(?:rand\w*|normal|uniform|randint|permutation|shuffle|xavier\w*|kaiming\w*|init\w*)$"
)


_IO = re.compile(
    r"(?:^|\.)(?:open|load\w*|read\w*|save\w*|to_csv|from_pretrained|download\w*|urlopen|get)$"
)


def _changed_in_place(f: NotebookFunction) -> str | None:
    """A parameter the function's body changes in place (``a[0] = …``, ``a.append(…)``,
    ``a += …`` on an index, ``a.fill_(…)``), which the caller would see: its name, or None."""
    params = set(f.params)
    for stmt in f.body:
        for node in ast.walk(stmt):
            target = None
            if isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, ast.Store):
                target = node.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                method = node.func.attr
                if method.endswith("_") or method in ("append", "extend", "insert", "update"):
                    target = node.func.value
            while isinstance(target, (ast.Subscript, ast.Attribute)):
                target = target.value
            if isinstance(target, ast.Name) and target.id in params:
                return target.id
    return None


class Calls(Torch, Tensorflow, Numpy, Composed, Iteration):
    """Translates the calls of the code onto ops, through the frameworks' layers below it."""

    def _arange(self, node: ast.Call) -> Expr:
        """``np.arange(n)``, ``torch.arange(a, b, step)`` of whole numbers: a given of them."""
        r = range(*[self._whole(a) for a in node.args])
        if not 0 < len(r) <= MAX_LITERAL_ENTRIES:
            raise Untranslated(f"arange of {len(r)} entries is not translated")
        if max(abs(r[0]), abs(r[-1])) > 2**24:
            raise Untranslated("an arange past 2**24, where float32 skips whole numbers")
        values = tuple(str(k) for k in r)
        literal = (values, (len(r),), False)
        step = self._anonymous.get(literal)
        if step is None:
            step = self._fresh("arange")
            self._emit(Given(step, values, (len(r),), self._where(node)))
            self._anonymous[literal] = step
        return Var(step)

    @staticmethod
    def _stacked(parts: list[Expr]) -> Expr:
        if not parts:
            raise Untranslated("an empty list is not translated")
        return call("stack", *parts)

    def _call(self, node: ast.Call) -> Expr:
        func = node.func
        if isinstance(func, ast.Name) and func.id in self.functions:
            return self._inline_call(self.functions[func.id], node)
        if isinstance(func, ast.Name) and func.id in self.instances:
            # ln(x): the class's function of the settings it was made with and of x
            made_of, made = self.instances[func.id]
            inputs = made_of.inputs
            settings = len(made_of.function.params) - len(inputs)
            if len(node.args) > len(inputs) or len(made.args) > settings:
                raise Untranslated("a call that does not match its module's forward")
            both = ast.Call(
                made.func,
                list(made.args),
                [
                    *made.keywords,
                    *(ast.keyword(p, a) for p, a in zip(inputs, node.args, strict=False)),
                    *node.keywords,
                ],
            )
            return self._inline_call(made_of.function, ast.copy_location(both, node))
        if isinstance(func, ast.Name) and func.id in self.stubs:
            # def softmax(z): ... — a function without a body, read by its name: the
            # translation is a reading of the name, not of code
            self._loosened.append(f"{func.id}() has no body: read by its name")
            return self._apply(self.stubs[func.id], node.args, node.keywords, family="numpy")
        if isinstance(func, ast.Name) and func.id in self.modules:
            return self._apply_module(self.modules[func.id], node)
        if (
            isinstance(func, ast.Name)
            and func.id == "sum"
            and len(node.args) == 1
            and not node.keywords
            and isinstance(node.args[0], (ast.List, ast.Tuple))
            and node.args[0].elts
        ):  # sum([a, b, c]): Python's sum adds the items one by one, from the first
            items = node.args[0].elts
            total = self._operand(items[0])
            for item in items[1:]:
                total = call("add", total, self._operand(item))
            return total
        if isinstance(func, ast.Name) and func.id in ("float", "int") and node.args:
            if func.id == "int":
                self._loosened.append("int(…) read as the number itself, not truncated")
            return self._expr(node.args[0])
        dotted = self._dotted(func) if self._is_module_call(func) else None
        if dotted is not None and (module := self._module_name(dotted)) is not None:
            mod, fname = module
            if dotted and _IO.search(dotted):
                raise Untranslated(f"{dotted} reads or writes files and is not translated")
            if (mod, fname) in ARRAY_MAKERS and node.args:
                if self._literal(node) is not None:
                    return self._tensor(node)
                held = self._items(node.args[0]) if isinstance(node.args[0], ast.Name) else None
                if held is not None:  # np.array(rows), rows a list of arrays: stacked
                    return self._stacked(held)
                number = self._const_or_none(node.args[0])
                if whole_numbers(number):  # np.array(ids): the whole numbers a list holds
                    return self._ids_given(number, node)
                if isinstance(number, (int, float, DecimalText)) and not isinstance(number, bool):
                    return Num(num_text(number))  # torch.tensor(float("-inf")): a 0-d tensor
                if mod in ("torch", "tensorflow", "jax.numpy"):
                    self.float32 = True  # torch.tensor(x): x stored as float32
                return self._expr(node.args[0])  # an array made from a variable: its values
            if fname == "Parameter" and node.args:  # nn.Parameter(t): the tensor t
                return self._expr(node.args[0])
            if fname in ("ones", "zeros"):
                dims = self._shape_args(node.args)
                dtype = next((k.value for k in node.keywords if k.arg == "dtype"), None)
                name = (self._dotted(dtype) or "") if dtype is not None else ""
                if mod in ("torch", "tensorflow", "jax.numpy"):
                    # filled in later, entry by entry or through slices: stored as float32
                    self.float32 |= not name.endswith(("float64", "double"))
                else:
                    self.float32 |= name.endswith("float32")
                return call(fname, shape=dims)
            if (
                fname == "arange"
                and 1 <= len(node.args) <= 3
                and all(
                    k.arg == "device"
                    or (
                        k.arg == "dtype"
                        and (self._dotted(k.value) or "").rpartition(".")[2] in _WHOLE_DTYPES
                    )
                    for k in node.keywords
                )
            ):  # the whole numbers are the same in a dtype that holds them all
                return self._arange(node)
            if fname in ("ones_like", "zeros_like") and len(node.args) == 1:
                shape = self._shape(self._expr(node.args[0]))
                if shape is None:
                    raise Untranslated(f"{fname} of a tensor whose shape is not known")
                return call(fname.removesuffix("_like"), shape=list(shape))
            numpy_call = self._numpy_call(mod, fname, node)
            if numpy_call is not None:
                return numpy_call
            if fname == "eye" and node.args:
                return call("eye", n=self._int(node.args[0]))
            if fname == "matmul" and mod == "tensorflow" and len(node.args) == 2:
                return self._tf_matmul(node)
            if fname == "cast" and mod == "tensorflow" and node.args:
                return self._tf_cast(node)
            if fname == "masked_fill" and len(node.args) == 3:
                return self._masked_fill(self._expr(node.args[0]), node.args[1], node.args[2])
            if RANDOM.search(fname):
                if self._dry and fname in ("rand", "randn", "random", "normal", "uniform"):
                    drawn = [self._int(a) for a in node.args if not isinstance(a, ast.Tuple)]
                    if not drawn and node.args and isinstance(node.args[0], ast.Tuple):
                        drawn = self._shape_args(node.args)
                    for kw in node.keywords:
                        if kw.arg == "size":
                            drawn = self._shape_args([kw.value])
                    if drawn:  # only its shape is wanted
                        return call("zeros", shape=drawn)
                raise Untranslated(f"random values ({dotted}) are not translated")
            composed = self._composed(mod, fname, node)
            if composed is not None:
                return composed
            t = lookup(mod, fname)
            if t is None:
                raise Untranslated(f"no translation for {dotted} yet")
            return self._apply(t, node.args, node.keywords, family=mod)
        got = self._dict_get(node)
        if got is not None:  # E.get(word, default), {"cat": e_cat, …}.get(w, e_the)
            return got
        if isinstance(func, ast.Attribute):
            # a method of a tensor: x.softmax(dim=-1), x.masked_fill(m, v), x.view(…)
            if func.attr in IDENTITY_METHODS or func.attr in ("item", "tolist", "to", "type"):
                if func.attr in ("to", "type") and self._changes_dtype(node):
                    self._loosened.append(f"{self._source(node)} read as no change of type")
                return self._expr(func.value)
            if func.attr == "masked_fill" and len(node.args) == 2:
                return self._masked_fill(self._expr(func.value), node.args[0], node.args[1])
            if func.attr in ("size",) and node.args:
                raise Untranslated("a size used as a tensor is not translated")
            reshaped = self._torch_method(func.attr, node) or self._composed_method(func.attr, node)
            if reshaped is not None:
                return reshaped
            t = method(func.attr)
            if t is None:
                raise Untranslated(f"no translation for the method .{func.attr}() yet")
            family = "torch"
            if func.attr in FAMILY_METHODS:
                # x.var() is unbiased on a PyTorch tensor and not on a numpy array: the
                # imports say which the code's arrays are, or the method is not translated
                family = self._array_family(func.attr)
                t = lookup(family, func.attr) or t
            self_expr = self._expr(func.value)
            return self._apply(
                t,
                node.args,
                node.keywords,
                family=family,
                self_expr=self_expr,
                self_node=func.value,
            )
        raise Untranslated(f"{self._source(node)} is not translated")

    def _changes_dtype(self, node: ast.Call) -> bool:
        """Whether ``x.to(…)`` or ``x.type(…)`` names a type other than float32 and float64
        (a device, ``"cpu"``, changes no value)."""
        for a in [*node.args, *(k.value for k in node.keywords if k.arg == "dtype")]:
            if isinstance(a, ast.Constant) and isinstance(a.value, str):
                if a.value.startswith(("cpu", "cuda", "mps")):
                    continue
                return True
            name = (self._dotted(a) or "").rsplit(".", 1)[-1]
            if name not in ("float32", "float", "float64", "double", "device") and not (
                isinstance(a, ast.Name) and a.id == "device"
            ):
                return True
        return False

    def _inline_call(self, f: NotebookFunction, node: ast.Call) -> Expr:
        """A call of a notebook function used as one value."""
        value = self._call_function(f, node)
        if isinstance(value, list):
            raise Untranslated("a function that returns several values, used as one value")
        return value

    def _call_function(self, f: NotebookFunction, node: ast.Call) -> Expr | list[Expr]:
        """A call of a function the notebook defines, translated where it is called.

        Its parameters are bound to the arguments (or to their defaults: ``def
        layer_norm(x, eps=1e-5)``), its body is translated statement by statement (what
        it prints is printed by the call), and its ``return`` gives the value, or the
        values of a tuple (``return out, weights``). The caller's names are as they were
        afterwards.

        Raises:
            Untranslated: A call that does not fit the parameters, a body nested too
                deeply, a return inside a loop or an ``if``, or a return that is not
                translated.
        """
        if self._inline >= MAX_INLINE:
            raise Untranslated("functions nested too deeply to inline")
        if len(node.args) > len(f.params) or any(
            k.arg is None or k.arg not in f.params for k in node.keywords
        ):
            raise Untranslated("a call that does not match its function's parameters")
        args: dict[str, Any] = {}
        # a function that returns a tuple may make some of its values without an argument
        # that is not translated; any other needs every argument
        argument = self._argument_or_unknown if returns_tuple(f) else self._argument_at
        for p, a in zip(f.params, node.args, strict=False):
            args[p] = argument(a, node)
        for k in node.keywords:
            assert k.arg is not None
            args[k.arg] = argument(k.value, node)
        for p in f.params:
            if p not in args:
                if p not in f.defaults:
                    raise Untranslated(f"a call without a value for the parameter {p}")
                args[p] = self._argument(f.defaults[p])
        changed = _changed_in_place(f)
        if changed:
            raise Untranslated(f"a function that changes its argument {changed} in place")
        saved = self._save_scope()
        self._inline += 1
        try:
            for p, v in args.items():
                self._bind_value(p, v, node, f"{p} = {self._source(node)}")
            unknown = any(isinstance(v, Unknown) for v in args.values())
            for s in f.body:
                if isinstance(s, ast.Return):
                    if s.value is None:
                        raise Untranslated("a function that returns nothing")
                    return self._returned(s.value, unknown=unknown)
                if any(isinstance(n, ast.Return) for n in ast.walk(s)):
                    raise Untranslated("a return inside a loop or an if is not translated")
                if unknown and quiet_assignment(s):
                    try:
                        self._nested_statement(s)
                    except Untranslated as e:  # it reads the unknown argument: so do its names
                        for t in assigned_names(s):
                            self._bind_value(t, Unknown(str(e)), s)
                    continue
                self._nested_statement(s)
            raise Untranslated("a function without a return")
        finally:
            self._inline -= 1
            self._restore_scope(saved)

    def _returned(self, node: ast.expr, *, unknown: bool = False) -> Expr | list[Expr]:
        """The value a function returns; with ``unknown`` arguments, a tuple's values that
        read them are :class:`Unknown` (the others are translated), never all of them."""
        if isinstance(node, ast.Tuple):
            if not unknown:
                return [self._operand(e) for e in node.elts]
            out: list[Any] = []
            for e in node.elts:
                try:
                    out.append(self._operand(e))
                except Untranslated as why:
                    out.append(Unknown(str(why)))
            if all(isinstance(v, Unknown) for v in out):
                raise Untranslated(out[0].reason)
            return out
        return self._operand(node)

    def _apply(
        self,
        t: Translation,
        args: list[ast.expr],
        keywords: list[ast.keyword],
        *,
        family: str,
        self_expr: Expr | None = None,
        self_node: ast.expr | None = None,
    ) -> Expr:
        named: dict[str, ast.expr] = {}
        if t.op == "reshape" and len(args) > 1 and self_expr is not None:
            args = [ast.Tuple(list(args), ast.Load())]  # x.view(1, 2, 2): the shape as positionals
        positional = t.args
        if self_expr is not None and positional[:1] == ("input",):
            # a function's first parameter is a method's receiver: a.matmul(b) is
            # matmul(a, b), and x.mean(-1) is mean(x, -1), not mean(-1)
            positional = positional[1:]
        for k, a in zip(positional, args, strict=False):
            named[k] = a
        if len(args) > len(positional):
            raise Untranslated(f"{t.op} with {len(args)} positional arguments is not translated")
        for kw in keywords:
            if kw.arg is None:
                raise Untranslated("**keywords are not translated")
            named[kw.arg] = kw.value
        params: dict[str, Any] = dict(t.defaults)
        params["_dim_keyword"] = family == "torch" and (
            "dim" in named
            or (t.op in ("max", "min") and len(args) > 1 and self_expr is None)
            or (self_expr is not None and args and family == "torch" and "axis" not in named)
        )
        tensors: list[Expr] = []
        for k in t.tensors:
            if k == "self":
                assert self_expr is not None
                tensors.append(self_expr)
            elif t.listed and k == t.tensors[0]:
                node = named.get(k)
                items = self._items(node) if node is not None else None
                if items is None:
                    raise Untranslated(
                        "a list of tensors that is not written out is not translated"
                    )
                tensors.extend(items)
            elif k in named:
                tensors.append(self._operand(named[k]))
            elif k == "input" and self_expr is not None:
                tensors.append(self_expr)
        if self_expr is not None and "input" in t.tensors and "input" not in named and not tensors:
            tensors.append(self_expr)
        for k, a in named.items():
            if k in t.tensors or k == "input":
                continue
            target = t.params.get(
                k,
                k
                if k
                in (
                    "axis",
                    "keepdims",
                    "eps",
                    "diagonal",
                    "approximate",
                    "decimals",
                    "shape",
                    "axes",
                    "dim0",
                    "dim1",
                    "unbiased",
                    "ddof",
                    "correction",
                )
                else "?",
            )
            if target == "?":
                raise Untranslated(f"the argument {k}= of {t.op} is not translated")
            if target is None:
                continue
            params[target] = (
                self._const_or_none(a)
                if target != "shape"
                else (self._reshape_args if t.op == "reshape" else self._shape_args)(
                    [a] if not isinstance(a, (ast.Tuple, ast.List)) else a.elts
                )
            )
            if params[target] is None and target not in ("axis",):
                raise Untranslated(f"the argument {k}= of {t.op} is not a plain number")
        return self._finish(t.op, tensors, params, self_node)

    def _no_number_in_product(self, xs: list[Expr]) -> None:
        """A matrix product (``dot``, ``matmul``, ``@``) is of arrays: ``@`` of a number is
        an error in numpy and PyTorch, and so is ``torch.dot(x, 6)``; a loop written so
        computed nothing its print could show (what it printed came from other code).

        Raises:
            Untranslated: An operand known to be a number.
        """
        for x in xs:
            if self._shape(x) == ():
                raise Untranslated(
                    f"a matrix product (dot, matmul, @) with the number {render(x, {})} as a "
                    "factor is not translated"
                )

    def _finish(
        self, op: str, xs: list[Expr], params: dict[str, Any], self_node: ast.expr | None
    ) -> Expr:
        """The op with the parameters the step language takes."""
        dim_keyword = params.pop("_dim_keyword", False)
        if op == "matmul":
            self._no_number_in_product(xs)
        if (
            op in ("max", "min")
            and dim_keyword
            and not (op == "max" and self._pair and isinstance(params.get("axis"), int))
        ):
            raise Untranslated(
                f"torch's {op}(dim) returns values and indices: translated when unpacked"
                if op == "max"
                else f"torch's {op}(dim) returns values and indices; not translated"
            )
        if "ddof" in params:
            params["unbiased"] = params.pop("ddof") == 1
        if "correction" in params:
            params["unbiased"] = params.pop("correction") == 1
        if op == "round":
            # a print format: the claim reads the printed digits (as a step, read loosely)
            self._loosened.append(
                f"a rounding to {params.get('decimals', 0)} decimals read as none"
            )
            return xs[0]
        if op in ("tril", "triu"):
            if params.get("diagonal", 0) not in (0, None):
                raise Untranslated(f"{op} with diagonal={params['diagonal']} is not translated yet")
            return call(op, xs[0])
        if op == "gelu":
            return call("gelu_tanh" if params.get("approximate") == "tanh" else "gelu", xs[0])
        if op == "transpose":
            return self._transpose(xs[0], params)
        if op == "reshape":
            shape = params.get("shape")
            if not shape:
                raise Untranslated("a reshape to a shape that is not written out")
            return call("reshape", xs[0], shape=list(shape))
        if op == "layernorm":
            kw = {"eps": num_text(params.get("eps", 0))}
            out = call("layernorm", xs[0], **kw)
            if len(xs) > 1:
                raise Untranslated("a layer norm with weights is not translated yet")
            return out
        if op in ("mean", "sum", "max", "min", "var", "std"):
            kw2: dict[str, Any] = {}
            if params.get("axis") is not None:
                kw2["axis"] = params["axis"]
            if params.get("keepdims"):
                kw2["keepdims"] = True
            if op in ("var", "std") and params.get("unbiased"):
                kw2["unbiased"] = True
            return call(op, xs[0], **kw2)
        if op in ("softmax", "log_softmax"):
            axis = params.get("axis")
            if axis is None:
                raise Untranslated(f"{op} over the whole array (no axis) is not translated")
            return call(op, xs[0], axis=axis)
        if op in ("concat", "stack"):
            return call(op, *xs, axis=params.get("axis", 0) or 0)
        if op == "cross_entropy":
            smoothing = params.get("label_smoothing", 0)
            kw3 = {} if smoothing in (0, None) else {"label_smoothing": num_text(smoothing)}
            return call("cross_entropy", *xs, **kw3)
        if op == "argmax":
            kw4: dict[str, Any] = {}
            if params.get("axis") is not None:
                kw4["axis"] = params["axis"]
            if params.get("keepdims"):
                kw4["keepdims"] = True
            return call("argmax", xs[0], **kw4)
        if op == "flatten":
            if params.get("start", 0) not in (0, None) or params.get("end", -1) not in (-1, None):
                raise Untranslated("flatten of some axes only is not translated")
            return call("reshape", xs[0], shape=[-1])
        if op == "topk":
            if not self._pair:
                raise Untranslated("topk gives values and indices: translated when unpacked")
            if params.get("sorted") is False or params.get("k") is None:
                raise Untranslated("topk with sorted=False or no k is not translated")
            kw5: dict[str, Any] = {"k": params["k"]}
            if params.get("axis") not in (None, -1):
                kw5["axis"] = params["axis"]
            if params.get("largest") is False:
                kw5["largest"] = False
            return call("topk", xs[0], **kw5)
        if op in ("linear", "embedding"):
            raise Untranslated(f"{op} is not translated")
        return call(op, *xs)

    def _transpose(self, x: Expr, params: dict[str, Any]) -> Expr:
        axes = params.get("axes")
        if axes is not None:
            return call("transpose", x, axes=list(axes))
        d0, d1 = params.get("dim0"), params.get("dim1")
        if d0 is None and d1 is None:
            return call("T", x)
        ndim = self._ndim(x)
        if ndim is None:
            raise Untranslated("a transpose of a tensor of unknown rank")
        a, b = cast(int, d0) % ndim, cast(int, d1) % ndim  # transpose(dim0, dim1) names both
        if {a, b} == {ndim - 1, ndim - 2}:
            return call("T", x)
        perm = list(range(ndim))
        perm[a], perm[b] = perm[b], perm[a]
        return call("transpose", x, axes=perm)
