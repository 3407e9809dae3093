"""What the server tells the client, read from a check's result: places, diagnostics, hovers.

Pure functions over the worker's result (:func:`symtf.lsp.worker.analyse`) and the
document it belongs to; nothing here checks or computes a value. A check's place
comes from the report's place fields (``source_line``, ``source_column``,
``source_end_column``, and a notebook's ``cell`` fields); a number whose column is
not known is shown on its whole line.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from symtf.lsp.notebook import Layout
from symtf.lsp.text import Span, Text
from symtf.renderers import safe

__all__ = ["Located", "Where", "hover_markdown", "locate", "message", "severity_of"]

#: Verdicts shown as diagnostics, and their severities (LSP: 1 Error, 2 Warning, 3 Information).
SEVERITY = {"wrong": 1, "slip": 2}
INFORMATION = 3


@dataclass(frozen=True)
class Where:
    """A place in one of the client's documents.

    Attributes:
        uri: The document (for a notebook, the cell's document).
        text: Its text.
        span: The characters.
        exact: Whether the span is the number itself (``False``: its whole line).
    """

    uri: str
    text: Text
    span: Span
    exact: bool


@dataclass(frozen=True)
class Located:
    """A check (as the JSON report writes it) and where it is, if it can be placed."""

    check: Mapping[str, Any]
    where: Where | None


class Doc:
    """What a result's places refer to: one text, or a notebook's cells and their layout."""

    def __init__(
        self,
        uri: str,
        text: Text,
        cells: Sequence[tuple[str, Text]] = (),
        layout: Layout | None = None,
        *,
        derivation: bool = False,
    ) -> None:
        self.uri = uri
        self.text = text
        self.cells = list(cells)
        self.layout = layout
        #: A derivation file: a check's line is its claim's (``line``), not the article's.
        self.derivation = derivation

    def where(self, fields: Mapping[str, Any]) -> Where | None:
        """Where the place fields of a check (or a fix) point, in the client's documents."""
        own = fields.get("file_place")  # a derivation file's number, in its printed string
        if isinstance(own, list) and len(own) == 3 and self.layout is None:
            span = self.text.place_span(*own)
            if span is not None:
                return Where(self.uri, self.text, span, True)
        line = fields.get("source_line") if not self.derivation else fields.get("line")
        if not isinstance(line, int):
            return None
        column, end = fields.get("source_column"), fields.get("source_end_column")
        column = column if isinstance(column, int) else None
        end = end if isinstance(end, int) else None
        if self.layout is None:
            span = self.text.place_span(line, column, end)
            if span is None:
                return None
            return Where(self.uri, self.text, span, column is not None and end is not None)
        return self._in_cell(fields, line, column, end)

    def _in_cell(
        self, fields: Mapping[str, Any], line: int, column: int | None, end: int | None
    ) -> Where | None:
        assert self.layout is not None
        cell, cell_line, c, e = None, None, None, None
        if isinstance(fields.get("cell_index"), int) and isinstance(fields.get("cell_line"), int):
            cell, cell_line = fields["cell_index"], fields["cell_line"]
            c = fields.get("cell_column") if isinstance(fields.get("cell_column"), int) else None
            if c is not None and column is not None and end is not None:
                e = c + (end - column)
        else:
            found = self.layout.cell_place(line, column, end)
            if found is None:
                return None
            cell, cell_line, c, e = found
        if not 0 <= cell < len(self.cells):
            return None
        uri, text = self.cells[cell]
        span = text.place_span(cell_line, c, e)
        if span is None:
            return None
        return Where(uri, text, span, c is not None and e is not None)


def locate(doc: Doc, checks: Sequence[Mapping[str, Any]]) -> list[Located]:
    """Every check with its place in the client's documents."""
    return [Located(c, doc.where(c)) for c in checks]


def severity_of(check: Mapping[str, Any]) -> int | None:
    """The diagnostic severity of a check: Error for ``wrong``, Warning for ``slip``."""
    return SEVERITY.get(str(check.get("verdict")))


def message(check: Mapping[str, Any]) -> str:
    """The diagnostic's message: the verdict in a few words, then its explanation."""
    verdict = check.get("verdict")
    printed = safe.line(check.get("printed"))
    head = f"{printed} is {'a slip' if verdict == 'slip' else 'wrong'}"
    expected = check.get("expected")
    if expected is not None and expected != check.get("printed"):
        head += f" (correctly rounded: {safe.line(expected)})"
    return f"{head}: {safe.line(check.get('explanation', ''))}"


def same_number(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two checks name one entry (the root of an inherited number, say)."""
    return a.get("claim") == b.get("claim") and list(a.get("index") or []) == list(
        b.get("index") or []
    )


def root_of(check: Mapping[str, Any], located: Sequence[Located]) -> Located | None:
    """The check an inherited number's ``root`` names, if the report holds it."""
    root = check.get("root")
    if not isinstance(root, Mapping):
        return None
    for x in located:
        c = x.check
        if c.get("claim") == root.get("claim") and list(c.get("index") or []) == list(
            root.get("index") or []
        ):
            return x
    for x in located:  # the root named by its step
        c = x.check
        if (
            root.get("step") is not None
            and c.get("step") == root.get("step")
            and list(c.get("index") or []) == list(root.get("index") or [])
            and c.get("verdict") in SEVERITY
        ):
            return x
    return None


def at(located: Sequence[Located], uri: str, offset: int) -> list[Located]:
    """The checks at a character offset of a document: the numbers there, else its line's."""
    exact = [
        x
        for x in located
        if x.where is not None
        and x.where.uri == uri
        and x.where.exact
        and x.where.span.start <= offset <= x.where.span.end
    ]
    if exact:
        return exact
    return [
        x
        for x in located
        if x.where is not None
        and x.where.uri == uri
        and not x.where.exact
        and x.where.span.start <= offset <= x.where.span.end
    ]


def _code(text: Any) -> str:
    """Inline code in Markdown for any text (control characters spelled out)."""
    s = safe.line(text)
    fence = "`"
    while fence in s:
        fence += "`"
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def _md(text: Any) -> str:
    """Prose in Markdown: control characters spelled out, emphasis, links and HTML escaped."""
    s = safe.line(text)
    return "".join("\\" + ch if ch in "\\`*_[]<>|~&" else ch for ch in s)


def hover_markdown(
    checks: Sequence[Mapping[str, Any]], steps: Mapping[str, str], *, most: int = 8
) -> str:
    """The hover of one or more judged numbers: verdict, values, cause, the step and why."""
    blocks = []
    ranked = sorted(checks, key=lambda c: 0 if c.get("verdict") in SEVERITY else 1)
    for c in ranked[:most]:
        blocks.append("\n\n".join(_hover_lines(c, steps)))
    if len(ranked) > most:
        blocks.append(f"… and {len(ranked) - most} more numbers on this line")
    return "\n\n---\n\n".join(blocks)


def _hover_lines(c: Mapping[str, Any], steps: Mapping[str, str]) -> Iterator[str]:
    verdict = str(c.get("verdict"))
    where = f" {_code(c.get('index'))}" if c.get("index") is not None else ""
    yield f"**symtf: {_md(verdict)}** · {_md(c.get('claim'))}{where}"
    values = [f"printed {_code(c.get('printed'))}"]
    if c.get("exact") is not None:
        dots = "…" if c.get("exact_truncated") else ""
        values.append(f"exact {_code(str(c.get('exact')) + dots)}")
    if c.get("expected") is not None:
        values.append(f"correctly rounded {_code(c.get('expected'))}")
    yield ", ".join(values)
    if c.get("cause"):
        yield f"cause: {_code(c.get('cause'))}"
    step = c.get("step")
    if c.get("expression"):
        yield f"the line as written: {_code(c.get('expression'))} = {_code(c.get('printed'))}"
    elif isinstance(step, str):
        body = steps.get(step)
        yield f"step: {_code(f'{step} = {body}' if body else step)}"
    if c.get("explanation"):
        yield _md(c.get("explanation"))
