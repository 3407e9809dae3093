"""PyTorch: its functions, tensor methods and ``nn`` modules, translated onto ops.

The table holds what PyTorch spells or defaults differently from the other
frameworks (``var`` and ``std`` are unbiased; ``F.cross_entropy`` takes class ids);
:class:`Torch` translates the calls that need more than a table entry: ``nn``
modules with their settings and weights, ``masked_fill`` with a causal mask, and the
calls that return values and indices (``topk``, ``max`` along a dim).
"""

from __future__ import annotations

import ast
from decimal import Decimal, InvalidOperation
from typing import Any

from symtf.draft.templates import Call, Expr, Num, Var, call
from symtf.draft.translate.literals import Literals
from symtf.draft.translate.scope import NnModule, Untranslated, num_text
from symtf.draft.translate.table import AXIS, Translation, binary

__all__ = ["FUNCTIONS", "METHODS", "MODULES", "Torch"]

#: ``torch.*`` and ``torch.nn.functional.*`` functions whose meaning differs from the
#: common table's.
FUNCTIONS: dict[str, Translation] = {
    # F.cross_entropy(logits, target): the mean over rows, integer class targets
    "cross_entropy": Translation(
        "cross_entropy",
        ("input", "target"),
        {"label_smoothing": "label_smoothing"},
        {},
        ("input", "target"),
    ),
    # F.binary_cross_entropy(p, y) and F.mse_loss(a, b): the mean over every entry
    "binary_cross_entropy": binary("bce"),
    "mse_loss": binary("mse"),
    # F.nll_loss(log_probs, target): the mean over rows of −log_probs[row, target]
    "nll_loss": binary("nll"),
    "var": Translation(
        "var",
        ("input", "axis"),
        {**AXIS, "unbiased": "unbiased", "correction": "correction"},
        {"unbiased": True},
    ),
    "std": Translation(
        "std",
        ("input", "axis"),
        {**AXIS, "unbiased": "unbiased", "correction": "correction"},
        {"unbiased": True},
    ),
}

#: Tensor methods beyond the common ones: ``x.masked_fill(m, v)``, ``x.view(…)``.
METHODS: dict[str, Translation] = {
    "masked_fill": Translation("masked_fill", ("mask", "value"), {}, {}, ("self", "mask", "value")),
    "view": Translation("reshape", ("shape",), {}),
    # x.reshape(3, 2), as x.view: the shape is the method's first parameter, not its second
    "reshape": Translation("reshape", ("shape",), {"shape": "shape"}),
    "transpose": Translation("transpose", ("dim0", "dim1"), {}),
    "permute": Translation("transpose", ("axes",), {}),
    # x.t(): a matrix's transpose
    "t": Translation("T", (), {}),
    # x.sub(y), x.mul(y), x.div(y): methods whose function form numpy spells otherwise (a
    # method's first positional is the other operand; the rest of the table reads its
    # receiver as the function's first parameter)
    **{
        name: Translation(name, ("other",), {}, {}, ("self", "other"))
        for name in ("sub", "mul", "div")
    },
}

#: ``torch.nn`` modules: calling an instance applies the op with its settings.
MODULES: dict[str, Translation] = {
    "LayerNorm": Translation(
        "layernorm",
        ("normalized_shape", "eps"),
        {"normalized_shape": None, "eps": "eps", "elementwise_affine": None, "bias": None},
        {"eps": "1e-05"},
    ),
    "Softmax": Translation("softmax", ("dim",), {"dim": "axis"}, {"axis": -1}),
    "ReLU": Translation("relu", (), {"inplace": None}),
    "GELU": Translation("gelu", (), {"approximate": "approximate"}),
    "Tanh": Translation("tanh", ()),
    "Sigmoid": Translation("sigmoid", ()),
    "SiLU": Translation("silu", ()),
    "Linear": Translation(
        "linear",
        ("in_features", "out_features", "bias"),
        {"bias": "bias", "dtype": None, "device": None},
    ),
    "Embedding": Translation(
        "embedding", ("num_embeddings", "embedding_dim"), {"padding_idx": None}
    ),
    # nn.Dropout(p): each call draws a mask (see Torch._dropout)
    "Dropout": Translation("mul", ("p",), {"p": "p", "inplace": None}, {"p": 0.5}),
}

#: Modules whose making draws from the random state (their weights start random).
RANDOM_INIT = frozenset({"Linear", "Embedding"})


class Torch(Literals):
    """PyTorch's calls that need more than a table entry (see the module docstring)."""

    def _torch_method(self, name: str, node: ast.Call) -> Expr | None:
        """``x.unsqueeze(d)`` and ``x.squeeze()``: a reshape to the shape they give (``None``:
        not one of them)."""
        if name not in ("unsqueeze", "squeeze") or node.keywords or len(node.args) > 1:
            return None
        assert isinstance(node.func, ast.Attribute)
        x = self._expr(node.func.value)
        shape = self._shape(x)
        if shape is None:
            raise Untranslated(f".{name}() of a tensor whose shape is not known")
        if name == "unsqueeze":
            if not node.args:
                raise Untranslated("unsqueeze() without an axis")
            d = self._int(node.args[0])
            if not -len(shape) - 1 <= d <= len(shape):
                raise Untranslated(f"unsqueeze({d}) of a tensor of {len(shape)} axes")
            d %= len(shape) + 1
            new = [*shape[:d], 1, *shape[d:]]
        elif node.args:
            d = self._int(node.args[0]) % max(len(shape), 1)
            new = [n for k, n in enumerate(shape) if k != d or n != 1]
        else:
            new = [n for n in shape if n != 1]
        return call("reshape", x, shape=new)

    def _module_of(self, value: ast.expr) -> NnModule | None:
        if not isinstance(value, ast.Call):
            return None
        dotted = self._dotted(value.func)
        if dotted is not None and dotted in self.module_stubs:
            kind = dotted  # "class LayerNorm(nn.Module)" declared without bodies
        elif dotted is None or not dotted.startswith(("torch.nn.", "nn.")):
            return None
        else:
            kind = dotted.rsplit(".", 1)[-1]
        t = MODULES.get(kind)
        if t is None:
            return None
        settings = {}
        for k, a in zip(t.args, value.args, strict=False):
            settings[k] = self._const_or_none(a)
        for kw in value.keywords:
            if kw.arg:
                settings[kw.arg] = self._const_or_none(kw.value)
        return NnModule(kind, settings, stub=dotted in self.module_stubs)

    def _module_weight(self, target: ast.Attribute, value: ast.expr) -> None:
        inner = target.value
        if target.attr == "data" and isinstance(inner, ast.Attribute):
            target, inner = inner, inner.value
        if not isinstance(inner, ast.Name) or inner.id not in self.modules:
            raise Untranslated("assigning to an attribute is not translated")
        m = self.modules[inner.id]
        expr = self._tensor(value)
        if target.attr == "weight":
            m.weight = expr
        else:
            m.bias = expr

    def _apply_module(self, m: NnModule, node: ast.Call) -> Expr:
        if len(node.args) != 1:
            raise Untranslated(f"calling an nn.{m.kind} with {len(node.args)} arguments")
        x = self._expr(node.args[0])
        if m.stub:
            self._loosened.append(f"a class without bodies read by its name as nn.{m.kind}")
        if m.kind == "Linear":
            if m.weight is None:
                raise Untranslated(
                    "an nn.Linear whose weights are random (never set from printed values)"
                )
            out = call("matmul", x, call("T", m.weight))
            bias = m.settings.get("bias", True)
            if bias is not False:
                if m.bias is None:
                    raise Untranslated("an nn.Linear whose bias is random")
                out = call("add", out, m.bias)
            return out
        if m.kind == "Embedding":
            if m.weight is None:
                raise Untranslated("an nn.Embedding whose table is random")
            return call("getitem", m.weight, x, index="{1}")
        if m.kind == "LayerNorm":
            eps = m.settings.get("eps", 1e-05)
            params: dict[str, Any] = {"eps": num_text(eps if eps is not None else 1e-05)}
            out = call("layernorm", x, **params)
            if m.weight is not None:  # weight and bias set from printed values: γ·x̂ + β
                out = call("mul", out, m.weight)
            if m.bias is not None:
                out = call("add", out, m.bias)
            return out
        if m.kind == "Softmax":
            axis = m.settings.get("dim", -1)
            return call("softmax", x, axis=axis if axis is not None else -1)
        if m.kind == "GELU":
            return call("gelu_tanh" if m.settings.get("approximate") == "tanh" else "gelu", x)
        if m.kind == "Dropout":
            return self._dropout(m, x)
        return call(MODULES[m.kind].op, x)

    def _dropout(self, m: NnModule, x: Expr) -> Expr:
        """``dropout(x)``: in training, ``x`` times a mask of 0 and 1/(1 − p) drawn at random.

        The draw is known where the code showed it: right after ``torch.manual_seed(s)``,
        dropping out a tensor of ones prints the mask itself (``tensor([[2., 0., …]])`` at
        p = 0.5). The same seed, the same draw since it, the same p and the same shape draw
        the same mask, so ``dropout(w)`` there is ``w`` times that printed mask. Any other
        draw is not known, and is not translated.
        """
        p_text = num_text(m.settings.get("p", 0.5))
        try:
            rate = Decimal(p_text)
        except InvalidOperation:
            raise Untranslated("a dropout rate that is not a plain number") from None
        if m.settings.get("eval") or rate == 0:
            return x  # no dropout: in eval mode, or p = 0
        if self.rng is None:
            raise Untranslated(
                "dropout draws a random mask, and the random state here is not known"
            )
        seed, drawn = self.rng
        self.rng = (seed, drawn + 1)
        shape = self._shape(x)
        if shape is None:
            raise Untranslated("dropout of a tensor whose shape is not known")
        key = (seed, drawn, p_text, shape)
        mask = self.dropout_masks.get(key)
        if mask is not None:
            return call("mul", x, Var(mask))
        if isinstance(x, Var) and self._all_ones(x.name):
            name = self._fresh("dropout_mask")
            self.dropout_masks[key] = name
            why = f"the mask dropout draws after torch.manual_seed({seed}), shown by its print"
            self.opaque[name] = why
            raise Untranslated(why, stands_for=name)
        raise Untranslated(
            f"dropout draws a random mask; none drawn after torch.manual_seed({seed}) "
            "is shown (a tensor of ones dropped out and printed)"
        )

    def _reshape_args(self, args: list[ast.expr]) -> list[int]:
        """The sizes of ``x.view(b, t, h, d)``; one size the code never defines (``b``, the
        batch of a method's lines shown alone) is the one the others leave, as ``-1`` is:
        a reshape keeps the number of entries, so no other value is possible."""
        if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
            args = list(args[0].elts)
        sizes: list[int] = []
        unknown: list[ast.expr] = []
        for a in args:
            try:
                sizes.append(self._int(a))
            except Untranslated:
                if not self._undefined(a):
                    raise
                unknown.append(a)
                sizes.append(-1)
        if len(unknown) > 1 or (unknown and sizes.count(-1) > 1):
            raise Untranslated(f"{self._source(unknown[-1])} is not a plain number")
        return sizes

    def _undefined(self, node: ast.expr) -> bool:
        """A bare name (or ``self.name``) the code never defines, nor imports."""
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id != "self" or not self._self_unbound():
                return False
            name = node.attr
        elif isinstance(node, ast.Name):
            name = node.id
            if name in self.aliases:
                return False
        else:
            return False
        return not any(
            name in held
            for held in (
                self.names,
                self.consts,
                self.tuples,
                self.dicts,
                self.modules,
                self.opaque,
                self.functions,
                self.buffers,
            )
        )

    def _all_ones(self, step: str) -> bool:
        """Whether a step is ``torch.ones(…)`` (every entry exactly 1)."""
        e = self.exprs.get(step)
        return isinstance(e, Call) and e.op == "ones" and not e.args

    def _masked_fill(self, x: Expr, mask: ast.expr, value: ast.expr) -> Expr:
        """``masked_fill(tril(ones(n, n)) == 0, -inf)`` (or a ``triu(…, diagonal=1)`` mask): the causal mask."""
        v = self._const_or_none(value)
        if v is None or not (isinstance(v, float) and v == float("-inf")):
            return call(
                "masked_fill",
                x,
                self._expr(mask),
                Num(num_text(v)) if v is not None else self._expr(value),
            )
        n = self._causal_size(mask)
        if n is None:
            return call("masked_fill", x, self._expr(mask), Num("-inf"))
        return call("add", x, call("causal_mask", n=n))

    def _causal_size(self, mask: ast.expr) -> int | None:
        """The size n of a causal mask written as a comparison with a triangle of ones."""
        node = mask
        for _ in range(4):  # a mask named on an earlier line: its definition
            if isinstance(node, ast.Name) and node.id in self.defs:
                node = self.defs[node.id]
            elif (
                isinstance(node, ast.Compare)
                and isinstance(node.left, ast.Name)
                and node.left.id in self.defs
            ):
                node = ast.Compare(self.defs[node.left.id], node.ops, node.comparators)
            else:
                break
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "bool"
        ):
            node = node.func.value
        if isinstance(node, ast.Subscript):  # mask[:T, :T]
            node = node.value

        def tri(n: ast.expr) -> tuple[str, int] | None:
            if isinstance(n, ast.Name) and n.id in self.defs:
                n = self.defs[n.id]
            if (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and n.func.attr == "bool"
            ):
                n = n.func.value
            if not isinstance(n, ast.Call):
                return None
            d = self._dotted(n.func) or ""
            which = d.rsplit(".", 1)[-1]
            if which not in ("tril", "triu") or not n.args:
                return None
            inner = n.args[0]
            if not (
                isinstance(inner, ast.Call) and (self._dotted(inner.func) or "").endswith("ones")
            ):
                return None
            dims = self._shape_args(inner.args)
            diagonal = next((self._int(k.value) for k in n.keywords if k.arg == "diagonal"), 0)
            if len(n.args) > 1:
                diagonal = self._int(n.args[1])
            if len(dims) != 2 or dims[0] != dims[1]:
                return None
            return f"{which}{diagonal}", dims[0]

        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq):
            found = tri(node.left)
            zero = self._const_or_none(node.comparators[0])
            if found and found[0] == "tril0" and zero == 0:
                return found[1]
            return None
        found = tri(node)
        if found and found[0] == "triu1":
            return found[1]
        return None

    def _is_topk(self, node: ast.Call) -> bool:
        """A call that gives a pair of values and indices: ``torch.topk`` or ``torch.max(x, dim)``."""
        if isinstance(node.func, ast.Attribute) and node.func.attr == "topk":
            return not self._is_module_call(node.func) or (
                (self._dotted(node.func) or "").startswith("torch.")
            )
        return self._is_max_with_dim(node)

    def _is_max_with_dim(self, node: ast.Call) -> bool:
        """``torch.max(x, 1)``, ``torch.max(x, dim=1)``, ``x.max(dim=1)``: PyTorch's max
        along a dim, which returns the values and the indices (numpy's ``x.max(1)`` and
        ``torch.max(a, b)`` of two tensors return one array)."""
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr != "max":
            return False
        dim_keyword = any(kw.arg == "dim" for kw in node.keywords)
        if self._is_module_call(func):
            if not (self._dotted(func) or "").startswith("torch."):
                return False
            dim = node.args[1] if len(node.args) == 2 else None
        else:
            dim = node.args[0] if len(node.args) == 1 else None
            if not dim_keyword:
                try:
                    if self._array_family("max") != "torch":
                        return False
                except Untranslated:
                    return False
        if dim is not None:
            c = self._const_or_none(dim)
            return isinstance(c, int) and not isinstance(c, bool) and not dim_keyword
        return dim_keyword

    def _topk(self, node: ast.Call) -> tuple[Expr, Expr]:
        """``torch.topk(x, k)``: its values, and its indices (the first k of the stable
        descending argsort: ties by index, as the registry's topk orders them).
        ``torch.max(x, dim)``: the largest entries along ``dim``, and the first index of
        each (PyTorch returns the first of tied maxima, as the registry's argmax does)."""
        self._pair = True
        try:
            values = self._expr(node)
        finally:
            self._pair = False
        if isinstance(values, Call) and values.op == "max":
            return values, call("argmax", values.args[0], **values.kw)
        assert isinstance(values, Call) and values.op == "topk"
        x, kw = values.args[0], values.kw
        axis, k = kw.get("axis", -1), kw["k"]
        if axis == -1:
            index = f"..., 0:{k}"
        else:
            ndim = self._ndim(x) if axis < 0 else axis + 1
            if ndim is None:
                raise Untranslated("topk along an axis of a tensor of unknown rank")
            index = ", ".join([":"] * (axis % ndim) + [f"0:{k}"])
        order = call("argsort", x, axis=axis, descending=kw.get("largest", True))
        return values, call("getitem", order, index=index)
