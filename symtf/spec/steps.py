"""``[tensors]`` and ``[steps]`` of a derivation file → frozen data (nothing is computed).

Given tensors are read exactly (decimal strings become rationals, ``-inf``
stays ``-oo``, a bare name is a symbol). Steps are parsed into syntax trees,
unrolled families (``"state[t]" = { expr = ..., t = [1, 4] }``) are expanded
into ordinary nodes ``state[1]`` … in an order that lets families refer to each
other, and every reference is checked: a forward reference, a cycle, a
duplicate, or a step named like a function is an error naming the file, the
step and the column.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, cast

import sympy

from symtf import limits
from symtf.errors import ExpressionError, SpecError
from symtf.language import lang
from symtf.language.syntax import Tree
from symtf.numbers import parse_exact
from symtf.ops import get as get_op
from symtf.ops import public_signatures
from symtf.ops.core import ParamError
from symtf.spec.symbols import make as make_symbol

#: Largest given tensor (entries), largest dimension, most axes.
MAX_ENTRIES = limits.MAX_ENTRIES
MAX_DIM = limits.MAX_DIM
MAX_NDIM = limits.MAX_NDIM
#: Longest unrolled range of one family, and most step nodes in a file.
MAX_UNROLL = 10_000
MAX_NODES = 20_000

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_NAME = re.compile(rf"^{_IDENT}(\.{_IDENT})*$")
_MEMBER = re.compile(rf"^({_IDENT})\[(-?\d+)\]$")
_FAMILY = re.compile(rf"^({_IDENT})\[({_IDENT})\]$")
_SYMBOL = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,30}$")
_INF = re.compile(r"^[+-]?(inf|infinity|∞)$", re.IGNORECASE)

#: For the parser: every op a step may call -> (fewest positionals, most positionals, keyword
#: names), read from the op registry (aliases such as ``ln`` and ``view`` included).
SIGNATURES = public_signatures()  # as registered when symtf is imported; parsing reads it afresh


@dataclass(frozen=True)
class GivenTensor:
    """A tensor the article gives.

    Attributes:
        name: Its name in steps.
        shape: 0 to 4 dimensions.
        values: Exact entries, row-major (``Rational``, ``Symbol``, ``oo``/``-oo``).
        texts: Each entry as written.
        decimals: Digits after the point of each entry as written (``None``: not a decimal).
        rounded: Whether the entries are rounded prints (their true values unknown
            beyond their printed precision).
        where: ``file: tensors.name`` for messages.
        widths: For a tensor written as numpy's print of float32 values
            (``float32_print = true``), how far each entry's value may lie from its
            value as read (0: the print identifies the float32 exactly, and the entry
            holds it); ``None`` otherwise.
    """

    name: str
    shape: tuple[int, ...]
    values: tuple[sympy.Expr, ...]
    texts: tuple[str, ...]
    decimals: tuple[int | None, ...]
    rounded: bool
    where: str
    #: For a rounded tensor, its values as one 1×N row: the object symtf.backends.rounded knows the
    #: tensor by (a backend matrix built from it carries the rounding intervals).
    flat: Any = None
    widths: tuple[Fraction, ...] | None = None


@dataclass(frozen=True)
class StepNode:
    """One node of the user's step graph.

    Attributes:
        name: The node's name (``alpha``, ``state[2]``).
        text: The expression as written (for a family member, the family's text).
        tree: Its syntax tree (a family's loop variable replaced by its value).
        where: ``file: steps.key`` (with ``t = 2`` for a family member), for messages.
        inputs: Names it reads (given tensors, earlier steps, template nodes).
        key: The key it was written under in ``[steps]``.
    """

    name: str
    text: str
    tree: lang.Node
    where: str
    inputs: tuple[str, ...]
    key: str


# ----------------------------------------------------------------------------- tensors


def _kind(v: Any) -> str:
    if isinstance(v, dict):
        return "a table"
    if isinstance(v, list):
        return f"an array of {len(v)}"
    if isinstance(v, str):
        return f"the string {v[:40]!r}"
    return f"{type(v).__name__} {v!r}"[:60]


def _join_infinities(text: str) -> str:
    return re.sub(r"[-−]\s*\\mathrm\{\\infty\s*\}|[-−]\s*\\infty|[-−]\s*∞", "-inf", text)


def _rows_text(text: str) -> list[list[str]]:
    rows = []
    for line in _join_infinities(text).replace("\\\\", "\n").splitlines():
        line = line.strip().strip("|[]").strip()
        if line:
            rows.append([c for c in re.split(r"[\s,&;]+", line) if c])
    return rows


def _entry(v: Any, where: str) -> tuple[sympy.Expr, str, int | None]:
    """One exact entry, its text and its decimals."""
    if isinstance(v, bool):
        raise SpecError(f"{where}: expected a number, found {v!r}")
    if isinstance(v, int):
        if abs(v) > 10**60:
            raise SpecError(
                f"{where}: expected a number of at most 60 digits, found a larger integer"
            )
        return sympy.Integer(v), str(v), None
    if isinstance(v, float):
        text = getattr(v, "text", repr(v))
        v = text
    if not isinstance(v, str):
        raise SpecError(f"{where}: expected a number, found {_kind(v)}")
    s = v.strip().replace("−", "-")
    if _INF.match(s):
        return (sympy.S.NegativeInfinity if s.startswith("-") else sympy.oo), s, None
    if _SYMBOL.match(s) and s.lower() not in ("nan", "infinity"):
        return make_symbol(s), s, None
    q = parse_exact(s, where=where)
    mant = s.split("e")[0].split("E")[0]
    decimals = len(mant.partition(".")[2]) if "." in mant and "/" not in s else None
    return sympy.Rational(q.numerator, q.denominator), s, decimals


def _nested_shape(v: Any, where: str) -> tuple[int, ...]:
    """The shape of a nested array, each item's shape computed once.

    Raises:
        SpecError: For an empty or ragged array, or one nested deeper than
            :data:`MAX_NDIM` (refused from the depth of its first items, before the
            rest is read: the time grows with the array's size, not its depth).
    """
    depth, x = 0, v
    while isinstance(x, list) and x:
        depth, x = depth + 1, x[0]
    if depth > MAX_NDIM:
        raise SpecError(f"{where}: expected at most {MAX_NDIM} dimensions, found {depth}")
    return _shape_of(v, where)


def _shape_of(v: Any, where: str) -> tuple[int, ...]:
    if not isinstance(v, list):
        return ()
    if not v:
        raise SpecError(f"{where}: expected a non-empty array, found an empty one")
    shapes = [_shape_of(x, f"{where}[{i}]") for i, x in enumerate(v)]
    for i, shape in enumerate(shapes):
        if shape != shapes[0]:
            raise SpecError(
                f"{where}: ragged array: item 0 has shape {shapes[0]}, item {i} has {shape}"
            )
    return (len(v), *shapes[0])


def _flatten(v: Any) -> list[Any]:
    return [y for x in v for y in _flatten(x)] if isinstance(v, list) else [v]


def _given(name: str, raw: Any, file: str) -> GivenTensor:
    where = f"{file}: tensors.{name}"
    rounded: bool | str = False
    shape: tuple[int, ...] | None = None
    if isinstance(raw, dict):
        unknown = sorted(set(raw) - {"shape", "values", "rounded", "float32_print"})
        if unknown:
            raise SpecError(
                f"{where}.{unknown[0]}: unknown key "
                "(known keys: float32_print, rounded, shape, values)"
            )
        if "values" not in raw:
            raise SpecError(f"{where}.values: required key is missing")
        rounded = raw.get("rounded", False)
        if not isinstance(rounded, bool):
            raise SpecError(f"{where}.rounded: expected true or false, found {_kind(rounded)}")
        f32 = raw.get("float32_print", False)
        if not isinstance(f32, bool):
            raise SpecError(f"{where}.float32_print: expected true or false, found {_kind(f32)}")
        if f32 and rounded:
            raise SpecError(
                f"{where}: rounded and float32_print both set; float32_print already says "
                "how far each printed entry may be from its value (leave out rounded)"
            )
        rounded = "float32" if f32 else rounded
        s = raw.get("shape")
        if s is not None:
            if (
                not isinstance(s, list)
                or len(s) > MAX_NDIM
                or not all(
                    isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= MAX_DIM for n in s
                )
            ):
                raise SpecError(
                    f"{where}.shape: expected up to {MAX_NDIM} sizes from 1 to {MAX_DIM}, found {_kind(s)}"
                )
            shape = tuple(s)
        raw = raw["values"]
        if isinstance(raw, str) and shape is not None:
            cells: list[Any] = [c for r in _rows_text(raw) for c in r]
            return _build(name, shape, cells, rounded, where)
        if isinstance(raw, list) and shape is not None:
            return _build(name, shape, _flatten(raw), rounded, where)
    if isinstance(raw, str):
        too_long = limits.text_refusal(len(raw))
        if too_long:
            raise SpecError(f"{where}: {too_long}")
        rows = _rows_text(raw)
        if not rows:
            raise SpecError(f"{where}: expected entries, found none")
        if len(rows) == 1 and len(rows[0]) == 1 and "\n" not in raw:
            return _build(name, (), rows[0], rounded, where)  # "1.2": a scalar, like 1.2
        for i, r in enumerate(rows):
            if len(r) != len(rows[0]):
                raise SpecError(
                    f"{where}: ragged rows: row 0 has {len(rows[0])} entries, row {i} has {len(r)}"
                )
        return _build(name, (len(rows), len(rows[0])), [c for r in rows for c in r], rounded, where)
    if isinstance(raw, list):
        s = _nested_shape(raw, where)
        if len(s) > MAX_NDIM:
            raise SpecError(f"{where}: expected at most {MAX_NDIM} dimensions, found {len(s)}")
        return _build(name, s, _flatten(raw), rounded, where)
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        return _build(name, (), [raw], rounded, where)
    raise SpecError(
        f"{where}: expected rows as a string, an array, or a table with values, found {_kind(raw)}"
    )


def _build(
    name: str, shape: tuple[int, ...], cells: list[Any], rounded: bool | str, where: str
) -> GivenTensor:
    too_large = limits.shape_refusal(shape)
    if too_large:
        raise SpecError(f"{where}: {too_large}")
    if len(cells) != math.prod(shape):
        raise SpecError(
            f"{where}: expected {math.prod(shape)} values for shape {list(shape)}, found {len(cells)}"
        )
    entries = [_entry(c, f"{where}[{k}]") for k, c in enumerate(cells)]
    values = tuple(e for e, _, _ in entries)
    if rounded and not all(v.is_Rational or v.is_infinite for v in values):
        key = "float32_print" if rounded == "float32" else "rounded"
        raise SpecError(
            f"{where}: expected numbers in a tensor marked {key} = true "
            "(a symbol has no rounding interval; -inf and inf stay exact)"
        )
    widths = None
    if rounded == "float32":
        values, widths = _float32_printed(values, [t for _, t, _ in entries], where)
        rounded = any(widths)
    return GivenTensor(
        name,
        shape,
        values,
        tuple(t for _, t, _ in entries),
        tuple(d for _, _, d in entries),
        bool(rounded),
        where,
        sympy.ImmutableMatrix([list(values)]) if rounded else None,
        widths,
    )


def _float32_printed(
    values: tuple[sympy.Expr, ...], texts: list[str], where: str
) -> tuple[tuple[sympy.Expr, ...], tuple[Fraction, ...]]:
    """A tensor written as numpy prints float32 values: each entry the float32 its print
    identifies (width 0), or its value as read and how far the float32 may lie from it
    (:func:`symtf.backends.format_print.numpy_printed`)."""
    from symtf.backends.format_print import numpy_printed
    from symtf.backends.formats import FORMATS

    out: list[sympy.Expr] = []
    widths: list[Fraction] = []
    for k, (v, text) in enumerate(zip(values, texts, strict=True)):
        if v.is_infinite:
            out.append(v)
            widths.append(Fraction(0))
            continue
        found = numpy_printed(text, FORMATS["float32"])
        if found is None:
            raise SpecError(
                f"{where}[{k}]: expected numpy's print of a float32 value (float32_print = "
                f"true), found {text!r}, which numpy does not print for any float32"
            )
        centre, width = found
        out.append(sympy.Rational(centre.numerator, centre.denominator))
        widths.append(width)
    return tuple(out), tuple(widths)


def parse_tensors(raw: Any, file: str) -> tuple[GivenTensor, ...]:
    """The ``[tensors]`` table."""
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise SpecError(f"{file}: tensors: expected a table ([tensors]), found {_kind(raw)}")
    out = []
    for name, v in raw.items():
        if not _NAME.match(name) or "." in name:
            raise SpecError(
                f"{file}: tensors.{name}: expected a name of letters, digits and _, found {name!r}"
            )
        _not_reserved(name, f"{file}: tensors.{name}")
        out.append(_given(name, v, file))
    return tuple(out)


def _not_reserved(name: str, where: str, col: str = "") -> None:
    """A name may shadow an op's (``grad``, ``exp``: see :func:`parse_steps`) and the constants
    e and pi (``E[tok]``), not the values ``inf``, ``true`` and ``false``."""
    if name in ("inf", "true", "false"):
        raise SpecError(f"{where}: a name cannot be {name!r}, which is a constant{col}")


def given_input(model_raw: Any, tensors: tuple[GivenTensor, ...], file: str) -> Any:
    """The ``[model]`` table with a given ``x`` as the input rows of ``architecture = "attention"``.

    The attention template starts from ``model.embed``; a given 2-D tensor named ``x``
    may stand for it (then ``x`` is the template's own input node).
    """
    given = {t.name: t for t in tensors}
    if (
        not isinstance(model_raw, dict)
        or model_raw.get("architecture") != "attention"
        or "x" not in given
    ):
        return model_raw
    x = given["x"]
    if "embed" in model_raw:
        raise SpecError(
            f"{file}: tensors.x: the attention model's input rows are given twice "
            "(model.embed and tensors.x); keep one"
        )
    if len(x.shape) != 2:
        raise SpecError(
            f"{x.where}: expected the 2-D input rows of the attention model, found shape {list(x.shape)}"
        )
    n, m = x.shape
    return {**model_raw, "embed": [list(x.texts[i * m : (i + 1) * m]) for i in range(n)]}


# ----------------------------------------------------------------------------- steps


def _key_column(text: str | None, key: str) -> str:
    """`` (line L, column C)`` of a key in the file text, when it can be found."""
    if not text:
        return ""
    pat = re.compile(r'^[ \t]*("?' + re.escape(key) + r'"?)[ \t]*=', re.MULTILINE)
    m = pat.search(text)
    if not m:
        return ""
    line = text.count("\n", 0, m.start(1)) + 1
    col = m.start(1) - (text.rfind("\n", 0, m.start(1)) + 1) + 1
    return f" (at line {line}, column {col})"


def _static_int(node: Tree, var: str | None, value: int | None) -> int | None:
    """An integer index written with literals and the loop variable, or ``None``."""
    match node:
        case lang.Num():
            v = node.value
            return int(v) if v.is_Integer else None
        case lang.Name():
            return value if node.name == var else None
        case lang.Unary():
            k = _static_int(node.operand, var, value)
            return None if k is None else (-k if node.op == "-" else k)
        case lang.Chain():
            acc = _static_int(node.first, var, value)
            for link in node.rest:
                k = _static_int(link.node, var, value)
                if acc is None or k is None or link.op not in "+-*":
                    return None
                acc = acc + k if link.op == "+" else acc - k if link.op == "-" else acc * k
            return acc
    return None


def _substitute(
    node: Tree, var: str | None, value: int | None, families: set[str], ctx: Any
) -> lang.Node:
    """Replace the loop variable by its value and ``fam[k]`` by the node name ``fam[k]``."""
    match node:
        case lang.Name():
            if var is not None and node.name == var:
                return lang.Num(node.pos, str(value), sympy.Integer(value))
            if node.name in families:
                raise ctx(
                    node.pos,
                    f"{node.name} is a family of steps; name one member, like {node.name}[0]",
                )
            return node
        case lang.Index():
            if isinstance(node.operand, lang.Name) and node.operand.name in families:
                if len(node.items) != 1:
                    raise ctx(
                        node.pos,
                        f"expected one index for the family {node.operand.name}, found {len(node.items)}",
                    )
                k = _static_int(node.items[0], var, value)
                if k is None:
                    raise ctx(
                        node.items[0].pos,
                        f"expected an integer index of the family {node.operand.name} (written with numbers"
                        + (f" and {var}" if var else "")
                        + ")",
                    )
                return lang.Name(node.operand.pos, f"{node.operand.name}[{k}]")
            return lang.Index(
                node.pos,
                _substitute(node.operand, var, value, families, ctx),
                tuple(_substitute(i, var, value, families, ctx) for i in node.items),
            )
        case lang.Unary():
            return lang.Unary(
                node.pos, node.op, _substitute(node.operand, var, value, families, ctx)
            )
        case lang.Chain():
            return lang.Chain(
                node.pos,
                _substitute(node.first, var, value, families, ctx),
                tuple(
                    lang.Link(k.op, k.text, k.pos, _substitute(k.node, var, value, families, ctx))
                    for k in node.rest
                ),
            )
        case lang.Power():
            return lang.Power(
                node.pos,
                _substitute(node.base, var, value, families, ctx),
                _substitute(node.exponent, var, value, families, ctx),
            )
        case lang.Transpose():
            return lang.Transpose(node.pos, _substitute(node.operand, var, value, families, ctx))
        case lang.Slice():
            return lang.Slice(
                node.pos,
                *(
                    None if n is None else _substitute(n, var, value, families, ctx)
                    for n in (node.start, node.stop, node.step)
                ),
            )
        case lang.Call():
            return lang.Call(
                node.pos,
                node.name,
                tuple(_substitute(a, var, value, families, ctx) for a in node.args),
                tuple((k, _substitute(v, var, value, families, ctx)) for k, v in node.kwargs),
            )
        case lang.ListLit():
            return lang.ListLit(
                node.pos, tuple(_substitute(i, var, value, families, ctx) for i in node.items)
            )
    return cast(lang.Node, node)  # the step parser builds only step-language nodes


@dataclass(frozen=True)
class _Entry:
    key: str
    name: str  # node name, or family base
    var: str | None
    lo: int
    hi: int
    text: str
    tree: lang.Node
    where: str


def _parse_entry(key: str, raw: Any, file: str, text: str | None) -> _Entry:
    where = f"{file}: steps.{key}"
    col = _key_column(text, key)
    m_fam = _FAMILY.match(key)
    if isinstance(raw, dict):
        if not m_fam:
            raise SpecError(
                f'{where}: a table defines an unrolled family and needs a key like "state[t]"{col}'
            )
        base, var = m_fam.groups()
        unknown = sorted(set(raw) - {"expr", var})
        if unknown:
            raise SpecError(f"{where}.{unknown[0]}: unknown key (known keys: expr, {var}){col}")
        expr = raw.get("expr")
        rng = raw.get(var)
        if not isinstance(expr, str):
            raise SpecError(
                f"{where}.expr: expected the expression as a string, found {_kind(expr)}{col}"
            )
        if (
            not isinstance(rng, list)
            or len(rng) != 2
            or not all(isinstance(k, int) and not isinstance(k, bool) for k in rng)
        ):
            raise SpecError(
                f"{where}.{var}: expected the range [first, last] of {var} (inclusive), found {_kind(rng)}{col}"
            )
        lo, hi = rng
        if hi < lo:
            raise SpecError(f"{where}.{var}: expected first <= last, found [{lo}, {hi}]{col}")
        if hi - lo + 1 > MAX_UNROLL:
            raise SpecError(
                f"{where}.{var}: expected a range of at most {MAX_UNROLL:,} steps, found {hi - lo + 1:,} "
                f"([{lo}, {hi}]){col}"
            )
        _not_reserved(base, where, col)
        tree = _parse_expr(expr, where)
        return _Entry(key, base, var, lo, hi, expr, tree, where)
    if not isinstance(raw, str):
        raise SpecError(f"{where}: expected an expression as a string, found {_kind(raw)}{col}")
    m_mem = _MEMBER.match(key)
    if m_fam and not m_mem:
        raise SpecError(
            f'{where}: an unrolled family is written {{ expr = "...", {m_fam.group(2)} = [first, last] }}{col}'
        )
    if not (m_mem or _NAME.match(key)):
        raise SpecError(
            f"{where}: expected a step name of letters, digits, _ and dots (or name[k]), found {key!r}{col}"
        )
    _not_reserved(m_mem.group(1) if m_mem else key, where, col)
    return _Entry(key, key, None, 0, 0, raw, _parse_expr(raw, where), where)


def _parse_expr(text: str, where: str) -> lang.Node:
    try:
        tree = lang.parse(text, public_signatures(), where=where)
    except ExpressionError as e:
        raise SpecError(str(e)) from None
    _check_calls(tree, text, where)
    return tree


def _check_calls(tree: lang.Node, text: str, where: str) -> None:
    """Every call's arguments against its op's signature, and every plain setting's type.

    A missing argument, one given twice, or a setting that is not what the op takes
    (``softmax(x, axis=true)``) is an error naming the file, the step and the column,
    before anything is computed.

    Raises:
        SpecError: At the offending argument's column.
    """
    for node in lang.walk(tree):
        if not isinstance(node, lang.Call):
            continue
        op = get_op(node.name)
        try:
            bound = op.bind(node.args, node.kwargs)
            for p in op.step_params:
                if p.is_tensor or p.name not in bound:
                    continue
                given = bound[p.name]
                what = f"{op.name}({p.name}=…)"
                if p.name == op.variadic:
                    dims: list[Any] = []
                    for n in given:
                        v = lang.static_value(n, what)
                        dims.extend(v if isinstance(v, list) else [v])
                    p.check(op.name, dims)
                else:
                    try:
                        p.check(op.name, lang.static_value(given, what))
                    except ParamError as e:
                        raise ParamError(str(e), given) from None
        except lang.NotStatic as e:
            raise SpecError(str(lang.error(text, where, e.pos, str(e)))) from None
        except ParamError as e:
            pos = getattr(e.where, "pos", node.pos)
            raise SpecError(str(lang.error(text, where, pos, str(e)))) from None


def parse_steps(
    raw: Any,
    file: str,
    tensors: tuple[GivenTensor, ...],
    *,
    has_model: bool,
    text: str | None = None,
) -> tuple[StepNode, ...]:
    """The ``[steps]`` table, unrolled and checked, in evaluation order.

    Args:
        raw: The TOML table.
        file: The file name for messages.
        tensors: The given tensors.
        has_model: Whether template nodes exist (names not defined here may be theirs;
            they are checked when the graph is built).
        text: The file text, to point at a key's line and column.
    """
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise SpecError(f"{file}: steps: expected a table ([steps]), found {_kind(raw)}")
    entries = [_parse_entry(k, v, file, text) for k, v in raw.items()]
    families = {e.name for e in entries if e.var is not None} | {
        m.group(1) for e in entries if (m := _MEMBER.match(e.name))
    }
    given = {t.name: t for t in tensors}
    for f in families:
        if f in given:
            raise SpecError(
                f"{file}: steps.{f}[...]: the family {f} has the name of a given tensor"
            )
    # order: a run of consecutive family entries is interleaved by the loop value
    order: list[tuple[_Entry, int | None]] = []
    k = 0
    while k < len(entries):
        e = entries[k]
        if e.var is None:
            order.append((e, None))
            k += 1
            continue
        run = [e]
        while k + len(run) < len(entries) and entries[k + len(run)].var is not None:
            run.append(entries[k + len(run)])
        for at in range(min(r.lo for r in run), max(r.hi for r in run) + 1):
            order.extend((r, at) for r in run if r.lo <= at <= r.hi)
        k += len(run)
        if len(order) > MAX_NODES:
            break
    if len(order) > MAX_NODES:
        raise SpecError(
            f"{file}: steps: expected at most {MAX_NODES:,} step nodes after unrolling, found more"
        )

    nodes: list[StepNode] = []
    first: dict[str, str] = {}
    for e, value in order:
        name = e.name if value is None else f"{e.name}[{value}]"
        where = e.where if value is None else f"{e.where} ({e.var} = {value})"

        def ctx(pos: int, message: str, e: _Entry = e, where: str = where) -> SpecError:
            return SpecError(str(lang.error(e.text, where, pos, message)))

        if name in given:
            raise SpecError(
                f"{where}: the step {name} has the name of a given tensor{_key_column(text, e.key)}"
            )
        if name in first:
            raise SpecError(
                f"{where}: duplicate step {name} (first defined by steps.{first[name]}){_key_column(text, e.key)}"
            )
        first[name] = e.key
        tree = _substitute(e.tree, e.var, value, families, ctx)
        nodes.append(StepNode(name, e.text, tree, where, (), e.key))

    defined = set(given)
    position = {n.name: i for i, n in enumerate(nodes)}
    refs = {n.name: [r for r in lang.names(n.tree) if r.name not in given] for n in nodes}
    out = []
    for n in nodes:
        _calls_no_shadowed_op(n, defined, given)
        inputs: list[str] = []
        for r in lang.names(n.tree):
            nm = r.name
            if nm in given or nm in defined:
                inputs.append(nm)
                continue
            if nm in position:
                later = nodes[position[nm]]
                kind = "cycle" if _reaches(nm, n.name, refs, position) else "forward reference"
                detail = (
                    f"{nm} refers back to {n.name}"
                    if kind == "cycle" and nm != n.name
                    else "a step cannot use itself"
                    if nm == n.name
                    else f"{nm} is defined later, by steps.{later.key}; steps run in file order"
                )
                raise SpecError(
                    str(
                        lang.error(
                            n.text,
                            n.where,
                            r.pos,
                            f"{kind}: {detail}",
                        )
                    )
                )
            if nm in lang.CONSTANTS:
                continue
            m_mem = _MEMBER.match(nm)
            if m_mem and m_mem.group(1) in families:
                members = sorted(
                    int(mx.group(2))
                    for x in position
                    if (mx := _MEMBER.match(x)) and mx.group(1) == m_mem.group(1)
                )
                span = f"{members[0]}..{members[-1]}" if members else "none"
                raise SpecError(
                    str(
                        lang.error(
                            n.text,
                            n.where,
                            r.pos,
                            f"index out of range: no step {nm} (the family {m_mem.group(1)} has members {span})",
                        )
                    )
                )
            if has_model:
                inputs.append(nm)  # a template node, checked when the graph is built
                continue
            close = difflib.get_close_matches(nm, sorted(defined | set(position)), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise SpecError(str(lang.error(n.text, n.where, r.pos, f"unknown name {nm!r}{hint}")))
        defined.add(n.name)
        out.append(StepNode(n.name, n.text, n.tree, n.where, tuple(dict.fromkeys(inputs)), n.key))
    return tuple(out)


def _calls_no_shadowed_op(n: StepNode, defined: set[str], given: Mapping[str, GivenTensor]) -> None:
    """A name shadows an op's as in Python: once a tensor or an earlier step is called
    ``grad``, a later step cannot call the op ``grad`` (the step named so may: its own
    expression is read before the name is bound).

    Raises:
        SpecError: At the call, naming what shadows the op.
    """
    for c in lang.walk(n.tree):
        if isinstance(c, lang.Call) and c.name in defined:
            what = "the given tensor" if c.name in given else "the step"
            raise SpecError(
                str(
                    lang.error(
                        n.text,
                        n.where,
                        c.pos,
                        f"{c.name}(…) calls the op {c.name}, but {what} {c.name} defined "
                        "above has its name; rename one of them",
                    )
                )
            )


def _reaches(
    start: str, target: str, refs: dict[str, list[lang.Name]], position: dict[str, int]
) -> bool:
    """Whether ``start`` depends (through steps) on ``target``."""
    seen: set[str] = set()
    stack = [start]
    while stack:
        s = stack.pop()
        if s == target:
            return True
        if s in seen or s not in refs:
            continue
        seen.add(s)
        stack.extend(r.name for r in refs[s] if r.name in position)
    return False


def exact_fraction(e: sympy.Expr) -> Fraction | None:
    """A rational entry as a Fraction (``None`` for symbols and infinities)."""
    return Fraction(int(e.p), int(e.q)) if e.is_Rational else None
