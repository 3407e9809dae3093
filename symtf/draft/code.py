"""Notebook cells and fenced Python blocks, read with ``ast`` and translated onto ops.

Nothing is executed, imported or evaluated: the source is parsed by
:func:`ast.parse` and walked. What a reader of the code would take as the
worked example is translated:

- array literals (``np.array([[…]])``, ``torch.tensor(…, dtype=…)``, nested
  lists) become given tensors, their entries copied from the source text;
  float32 (PyTorch's and JAX's default, or a stated ``dtype``) marks the
  computation as float32 (``computed_in``);
- assignments of array expressions become steps: operators, ``.T``, indexing,
  calls and methods that :mod:`symtf.draft.frameworks` knows, ``nn`` modules
  with their settings and weights, small functions defined in the notebook
  (inlined), ``for`` loops over literal ranges and list comprehensions
  (unrolled);
- each ``print``, ``display`` and a cell's last expression is matched with the
  printed output, which becomes a claim on the value shown.

Everything else (random initialisation, file IO, classes, control flow) stays
a comment naming the cell and line, and what depends on it is not checked —
unless its value is printed, in which case the print gives it (rounded).
"""

from __future__ import annotations

import ast
import bisect
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from symtf.draft.frameworks import FAMILIES, FAMILY_METHODS, METHODS, MODULES, Translation, lookup
from symtf.draft.names import ident
from symtf.draft.templates import Call, Expr, Num, Var, call, variables
from symtf.errors import SpecError
from symtf.extract import notebook_cells
from symtf.numbers import split_printed

__all__ = ["Block", "Given", "Note", "Output", "Shown", "Step", "Translator", "blocks"]

#: Longest loop unrolled, and deepest inlining of notebook functions.
MAX_UNROLL = 64
MAX_INLINE = 8
#: numpy's and PyTorch's default print precision.
NUMPY_PRECISION = 8
TORCH_PRECISION = 4


# ----------------------------------------------------------------------------- sources


@dataclass(frozen=True)
class Output:
    """What a cell printed: its text and the file line of each of its lines."""

    text: str
    lines: tuple[int, ...]
    kind: str  # "stream" or "result"


@dataclass(frozen=True)
class Block:
    """One code cell or fenced Python block, with what it printed."""

    cell: int | None
    text: str
    first_line: int  # the file line of its first line
    outputs: tuple[Output, ...] = ()
    lines: tuple[int, ...] = ()  # the file line of each of its lines, where known

    def file_line(self, line: int) -> int:
        """The file line of the block's ``line`` (1-based)."""
        if 1 <= line <= len(self.lines) and self.lines[line - 1]:
            return self.lines[line - 1]
        return self.first_line + line - 1 if self.first_line else 0

    def where(self, line: int) -> str:
        """``cell 3, line 2`` (notebooks) or ``line 42`` (a block in an article)."""
        if self.cell is not None:
            return f"cell {self.cell}, line {line}"
        return f"line {self.first_line + line - 1}"


class _Finder:
    """The file line of each JSON string of a notebook, searched from a position.

    A cell's keys may come in any order (nbformat writes ``outputs`` before
    ``source``), so each run of strings (a cell's source, one output) is searched
    from where the cell starts, and the cell ends after the last string found.
    """

    def __init__(self, raw: str) -> None:
        self.raw = raw
        self.starts = [0] + [m.end() for m in re.finditer("\n", raw)]
        self.cell = 0  # where the current cell's strings are searched from
        self.end = 0  # the furthest string found in the current cell

    def run(self, strings: list[str]) -> list[int]:
        """The lines of consecutive strings (0 where one is not found)."""
        at = self.cell
        out = []
        for s in strings:
            line, after = self._find(s, at)
            if line:
                at = after
                self.end = max(self.end, after)
            out.append(line)
        return out

    def next_cell(self) -> None:
        """Strings searched from now on belong to the next cell."""
        self.cell = max(self.cell, self.end)

    def _find(self, s: str, start: int) -> tuple[int, int]:
        for needle in (json.dumps(s, ensure_ascii=False)[1:-1], json.dumps(s)[1:-1]):
            if not needle:
                continue
            at = self.raw.find(needle, start)
            if at >= 0:
                return bisect.bisect_right(self.starts, at), at + len(needle)
        return 0, start


def cell_lines(text: str) -> dict[int, list[int]]:
    """For a notebook: the file line of each source line of each cell (by cell index)."""
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError):
        return {}
    find = _Finder(text)
    out: dict[int, list[int]] = {}
    for k, c in enumerate(cells if isinstance(cells, list) else []):
        if not isinstance(c, dict):
            continue
        out[k] = find.run(_lines_of(c.get("source", "")))
        for o in c.get("outputs", []) or []:
            if isinstance(o, dict):
                find.run(_lines_of(_output_text(o)[0]))
        find.next_cell()
    return out


def file_lines(text: str) -> dict[int, tuple[int, int, bool]]:
    """For a notebook: what each file line holds, ``(cell, line, output)``.

    ``line`` is 1-based within the cell's source, or (``output`` true) within its printed
    outputs taken one after the other (streams and the plain text of results, each
    starting on a line of its own). A line the reader cannot place is left out.
    """
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError):
        return {}
    find = _Finder(text)
    out: dict[int, tuple[int, int, bool]] = {}
    for k, c in enumerate(cells if isinstance(cells, list) else []):
        if not isinstance(c, dict):
            continue
        for n, line in enumerate(find.run(_lines_of(c.get("source", ""))), start=1):
            if line:
                out.setdefault(line, (k, n, False))
        printed = 0
        for o in c.get("outputs", []) or []:
            if isinstance(o, dict):
                for n, line in enumerate(find.run(_lines_of(_output_text(o)[0])), start=1):
                    if line:
                        out.setdefault(line, (k, printed + n, True))
                printed += len(_lines_of(_output_text(o)[0]))
        find.next_cell()
    return out


def _output_text(o: dict[str, Any]) -> tuple[Any, str]:
    """An output's text and kind: ``stream`` (prints) or ``result`` (the shown value)."""
    if o.get("output_type") == "stream":
        return o.get("text", ""), "stream"
    if o.get("output_type") in ("execute_result", "display_data"):
        data = o.get("data", {})
        return (data.get("text/plain", "") if isinstance(data, dict) else ""), "result"
    return "", ""


def without_code(text: str, kind: str) -> str:
    """The article with its Python code left out (blank lines keep the line numbers); for a
    notebook, its markdown cells only."""
    if kind == "ipynb":
        try:
            nb = json.loads(text)
            cells = [
                c
                if c.get("cell_type") == "markdown"
                else {"cell_type": "code", "source": "", "outputs": []}
                for c in nb.get("cells", [])
                if isinstance(c, dict)
            ]
        except (ValueError, AttributeError):
            return text
        return json.dumps({"cells": cells})
    inside = code_lines(text)
    return "\n".join("" if k + 1 in inside else line for k, line in enumerate(text.splitlines()))


def _lines_of(v: Any) -> list[str]:
    if isinstance(v, list):
        return [str(x) for x in v]
    return str(v).splitlines(keepends=True)


def blocks(text: str, kind: str, path: str) -> list[Block]:
    """The code of a notebook's cells, or the fenced Python blocks of an article.

    Raises:
        SpecError: A notebook that is not JSON with a list of cells.
    """
    if kind == "ipynb":
        cells = notebook_cells(text, path)
        find = _Finder(text)
        out = []
        for k, c in enumerate(cells):
            if not isinstance(c, dict):
                continue
            src = _lines_of(c.get("source", ""))
            src_lines = find.run(src)
            outputs = []
            for o in c.get("outputs", []) or []:
                if not isinstance(o, dict):
                    continue
                raw, what = _output_text(o)
                if not what:
                    continue
                lines = _lines_of(raw)
                outputs.append(Output("".join(lines), tuple(find.run(lines)), what))
            find.next_cell()
            if c.get("cell_type") == "code":
                first = next((n for n in src_lines if n), 0)
                out.append(Block(k, "".join(src), first, tuple(outputs), tuple(src_lines)))
        return out
    return _fenced(text)


_FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w+-]*)[^\n]*$")


_PYTHON = ("python", "py", "python3", "ipython", "pycon")
_PLAIN = ("", "text", "output", "console", "plaintext", "txt")


def _fences(text: str) -> list[tuple[str, int, int, list[str]]]:
    """Every fenced block: its language, the lines of its fences (1-based), and its body."""
    lines = text.splitlines()
    found = []
    k = 0
    while k < len(lines):
        m = _FENCE.match(lines[k])
        if not m:
            k += 1
            continue
        j = k + 1
        while j < len(lines) and not lines[j].strip().startswith(m.group(2)[:3]):
            j += 1
        found.append((m.group(3).lower(), k + 1, j + 1, lines[k + 1 : j]))
        k = j + 1
    return found


def _code_and_outputs(
    text: str,
) -> list[tuple[tuple[str, int, int, list[str]], list[tuple[str, int, int, list[str]]]]]:
    """Each fenced Python block with the plain blocks right after it (what it printed)."""
    found = _fences(text)
    lines = text.splitlines()
    out = []
    for i, block in enumerate(found):
        if block[0] not in _PYTHON or not _parses("\n".join(block[3])):
            continue
        outputs = []
        end = block[2]
        for later in found[i + 1 :]:
            if later[0] not in _PLAIN or not _next_to(lines[end : later[1] - 1]):
                break
            outputs.append(later)
            end = later[2]
        out.append((block, outputs))
    return out


def _next_to(between: list[str]) -> bool:
    """Whether a plain block follows the one before it closely enough to be its output.

    ``Output:`` or a blank line may come between a code block and what it printed; a
    heading, a rule (``---``) or a paragraph starts another part of the article, whose
    plain blocks (hand arithmetic, a diagram) are prose.
    """
    words = [ln.strip() for ln in between if ln.strip()]
    return len(words) <= 1 and not any(
        w.startswith("#") or re.fullmatch(r"[-*_=\s]{3,}", w) or len(w) > 60 for w in words
    )


def _parses(body: str) -> bool:
    """Whether a block fenced as Python is Python (parsed with ``ast``, never run).

    Posts often fence hand-worked arithmetic as ``python`` for its colours
    (``mean = (0.1 + 0.3) / 2`` then ``     = 0.2`` on the next line, ``√0.1325``):
    such a block is not code, and the prose reader reads its numbers instead.
    """
    try:
        ast.parse(_without_magics(body))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False  # too deep for the parser: not read as code either
    return True


def _fenced(text: str) -> list[Block]:
    """Fenced ```python blocks of a Markdown article, each with the plain fences after it."""
    out: list[Block] = []
    for (_lang, start, _end, body), outputs in _code_and_outputs(text):
        printed = tuple(
            Output("\n".join(b) + "\n", tuple(range(s + 1, s + 1 + len(b))), "stream")
            for _l, s, _e, b in outputs
        )
        out.append(Block(None, "\n".join(body) + "\n", start + 1, printed))
    return out


def code_lines(text: str) -> set[int]:
    """Article lines of fenced Python blocks and of the output blocks right after them
    (fences included): the code translation reads them, not the prose reader."""
    inside: set[int] = set()
    for (_lang, start, end, _body), outputs in _code_and_outputs(text):
        for _l, s, e, _b in [(_lang, start, end, _body), *outputs]:
            inside.update(range(s, e + 1))
    return inside


# ----------------------------------------------------------------------------- events


@dataclass(frozen=True)
class Given:
    """An array literal: a given tensor (entries as written)."""

    name: str
    values: tuple[str, ...]
    shape: tuple[int, ...]
    where: str
    float32: bool = False


@dataclass(frozen=True)
class Step:
    """A translated assignment."""

    name: str
    expr: Expr
    where: str
    source: str


@dataclass(frozen=True)
class Note:
    """A statement not translated, and why."""

    where: str
    source: str
    reason: str
    #: The variables it assigned, whose earlier values they no longer name.
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Shown:
    """A printed value and the step it shows (``None``: it could not be translated)."""

    name: str | None
    label: str
    rows: tuple[tuple[str, ...], ...]
    lines: tuple[int, ...]
    cell: int | None
    decimals: int | None
    shortened: bool
    reason: str = ""
    opaque: str | None = None  # a variable whose value only this print gives
    vector: bool = False  # printed as a one-dimensional array (one bracket)


def _without_magics(text: str) -> str:
    """IPython's ``%magic`` and ``!shell`` lines as blank lines (same line numbers): they are
    not Python, and they are never run."""
    return "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line for line in text.split("\n")
    )


class _Untranslated(Exception):
    """A construct with no translation (the message says which)."""


@dataclass
class _Module:
    kind: str
    settings: dict[str, Any] = field(default_factory=dict)
    weight: Expr | None = None
    bias: Expr | None = None


@dataclass
class _Function:
    params: list[str]
    body: list[ast.stmt]


@dataclass
class _Leaf:
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


#: Functions an exercise may declare without a body (``def softmax(logits): ...``) and
#: then show examples of: each is read as the op its name says, with no other argument
#: than the op's tensors (a stub with more parameters or keywords is not translated).
STUBS: dict[str, Translation] = {
    "softmax": Translation("softmax", ("input",), {}, {"axis": -1}),
    "log_softmax": Translation("log_softmax", ("input",), {}, {"axis": -1}),
    "relu": Translation("relu", ("input",), {}),
    "sigmoid": Translation("sigmoid", ("input",), {}),
    "tanh": Translation("tanh", ("input",), {}),
    "silu": Translation("silu", ("input",), {}),
    "gelu": Translation("gelu", ("input",), {}),
    **{
        name: Translation("cross_entropy", ("input", "target"), {}, {}, ("input", "target"))
        for name in ("cross_entropy", "cross_entropy_loss", "softmax_cross_entropy")
    },
}


def _is_stub_class(stmt: ast.ClassDef) -> bool:
    """A class of methods without bodies (docstrings and ``...`` only): an exercise's outline."""
    methods = [s for s in stmt.body if isinstance(s, ast.FunctionDef)]
    rest = [
        s
        for s in stmt.body
        if not isinstance(s, ast.FunctionDef)
        and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        and not isinstance(s, ast.Pass)
    ]
    return bool(methods) and not rest and all(_is_stub(_undocumented(m.body)) for m in methods)


def _undocumented(body: list[ast.stmt]) -> list[ast.stmt]:
    first = body[0] if body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and first.value.value is not Ellipsis
    ):
        return body[1:]  # a docstring
    return body


def _is_stub(body: list[ast.stmt]) -> bool:
    """A function body that only stands for one: ``...``, ``pass``, ``raise NotImplementedError``."""
    if not body:
        return True
    if len(body) != 1:
        return False
    s = body[0]
    if isinstance(s, ast.Pass):
        return True
    if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and s.value.value is Ellipsis:
        return True
    if isinstance(s, ast.Raise) and s.exc is not None:
        exc = s.exc.func if isinstance(s.exc, ast.Call) else s.exc
        return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
    return False


_ARRAY_MAKERS = {
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
_RANDOM = re.compile(
    r"(?:^|\.)(?:rand\w*|normal|uniform|randint|permutation|shuffle|xavier\w*|kaiming\w*|init\w*)$"
)
_IO = re.compile(
    r"(?:^|\.)(?:open|load\w*|read\w*|save\w*|to_csv|from_pretrained|download\w*|urlopen|get)$"
)
#: Comparisons: the registry's ops (1 where it holds, else 0).
_COMPARISONS: dict[type[ast.cmpop], str] = {
    ast.Lt: "lt",
    ast.LtE: "le",
    ast.Gt: "gt",
    ast.GtE: "ge",
    ast.Eq: "eq",
    ast.NotEq: "ne",
}
#: What autograd does not follow: a value read through these is detached from its inputs.
_DETACHING = {"detach", "data", "item", "tolist", "numpy"}
#: In-place changes translated as the augmented assignment they are (``w.sub_(d)``: ``w -= d``).
_IN_PLACE: dict[str, type[ast.operator]] = {
    "add_": ast.Add,
    "sub_": ast.Sub,
    "mul_": ast.Mult,
    "div_": ast.Div,
}


def _makes_leaf(node: ast.expr) -> bool:
    """Whether an expression creates a tensor that requires grad: ``requires_grad=True``
    (``torch.tensor([…], requires_grad=True)``), ``nn.Parameter(t)``, ``t.requires_grad_()``."""
    if not isinstance(node, ast.Call):
        return False
    for kw in node.keywords:
        if kw.arg == "requires_grad":
            return isinstance(kw.value, ast.Constant) and kw.value.value is True
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "requires_grad_":
        return not node.args or (
            isinstance(node.args[0], ast.Constant) and node.args[0].value is True
        )
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name == "Parameter"


_IDENTITY_METHODS = {
    "detach",
    "numpy",
    "float",
    "double",
    "cpu",
    "clone",
    "contiguous",
    "data",
    "squeeze_",
    "requires_grad_",
}


class Translator:
    """Walks code blocks in order and yields what they define, compute and print.

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
        self.modules: dict[str, _Module] = {}
        self.functions: dict[str, _Function] = {}
        #: Functions written without a body, read by their names (:data:`STUBS`).
        self.stubs: dict[str, Translation] = {}
        #: Module classes declared without bodies, read as the ``torch.nn`` module named so.
        self.module_stubs: set[str] = set()
        self.taken: set[str] = set()
        self.float32 = False
        self.np_precision = NUMPY_PRECISION
        self.torch_precision = TORCH_PRECISION
        self._block: Block | None = None
        self._src = ""
        self._inline = 0
        self._events: list[Any] = []
        self._cutting = False  # the statement being translated detaches a value
        self._pair = False  # a topk call is being read as its values and indices
        #: Variables with no translated value whose printed value a later print gives.
        self.printed_opaque: set[str] = set()
        #: Each variable's last assigned expression (idioms such as a mask built before use).
        self.defs: dict[str, ast.expr] = {}
        #: Autograd: tensors created with requires_grad=True, by variable (see :class:`_Leaf`).
        self.leaves: dict[str, _Leaf] = {}
        #: Each step's expression and the given tensors, by step name: what a gradient
        #: flows through (a name that is neither is a print standing for untranslated code).
        self.exprs: dict[str, Expr] = {}
        self.givens: set[str] = set()
        #: Steps a gradient does not flow through: computed under ``torch.no_grad()``, or
        #: from a detached value (``.detach()``, ``.data``, ``.item()``, ``torch.tensor(x)``).
        self.cut: set[str] = set()
        self.no_grad = 0
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

    # -- walking --
    def events(self, code: list[Block]) -> Iterator[Any]:
        """Every event of the blocks in order: Given, Step, Note and Shown records."""
        for block in code:
            self._block = block
            self._src = _without_magics(block.text)
            try:
                tree = ast.parse(self._src)
            except (SyntaxError, ValueError) as e:
                yield Note(
                    block.where(getattr(e, "lineno", 1) or 1),
                    "",
                    f"not Python: {e.__class__.__name__}",
                )
                continue
            prints: list[tuple[str, list[Any]]] = []
            body = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
            for stmt in tree.body:
                if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                    self._import(stmt)
            last = body[-1] if body else None
            comments = _comment_outputs(block)
            for stmt in body:
                self._events = []
                self._inner_prints = []
                shown = self._statement(stmt, is_last=stmt is last)
                yield from self._events
                prints.extend(self._inner_prints)
                after = comments.get(getattr(stmt, "end_lineno", 0) or 0)
                if after is not None:
                    # "print(x)  # tensor([[…]])" or "y = x @ w" followed by "# tensor(…)"
                    items = shown[1] if shown is not None else self._assigned(stmt)
                    text, lines, typed, named = after
                    if named is not None and named not in _targets(stmt):
                        items = []  # "# y ≈ …" under a statement that does not assign y
                    if items:
                        yield from self._match(items, [(text, lines)], typed=typed)
                    continue
                if shown is not None:
                    prints.append(shown)
            yield from self._outputs(block, prints)

    def _assigned(self, stmt: ast.stmt) -> list[Any]:
        """What a comment under an assignment shows: the value just assigned."""
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            name = stmt.targets[0].id
            if name in self.names:
                return [("value", Var(self.names[name]), name, None, None)]
            if name in self.opaque:
                return [("value", None, name, None, json.dumps([self.opaque[name], name]))]
        return []

    def _emit(self, event: Any) -> None:
        if isinstance(event, Step):
            self.exprs[event.name] = event.expr
            if self.no_grad or self._cutting:
                self.cut.add(event.name)
        elif isinstance(event, Given):
            self.givens.add(event.name)
        self._events.append(event)

    def _where(self, node: ast.AST) -> str:
        assert self._block is not None
        return self._block.where(getattr(node, "lineno", 1))

    def _source(self, node: ast.AST) -> str:
        try:  # a node of an earlier cell (an inlined function, a mask's definition) has no text here
            text = ast.get_source_segment(self._src, node) or ""
        except (IndexError, ValueError):
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

    def _statement(self, stmt: ast.stmt, *, is_last: bool) -> Any:
        """Translate one statement; returns a print record when it prints."""
        try:
            if isinstance(stmt, ast.Assign):
                self._assign(stmt.targets, stmt.value, stmt)
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                self._assign([stmt.target], stmt.value, stmt)
            elif isinstance(stmt, ast.AugAssign):
                op = ast.BinOp(stmt.target, stmt.op, stmt.value)
                ast.copy_location(op, stmt)
                target = (
                    ast.Name(stmt.target.id, ast.Store())
                    if isinstance(stmt.target, ast.Name)
                    else stmt.target
                )
                self._assign([target], op, stmt)
            elif isinstance(stmt, ast.Expr):
                return self._expression_statement(stmt, is_last=is_last)
            elif isinstance(stmt, ast.For):
                self._loop(stmt)
            elif isinstance(stmt, ast.With):
                off = any(self._turns_grad_off(item.context_expr) for item in stmt.items)
                self.no_grad += off
                try:
                    for s in stmt.body:
                        shown = self._statement(s, is_last=False)
                        if shown is not None:  # print(x) under ``with torch.no_grad():``
                            self._inner_prints.append(shown)
                finally:
                    self.no_grad -= off
            elif isinstance(stmt, ast.FunctionDef):
                self._function(stmt)
            elif isinstance(stmt, ast.ClassDef):
                self.module_stubs.discard(stmt.name)
                if stmt.name in MODULES and _is_stub_class(stmt):
                    self.module_stubs.add(stmt.name)
                    self._emit(
                        Note(
                            self._where(stmt),
                            f"class {stmt.name}",
                            f"has no bodies: read by its name as torch.nn.{stmt.name}",
                        )
                    )
                else:
                    self._emit(
                        Note(self._where(stmt), f"class {stmt.name}", "a class is not translated")
                    )
            elif isinstance(stmt, (ast.Pass, ast.Assert)):
                pass
            else:
                self._emit(
                    Note(
                        self._where(stmt),
                        self._source(stmt),
                        f"a {type(stmt).__name__.lower()} statement is not translated",
                    )
                )
        except _Untranslated as e:
            self._emit(Note(self._where(stmt), self._source(stmt), str(e), tuple(_targets(stmt))))
            for t in _targets(stmt):
                self.opaque[t] = f"{self._where(stmt)}: {e}"
                self.names.pop(t, None)
                self.consts.pop(t, None)
                self.tuples.pop(t, None)
        finally:
            self._cutting = False
        return None

    def _function(self, stmt: ast.FunctionDef) -> None:
        body = stmt.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # a docstring
        self.stubs.pop(stmt.name, None)
        if _is_stub(body) and stmt.name.lower() in STUBS and not stmt.args.vararg:
            # "def softmax(logits): ..." and an example of what it returns: the exercise
            # names the function; it is read as the op of that name
            t = STUBS[stmt.name.lower()]
            self.stubs[stmt.name] = t
            self.functions.pop(stmt.name, None)
            self.opaque.pop(stmt.name, None)
            self._emit(
                Note(
                    self._where(stmt),
                    f"def {stmt.name}(…)",
                    f"has no body: read by its name as {t.op}"
                    + (" along the last axis" if "axis" in t.defaults else ""),
                )
            )
            return
        simple = all(isinstance(s, (ast.Assign, ast.Return, ast.AugAssign)) for s in body)
        if (
            not simple
            or not body
            or not isinstance(body[-1], ast.Return)
            or stmt.args.vararg
            or stmt.args.kwarg
        ):
            self._emit(
                Note(
                    self._where(stmt),
                    f"def {stmt.name}(…)",
                    "only functions of assignments and a return are inlined",
                )
            )
            self.opaque[stmt.name] = "a function that is not translated"
            return
        self.functions[stmt.name] = _Function([a.arg for a in stmt.args.args], body)

    def _loop(self, stmt: ast.For) -> None:
        values = self._range(stmt.iter)
        if values is None or not isinstance(stmt.target, ast.Name) or stmt.orelse:
            raise _Untranslated("a loop over anything but a literal range is not unrolled")
        name = stmt.target.id
        for v in values:
            self.consts[name] = v
            for s in stmt.body:
                if isinstance(s, (ast.Break, ast.Continue, ast.Return)):
                    raise _Untranslated("a loop with break or continue is not unrolled")
                self._statement(s, is_last=False)
        self.consts.pop(name, None)

    def _range(self, node: ast.AST) -> list[int] | None:
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "range"
        ):
            try:
                args = [self._int(a) for a in node.args]
            except _Untranslated:
                return None
            r = range(*args)
            return list(r) if len(r) <= MAX_UNROLL else None
        return None

    # -- assignments --
    def _assign(self, targets: list[ast.expr], value: ast.expr, stmt: ast.stmt) -> None:
        if len(targets) != 1:
            raise _Untranslated("a chained assignment is not translated")
        target = targets[0]
        if isinstance(target, ast.Attribute) and target.attr in ("requires_grad", "grad"):
            self._grad_attribute(target, value)
            return
        if isinstance(target, ast.Attribute) and target.attr in ("weight", "bias", "data"):
            self._module_weight(target, value)
            return
        if isinstance(target, (ast.Tuple, ast.List)) and (
            self._is_autograd(value) or (isinstance(value, ast.Call) and self._is_topk(value))
        ):
            hints = [t.id if isinstance(t, ast.Name) else "grad" for t in target.elts]
            parts = (
                self._autograd(cast(ast.Call, value), stmt, hints)
                if self._is_autograd(value)
                else list(self._topk(cast(ast.Call, value)))
            )
            if len(parts) != len(target.elts) or not all(
                isinstance(t, ast.Name) for t in target.elts
            ):
                raise _Untranslated("unpacking a tuple of tensors into other than its tensors")
            for t, part in zip(target.elts, parts, strict=True):
                assert isinstance(t, ast.Name)
                self._forget(t.id)
                if isinstance(part, Var):
                    self._bind(t.id, part.name)
                elif isinstance(part, str):
                    self.opaque[t.id] = f"{self._where(stmt)}: {part}"
                else:
                    step = self._fresh(t.id)
                    self._emit(Step(step, part, self._where(stmt), self._source(stmt)))
                    self._bind(t.id, step)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                for t, v in zip(target.elts, value.elts, strict=True):
                    self._assign([t], v, stmt)
                return
            raise _Untranslated("unpacking a value that is not a literal tuple is not translated")
        if not isinstance(target, ast.Name):
            raise _Untranslated("assigning into an index or attribute is not translated")
        name = target.id
        in_place = isinstance(stmt, ast.AugAssign)
        leaf = self.leaves.get(name)  # the value may read its .grad (w -= lr * w.grad)
        makes_leaf = _makes_leaf(value)
        self._cutting = self._detaches(value)
        try:
            self._assign_name(name, value, stmt)
        except _Untranslated:
            self.leaves.pop(name, None)
            if makes_leaf:  # drawn at random, say: its print may stand for it
                self.leaves[name] = _Leaf([name])
            elif in_place and leaf is not None:
                leaf.versions.append(name)
                leaf.unknown = leaf.unknown or f"{name} was changed in place by untranslated code"
                self.leaves[name] = leaf
            raise
        self.leaves.pop(name, None)  # assigned anew: another tensor, unless changed in place
        now = self.names.get(name)
        if makes_leaf and now is not None:
            self.leaves[name] = _Leaf([now])
        elif in_place and leaf is not None and now is not None:
            # w -= lr * w.grad: the same tensor, changed in place (the gradient stays)
            leaf.versions.append(now)
            if not self.no_grad:
                leaf.unknown = leaf.unknown or (
                    f"{name}, which requires grad, was changed in place outside torch.no_grad()"
                )
            self.leaves[name] = leaf

    def _forget(self, name: str) -> None:
        """A variable assigned anew: a different tensor from now on."""
        self.tuples.pop(name, None)
        self.leaves.pop(name, None)
        self.optimizers.pop(name, None)

    def _assign_name(self, name: str, value: ast.expr, stmt: ast.stmt) -> None:
        self.tuples.pop(name, None)
        self.optimizers.pop(name, None)
        if self._is_autograd(value):
            self.tuples[name] = self._autograd(cast(ast.Call, value), stmt, [name])
            self.names.pop(name, None)
            self.consts.pop(name, None)
            self.opaque.pop(name, None)
            return
        if isinstance(value, ast.Call) and self._is_topk(value):
            # m = torch.max(x, 1): a pair, read as m.values, m.indices, m[0], m[1]
            self.tuples[name] = list(self._topk(value))
            self.names.pop(name, None)
            self.consts.pop(name, None)
            self.opaque.pop(name, None)
            return
        optimized = self._optimizer_params(value)
        if optimized is not None:
            self.optimizers[name] = optimized
            self.names.pop(name, None)
            self.opaque.pop(name, None)
            return
        module = self._module_of(value)
        if module is not None:
            self.modules[name] = module
            self.opaque.pop(name, None)
            return
        const = self._const_or_none(value)
        if const is not None:
            self.consts[name] = const
            self.names.pop(name, None)
            self.opaque.pop(name, None)
            return
        self.defs[name] = value
        literal = self._literal(value)
        if literal is not None:
            values, shape, f32 = literal
            step = self._fresh(name)
            self._emit(Given(step, values, shape, self._where(stmt), f32))
            self.float32 |= f32
            self._bind(name, step)
            return
        expr = self._expr(value)
        step = self._fresh(name)
        self._emit(Step(step, expr, self._where(stmt), self._source(stmt)))
        self._bind(name, step)

    def _bind(self, name: str, step: str) -> None:
        self.names[name] = step
        self.consts.pop(name, None)
        self.opaque.pop(name, None)

    def _fresh(self, name: str) -> str:
        base = ident(name) or "v"
        out, k = base, 2
        while out in self.taken:
            out, k = f"{base}_{k}", k + 1
        self.taken.add(out)
        return out

    def _module_weight(self, target: ast.Attribute, value: ast.expr) -> None:
        inner = target.value
        if target.attr == "data" and isinstance(inner, ast.Attribute):
            target, inner = inner, inner.value
        if not isinstance(inner, ast.Name) or inner.id not in self.modules:
            raise _Untranslated("assigning to an attribute is not translated")
        m = self.modules[inner.id]
        expr = self._tensor(value)
        if target.attr == "weight":
            m.weight = expr
        else:
            m.bias = expr

    def _module_of(self, value: ast.expr) -> _Module | None:
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
        return _Module(kind, settings)

    # -- autograd --
    def _turns_grad_off(self, node: ast.expr) -> bool:
        """``torch.no_grad()``, ``torch.inference_mode()``, ``torch.set_grad_enabled(False)``."""
        if not isinstance(node, ast.Call):
            return False
        name = (self._dotted(node.func) or "").rsplit(".", 1)[-1]
        if name in ("no_grad", "inference_mode"):
            return True
        return (
            name == "set_grad_enabled"
            and bool(node.args)
            and (self._const_or_none(node.args[0]) is False)
        )

    def _detaches(self, node: ast.expr) -> bool:
        """Whether an expression reads a value autograd does not follow (``.detach()``,
        ``.data``, ``.item()``, ``torch.tensor(x)`` of a variable), here or in a notebook
        function it calls."""
        seen: set[str] = set()
        todo: list[ast.AST] = [node]
        while todo:
            n = todo.pop()
            for sub in ast.walk(n):
                if isinstance(sub, ast.Attribute) and sub.attr in _DETACHING:
                    return True
                if not isinstance(sub, ast.Call):
                    continue
                dotted = self._dotted(sub.func)
                module = self._module_name(dotted) if dotted else None
                if module in _ARRAY_MAKERS and sub.args and self._literal(sub) is None:
                    return True
                fn = sub.func.id if isinstance(sub.func, ast.Name) else None
                if fn is not None and fn in self.functions and fn not in seen:
                    seen.add(fn)
                    todo.extend(self.functions[fn].body)
        return False

    def _tuple_parts(self, node: ast.expr) -> list[Expr | str] | None:
        """The elements of a tuple of tensors (a variable holding one, or the call)."""
        if isinstance(node, ast.Name) and node.id in self.tuples:
            return self.tuples[node.id]
        if self._is_autograd(node):
            return self._autograd(cast(ast.Call, node), self._stmt_of(node))
        if isinstance(node, ast.Call) and self._is_topk(node):
            return list(self._topk(node))
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
                except _Untranslated:
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
                raise _Untranslated("topk along an axis of a tensor of unknown rank")
            index = ", ".join([":"] * (axis % ndim) + [f"0:{k}"])
        order = call("argsort", x, axis=axis, descending=kw.get("largest", True))
        return values, call("getitem", order, index=index)

    def _is_autograd(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Call) and self._dotted(node.func) == "torch.autograd.grad"

    def _autograd(
        self, node: ast.Call, stmt: ast.stmt, hints: list[str] | None = None
    ) -> list[Expr | str]:
        """``torch.autograd.grad(y, w)`` or ``(y, [w, b])``: one ``grad`` step per tensor, or
        why one has none (the tuple's elements, in order). ``hints`` name the steps: the
        variables assigned (one for the tuple, or one per element).

        Raises:
            _Untranslated: Arguments other than a scalar output, its inputs and
                ``retain_graph``/``create_graph``/``allow_unused``.
        """
        named = dict(zip(("outputs", "inputs"), node.args, strict=False))
        for kw in node.keywords:
            if kw.arg in ("outputs", "inputs"):
                named[kw.arg] = kw.value
            elif kw.arg not in ("retain_graph", "create_graph", "allow_unused"):
                raise _Untranslated(f"torch.autograd.grad with {kw.arg}= is not translated")
        if len(node.args) > 2 or set(named) != {"outputs", "inputs"}:
            raise _Untranslated("torch.autograd.grad with these arguments is not translated")
        y = self._scalar_step(named["outputs"], "torch.autograd.grad")
        xs = named["inputs"]
        items = xs.elts if isinstance(xs, (ast.List, ast.Tuple)) else [xs]
        out: list[Expr | str] = []
        for k, item in enumerate(items):
            hint = None
            if hints and len(hints) == len(items):
                hint = hints[k]
            elif hints:
                hint = f"{hints[0]}_{k}"
            try:
                x, versions = self._variable(item)
                out.append(self._grad_step([(y, x)], versions, node, stmt, hint))
            except _Untranslated as e:
                out.append(str(e))
        return out

    def _variable(self, node: ast.expr) -> tuple[str, set[str]]:
        """The step a gradient is taken with respect to, and every step that is the same
        tensor for autograd (a leaf's values before in-place changes)."""
        if not isinstance(node, ast.Name):
            raise _Untranslated(f"a gradient with respect to {self._source(node)}")
        leaf = self.leaves.get(node.id)
        step = self.names.get(node.id)
        if step is None and node.id in self.printed_opaque and node.id in self.opaque:
            step = node.id  # its printed value stands for it
        if step is None:
            raise _Untranslated(f"{node.id} is not translated")
        return step, set(leaf.versions) if leaf is not None else {step}

    def _scalar_step(self, node: ast.expr, what: str) -> str:
        """The step of a one-entry tensor a gradient is taken of (an expression gets one)."""
        if isinstance(node, ast.Name) and node.id in self.names:
            y = self.names[node.id]
        elif isinstance(node, ast.Name) and node.id in self.opaque:
            raise _Untranslated(f"{what} of {node.id}, which is not translated")
        else:
            y = self._fresh("output")
            self._emit(Step(y, self._expr(node), self._where(node), self._source(node)))
        if y in self.cut:
            raise _Untranslated(
                f"{what} of a step that reads a detached value or was computed under "
                "torch.no_grad() (not translated)"
            )
        shape = self.shape_of(y)
        if shape is None:
            raise _Untranslated(f"{what} of a tensor whose shape is not known")
        size = 1
        for d in shape:
            size *= d
        if size != 1:
            raise _Untranslated(f"{what} of a tensor of {size} entries (not a scalar)")
        return y

    def _reach(self, y: str) -> tuple[set[str], set[str], set[str]]:
        """What ``y`` is computed from, stopping at autograd's leaves: every step and given
        reached, those reached along paths with no detached step, and the names that stand
        for untranslated code (whose own inputs are unknown)."""
        stops = {v for leaf in self.leaves.values() for v in leaf.versions}
        reached: set[str] = set()
        clean: set[str] = set()
        unknown: set[str] = set()
        todo = [(y, True)]
        while todo:
            name, ok = todo.pop()
            if name in reached and (not ok or name in clean):
                continue
            reached.add(name)
            if ok:
                clean.add(name)
            if name in stops and name != y:
                continue
            expr = self.exprs.get(name)
            if expr is None:
                if name not in self.givens and name not in stops:
                    unknown.add(name)
                continue
            ok = ok and name not in self.cut
            todo.extend((v, ok) for v in variables(expr))
        return reached, clean, unknown

    def _grad_step(
        self,
        terms: list[tuple[str, str]],
        versions: set[str],
        node: ast.AST,
        stmt: ast.stmt,
        hint: str | None = None,
    ) -> Var:
        """The step of Σ ∂y/∂x over ``terms``: one ``grad(y, x)`` step each, then their sum
        (``hint`` names it, if it is new).

        Raises:
            _Untranslated: A ``y`` that reads another version of ``x`` (changed in place),
                reads ``x`` through a detached value, or reads code that is not translated.
        """
        names = []
        for y, x in terms:
            reached, clean, unknown = self._reach(y)
            if unknown:
                raise _Untranslated(
                    f"{y} is computed from {sorted(unknown)[0]}, whose computation is not "
                    "translated (a gradient may flow through it)"
                )
            hit = versions & reached
            if hit != {x} or x not in clean:
                if not hit:
                    raise _Untranslated(f"{y} does not depend on {x}")
                raise _Untranslated(
                    f"the gradient of {y} reaches {x} through a detached value or an earlier "
                    "value of it (changed in place): not translated"
                )
            key: tuple[tuple[str, str], ...] = ((y, x),)
            if key not in self._grad_steps:
                self._grad_steps[key] = self._fresh(
                    hint if hint and len(terms) == 1 else f"grad_{x}"
                )
                self._emit(
                    Step(
                        self._grad_steps[key],
                        call("grad", Var(y), Var(x)),
                        self._where(stmt),
                        f"{self._source(node)}: ∂{y}/∂{x}",
                    )
                )
            names.append(self._grad_steps[key])
        if len(names) == 1:
            return Var(names[0])
        key = tuple(terms)
        if key not in self._grad_steps:
            total: Expr = Var(names[0])
            for n in names[1:]:
                total = call("add", total, Var(n))
            self._grad_steps[key] = self._fresh(hint or f"grad_{terms[0][1]}")
            self._emit(
                Step(
                    self._grad_steps[key],
                    total,
                    self._where(stmt),
                    f"{self._source(node)}: {len(names)} backward() calls accumulated",
                )
            )
        return Var(self._grad_steps[key])

    def _grad_of(self, node: ast.Attribute) -> Expr:
        """``w.grad``: what the ``backward()`` calls so far accumulated into it."""
        base = node.value
        if not isinstance(base, ast.Name):
            raise _Untranslated(f"{self._source(node)} is not translated")
        leaf = self.leaves.get(base.id)
        if leaf is None:
            raise _Untranslated(
                f"{base.id}.grad: {base.id} is not a tensor created with requires_grad=True "
                "in the translated code"
            )
        if leaf.unknown:
            raise _Untranslated(f"{base.id}.grad is not known: {leaf.unknown}")
        if not leaf.terms:
            if leaf.base == "zero":
                shape = self.shape_of(leaf.versions[-1])
                if shape is None:
                    raise _Untranslated(f"{base.id}.grad: zeros of a shape not known")
                return call("zeros", shape=list(shape))
            if leaf.base == "either":
                raise _Untranslated(
                    f"{base.id}.grad after zero_grad() is None or zeros, by PyTorch version"
                )
            raise _Untranslated(f"{base.id}.grad is None: no backward() reached {base.id}")
        return self._grad_step(
            leaf.terms, set(leaf.versions), node, self._stmt_of(node), f"{base.id}_grad"
        )

    def _stmt_of(self, node: ast.AST) -> ast.stmt:
        """A statement to place a step at (a node's own line)."""
        stmt = ast.Pass()
        ast.copy_location(stmt, node)
        return stmt

    def _backward(self, node: ast.Call) -> None:
        """``y.backward()``: ∂y/∂w added to the ``.grad`` of each leaf ``w`` it reaches.

        A leaf it reaches in a way not translated (through a detached value, an earlier
        value, or untranslated code) gets an unknown ``.grad``; if ``y`` itself is not
        translated, every leaf does.
        """
        assert isinstance(node.func, ast.Attribute)
        try:
            if node.args or any(
                k.arg not in ("retain_graph", "create_graph") for k in node.keywords
            ):
                raise _Untranslated("backward() with a gradient or inputs= is not translated")
            y = self._scalar_step(node.func.value, "backward()")
        except _Untranslated as e:
            for leaf in self.leaves.values():
                leaf.unknown = leaf.unknown or f"{self._where(node)}: {e}"
            raise
        reached, clean, unknown = self._reach(y)
        for var, leaf in self.leaves.items():
            if leaf.unknown:
                continue
            x = leaf.versions[-1]
            hit = set(leaf.versions) & reached
            if unknown:
                leaf.unknown = (
                    f"{self._where(node)}: {y} is computed from {sorted(unknown)[0]}, whose "
                    "computation is not translated"
                )
            elif hit and (hit != {x} or x not in clean):
                leaf.unknown = (
                    f"{self._where(node)}: the gradient reaches {var} through a detached value "
                    "or an earlier value of it"
                )
            elif hit:
                leaf.terms.append((y, x))

    def _autograd_call(self, v: ast.Call) -> bool:
        """Statements about gradients: ``backward()``, ``zero_grad()``, ``.grad.zero_()``,
        ``requires_grad_()``, an optimizer's ``step()``, in-place changes (``w.sub_(…)``).
        Returns whether the statement was one.

        Raises:
            _Untranslated: One whose effect is not translated (its tensors are marked so).
        """
        assert isinstance(v.func, ast.Attribute)
        owner, method = v.func.value, v.func.attr
        where = f"{self._where(v)}: {self._source(v)}"
        if method == "backward":
            self._backward(v)
            return True
        if method == "zero_" and isinstance(owner, ast.Attribute):
            inner = owner.value if owner.attr == "data" else owner
            if (
                isinstance(inner, ast.Attribute)
                and inner.attr == "grad"
                and isinstance(inner.value, ast.Name)
            ):
                if inner.value.id in self.leaves:
                    self.leaves[inner.value.id].reset("zero")
                return True
        if method == "requires_grad_" and isinstance(owner, ast.Name):
            on = self._const_or_none(v.args[0]) if v.args else True
            step = self.names.get(owner.id)
            if on is False:
                self.leaves.pop(owner.id, None)
            elif step is not None and owner.id not in self.leaves:
                self.leaves[owner.id] = _Leaf([step])
            return True
        if method in ("zero_grad", "step") and isinstance(owner, ast.Name):
            params = self.optimizers.get(owner.id)
            if params is None and owner.id not in self.opaque:
                return False  # not an optimizer the code built
            touched = params if params is not None else list(self.leaves)
            for var in touched:
                leaf = self.leaves.get(var)
                if method == "zero_grad":
                    if leaf is not None and params is not None:
                        keyword = next(
                            (k.value for k in v.keywords if k.arg == "set_to_none"), None
                        )
                        flag = self._const_or_none(keyword) if keyword is not None else None
                        leaf.reset(
                            "none" if flag is True else "zero" if flag is False else "either"
                        )
                    elif leaf is not None:
                        leaf.unknown = f"{where}: which tensors it zeroes is not translated"
                    continue
                # an optimizer's update is not translated: the values it changes are unknown
                self.names.pop(var, None)
                self.opaque[var] = f"{where}: changed in place by an optimizer (not translated)"
                if leaf is not None:
                    leaf.versions.append(var)
            if method == "step":
                raise _Untranslated("an optimizer's update is not translated")
            return True
        if method in _IN_PLACE and isinstance(owner, ast.Name) and len(v.args) == 1:
            if v.keywords:
                raise _Untranslated(f"{method} with keywords is not translated")
            change = ast.AugAssign(ast.Name(owner.id, ast.Store()), _IN_PLACE[method](), v.args[0])
            ast.copy_location(change, v)
            ast.copy_location(change.target, owner)
            self._statement(change, is_last=False)
            return True
        if method.endswith("_") and isinstance(owner, ast.Name) and owner.id in self.names:
            # another in-place change (fill_, clamp_, …): the variable's value is unknown
            self.names.pop(owner.id, None)
            self.opaque[owner.id] = f"{where}: changed in place (not translated)"
            if owner.id in self.leaves:
                self.leaves[owner.id].versions.append(owner.id)
            raise _Untranslated(f"the in-place .{method}() is not translated")
        return False

    def _grad_attribute(self, target: ast.Attribute, value: ast.expr) -> None:
        """``w.requires_grad = True`` and ``w.grad = None``."""
        if not isinstance(target.value, ast.Name):
            raise _Untranslated("assigning to an attribute is not translated")
        name = target.value.id
        v = self._const_or_none(value)
        if target.attr == "requires_grad":
            step = self.names.get(name)
            if v is False:
                self.leaves.pop(name, None)
            elif v is True and step is not None and name not in self.leaves:
                self.leaves[name] = _Leaf([step])
            return
        leaf = self.leaves.get(name)
        if leaf is not None and isinstance(value, ast.Constant) and value.value is None:
            leaf.reset("none")
            return
        if leaf is not None:
            leaf.unknown = "its .grad was assigned a value that is not translated"
        raise _Untranslated("assigning to .grad is not translated")

    def _optimizer_params(self, value: ast.expr) -> list[str] | None:
        """``torch.optim.SGD([w, b], lr=0.1)``: the variables it updates, when written out."""
        if not isinstance(value, ast.Call) or not value.args:
            return None
        dotted = self._dotted(value.func) or ""
        if not dotted.startswith("torch.optim."):
            return None
        params = value.args[0]
        if isinstance(params, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Name) for e in params.elts
        ):
            return [cast(ast.Name, e).id for e in params.elts]
        return None

    # -- expressions --
    def _expression_statement(self, stmt: ast.Expr, *, is_last: bool) -> Any:
        v = stmt.value
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and self._autograd_call(v):
            return None
        if isinstance(v, ast.Call):
            dotted = self._dotted(v.func)
            if dotted in ("print", "display", "IPython.display.display"):
                how = "print" if dotted == "print" else "display"
                return (how, self._noted(stmt, [x for a in v.args for x in self._shown_args(a)]))
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
            if dotted and (
                _RANDOM.search(dotted) or "manual_seed" in dotted or dotted.endswith("seed")
            ):
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
                        m = re.fullmatch(r"[^.]*\.(\d+)[fF%]?", str(spec.values[0].value))
                        decimals = int(m.group(1)) if m else None
                        if m and str(spec.values[0].value).endswith("%"):
                            decimals = None  # a percentage: read from its digits
                    kind, expr, label, d, why = self._shown_args(part.value)[0]
                    out.append((kind, expr, label, decimals if decimals is not None else d, why))
                elif isinstance(part, ast.Constant):
                    out.append(("text", None, str(part.value), None, None))
            return out
        label = self._source(node)
        parts = self._tuple_parts(node)
        if parts is not None:  # print(grads): (tensor([…]),) — each element in turn
            return [
                ("value", p, label, None, None)
                if not isinstance(p, str)
                else ("value", None, label, None, json.dumps([p, None]))
                for p in parts
            ]
        target, decimals = node, None
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "round"
            and node.args
        ):
            decimals = self._int_or_none(node.args[0])
            target = node.func.value
        elif (
            isinstance(node, ast.Call)
            and self._dotted(node.func) in ("numpy.round", "numpy.around", "round")
            and len(node.args) == 2
        ):
            decimals = self._int_or_none(node.args[1])
            target = node.args[0]
        if _is_size(target):
            return [("value", None, label, decimals, json.dumps([SIZE, None]))]
        try:
            return [("value", self._tensor_or_const(target), label, decimals, None)]
        except _Untranslated as e:
            name = target.id if isinstance(target, ast.Name) else None
            return [("value", None, label, decimals, json.dumps([str(e), name]))]

    def _tensor_or_const(self, node: ast.expr) -> Expr:
        c = self._const_or_none(node)
        if c is not None:
            return Num(_num_text(c))
        return self._tensor(node)

    def _tensor(self, node: ast.expr) -> Expr:
        literal = self._literal(node)
        if literal is not None:
            values, shape, f32 = literal
            step = self._fresh("literal")
            self._emit(Given(step, values, shape, self._where(node), f32))
            self.float32 |= f32
            return Var(step)
        return self._expr(node)

    def _expr(self, node: ast.expr) -> Expr:
        match node:
            case ast.Name(id=name):
                if name in self.names:
                    return Var(self.names[name])
                if name in self.tuples:
                    raise _Untranslated(f"{name} is a tuple of tensors, not a tensor")
                if name in self.consts:
                    return Num(_num_text(self.consts[name]))
                if name in self.opaque and name in self.printed_opaque:
                    return Var(name)  # its printed value will stand for it
                if name in self.opaque:
                    raise _Untranslated(
                        f"depends on {name}, which is not translated ({self.opaque[name]})"
                    )
                raise _Untranslated(
                    f"depends on {name}, which is not defined in the notebook's translated code"
                )
            case ast.Constant(value=v) if isinstance(v, (int, float)) and not isinstance(v, bool):
                return Num(self._number_text(node))
            case ast.UnaryOp(op=ast.USub(), operand=x):
                c = self._const_or_none(node)
                if c is not None:
                    return Num(_num_text(c))
                return call("neg", self._expr(x))
            case ast.UnaryOp(op=ast.UAdd(), operand=x):
                return self._expr(x)
            case ast.BinOp(left=a, op=op, right=b):
                c = self._const_or_none(node)
                if c is not None:
                    return Num(_num_text(c))
                ops = {
                    ast.Add: "add",
                    ast.Sub: "sub",
                    ast.Mult: "mul",
                    ast.Div: "div",
                    ast.MatMult: "matmul",
                    ast.Pow: "pow",
                }
                op_name = ops.get(type(op))
                if op_name is None:
                    raise _Untranslated(f"the operator {type(op).__name__} is not translated")
                return call(op_name, self._operand(a), self._operand(b))
            case ast.Attribute(value=x, attr="T" | "mT"):
                return call("T", self._expr(x))
            case ast.Attribute(attr="grad"):
                return self._grad_of(node)
            case ast.Attribute(value=x, attr="values" | "indices" as attr) if (
                parts := self._tuple_parts(x)
            ) is not None and len(parts) == 2:
                # torch.max(x, 1).values, torch.topk(x, 2).indices: a named field of the pair
                part = parts[0 if attr == "values" else 1]
                if isinstance(part, str):
                    raise _Untranslated(part)
                return part
            case ast.Compare(left=a, ops=[op], comparators=[b]):
                compared = _COMPARISONS.get(type(op))
                if compared is None:
                    raise _Untranslated(f"the comparison {type(op).__name__} is not translated")
                return call(compared, self._operand(a), self._operand(b))
            case ast.Attribute(value=x, attr=attr) if attr in _IDENTITY_METHODS:
                return self._expr(x)
            case ast.Subscript():
                return self._subscript(node)
            case ast.Call():
                return self._call(node)
            case ast.List() | ast.Tuple():
                literal = self._literal(node)
                if literal is not None:
                    return self._tensor(node)
        raise _Untranslated(f"{self._source(node) or type(node).__name__} is not translated")

    def _operand(self, node: ast.expr) -> Expr:
        c = self._const_or_none(node)
        if c is not None:
            return Num(_num_text(c))
        return self._tensor(node) if isinstance(node, (ast.List, ast.Tuple)) else self._expr(node)

    def _subscript(self, node: ast.Subscript) -> Expr:
        parts_of = self._tuple_parts(node.value)
        if parts_of is not None:  # grads[0]: an element of torch.autograd.grad's tuple
            k = self._int(node.slice)
            if not -len(parts_of) <= k < len(parts_of):
                raise _Untranslated("an index past the end of a tuple")
            part = parts_of[k]
            if isinstance(part, str):
                raise _Untranslated(part)
            return part
        base = self._expr(node.value)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        parts = []
        for it in items:
            if isinstance(it, ast.Slice):
                lo = "" if it.lower is None else str(self._int(it.lower))
                hi = "" if it.upper is None else str(self._int(it.upper))
                if it.step is not None:
                    parts.append(f"{lo}:{hi}:{self._int(it.step)}")
                else:
                    parts.append(f"{lo}:{hi}")
            elif isinstance(it, ast.Constant) and it.value is Ellipsis:
                parts.append("...")
            elif isinstance(it, ast.Constant) and it.value is None:
                raise _Untranslated("indexing with None (a new axis) is not translated yet")
            else:
                c = self._const_or_none(it)
                if isinstance(c, int) and not isinstance(c, bool):
                    parts.append(str(c))
                else:
                    ids = self._expr(it)  # E[ids]: rows picked by a tensor of ids
                    return call("getitem", base, ids, index="{1}")
        return call("getitem", base, index=", ".join(parts))

    def _call(self, node: ast.Call) -> Expr:
        func = node.func
        if isinstance(func, ast.Name) and func.id in self.functions:
            return self._inline_call(self.functions[func.id], node)
        if isinstance(func, ast.Name) and func.id in self.stubs:
            return self._apply(self.stubs[func.id], node.args, node.keywords, family="numpy")
        if isinstance(func, ast.Name) and func.id in self.modules:
            return self._apply_module(self.modules[func.id], node)
        if isinstance(func, ast.Name) and func.id in ("float", "int") and node.args:
            return self._expr(node.args[0])
        dotted = self._dotted(func) if self._is_module_call(func) else None
        if dotted is not None and (module := self._module_name(dotted)) is not None:
            mod, fname = module
            if dotted and _IO.search(dotted):
                raise _Untranslated(f"{dotted} reads or writes files and is not translated")
            if (mod, fname) in _ARRAY_MAKERS and node.args:
                if self._literal(node) is not None:
                    return self._tensor(node)
                number = self._const_or_none(node.args[0])
                if isinstance(number, (int, float, _Text)) and not isinstance(number, bool):
                    return Num(_num_text(number))  # torch.tensor(float("-inf")): a 0-d tensor
                if mod in ("torch", "tensorflow", "jax.numpy"):
                    self.float32 = True  # torch.tensor(x): x stored as float32
                return self._expr(node.args[0])  # an array made from a variable: its values
            if fname == "Parameter" and node.args:  # nn.Parameter(t): the tensor t
                return self._expr(node.args[0])
            if fname in ("ones", "zeros"):
                return call(fname, shape=self._shape_args(node.args))
            if fname == "eye" and node.args:
                return call("eye", n=self._int(node.args[0]))
            if fname == "matmul" and mod == "tensorflow" and len(node.args) == 2:
                return self._tf_matmul(node)
            if fname == "masked_fill" and len(node.args) == 3:
                return self._masked_fill(self._expr(node.args[0]), node.args[1], node.args[2])
            if _RANDOM.search(fname):
                raise _Untranslated(f"random values ({dotted}) are not translated")
            t = lookup(mod, fname)
            if t is None:
                raise _Untranslated(f"no translation for {dotted} yet")
            return self._apply(t, node.args, node.keywords, family=mod)
        if isinstance(func, ast.Attribute):
            # a method of a tensor: x.softmax(dim=-1), x.masked_fill(m, v), x.view(…)
            if func.attr in _IDENTITY_METHODS or func.attr in ("item", "tolist", "to", "type"):
                return self._expr(func.value)
            if func.attr == "masked_fill" and len(node.args) == 2:
                return self._masked_fill(self._expr(func.value), node.args[0], node.args[1])
            if func.attr in ("size",) and node.args:
                raise _Untranslated("a size used as a tensor is not translated")
            t = METHODS.get(func.attr)
            if t is None:
                raise _Untranslated(f"no translation for the method .{func.attr}() yet")
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
        raise _Untranslated(f"{self._source(node)} is not translated")

    def _array_family(self, method: str) -> str:
        """``torch`` or ``numpy``: the one of the two the code imports, for ``x.method()``.

        Raises:
            _Untranslated: When the code imports both, or neither.
        """
        imported = {FAMILIES.get(m.split(".")[0], "") for m in self.aliases.values()}
        families = sorted(imported & {"torch", "numpy"})
        if len(families) != 1:
            raise _Untranslated(
                f"x.{method}() differs between PyTorch tensors and numpy arrays, and "
                + ("the code imports both" if families else "the code imports neither")
            )
        return families[0]

    def _is_module_call(self, func: ast.expr) -> bool:
        """Whether ``a.b.f(…)`` calls a function of an imported module (not a tensor's method)."""
        node = func
        while isinstance(node, ast.Attribute):
            node = node.value
        if not isinstance(node, ast.Name) or node is func:
            return isinstance(node, ast.Name) and node.id in self.aliases
        return node.id in self.aliases and node.id not in self.names and node.id not in self.consts

    def _masked_fill(self, x: Expr, mask: ast.expr, value: ast.expr) -> Expr:
        """``masked_fill(tril(ones(n, n)) == 0, -inf)`` (or a ``triu(…, diagonal=1)`` mask): the causal mask."""
        v = self._const_or_none(value)
        if v is None or not (isinstance(v, float) and v == float("-inf")):
            return call(
                "masked_fill",
                x,
                self._expr(mask),
                Num(_num_text(v)) if v is not None else self._expr(value),
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

    def _inline_call(self, f: _Function, node: ast.Call) -> Expr:
        if self._inline >= MAX_INLINE:
            raise _Untranslated("functions nested too deeply to inline")
        if len(node.args) > len(f.params) or (
            node.keywords and any(k.arg not in f.params for k in node.keywords)
        ):
            raise _Untranslated("a call that does not match its function's parameters")
        saved = (dict(self.names), dict(self.consts), dict(self.opaque))
        self._inline += 1
        try:
            bound: dict[str, Expr] = {}
            for p, a in zip(f.params, node.args, strict=False):
                bound[p] = self._operand(a)
            for k in node.keywords:
                assert k.arg is not None
                bound[k.arg] = self._operand(k.value)
            local: dict[str, Expr] = dict(bound)

            def sub(n: ast.expr) -> Expr:
                return _Substitute(self, local).expr(n)

            for s in f.body:
                if (
                    isinstance(s, ast.Assign)
                    and len(s.targets) == 1
                    and isinstance(s.targets[0], ast.Name)
                ):
                    local[s.targets[0].id] = sub(s.value)
                elif isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
                    local[s.target.id] = sub(
                        ast.BinOp(ast.Name(s.target.id, ast.Load()), s.op, s.value)
                    )
                elif isinstance(s, ast.Return) and s.value is not None:
                    return sub(s.value)
                else:
                    raise _Untranslated("a function body that is not assignments and a return")
            raise _Untranslated("a function without a return")
        finally:
            self._inline -= 1
            self.names, self.consts, self.opaque = saved

    def _apply_module(self, m: _Module, node: ast.Call) -> Expr:
        if len(node.args) != 1:
            raise _Untranslated(f"calling an nn.{m.kind} with {len(node.args)} arguments")
        x = self._expr(node.args[0])
        if m.kind == "Linear":
            if m.weight is None:
                raise _Untranslated(
                    "an nn.Linear whose weights are random (never set from printed values)"
                )
            out = call("matmul", x, call("T", m.weight))
            bias = m.settings.get("bias", True)
            if bias is not False:
                if m.bias is None:
                    raise _Untranslated("an nn.Linear whose bias is random")
                out = call("add", out, m.bias)
            return out
        if m.kind == "Embedding":
            if m.weight is None:
                raise _Untranslated("an nn.Embedding whose table is random")
            return call("getitem", m.weight, x, index="{1}")
        if m.kind == "LayerNorm":
            eps = m.settings.get("eps", 1e-05)
            params: dict[str, Any] = {"eps": _num_text(eps if eps is not None else 1e-05)}
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
        return call(MODULES[m.kind].op, x)

    def _tf_matmul(self, node: ast.Call) -> Expr:
        """``tf.matmul(a, b, transpose_a=…, transpose_b=…)``: a matmul of the (transposed) operands."""
        flags = {"transpose_a": False, "transpose_b": False}
        for kw in node.keywords:
            if kw.arg not in flags or not (
                isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, bool)
            ):
                raise _Untranslated(f"the argument {kw.arg}= of matmul is not translated")
            flags[kw.arg] = kw.value.value
        a, b = (self._operand(x) for x in node.args)
        if flags["transpose_a"]:
            a = call("T", a)
        if flags["transpose_b"]:
            b = call("T", b)
        return call("matmul", a, b)

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
            raise _Untranslated(f"{t.op} with {len(args)} positional arguments is not translated")
        for kw in keywords:
            if kw.arg is None:
                raise _Untranslated("**keywords are not translated")
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
                    raise _Untranslated(
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
                raise _Untranslated(f"the argument {k}= of {t.op} is not translated")
            if target is None:
                continue
            params[target] = (
                self._const_or_none(a)
                if target != "shape"
                else self._shape_args([a] if not isinstance(a, (ast.Tuple, ast.List)) else a.elts)
            )
            if params[target] is None and target not in ("axis",):
                raise _Untranslated(f"the argument {k}= of {t.op} is not a plain number")
        return self._finish(t.op, tensors, params, self_node)

    def _finish(
        self, op: str, xs: list[Expr], params: dict[str, Any], self_node: ast.expr | None
    ) -> Expr:
        """The op with the parameters the step language takes."""
        dim_keyword = params.pop("_dim_keyword", False)
        if (
            op in ("max", "min")
            and dim_keyword
            and not (op == "max" and self._pair and isinstance(params.get("axis"), int))
        ):
            raise _Untranslated(
                f"torch's {op}(dim) returns values and indices: translated when unpacked"
                if op == "max"
                else f"torch's {op}(dim) returns values and indices; not translated"
            )
        if "ddof" in params:
            params["unbiased"] = params.pop("ddof") == 1
        if "correction" in params:
            params["unbiased"] = params.pop("correction") == 1
        if op == "round":
            return xs[0]  # a print format: the claim reads the printed digits
        if op in ("tril", "triu"):
            if params.get("diagonal", 0) not in (0, None):
                raise _Untranslated(
                    f"{op} with diagonal={params['diagonal']} is not translated yet"
                )
            return call(op, xs[0])
        if op == "gelu":
            return call("gelu_tanh" if params.get("approximate") == "tanh" else "gelu", xs[0])
        if op == "transpose":
            return self._transpose(xs[0], params)
        if op == "reshape":
            shape = params.get("shape")
            if not shape:
                raise _Untranslated("a reshape to a shape that is not written out")
            return call("reshape", xs[0], shape=list(shape))
        if op == "layernorm":
            kw = {"eps": _num_text(params.get("eps", 0))}
            out = call("layernorm", xs[0], **kw)
            if len(xs) > 1:
                raise _Untranslated("a layer norm with weights is not translated yet")
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
                raise _Untranslated(f"{op} over the whole array (no axis) is not translated")
            return call(op, xs[0], axis=axis)
        if op in ("concat", "stack"):
            return call(op, *xs, axis=params.get("axis", 0) or 0)
        if op == "cross_entropy":
            smoothing = params.get("label_smoothing", 0)
            kw3 = {} if smoothing in (0, None) else {"label_smoothing": _num_text(smoothing)}
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
                raise _Untranslated("flatten of some axes only is not translated")
            return call("reshape", xs[0], shape=[-1])
        if op == "topk":
            if not self._pair:
                raise _Untranslated("topk gives values and indices: translated when unpacked")
            if params.get("sorted") is False or params.get("k") is None:
                raise _Untranslated("topk with sorted=False or no k is not translated")
            kw5: dict[str, Any] = {"k": params["k"]}
            if params.get("axis") not in (None, -1):
                kw5["axis"] = params["axis"]
            if params.get("largest") is False:
                kw5["largest"] = False
            return call("topk", xs[0], **kw5)
        if op in ("linear", "embedding"):
            raise _Untranslated(f"{op} is not translated")
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
            raise _Untranslated("a transpose of a tensor of unknown rank")
        a, b = cast(int, d0) % ndim, cast(int, d1) % ndim  # transpose(dim0, dim1) names both
        if {a, b} == {ndim - 1, ndim - 2}:
            return call("T", x)
        perm = list(range(ndim))
        perm[a], perm[b] = perm[b], perm[a]
        return call("transpose", x, axes=perm)

    def _ndim(self, x: Expr) -> int | None:
        """The rank of a translated expression, from its inputs' shapes and its op."""
        if isinstance(x, Var):
            shape = self.shape_of(x.name)
            return len(shape) if shape is not None else None
        if isinstance(x, Call) and x.op == "reshape":
            return len(x.kw["shape"])
        if isinstance(x, Call) and x.op in (
            "T",
            "transpose",
            "softmax",
            "layernorm",
            "exp",
            "relu",
        ):
            return self._ndim(x.args[0])
        if isinstance(x, Call) and x.op == "matmul":
            ranks = [self._ndim(a) for a in x.args]
            return None if None in ranks else max(r for r in ranks if r is not None)
        names = variables(x)
        if isinstance(x, Call) and x.op in ("add", "sub", "mul", "div", "neg") and names:
            ranks = [self._ndim(a) for a in x.args if not isinstance(a, Num)]
            return max((r for r in ranks if r is not None), default=None)
        return None

    def _items(self, node: ast.expr) -> list[Expr] | None:
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self._operand(e) for e in node.elts]
        if isinstance(node, ast.ListComp) and len(node.generators) == 1:
            g = node.generators[0]
            values = self._range(g.iter)
            if values is None or not isinstance(g.target, ast.Name) or g.ifs:
                return None
            out = []
            for v in values:
                self.consts[g.target.id] = v
                out.append(self._operand(node.elt))
            self.consts.pop(g.target.id, None)
            return out
        return None

    # -- constants --
    def _number_text(self, node: ast.Constant) -> str:
        text = ast.get_source_segment(self._src, node)
        if text and re.fullmatch(r"[\d_.eE+-]+", text):
            return text.replace("_", "")
        return _num_text(node.value)

    def _const_or_none(self, node: ast.expr) -> Any:
        try:
            return self._const(node)
        except _Untranslated:
            return None

    def _const(self, node: ast.expr) -> Any:
        """A Python number the code computes from literals (no tensor involved)."""
        match node:
            case ast.Constant(value=v) if isinstance(v, (int, float, bool)) or v is None:
                if isinstance(v, float):
                    return _Text(self._number_text(node), v)
                return v
            case ast.Constant(value=str() as s):
                return s
            case ast.Name(id=name) if name in self.consts:
                return self.consts[name]
            case ast.UnaryOp(op=ast.USub(), operand=x):
                v = self._const(x)
                if isinstance(v, _Text):
                    return _Text("-" + v.text, -v.value)
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    return -v
            case ast.BinOp(left=a, op=op, right=b):
                x, y = self._const(a), self._const(b)
                if isinstance(x, _Text) or isinstance(y, _Text):
                    raise _Untranslated("arithmetic on decimal literals")
                if isinstance(x, int) and isinstance(y, int):
                    if isinstance(op, ast.Add):
                        return x + y
                    if isinstance(op, ast.Sub):
                        return x - y
                    if isinstance(op, ast.Mult):
                        return x * y
                    if isinstance(op, ast.FloorDiv) and y:
                        return x // y
                    if isinstance(op, ast.Pow) and 0 <= y <= 64:
                        return x**y
            case ast.Call(func=f, args=args) if self._dotted(f) in ("float",) and args:
                v = self._const(args[0])
                if v in ("-inf", "inf", "-Infinity"):
                    return float(v)
                return v
            case ast.Attribute(attr="inf") if (self._dotted(node) or "").startswith(
                ("numpy", "torch", "math")
            ):
                return float("inf")
            case ast.Subscript(value=ast.Attribute(value=base, attr="shape"), slice=idx):
                shape = self._shape_of_node(base)
                k = self._int(idx)
                return shape[k]
            case ast.Call(func=ast.Name(id="len"), args=[x]):
                return self._shape_of_node(x)[0]
            case ast.Call(func=ast.Attribute(value=base, attr="size"), args=[idx]):
                return self._shape_of_node(base)[self._int(idx)]
        raise _Untranslated(f"{self._source(node)} is not a plain number")

    def _shape_of_node(self, node: ast.expr) -> tuple[int, ...]:
        if isinstance(node, ast.Name) and node.id in self.names:
            shape = self.shape_of(self.names[node.id])
            if shape is not None:
                return shape
        raise _Untranslated(f"the shape of {self._source(node)} is not known")

    def _int(self, node: ast.expr) -> int:
        v = self._const(node)
        if isinstance(v, bool) or not isinstance(v, int):
            raise _Untranslated(f"{self._source(node)} is not a whole number")
        return int(v)

    def _int_or_none(self, node: ast.expr) -> int | None:
        try:
            return self._int(node)
        except _Untranslated:
            return None

    def _shape_args(self, args: list[ast.expr]) -> list[int]:
        if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
            args = list(args[0].elts)
        return [self._int(a) for a in args]

    # -- literals --
    def _literal(self, node: ast.expr) -> tuple[tuple[str, ...], tuple[int, ...], bool] | None:
        """An array literal's entries as written, its shape, and whether it is float32."""
        f32 = False
        inner = node
        if isinstance(node, ast.Call):
            dotted = self._dotted(node.func)
            mod = self._module_name(dotted) if dotted else None
            if mod is None or mod not in _ARRAY_MAKERS or not node.args:
                return None
            inner = node.args[0]
            dtype = next((k.value for k in node.keywords if k.arg == "dtype"), None)
            name = (self._dotted(dtype) or "") if dtype is not None else ""
            if mod[0] in ("torch", "tensorflow", "jax.numpy"):
                f32 = not name.endswith(("float64", "double", "int64", "int32", "long", "int"))
            else:
                f32 = name.endswith("float32")
        if not isinstance(inner, (ast.List, ast.Tuple)):
            return None
        try:
            values, shape = self._nested(inner)
        except _Untranslated:
            return None
        if not values:
            return None
        if all(re.fullmatch(r"-?\d+", v) for v in values) and isinstance(node, ast.Call):
            f32 = f32 and any(k.arg == "dtype" for k in node.keywords)  # integer ids stay ints
        return tuple(values), shape, f32

    def _nested(self, node: ast.expr) -> tuple[list[str], tuple[int, ...]]:
        if isinstance(node, (ast.List, ast.Tuple)):
            if not node.elts:
                raise _Untranslated("an empty list")
            parts = [self._nested(e) for e in node.elts]
            shapes = {p[1] for p in parts}
            if len(shapes) != 1:
                raise _Untranslated("a ragged list")
            return [v for p in parts for v in p[0]], (len(parts), *parts[0][1])
        v = self._const(node)
        if isinstance(v, _Text):
            return [v.text], ()
        if isinstance(v, float) and v in (float("inf"), float("-inf")):
            return ["inf" if v > 0 else "-inf"], ()
        if isinstance(v, int) and not isinstance(v, bool):
            return [str(v)], ()
        raise _Untranslated("an array entry that is not a number")

    # -- names --
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

    # -- outputs --
    def _outputs(self, block: Block, prints: list[Any]) -> Iterator[Any]:
        """Match a cell's printed output with its prints, in order.

        Each ``print`` writes one group of lines to the stream (a line that does not
        start with a space starts a group); ``display`` and the cell's last expression
        are its results, in order. A print whose output cannot be told apart is left.
        """
        stream = [g for o in block.outputs if o.kind == "stream" for g in _groups(o)]
        results = [o for o in block.outputs if o.kind == "result"]
        printed = [p for p in prints if p[0] == "print"]
        shown = [p for p in prints if p[0] in ("display", "last")]
        if len(printed) == len(stream):
            for (_, items), g in zip(printed, stream, strict=True):
                yield from self._match(items, [_join(g)])
        elif len(printed) == 1 and stream:
            yield from self._match(printed[0][1], [_join(g) for g in stream])
        else:
            yield from self._unmatched(stream)
        if len(shown) == len(results):
            for (_, items), o in zip(shown, results, strict=True):
                yield from self._match(items, [_join(g) for g in _groups(o)])
        else:
            yield from self._unmatched([g for o in results for g in _groups(o)])

    def _unmatched(self, groups: list[list[tuple[str, int]]]) -> Iterator[Shown]:
        """Printed values that cannot be told apart by print: searched like prose printings."""
        cell = self._block.cell if self._block else None
        for g in groups:
            text, lines = _join(g)
            for rows, rlines, style, _vector in _values(text, lines):
                if len(rows) * len(rows[0]) < 2:
                    continue
                grid = (
                    self.np_precision
                    if style == "numpy" and _fixed(rows)
                    else (self.torch_precision if style == "torch" and _fixed(rows) else None)
                )
                yield Shown(
                    None,
                    "output",
                    rows,
                    tuple(rlines),
                    cell,
                    grid,
                    style == "numpy",
                    "a print not told apart from the others",
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
        found = _values(_blanked(text, [a[2] for a in items if a[0] == "text"]), lines)
        if len(values) != len(found) or not values:
            return
        cell = self._block.cell if self._block else None
        for (_kind, expr, label, decimals, reason), (rows, rlines, style, vector) in zip(
            values, found, strict=True
        ):
            shortened = style == "numpy"
            grid = decimals
            fixed = all(re.fullmatch(r"-?\d+\.\d*", c) for r in rows for c in r)
            if typed:
                pass
            elif grid is None and style == "numpy" and fixed:
                grid = self.np_precision
            elif grid is None and style == "torch" and fixed:
                grid = self.torch_precision
            if expr is None:
                why, name = json.loads(reason) if reason else ("not translated", None)
                opaque = name if name in self.opaque and name not in self.names else None
                yield Shown(None, label, rows, tuple(rlines), cell, grid, shortened, why, opaque)
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
                )
                continue  # its printed value stands for it from here on
            if name is None:
                name = self._fresh("shown")
                yield Step(name, expr, f"{self._block.where(1) if self._block else ''}", label)
            yield Shown(name, label, rows, tuple(rlines), cell, grid, shortened)


class _Substitute:
    """Expressions of an inlined function's body, with its parameters bound."""

    def __init__(self, t: Translator, local: dict[str, Expr]) -> None:
        self.t = t
        self.local = local

    def expr(self, node: ast.expr) -> Expr:
        t = self.t
        saved = dict(t.names), dict(t.consts)
        try:
            for name, e in self.local.items():
                if isinstance(e, Num):
                    t.consts[name] = _const_of_num(e)
                    t.names.pop(name, None)
                elif isinstance(e, Var):
                    t.names[name] = e.name
                    t.consts.pop(name, None)
                else:
                    tmp = t._fresh(f"{name}_in")
                    t._emit(Step(tmp, e, t._where(node), name))
                    t.names[name] = tmp
                    t.consts.pop(name, None)
                    self.local[name] = Var(tmp)
            return t._operand(node)
        finally:
            t.names.update({k: v for k, v in saved[0].items() if k not in self.local})
            for k in self.local:
                if k in saved[0]:
                    t.names[k] = saved[0][k]
                elif k in t.names:
                    del t.names[k]
            t.consts.clear()
            t.consts.update(saved[1])


@dataclass(frozen=True)
class _Text:
    """A decimal literal and its text as written (``0.1``, never the binary float)."""

    text: str
    value: float


def _const_of_num(e: Num) -> Any:
    try:
        return int(e.text)
    except ValueError:
        return _Text(e.text, float(e.text))


def _num_text(v: Any) -> str:
    if isinstance(v, _Text):
        return v.text
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    return str(v)


def _targets(stmt: ast.stmt) -> list[str]:
    """The variables a statement assigns, or changes in place (``x[i] = …``)."""
    names = []
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append(node.id)
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, ast.Store):
            base = node.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                names.append(base.id)
    return names


# ----------------------------------------------------------------------------- reading prints


_PRINTED = re.compile(r"^\s*(?:tensor\(|array\(|tf\.Tensor\(|\[|-?\d)")


def _fixed(rows: tuple[tuple[str, ...], ...]) -> bool:
    return all(re.fullmatch(r"-?\d+\.\d*", c) for r in rows for c in r)


def _comment_outputs(block: Block) -> dict[int, tuple[str, list[int], bool, str | None]]:
    """Printed values written as comments right under a statement (``# tensor([[…]])``).

    Keyed by the block line the comment follows: the text is the comment without its
    ``#``, its file lines, whether a lead-in (``# expected: approximately …``,
    ``# out ≈ …``) says it was typed by hand rather than pasted from a print, and the
    variable such a lead-in names (``out``), if any. A typed value may come after a
    line of prose in the same comment; a pasted one starts it.
    """
    lines = block.text.splitlines()
    out: dict[int, tuple[str, list[int], bool, str | None]] = {}
    k = 0
    while k < len(lines):
        stripped = lines[k].strip()
        if (
            not stripped.startswith("#")
            or k == 0
            or not lines[k - 1].strip()
            or lines[k - 1].strip().startswith("#")
        ):
            k += 1
            continue
        start = key = k
        texts: list[str] = []
        while k < len(lines) and lines[k].strip().startswith("#"):
            texts.append(re.sub(r"\s+#.*$", "", re.sub(r"^\s*#\s?", "", lines[k])))
            k += 1
        name: str | None = None
        typed = False
        for i, line in enumerate(texts):
            lead = _LEAD_IN.match(line) or _NAMED_LEAD_IN.match(line)
            if lead is None:
                continue
            first = line[lead.end() :]
            if not first.strip() and i + 1 == len(texts):
                continue  # "# Expected:" and nothing under it
            # "# expected: approximately [[…]]", "# out ≈ [[…]]", "# Expected:" over "# array(…)"
            skipped = i if first.strip() else i + 1
            texts = [first, *texts[i + 1 :]] if first.strip() else texts[i + 1 :]
            texts = texts[: _first_value_lines(texts)]
            start += skipped
            name = lead.groupdict().get("name")
            typed = True
            break
        text = "\n".join(texts)
        if _PRINTED.match(text) and re.search(r"\d", text):
            lines_of = [block.file_line(start + 1 + i) for i in range(len(texts))]
            out[key] = (text, lines_of, typed, name)
    return out


#: Words that introduce a value written in a comment under a statement: ``expected:``,
#: ``output:``, ``->``, ``≈``, each optionally followed by ``approximately``.
_LEAD_IN = re.compile(
    r"^\s*(?:(?:expected|expect|output|result|returns?|prints?|gives?)\s*[:=]?|->|=>|→|≈|~)"
    r"\s*(?:approximately|approx\.?|about|roughly|~|≈)?\s*:?\s*",
    re.IGNORECASE,
)
#: A variable and what it is: ``out ≈ [[…]]``, ``loss = 0.93``, ``y -> [1, 2]``.
_NAMED_LEAD_IN = re.compile(
    r"^\s*(?P<name>[A-Za-z_]\w*)\s*(?:≈|==|=|->|=>|→|~|:)\s*"
    r"(?:approximately|approx\.?|about|roughly|~|≈)?\s*(?=[-\[\d.]|tensor\(|array\()"
)


def _first_value_lines(texts: list[str]) -> int:
    """How many of a comment's lines its first printed value spans (a note may follow it)."""
    text = "\n".join(texts)
    m = _PRINTED.match(text)
    if m is None or not re.match(r"\s*(?:tensor\(|array\(|tf\.Tensor\(|\[)", text):
        return 1  # a number, or not a value: its own line
    end = _close(text, text.index("(" if text.lstrip()[0] != "[" else "["))
    return len(texts) if end is None else text[: end + 1].count("\n") + 1


def _groups(o: Output) -> list[list[tuple[str, int]]]:
    """An output's text as one group per print: a line that does not start with a space starts one."""
    out: list[list[tuple[str, int]]] = []
    lines = o.text.splitlines()
    file_lines = list(o.lines) + [o.lines[-1] if o.lines else 0] * max(0, len(lines) - len(o.lines))
    for text, line in zip(lines, file_lines, strict=False):
        if not text.strip():
            continue
        if out and (text[:1].isspace() or _open(out[-1])):
            out[-1].append((text, line))
        else:
            out.append([(text, line)])
    return out


def _open(group: list[tuple[str, int]]) -> bool:
    text = "".join(t for t, _ in group)
    return text.count("[") > text.count("]") or text.count("(") > text.count(")")


#: Why a printed shape or size is left unchecked (the search never looks for a step giving it)
SIZE = "a shape or size, not a computed value"


def _is_size(node: ast.expr) -> bool:
    """``x.shape``, ``x.size()``, ``x.ndim``, ``len(x)``, ``x.numel()``: what prints a size.

    ``torch.Size([2, 3])`` holds integers that many steps round to by chance (the mean of
    a column, 1.5 and 3.5, is a tie with 2 and 3), so no step is searched for them.
    """
    if isinstance(node, ast.Attribute):
        return node.attr in ("shape", "ndim")
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name):
            return node.func.id == "len"
        if isinstance(node.func, ast.Attribute):
            return node.func.attr in ("size", "numel", "dim")
    return False


def _blanked(text: str, literals: list[str]) -> str:
    """``text`` with the print's own string arguments blanked, in order, where they occur.

    ``print("Text 1:", x)`` writes ``Text 1: tensor([…])``: the 1 of the label is not a
    printed value. Each literal is looked for after the one before it; one not found is
    left alone. Blanks keep every other character at its place (and its line).
    """
    at = 0
    for literal in literals:
        needle = literal.strip()
        if not needle:
            continue
        i = text.find(needle, at)
        if i < 0:
            continue
        text = text[:i] + re.sub(r"[^\n]", " ", needle) + text[i + len(needle) :]
        at = i + len(needle)
    return text


def _join(group: list[tuple[str, int]]) -> tuple[str, list[int]]:
    return "\n".join(t for t, _ in group), [ln for _, ln in group]


_NUMBER = re.compile(r"(?<![\w.])-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")


def _values(
    text: str, lines: list[int]
) -> list[tuple[tuple[tuple[str, ...], ...], list[int], str, bool]]:
    """The printed values in an output group, in order: arrays (numpy, torch, TF prints) and numbers.

    Each is ``(rows, row lines, style, vector)``; ``vector``: a one-dimensional array
    (``tensor([1., 2.])``, one bracket), whose one row is not a 1×n matrix.
    """
    out = []
    k = 0
    starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_at(pos: int) -> int:
        n = sum(1 for s in starts if s <= pos) - 1
        return lines[min(n, len(lines) - 1)] if lines else 0

    while k < len(text):
        m = re.compile(r"(tensor\(|array\(|tf\.Tensor\(|\[)").search(text, k)
        n = _NUMBER.search(text, k)
        if m is None and n is None:
            break
        if m is not None and (n is None or m.start() <= n.start()):
            end = _close(text, m.end() - 1)
            if end is None:
                break
            chunk = text[m.start() : end + 1]
            if m.group(0) != "[":
                tail = re.match(r"[^)]*\)", text[end + 1 :])
                chunk = text[m.start() : end + 1 + (tail.end() if tail else 0)]
                end = end + (tail.end() if tail else 0)
            try:
                parsed = split_printed(chunk, "output")
            except SpecError:
                parsed = None
            if parsed is not None:
                cells, _short = parsed
                style = "torch" if chunk.startswith(("tensor", "tf.")) else "numpy"
                rows = tuple(tuple(r) for r in cells)
                per_row = _row_lines(chunk, m.start(), line_at, len(rows))
                vector = len(rows) == 1 and chunk.count("[") == 1
                out.append((rows, per_row, style, vector))
            k = end + 1
            continue
        assert n is not None
        out.append((((n.group(0),),), [line_at(n.start())], "number", False))
        k = n.end()
    return out


def _row_lines(chunk: str, offset: int, line_at: Callable[[int], int], rows: int) -> list[int]:
    """The file line of each printed row of an array (its inner brackets, one per row)."""
    opens = [m.start() for m in re.finditer(r"\[(?=[^\[])", chunk)]
    if len(opens) == rows:
        return [line_at(offset + p) for p in opens]
    return [line_at(offset)] * rows


def _close(text: str, open_at: int) -> int | None:
    """The index of the bracket or parenthesis closing the one at ``open_at``."""
    pairs = {"[": "]", "(": ")"}
    opener = text[open_at]
    depth = 0
    for i in range(open_at, len(text)):
        c = text[i]
        if c == opener:
            depth += 1
        elif c == pairs[opener]:
            depth -= 1
            if depth == 0:
                return i
    return None
