"""Reading what code printed: output groups, arrays and numbers, values written in comments.

A cell's output is split into one group per print; each group's values are read in
order (numpy, PyTorch and TensorFlow array prints, then plain numbers), each with the
file line of its rows. Values written as comments under a statement (``# tensor(…)``,
``# expected: […]``) are read the same way.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Callable
from typing import Any

from symtf.draft.read.tables import printed_tables
from symtf.draft.templates import Expr, call
from symtf.draft.translate.scope import MAX_UNROLL
from symtf.draft.translate.sources import Block, Output
from symtf.errors import SpecError
from symtf.numbers import split_printed

_PRINTED = re.compile(r"^\s*(?:tensor\(|array\(|tf\.Tensor\(|\[|-?\d)")


def all_fixed(rows: tuple[tuple[str, ...], ...]) -> bool:
    return all(re.fullmatch(r"-?\d+\.\d*", c) for r in rows for c in r)


def comment_outputs(block: Block) -> dict[int, tuple[str, list[int], bool, str | None]]:
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
        labelled = _labelled_rows(texts)
        if labelled is not None:  # "# Position 0: [0.00, 1.00]" under "pe = encoding(4, 2)"
            text, rows_at = labelled
            out[key] = (text, [block.file_line(start + 1 + i) for i in rows_at], True, None)
            continue
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


def named_comment_values(block: Block) -> dict[int, tuple[str, list[int], bool, str | None]]:
    """Values a comment standing on its own gives a variable by name: ``# freqs = [1.0,
    0.982, 0.965, ..., 0.0001]`` after a blank line under the loop that fills ``freqs``.

    Keyed by the block line of the code the comment follows (blank lines between); the
    text is the value (one line), its file line, typed by hand, and the variable's name.
    A comment right under a statement is :func:`comment_outputs`' to read.
    """
    lines = block.text.splitlines()
    out: dict[int, tuple[str, list[int], bool, str | None]] = {}
    for k, line in enumerate(lines):
        stripped = line.strip()
        if not stripped.startswith("#") or k == 0 or lines[k - 1].strip():
            continue
        above = k - 1
        while above >= 0 and not lines[above].strip():
            above -= 1
        if above < 0 or lines[above].strip().startswith("#"):
            continue
        text = re.sub(r"^\s*#\s?", "", line)
        lead = _NAMED_LEAD_IN.match(text)
        value = _first_value(text[lead.end() :]) if lead else None
        if lead is None or value is None or _SIZE_WORDS.search(lead["name"]):
            continue
        out[above + 1] = (value, [block.file_line(k + 1)], True, lead["name"])
    return out


#: An entry that stands for entries left out of a list: ``...``, ``…``.
_LEFT_OUT = re.compile(r"^(?:\.\.\.|…)$")


def summarised(text: str) -> tuple[list[str], list[str]] | None:
    """The entries a list written with entries left out shows at its two ends:
    ``[1.0, 0.982, 0.965, ..., 0.0001]`` gives ``["1.0", "0.982", "0.965"]`` and
    ``["0.0001"]`` (those between two ellipses are at places not known). ``None``: a
    list of one axis with no entry left out, or not such a list."""
    m = re.fullmatch(r"\s*\[([^\[\]]*)\]\s*", text)
    if m is None:
        return None
    entries = [e.strip() for e in m.group(1).split(",")]
    gaps = [k for k, e in enumerate(entries) if _LEFT_OUT.match(e)]
    if not gaps or not all(_NUMBER.fullmatch(e) for e in entries if not _LEFT_OUT.match(e)):
        return None
    return entries[: gaps[0]], entries[gaps[-1] + 1 :]


#: One labelled value per comment line: ``Position 0: [0.00, 1.00, 0.84, 0.54]``,
#: ``token 'cat' = 0.25``.
_LABELLED = re.compile(
    r"^\s*(?P<label>[A-Za-z_][\w .'()-]*?)\s*(?::|=|≈|->|→)\s*"
    r"(?:approximately|approx\.?|about|~|≈)?\s*"
    r"(?P<value>\[[^\[\]]*\d[^\[\]]*\]|-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$"
)
#: Labels of a shape, not of values.
_SIZE_WORDS = re.compile(r"\b(?:shape|size|dims?|len|length)\b", re.IGNORECASE)


def _labelled_rows(texts: list[str]) -> tuple[str, list[int]] | None:
    """Comment lines that each label one row of a value (``# Position 0: [0.00, 1.00]``), as
    one array's text (labels left out), and the comment lines the rows are on.

    Every line of the comment must be such a line (two at least), with rows of one
    length; rows of single numbers make a vector.
    """
    found = [_LABELLED.match(t) for t in texts]
    if len(texts) < 2 or any(m is None or _SIZE_WORDS.search(m["label"]) for m in found):
        return None
    values = [m["value"] for m in found if m is not None]
    if all(v.startswith("[") for v in values):
        widths = {len(v.strip("[]").replace(",", " ").split()) for v in values}
        if len(widths) != 1:
            return None
        return "[" + ",\n ".join(values) + "]", list(range(len(values)))
    if any(v.startswith("[") for v in values):
        return None
    return "[" + ", ".join(values) + "]", [0] * 1


def inline_comment_values(
    block: Block, *, worked: bool = False
) -> dict[int, tuple[str, list[int], bool, str | None]]:
    """Values written in a comment at the end of a line of code: ``x = W @ h  # = [0.35, -1.2]``.

    Keyed by the block line; the value comes right after the ``#`` or after a lead-in
    (``=``, ``≈``, ``->``, ``→``, ``gives``); words after it are left out. A comment
    about a shape (``# shape: [3, 4]``) is not a value. With ``worked``: only the values
    of comments that work them out of numbers (``# sqrt(4) = 2.0``), which the article's
    reading checks as displayed lines of their own.
    """
    out: dict[int, tuple[str, list[int], bool, str | None]] = {}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(block.text).readline))
    except (tokenize.TokenError, SyntaxError, ValueError, IndentationError):
        return out
    code_on: set[int] = set()
    for tok in tokens:
        if tok.type not in (
            tokenize.COMMENT,
            tokenize.NL,
            tokenize.NEWLINE,
            tokenize.INDENT,
            tokenize.DEDENT,
            tokenize.ENDMARKER,
        ):
            code_on.update(range(tok.start[0], tok.end[0] + 1))
    for tok in tokens:
        line = tok.start[0]
        if tok.type != tokenize.COMMENT or line not in code_on:
            continue
        text = tok.string.lstrip("#").strip()
        if _SIZE_WORDS.search(text):
            continue
        lead = re.match(r"^(?:=|==|≈|~|->|=>|→|(?:gives?|returns?|output|result)\s*[:=]?)\s*", text)
        if worked:  # "# sqrt(4) = 2.0": the value it works out, and only such values
            lead = None if lead else _WORKED.match(text)
            if lead is None:
                continue
        body = text[lead.end() :] if lead else text
        value = _first_value(body)
        if value is None or (lead is None and body.strip() != value):
            continue  # a bare value must be the whole comment
        out[line] = (value, [block.file_line(line)], True, None)
    return out


#: A comment that works a number out of numbers before giving it: ``sqrt(4) =``, ``8 / 2 =``.
_WORKED = re.compile(r"^(?:sqrt|√)?[\d.\s()/*+^-]*\d[\d.\s()/*+^-]*(?:=|≈)\s*")


def _first_value(text: str) -> str | None:
    """The first printed value at the start of ``text``: a bracketed array, a ``tensor(…)``
    or ``array(…)``, or one number (``None`` if it starts with none)."""
    text = text.strip()
    m = re.match(r"(?:tensor|array)\(|\[", text)
    if m:
        end = closing(text, m.end() - 1)
        if end is None:
            return None
        value = text[: end + 1]
        if m.group(0) != "[":
            tail = re.match(r"[^)]*\)", text[end + 1 :])
            value = text[: end + 1 + (tail.end() if tail else 0)]
        return value if re.search(r"\d", value) else None
    n = _NUMBER.match(text)
    return n.group(0) if n else None


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
    end = closing(text, text.index("(" if text.lstrip()[0] != "[" else "["))
    return len(texts) if end is None else text[: end + 1].count("\n") + 1


def output_groups(o: Output) -> list[list[tuple[str, int]]]:
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


def output_lines(o: Output) -> list[list[tuple[str, int]]]:
    """An output's text as one group per line, but for the lines of an array still open
    (a finer reading than :func:`output_groups`, for rows a loop prints indented)."""
    out: list[list[tuple[str, int]]] = []
    lines = o.text.splitlines()
    file_lines = list(o.lines) + [o.lines[-1] if o.lines else 0] * max(0, len(lines) - len(o.lines))
    for text, line in zip(lines, file_lines, strict=False):
        if not text.strip():
            continue
        if out and _open(out[-1]):
            out[-1].append((text, line))
        else:
            out.append([(text, line)])
    return out


def _open(group: list[tuple[str, int]]) -> bool:
    text = "".join(t for t, _ in group)
    return text.count("[") > text.count("]") or text.count("(") > text.count(")")


def is_size(node: ast.expr) -> bool:
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


def blanked(text: str, literals: list[str], *, numerals_only: bool = False) -> str:
    """``text`` with the print's own string arguments blanked, in order, where they occur.

    ``print("Text 1:", x)`` writes ``Text 1: tensor([…])``: the 1 of the label is not a
    printed value. Each literal is looked for after the one before it; one not found is
    left alone. Blanks keep every other character at its place (and its line).
    ``numerals_only``: only the literals that hold a digit are looked for: ``", "`` between
    two shapes, found inside the first (``(4, 1)``), would blank the value's own comma.
    """
    at = 0
    for literal in literals:
        needle = literal.strip()
        if not needle or (numerals_only and not any(ch.isdigit() for ch in needle)):
            continue
        i = text.find(needle, at)
        if i < 0:
            continue
        text = text[:i] + re.sub(r"[^\n]", " ", needle) + text[i + len(needle) :]
        at = i + len(needle)
    return text


def join_group(group: list[tuple[str, int]]) -> tuple[str, list[int]]:
    return "\n".join(t for t, _ in group), [ln for _, ln in group]


#: A printed number; ``163,009,536`` (an f-string's ``{n:,}``) is one number, its digits grouped
#: by threes with no space between (a list or tuple prints a space after each comma).
_NUMBER = re.compile(
    r"(?<![\w.,])-?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])|\d+\.\d*|\.\d+|\d+)"
    r"(?:[eE][-+]?\d+)?(?![\w.])"
)


#: A shape as Python prints a tuple of whole numbers: ``(3, 6)``, ``(4,)``.
_SHAPE = re.compile(r"\(\d+(?:,\s*\d+)*,?\)")


def read_values(
    text: str, lines: list[int]
) -> list[tuple[tuple[tuple[str, ...], ...], list[int], str, bool]]:
    """The printed values in an output group, in order: arrays (numpy, torch, TF prints) and numbers.

    Each is ``(rows, row lines, style, vector)``; ``vector``: a one-dimensional array
    (``tensor([1., 2.])``, one bracket), whose one row is not a 1×n matrix.
    """
    text = without_reprs(text)
    out = []
    k = 0
    starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_at(pos: int) -> int:
        n = sum(1 for s in starts if s <= pos) - 1
        return lines[min(n, len(lines) - 1)] if lines else 0

    tables = printed_tables(text)
    while k < len(text):
        m = re.compile(r"(tensor\(|array\(|tf\.Tensor\(|\[)").search(text, k)
        n = _NUMBER.search(text, k)
        if m is None and n is None:
            break
        at = min(x.start() for x in (m, n) if x is not None)
        table = next((t for t in tables if t[0] <= at < t[1]), None)
        if table is not None:  # cat | 0.161 | 0.240: a table's rows, one matrix
            _start, b, rows, starts = table
            out.append((rows, [line_at(p) for p in starts], "table", False))
            k = b
            continue
        if m is not None and (n is None or m.start() <= n.start()):
            end = closing(text, m.end() - 1)
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
                # TensorFlow's tf.Tensor(…) prints its values through numpy
                style = (
                    "torch"
                    if chunk.startswith("tensor")
                    else "tensorflow"
                    if chunk.startswith("tf.")
                    else "numpy"
                )
                rows = tuple(tuple(r) for r in cells)
                per_row = _row_lines(chunk, m.start(), line_at, len(rows))
                vector = len(rows) == 1 and chunk.count("[") == 1
                out.append((rows, per_row, style, vector))
            k = end + 1
            continue
        assert n is not None
        shape = _SHAPE.match(text, max(n.start() - 1, 0))
        if shape is not None and text[shape.start()] == "(":  # (3, 6): a shape, one value
            out.append(
                ((tuple(re.findall(r"\d+", shape.group())),), [line_at(n.start())], "shape", True)
            )
            k = shape.end()
            continue
        out.append((((n.group(0),),), [line_at(n.start())], "number", False))
        k = n.end()
    return out


def _row_lines(chunk: str, offset: int, line_at: Callable[[int], int], rows: int) -> list[int]:
    """The file line of each printed row of an array (its inner brackets, one per row)."""
    opens = [m.start() for m in re.finditer(r"\[(?=[^\[])", chunk)]
    if len(opens) == rows:
        return [line_at(offset + p) for p in opens]
    return [line_at(offset)] * rows


def closing(text: str, open_at: int) -> int | None:
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


#: What a notebook shows for an object that is not a value: ``<Figure size 640x480 with 1
#: Axes>``, ``[<matplotlib.lines.Line2D at 0x7f…>]``, ``Text(0.5, 1.0, 'Attention')`` (a
#: tensor's ``grad_fn=<MmBackward0>`` is read with the tensor).
_REPR = re.compile(r"(?<![=\w])<[A-Za-z_][^<>\n]*>|\b(?:Text|Annotation)\([^()\n]*'[^'\n]*'\)")


def is_display_repr(text: str) -> bool:
    """Whether an output is only display reprs of objects (a figure, a plot's artists)."""
    rest = _REPR.sub("", text)
    return bool(_REPR.search(text)) and not re.search(r"[^\s\[\](),]", rest)


def without_reprs(text: str) -> str:
    """The text with display reprs blanked (characters kept in place): they hold no values."""
    return _REPR.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def one_list(
    values: list[Any], found: list[Any], shape_of: Callable[[Expr], tuple[int, ...] | None]
) -> list[Any]:
    """``print(freqs)`` of a Python list of numbers: one bracketed list in what it printed,
    read as the vector of its numbers (each number is a value of its own otherwise)."""
    if len(found) != 1 or len(values) > MAX_UNROLL or not found[0][3]:
        return values
    if len(found[0][0][0]) != len(values) or not all(
        v[1] is not None and shape_of(v[1]) == () for v in values
    ):
        return values
    return [("value", call("stack", *(v[1] for v in values)), values[0][2], values[0][3], None)]
