"""Prints matched with what the code printed: each printed value becomes a claim on a step.

Each ``print`` writes one group of lines to the stream; ``display`` and a cell's last
expression are its results. A print's arguments say what it shows (a label, a value,
an f-string's decimals), and the values read from its output group, in order, are
the claims.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from typing import Any

from symtf.draft.templates import Expr, Var, variables
from symtf.draft.translate.calls import IDENTITY_METHODS, RANDOM
from symtf.draft.translate.draws import NumpyStream
from symtf.draft.translate.events import SIZE, Note, Shown, Step
from symtf.draft.translate.prints import (
    all_fixed,
    blanked,
    is_display_repr,
    is_size,
    join_group,
    one_list,
    output_groups,
    output_lines,
    read_values,
)
from symtf.draft.translate.scope import MAX_INLINE, NUMPY_PRECISION, Untranslated
from symtf.draft.translate.sources import Block
from symtf.draft.translate.texts import Texts

#: Methods that change a list, a dict or an array in place.
_MUTATORS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "pop",
        "popitem",
        "remove",
        "clear",
        "update",
        "setdefault",
        "sort",
        "reverse",
        "fill",
        "put",
        "resize",
        "itemset",
    }
)
#: A printf-style conversion of ``"…" % values``.
_PRINTF = re.compile(
    r"%(?P<key>\([^)]*\))?[-+ #0]*(?P<width>\*|\d+)?(?:\.(?P<precision>\*|\d+))?"
    r"[hlL]?(?P<kind>[diouxXeEfFgGcrsa%])"
)
#: Functions that round what they are given to some decimals (a print format when shown).
_ROUND_FUNCTIONS = frozenset({"numpy.round", "numpy.around", "torch.round", "round"})
#: Modules whose calls change no array given to them (plots, display).
_NO_SIDE_EFFECTS = ("matplotlib", "seaborn", "plotly", "IPython", "pandas", "print", "display")

#: Prints of whole numbers as ``1.`` (each exact), and prints at numpy's precision.
_TORCH = ("torch", "tensorflow")
_NUMPY = ("numpy", "tensorflow")


class Outputs(Texts):
    """Prints and the output they wrote (see the module docstring)."""

    def _expression_statement(self, stmt: ast.Expr, *, is_last: bool) -> Any:
        v = stmt.value
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and self._autograd_call(v):
            return None
        if isinstance(v, ast.Call):
            if isinstance(v.func, ast.Name) and v.func.id in self.procedures:
                self._run_procedure(v.func.id, v, stmt)
                return None
            dotted = self._dotted(v.func)
            if dotted in ("print", "display", "IPython.display.display"):
                how = "print" if dotted == "print" else "display"
                return (how, self._noted(stmt, [x for a in v.args for x in self._shown_args(a)]))
            if self._changes_in_place(v, stmt):
                return None
            if dotted and dotted.endswith("set_printoptions"):
                for kw in v.keywords:
                    if kw.arg == "precision":
                        p = self._const_or_none(kw.value)
                        if isinstance(p, int):
                            if dotted.startswith("torch"):
                                self.torch_precision = p
                            else:
                                self.np_precision = p
                return None
            if isinstance(v.func, ast.Attribute) and isinstance(v.func.value, ast.Attribute):
                # lin.weight.copy_(torch.tensor(...)), lin.weight.data.fill_(…)
                owner = v.func.value
                if owner.attr in ("weight", "bias", "data") and v.func.attr == "copy_" and v.args:
                    self._module_weight(owner, v.args[0])
                    return None
            seed = self._const_or_none(v.args[0]) if len(v.args) == 1 else None
            if dotted == "torch.manual_seed" and isinstance(seed, int) and not v.keywords:
                self.rng = (seed, 0)  # the draws from here on are known by their order
                return None
            if dotted == "numpy.random.seed" and isinstance(seed, int) and not v.keywords:
                # numpy's legacy stream: its draws from here on are numpy's RandomState(seed)'s
                self.np_stream = NumpyStream(seed) if not isinstance(seed, bool) else None
                return None
            if isinstance(v.func, ast.Attribute) and isinstance(v.func.value, ast.Name):
                module = self.modules.get(v.func.value.id)
                if module is not None and v.func.attr in ("eval", "train"):
                    # dropout.eval() (or .train(False)): no mask drawn; .train() draws again
                    flag = self._const_or_none(v.args[0]) if v.args else True
                    module.settings["eval"] = v.func.attr == "eval" or flag is False
                    return None
            if dotted and (
                RANDOM.search(dotted) or "manual_seed" in dotted or dotted.endswith("seed")
            ):
                self.rng = None
                self.np_stream = None
                self._emit(
                    Note(self._where(stmt), self._source(stmt), "random state is not translated")
                )
                return None
        if is_last and not isinstance(v, ast.Constant):
            return ("last", self._noted(stmt, self._shown_args(v)))
        self._emit(
            Note(self._where(stmt), self._source(stmt), "an expression statement is not translated")
        )
        return None

    def _run_procedure(self, name: str, call: ast.Call, stmt: ast.stmt) -> None:
        """``example()`` of a function with no parameters and no return: its body is walked
        here, statement by statement (what it prints, this statement prints); its local
        names are gone afterwards, as Python's are."""
        if call.args or call.keywords:
            raise Untranslated(f"{name}() takes no arguments")
        if self._inline >= MAX_INLINE:
            raise Untranslated("functions nested too deeply to inline")
        saved = self._save_scope()
        self._inline += 1
        try:
            for s in self.procedures[name]:
                self._nested_statement(s)
        finally:
            self._inline -= 1
            self._restore_scope(saved)

    def _changes_in_place(self, v: ast.Call, stmt: ast.stmt) -> bool:
        """A call that changes its receiver or arguments in place: ``rows.append(x)`` on a
        list of tensors is followed; anything else (``d.update(…)``, ``np.random.shuffle(x)``,
        ``np.fill_diagonal(m, 0)``) leaves what it may change unknown from here on.
        Returns whether the statement was handled."""
        func = v.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            owner = func.value.id
            if func.attr == "append" and len(v.args) == 1 and self._append_const(owner, v.args[0]):
                return True  # generated.append(next_id): a list of whole numbers or words
            if func.attr == "append" and owner in self.tuples and len(v.args) == 1:
                try:
                    self.tuples[owner].append(self._operand(v.args[0]))
                except Untranslated as e:
                    self._lose(owner, stmt, str(e))
                return True
            if func.attr in _MUTATORS and self._holds(owner):
                self._lose(owner, stmt, f".{func.attr}() changes {owner} in place")
                return False
        dotted = self._dotted(func) or ""
        if self._is_module_call(func) and not dotted.startswith(_NO_SIDE_EFFECTS):
            for a in v.args:  # an array given to a function whose result is dropped
                if isinstance(a, ast.Name) and self._holds(a.id):
                    self._lose(a.id, stmt, f"{dotted} may change {a.id} in place")
        return False

    def _append_const(self, owner: str, item: ast.expr) -> bool:
        """``ids.append(k)`` of a whole number or a word the translation knows, to a list
        of them (or an empty one): kept as constants. Returns whether it was handled."""
        held = self.consts.get(owner)
        if not (isinstance(held, tuple) or self.tuples.get(owner) == []):
            return False
        c = self._const_or_none(item)
        if not isinstance(c, (int, str)) or isinstance(c, bool):
            return False
        self.consts[owner] = (*(held if isinstance(held, tuple) else ()), c)
        self.tuples.pop(owner, None)
        return True

    def _holds(self, name: str) -> bool:
        """Whether a name holds a value the translation reads (a tensor, a list, a dict)."""
        return (
            name in self.names
            or name in self.tuples
            or name in self.dicts
            or name in self.buffers
            or name in self.lazy
            or isinstance(self.consts.get(name), tuple)
        )

    def _lose(self, name: str, stmt: ast.stmt, why: str) -> None:
        """What ``name`` (and every name holding the same array) holds is not known from
        here on: it was changed in a way not translated."""
        names = [name, *self._aliases(name)]
        for n in names:
            for held in (self.names, self.tuples, self.dicts, self.buffers, self.lazy):
                held.pop(n, None)
            self.consts.pop(n, None)
            self.opaque[n] = f"{self._where(stmt)}: {why} (not translated)"
        self._emit(Note(self._where(stmt), self._source(stmt), why, tuple(names)))

    def _noted(self, stmt: ast.stmt, items: list[Any]) -> list[Any]:
        """A printed value that cannot be translated is also a note on its statement."""
        for kind, expr, _label, _d, why in items:
            if kind == "value" and expr is None and why:
                reason = json.loads(why)[0]
                self._emit(Note(self._where(stmt), self._source(stmt), reason))
                break
        return items

    def _shown_args(
        self, node: ast.expr
    ) -> list[tuple[str, Expr | None, str, int | None, str | None]]:
        """What one printed argument shows: ``(kind, expr, label, decimals, why-not)`` per part.

        A string is text; an f-string is its text and its values (``{x:.4f}``: 4 decimals).
        """
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [("text", None, node.value, None, None)]
        built = self._text_parts(node)
        if built is not None:  # row = f"{t:>4} | " + " | ".join(…): what the string shows
            return built
        formatted = self._formatted(node)
        if formatted is not None:  # "shape: {}".format(x.shape): words, not values
            return [("text", None, formatted, None, None)]
        if isinstance(node, ast.JoinedStr):
            out = []
            for part in node.values:
                if isinstance(part, ast.FormattedValue):
                    decimals = None
                    spec = part.format_spec
                    if (
                        isinstance(spec, ast.JoinedStr)
                        and spec.values
                        and isinstance(spec.values[0], ast.Constant)
                    ):
                        # {x:.4f}: 4 decimals; {x:.3} and {x:.3g} count significant digits,
                        # {x:.1%} a percentage: both read from their digits
                        m = re.fullmatch(r"[^.]*\.(\d+)[fF]", str(spec.values[0].value))
                        decimals = int(m.group(1)) if m else None
                    kind, expr, label, d, why = self._shown_args(part.value)[0]
                    out.append((kind, expr, label, decimals if decimals is not None else d, why))
                elif isinstance(part, ast.Constant):
                    out.append(("text", None, str(part.value), None, None))
            return out
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Mod)
            and isinstance(node.left, ast.Constant)
            and isinstance(node.left.value, str)
        ):
            return self._percent_formatted(node.left.value, node.right)
        label = self._source(node)
        entries = self._formatted_entries(node)
        if entries is not None:  # print(format_matrix(attn, …)): attn's entries, as text
            try:
                return [("value", self._tensor_or_const(entries[0]), label, entries[1], None)]
            except Untranslated:
                pass  # read as any other call below
        parts = self._tuple_parts(node)
        if parts is not None:  # print(grads): (tensor([…]),) — each element in turn
            return [
                ("value", p, label, None, None)
                if not isinstance(p, str)
                else ("value", None, label, None, json.dumps([p, None]))
                for p in parts
            ]
        target, decimals = node, None
        if isinstance(node, ast.Call):
            # np.round(x, 2) is the module's function (its first argument is what is shown);
            # x.round(2) a method of the value shown
            given = {k.arg: k.value for k in node.keywords if k.arg is not None}
            if self._dotted(node.func) in _ROUND_FUNCTIONS:
                digits = node.args[1] if len(node.args) == 2 else given.get("decimals")
                if node.args and digits is not None:
                    decimals = self._int_or_none(digits)
                    target = node.args[0]
            elif isinstance(node.func, ast.Attribute) and node.func.attr == "round":
                digits = node.args[0] if len(node.args) == 1 else given.get("decimals")
                if digits is not None:
                    decimals = self._int_or_none(digits)
                    target = node.func.value
        if is_size(target):
            return [("value", None, label, decimals, json.dumps([SIZE, None]))]
        if (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Name)
            and isinstance(words := self.consts.get(target.value.id), tuple)
            and any(isinstance(w, str) for w in words)
        ):  # doc_tokens[top_idx[i]]: one of a list of words, whichever it is (no value)
            return [("text", None, "", None, None)]
        c = self._const_or_none(target) if decimals is None else None
        if isinstance(c, (str, bool, int, tuple)):
            # a word, a loop's index, a count: printed as written, not a value computed
            shown = str(list(c)) if isinstance(c, tuple) else str(c)
            return [("text", None, shown, None, None)]
        try:
            value = self._tensor_or_const(target)
            if self._loosened:  # read loosely: a step of its own remembers it
                step = self._fresh("shown")
                self._emit(Step(step, value, self._where(node), label))
                value = Var(step)
            return [("value", value, label, decimals, None)]
        except Untranslated as e:
            # print(scores.detach().numpy()): the variable shown, through the reads that
            # change no value
            base = target
            while True:
                if isinstance(base, ast.Call) and not base.args and not base.keywords:
                    base = base.func
                if isinstance(base, ast.Attribute) and base.attr in (
                    *IDENTITY_METHODS,
                    "item",
                    "tolist",
                ):
                    base = base.value
                    continue
                break
            name = e.stands_for or (base.id if isinstance(base, ast.Name) else None)
            return [("value", None, label, decimals, json.dumps([str(e), name]))]

    def _formatted_entries(self, node: ast.expr) -> tuple[ast.expr, int | None] | None:
        """The tensor a call of the notebook's own formatting function shows, and the
        decimals it shows it to.

        A function that returns text (``"\\n".join(lines)``, an f-string) and formats
        entries of its first parameter (``f"{attn[i, j]:.{precision}f}"``), and nothing
        else computed from it, prints that tensor: ``print(format_matrix(attn, rows,
        cols))`` shows ``attn``. The decimals come from the format (``.3f``, or
        ``.{precision}f`` with the parameter's value at the call or its default).
        """
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in self.functions
            and node.args
        ):
            return None
        f = self.functions[node.func.id]
        if not f.params or not _returns_text(f.body):
            return None
        param = f.params[0]
        specs: list[ast.expr | None] = []
        for n in (n for s in f.body for n in ast.walk(s)):
            if not isinstance(n, ast.FormattedValue):
                continue
            reads = any(isinstance(x, ast.Name) and x.id == param for x in ast.walk(n.value))
            if not reads:
                continue
            entry = isinstance(n.value, ast.Subscript) and (
                isinstance(n.value.value, ast.Name) and n.value.value.id == param
            )
            if not entry:
                return None  # it shows something computed from the tensor, not its entries
            specs.append(n.format_spec)
        if not specs:
            return None
        decimals = {self._spec_decimals(spec, f, node) for spec in specs}
        return node.args[0], decimals.pop() if len(decimals) == 1 else None

    def _spec_decimals(self, spec: ast.expr | None, f: Any, call: ast.Call) -> int | None:
        """The decimals of a format spec ``.3f`` or ``.{precision}f`` (``None`` if another)."""
        if not isinstance(spec, ast.JoinedStr):
            return None
        written = ""
        for part in spec.values:
            if isinstance(part, ast.Constant):
                written += str(part.value)
            elif isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name):
                name = part.value.id
                if name not in f.params:
                    return None
                k = f.params.index(name)
                given = {kw.arg: kw.value for kw in call.keywords if kw.arg is not None}
                value = (
                    call.args[k] if k < len(call.args) else given.get(name, f.defaults.get(name))
                )
                n = self._int_or_none(value) if value is not None else None
                if n is None:
                    return None
                written += str(n)
            else:
                return None
        m = re.fullmatch(r"[^.]*\.(\d+)[fF]", written)
        return int(m.group(1)) if m else None

    def _percent_formatted(
        self, fmt: str, right: ast.expr
    ) -> list[tuple[str, Expr | None, str, int | None, str | None]]:
        """``"sum = %.3f" % x``: the text and the values, as an f-string's (``%.3f``: 3
        decimals; ``%e`` and ``%g`` read from their digits). ``%d`` of a value truncates
        it, and ``%x`` or ``%c`` writes no decimal: such a value is not read as the value."""
        args = list(right.elts) if isinstance(right, ast.Tuple) else [right]
        out: list[tuple[str, Expr | None, str, int | None, str | None]] = []
        at = 0
        for m in _PRINTF.finditer(fmt):
            if m.start() > at:
                out.append(("text", None, fmt[at : m.start()], None, None))
            at = m.end()
            kind, precision = m.group("kind"), m.group("precision")
            if kind == "%":
                out.append(("text", None, "%", None, None))
                continue
            if not args or m.group("width") == "*" or precision == "*" or m.group("key"):
                why = "a %-format whose values are not told apart"
                return [("value", None, fmt, None, json.dumps([why, None]))]
            arg = args.pop(0)
            shown = self._shown_args(arg)[0]
            if kind in "diouxXc":
                c = self._const_or_none(arg)
                if kind not in "diu" or not (isinstance(c, int) and not isinstance(c, bool)):
                    why = f"{self._source(arg)} printed with %{kind}, " + (
                        "which truncates it" if kind in "diu" else "not as its decimal value"
                    )
                    shown = ("value", None, self._source(arg), None, json.dumps([why, None]))
            elif kind in "fF" and shown[0] == "value":
                decimals = int(precision) if precision is not None else 6
                shown = (shown[0], shown[1], shown[2], decimals, shown[4])
            out.append(shown)
        if args:
            why = "a %-format with more values than conversions"
            return [("value", None, fmt, None, json.dumps([why, None]))]
        if at < len(fmt):
            out.append(("text", None, fmt[at:], None, None))
        return out

    def _formatted(self, node: ast.expr) -> str | None:
        """``"…{}…".format(a, b)`` with arguments the translation knows as words, whole
        numbers or shapes (``x.shape``): the text it prints (``None`` otherwise)."""
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
            and isinstance(node.func.value, ast.Constant)
            and isinstance(node.func.value.value, str)
            and not node.keywords
        ):
            return None
        args: list[Any] = []
        for a in node.args:
            if isinstance(a, ast.Attribute) and a.attr == "shape":
                try:
                    args.append(tuple(self._shape_of_node(a.value)))
                except Untranslated:
                    return None
                continue
            c = self._const_or_none(a)
            if not isinstance(c, (str, int)) or isinstance(c, bool):
                return None
            args.append(c)
        template = node.func.value.value
        if re.search(r"\{[^{}]*[!:.\[]", template):
            return None  # conversions, format specs, attribute lookups: not read
        try:
            return template.format(*args)
        except (IndexError, KeyError, ValueError):
            return None

    def _assigned(self, stmt: ast.stmt) -> list[Any]:
        """What a comment under an assignment shows: the value just assigned."""
        targets = (
            stmt.targets
            if isinstance(stmt, ast.Assign)
            else [stmt.target]
            if isinstance(stmt, (ast.AugAssign, ast.AnnAssign))
            else []
        )
        if len(targets) == 1 and isinstance(targets[0], ast.Name):
            name = targets[0].id
            if name in self.opaque:
                return [("value", None, name, None, json.dumps([self.opaque[name], name]))]
            try:  # a name read back as the stack of its entries, or first read here
                return [("value", self._expr(ast.Name(name, ast.Load())), name, None, None)]
            except Untranslated as e:
                return [("value", None, name, None, json.dumps([str(e), name]))]
        return []

    def _outputs(self, block: Block, prints: list[Any]) -> Iterator[Any]:
        """Match a cell's printed output with its prints, in order.

        Each ``print`` writes one or more groups of lines to the stream (a line that does
        not start with a space starts a group); ``display`` and the cell's last expression
        are its results, in order (a figure's ``<Figure …>`` is no result). When the prints
        and the groups do not pair one to one, they are told apart by order: the one way
        of giving each print a run of groups that holds its words and as many values as it
        shows. Output no print can be told apart by is left, listed as such.
        """
        stream = [g for o in block.outputs if o.kind == "stream" for g in output_groups(o)]
        results = [o for o in block.outputs if o.kind == "result" and not is_display_repr(o.text)]
        # a print whose value a comment under it already claims ("print-claimed") still
        # wrote its output: it keeps its place in the order, and is not claimed again
        printed = [p for p in prints if p[0] in ("print", "print-claimed", "print-unknown")]
        shown = [
            p for p in prints if p[0] in ("display", "last", "display-claimed", "last-claimed")
        ]
        runs = (
            [[g] for g in stream]
            if len(printed) == len(stream)
            else _aligned([items for _, items in printed], stream)
        )
        if runs is None and stream:
            # rows a loop prints indented ("   1  |  0.161 | …") start no group of their
            # own; read line by line, each may be one print's
            lines = [g for o in block.outputs if o.kind == "stream" for g in output_lines(o)]
            if len(lines) != len(stream):
                runs = (
                    [[g] for g in lines]
                    if len(printed) == len(lines)
                    else _aligned([items for _, items in printed], lines)
                )
        if runs is None and stream:
            runs = _aligned_without_left_out([items for _, items in printed], stream)
        if runs is not None:
            for (how, items), run in zip(printed, runs, strict=True):
                if run and how == "print-unknown":
                    yield from self._unmatched(run, "printed by code that is not translated")
                elif run and not how.endswith("-claimed"):
                    yield from self._match(items, [join_group(g) for g in run])
        elif len(printed) == 1 and stream:
            if not printed[0][0].endswith(("-claimed", "-unknown")):
                yield from self._match(printed[0][1], [join_group(g) for g in stream])
        else:
            yield from self._unmatched(stream)
        if len(shown) == len(results):
            for (how, items), o in zip(shown, results, strict=True):
                if not how.endswith("-claimed"):
                    yield from self._match(items, [join_group(g) for g in output_groups(o)])
        else:
            yield from self._unmatched([g for o in results for g in output_groups(o)])

    def _unmatched(
        self,
        groups: list[list[tuple[str, int]]],
        reason: str = "a print not told apart from the others",
    ) -> Iterator[Shown]:
        """Printed values that cannot be told apart by print: searched like prose printings."""
        cell = self._block.cell if self._block else None
        for g in groups:
            text, lines = join_group(g)
            for rows, rlines, style, _vector in read_values(text, lines):
                if len(rows) * len(rows[0]) < 2:
                    continue
                grid = (
                    self.np_precision
                    if style in _NUMPY and all_fixed(rows)
                    else (self.torch_precision if style == "torch" and all_fixed(rows) else None)
                )
                yield Shown(
                    None, "output", rows, tuple(rlines), cell, grid, style == "numpy", reason
                )

    def _match(
        self, items: list[Any], texts: list[tuple[str, list[int]]], *, typed: bool = False
    ) -> Iterator[Any]:
        """Claims on the values ``items`` show, read from the printed ``texts`` in order.

        ``typed``: the values were written by hand (``# expected: [[0.09003, …]]``), so each
        is known to the digits it has, not to the digits numpy or PyTorch would print.
        """
        values = [a for a in items if a[0] == "value"]
        text = "\n".join(t for t, _ in texts)
        lines = [ln for _, lns in texts for ln in lns]
        literals = [a[2] for a in items if a[0] == "text"]
        found = read_values(blanked(text, literals), lines)
        if not values:
            return
        if len(values) != len(found):  # a separator found inside a value: the labels only
            found = read_values(blanked(text, literals, numerals_only=True), lines)
        if len(values) != len(found):
            values = one_list(values, found, self._shape)
        if len(values) != len(found):
            groups = [[(t, lns[0] if lns else 0)] for t, lns in texts]
            yield from self._unmatched(
                groups, "the print's values could not be told apart in what it printed"
            )
            return
        cell = self._block.cell if self._block else None
        for (_kind, expr, label, decimals, reason), (rows, rlines, style, vector) in zip(
            values, found, strict=True
        ):
            shortened = style == "numpy"
            grid = decimals
            fixed = all(re.fullmatch(r"-?\d+\.\d*", c) for r in rows for c in r)
            whole = style in _TORCH and all(re.fullmatch(r"-?\d+\.", c) for r in rows for c in r)
            if typed:
                pass
            elif grid is None and style in _NUMPY and fixed:
                grid = self.np_precision
            elif grid is None and style == "torch" and fixed:
                grid = self.torch_precision
            # numpy's print of a float32 draw, not typed by hand: each entry pins its value
            f32 = style in _NUMPY and not typed and self.np_precision == NUMPY_PRECISION
            if expr is None:
                why, name = json.loads(reason) if reason else ("not translated", None)
                opaque = name if name in self.opaque and name not in self.names else None
                yield Shown(
                    None,
                    label,
                    rows,
                    tuple(rlines),
                    cell,
                    grid,
                    shortened,
                    why,
                    opaque,
                    vector,
                    whole=whole,
                    float32_print=f32 and opaque in self.f32_drawn,
                )
                continue
            name = expr.name if isinstance(expr, Var) else None
            if name is not None and name in self.opaque and name not in self.names.values():
                yield Shown(
                    None,
                    label,
                    rows,
                    tuple(rlines),
                    cell,
                    grid,
                    shortened,
                    self.opaque[name],
                    name,
                    vector,
                    whole=whole,
                    float32_print=f32 and name in self.f32_drawn,
                )
                continue  # its printed value stands for it from here on
            complete = self._complete(expr)
            if name is None:
                name = self._fresh("shown")
                yield Step(name, expr, f"{self._block.where(1) if self._block else ''}", label)
            yield Shown(name, label, rows, tuple(rlines), cell, grid, shortened, complete=complete)

    def _complete(self, expr: Expr) -> bool:
        """Whether the translation covers every op of ``expr`` and of what it is computed
        from: no step on the way was read loosely, and none stands for code not translated."""
        seen: set[str] = set()
        todo = list(variables(expr))
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            if name in self.loose:
                return False
            e = self.exprs.get(name)
            if e is not None:
                todo.extend(variables(e))
            elif name not in self.givens and name not in self.printed_opaque:
                return False
        return True


def _left_out(prints: list[list[Any]], groups: list[list[tuple[str, int]]]) -> list[bool]:
    """Which prints wrote output the article does not show.

    A print of words that the shown output holds nowhere was left out of it (``print("Now
    with PyTorch's module:")`` above a shortened output), and so were the prints of values
    alone right after it: what they printed stood under those words.
    """
    text = "\n".join(t for g in groups for t, _ in g)
    out = []
    dropped = False
    for p in prints:
        words = [str(a[2]).strip() for a in p if a[0] == "text" and str(a[2]).strip()]
        if words:
            dropped = any(text.find(w) < 0 for w in words)
        out.append(dropped)
    return out


def _aligned_without_left_out(
    prints: list[list[Any]], groups: list[list[tuple[str, int]]]
) -> list[list[list[tuple[str, int]]]] | None:
    """Each print's run of output groups (:func:`_aligned`) when the article's output leaves
    some prints out (:func:`_left_out`): those get no run, the others one way only."""
    left = _left_out(prints, groups)
    if not any(left) or all(left):
        return None
    kept = [p for p, gone in zip(prints, left, strict=True) if not gone]
    runs = _aligned(kept, groups)
    if runs is None:
        return None
    it = iter(runs)
    return [[] if gone else next(it) for gone in left]


def _aligned(
    prints: list[list[Any]], groups: list[list[tuple[str, int]]]
) -> list[list[list[tuple[str, int]]]] | None:
    """Each print's run of output groups, when exactly one way of splitting them fits.

    A run fits a print when the print's words are found in it in order and it holds as
    many values as the print shows; a print of nothing (``print()``) gets an empty run.
    ``None`` when no split fits, or more than one does.
    """
    n, m = len(prints), len(groups)
    if m > 400 or n > 200:
        return None

    def fits(p: list[Any], i: int, j: int) -> bool:
        if p and p[0][0] == "unknown":
            # a loop that prints, not translated: each of its lines holds the words its
            # print starts with, and it may have printed nothing
            key = str(p[0][2])
            if not key or (j == i and not p[0][4]):  # one print writes a line at least
                return False
            return all(key in join_group(g)[0] for g in groups[i:j])
        words = [a[2] for a in p if a[0] == "text" and str(a[2]).strip()]
        shows = sum(1 for a in p if a[0] == "value")
        if i == j:
            return not shows and not words
        text, lines = join_group([t for g in groups[i:j] for t in g])
        if any(text.find(w.strip()) < 0 for w in words):
            return False
        if not shows and words and j - i > 1:
            # a print of words only wrote them and no more: the lines after its words (a
            # table's header and rule) are the next print's
            shorter, _ = join_group([t for g in groups[i : j - 1] for t in g])
            if all(shorter.find(w.strip()) >= 0 for w in words):
                return False
        return len(read_values(blanked(text, [a[2] for a in p if a[0] == "text"]), lines)) == shows

    def count(p: list[Any], i: int, j: int) -> int:
        text, lines = join_group([t for g in groups[i:j] for t in g])
        return len(read_values(blanked(text, [a[2] for a in p if a[0] == "text"]), lines))

    # ways[k][j]: the number of ways (capped at 2) the first k prints take the first j groups
    ways = [[0] * (m + 1) for _ in range(n + 1)]
    ways[0][0] = 1
    for k in range(n):
        shows = sum(1 for a in prints[k] if a[0] == "value")
        for i in range(m + 1):
            if not ways[k][i]:
                continue
            for j in range(i, m + 1):
                unknown = bool(prints[k]) and prints[k][0][0] == "unknown"
                if j > i and not unknown and count(prints[k], i, j) > shows:
                    break  # a longer run only holds more values
                if fits(prints[k], i, j):
                    ways[k + 1][j] = min(2, ways[k + 1][j] + ways[k][i])
    if ways[n][m] != 1:
        return None
    runs: list[list[list[tuple[str, int]]]] = []
    j = m
    for k in range(n, 0, -1):
        starts = [i for i in range(j + 1) if ways[k - 1][i] and fits(prints[k - 1], i, j)]
        i = starts[0]
        runs.append(groups[i:j])
        j = i
    return runs[::-1]


def _returns_text(body: list[ast.stmt]) -> bool:
    """Whether a function's body ends in returning text: ``"\\n".join(…)``, an f-string or
    a string (joined with ``+``)."""
    returns = [s for s in body if isinstance(s, ast.Return)]
    if len(returns) != 1 or returns[0] is not body[-1] or returns[0].value is None:
        return False

    def text(e: ast.expr) -> bool:
        if isinstance(e, ast.JoinedStr) or (
            isinstance(e, ast.Constant) and isinstance(e.value, str)
        ):
            return True
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
            return text(e.left) or text(e.right)
        return (
            isinstance(e, ast.Call)
            and isinstance(e.func, ast.Attribute)
            and e.func.attr == "join"
            and isinstance(e.func.value, ast.Constant)
            and isinstance(e.func.value.value, str)
        )

    return text(returns[0].value)
