"""The post, annotated: an article or notebook rendered as itself, each number judged in place.

``symtf html post.md`` draws the article as its reader sees it (Markdown with maths through
markdown-it-py and mdit-py-plugins; a notebook's cells with their printed outputs; a plain
text or LaTeX file as paragraphs with its maths), and marks every number symtf judged, at
the number: its colour and a symbol (✓ right, ± slip, ✗ wrong, ? undecided, ƒ symbolic)
say the verdict without colour too, and its explanation opens in place (a ``<details>``
element; no script). A number the check left out is marked ○, *not checked*. A bar at the
top counts them: N checked of M, K off.

Numbers are found by the places the report carries, never by searching the text for the
number: ``source_line`` and the columns ``source_column``/``source_end_column`` (for a
notebook ``cell``, ``cell_line``, ``cell_column`` and ``cell_output``). Where a check has
no column, its line is marked instead, by a note after the block that holds the line.
A number inside maths is marked inside the MathML (its entry coloured, the symbol as a
superscript), and its note follows the formula.

The page is built as an element tree and written out by
:func:`symtf.renderers.tree.serialize`, which escapes every text and attribute value
(the marks are :mod:`symtf.renderers.marks`): the article's own HTML is never copied into the page
(raw HTML blocks show their text), links keep only web and mail addresses, and the page
carries the same Content-Security-Policy as every page symtf writes.

Like every renderer it only reads: verdicts, decimals and explanations come from the
:class:`~symtf.checking.report.DerivationReport`, the article's text from the caller.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree as ET

from symtf.renderers.html import CSP, CSS
from symtf.renderers.html.style import VERDICT_WORDS
from symtf.renderers.marks import OFF, UNCHECKED, Mark, Marks, marks_of, notes, text_with_marks
from symtf.renderers.tree import add, convert, el, html_text, serialize

if TYPE_CHECKING:
    from symtf.checking.report import DerivationReport

#: Link targets kept in the page: web and mail addresses, and places in the same page.
_SAFE_LINK = re.compile(r"(?:https?://|mailto:|#)[^\s]*\Z|[^:\s]*\Z", re.I)
#: An image a notebook output may show (``data:`` URLs are all the page's CSP allows).
_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]{1,20000000}\Z")

POST_CSS = """
.symtf.post{max-width:52rem}
.symtf .bar{position:sticky;top:0;z-index:2;background:#f6f8fa;border:1px solid var(--line);
border-radius:0 0 6px 6px;padding:.45rem .8rem;margin:0 0 1rem;font-size:.95rem}
.symtf .bar .counts{font-weight:600}
.symtf .bar .legend{margin:.2rem 0 0;font-size:.85rem;color:var(--muted)}
.symtf .bar .legend span{margin-right:.9em;white-space:nowrap}
.symtf .p{margin:0 0 1em}
.symtf .txt .p{white-space:pre-wrap}
.symtf blockquote{margin:0 0 1em;padding-left:1em;border-left:3px solid var(--line);color:#3d444d}
.symtf pre{background:#f6f8fa;border:1px solid var(--line);border-radius:6px;padding:.5rem .7rem;
overflow-x:auto;font:.85rem/1.45 "DejaVu Sans Mono",ui-monospace,monospace}
.symtf pre code{background:none;padding:0;color:inherit;font-size:inherit}
.symtf pre.output{background:#fff;border-style:dashed}
.symtf .cell{margin:0 0 1.2rem}
.symtf .cell .prompt{font:.75rem "DejaVu Sans Mono",monospace;color:var(--muted)}
.symtf .raw{white-space:pre-wrap;color:#3d444d}
.symtf code.tex{color:#1f2328;background:#f6f8fa}
.symtf .math-block{overflow-x:auto;overflow-y:hidden;margin:.3rem 0 .6rem}
.symtf details.num{display:inline;margin:0;scroll-margin-top:8rem;background:none;color:inherit;
font-weight:inherit;font-style:normal;text-decoration:none}
.symtf details.num:not([open])::details-content{display:none}
.symtf details.num[open]::details-content{display:block}
.symtf details.num>summary{display:inline;list-style:none;cursor:pointer;color:inherit;font-size:inherit}
.symtf details.num>summary::-webkit-details-marker{display:none}
.symtf details.num>summary::marker{content:""}
.symtf .num>summary>.printed,.symtf mrow.num{border-radius:3px;padding:0 .12em}
.symtf .sym{font-size:.8em;font-weight:700;margin-left:.1em}
.symtf .num .why{display:block;margin:.2rem 0 .5rem;padding:.35rem .6rem;border-left:3px solid var(--line);
background:#fff;color:#1f2328;font:400 .88rem/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
white-space:normal}
.symtf .notes{display:block;margin:.1rem 0 .6rem;font-size:.92rem}
.symtf .notes details.num{margin-right:.8em}
.symtf .v-exact>summary>.printed,.symtf .v-rounded>summary>.printed,.symtf mrow.v-exact,
.symtf mrow.v-rounded{background:var(--ok-bg);color:var(--ok)}
.symtf .v-slip>summary>.printed,.symtf mrow.v-slip{background:var(--slip-bg);color:var(--slip);font-weight:700}
.symtf .v-wrong>summary>.printed,.symtf mrow.v-wrong{background:var(--bad-bg);color:var(--bad);font-weight:700;
text-decoration:underline}
.symtf .v-undecided>summary>.printed,.symtf mrow.v-undecided{background:var(--und-bg);color:var(--und)}
.symtf .v-symbolic>summary>.printed,.symtf mrow.v-symbolic{background:var(--sym-bg);color:var(--sym)}
.symtf .v-unchecked>summary>.printed,.symtf mrow.v-unchecked{outline:1px dashed #8c959f;color:var(--muted)}
.symtf .v-exact .sym,.symtf .v-rounded .sym,.symtf mtext.v-exact,.symtf mtext.v-rounded{color:var(--ok)}
.symtf .v-slip .sym,.symtf mtext.v-slip{color:var(--slip)}
.symtf .v-wrong .sym,.symtf mtext.v-wrong{color:var(--bad)}
.symtf .v-undecided .sym,.symtf mtext.v-undecided,.symtf .v-unchecked .sym,.symtf mtext.v-unchecked{color:var(--und)}
.symtf .v-symbolic .sym,.symtf mtext.v-symbolic{color:var(--sym)}
.symtf .line-mark{font-size:.85rem;color:var(--muted)}
.symtf table.md{border-collapse:collapse;margin:0 0 1em}
.symtf table.md th,.symtf table.md td{border:1px solid var(--line);padding:.2rem .5rem}
.symtf .al-center{text-align:center}.symtf .al-right{text-align:right}
@media print{.symtf details.num .why{display:block}.symtf .bar{position:static}}
"""


def math_with_marks(
    tex: str, marks: Sequence[tuple[int, int, Mark]], *, display: bool
) -> tuple[ET.Element, list[Mark]]:
    """A formula as MathML, each marked number coloured with its symbol as a superscript.

    Each number (by its offsets in ``tex``) is wrapped in a colour group the converter keeps
    as an element of its own, found again in the tree and made the mark. A formula that
    does not convert, or where a number cannot be wrapped (inside ``\\text``), is shown as
    its source with the numbers marked in the text.

    Returns:
        The element, and the marks drawn inside the MathML (their notes go after the
        formula); a formula shown as its source holds its marks' notes in its text.
    """
    chosen = sorted(marks, key=lambda x: x[0])
    wrapped = tex
    for k, (start, end, _) in reversed(list(enumerate(chosen))):
        wrapped = (
            wrapped[:start]
            + "{\\color{#%06x}{" % (k + 1)
            + wrapped[start:end]
            + "}}"
            + wrapped[end:]
        )
    root = convert(wrapped, display)
    found: dict[int, ET.Element] = {}
    if root is not None:
        parents = {child: parent for parent in root.iter() for child in parent}
        for node in root.iter("mstyle"):
            color = node.attrib.get("mathcolor", "")
            if re.fullmatch(r"#[0-9a-f]{6}", color) and 1 <= int(color[1:], 16) <= len(chosen):
                found.setdefault(int(color[1:], 16) - 1, node)
        clean = len(found) == len(chosen) and not any(
            "\\color" in (n.text or "") for n in root.iter()
        )
        if clean:
            for k, node in found.items():
                m = chosen[k][2]
                node.tag = "mrow"
                node.attrib.clear()
                node.attrib.update({"class": f"num v-{m.verdict}"})
                parent = parents[node]
                index = list(parent).index(node)
                sup = ET.Element("msup")
                parent.remove(node)
                sup.append(node)
                sup.append(el("mtext", {"class": f"v-{m.verdict}"}, f"{m.symbol}{m.key}"))
                sup.tail, node.tail = node.tail, None
                parent.insert(index, sup)
            return root, [m for _, _, m in chosen]
    plain = convert(tex, display) if not chosen else None
    if plain is not None:
        return plain, []
    # The source, its numbers marked in the text.
    return el("code", {"class": "tex"}, *text_with_marks(tex, chosen)), []


# ----------------------------------------------------------------------------- Markdown


def _parser(kind: str) -> Any:
    """markdown-it for an article of this kind: CommonMark with tables and maths for
    Markdown; paragraphs, line breaks and maths only for plain text and LaTeX."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    if kind == "md":
        md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    else:
        md = MarkdownIt("zero", {"breaks": True}).enable(["newline"])
    md.use(dollarmath_plugin, allow_space=True, allow_digits=True, double_inline=True)
    if kind == "tex":
        from mdit_py_plugins.texmath import texmath_plugin

        md.use(texmath_plugin, delimiters="brackets")
    return md


def _align(
    content: str, lines: Sequence[str], first: int, last: int, from_col: int | None = None
) -> list[tuple[int, int]] | None:
    """Where each line of a block's content stands in the source: ``(line index, column)``.

    Markdown strips a block's indentation and markers (``> ``, ``- ``, ``$$``) from its
    lines: each line of the content is what is left of a source line, looked for from the
    block's first line on. A table cell is looked for from ``from_col`` on, where the
    row's previous cell ended. ``None`` when a line is not found (the block's marks are
    then drawn by line).
    """
    out: list[tuple[int, int]] = []
    i = first
    for part in content.split("\n"):
        found = None
        while i < last and found is None:
            src = lines[i].rstrip("\r")
            if from_col is not None:
                at = src.find(part, from_col)
                found = (i, at) if at >= 0 else None
                i += 1
                continue
            for s in (src, src.rstrip()):
                if s.endswith(part):
                    found = (i, len(s) - len(part))
                    break
            else:
                at = src.find(part)
                if at >= 0:
                    found = (i, at)
            i += 1
        if found is None:
            return None
        out.append(found)
    return out


@dataclass
class _Inline:
    """The marks that fall inside one inline token, by its offsets in the block's content."""

    start: int
    end: int
    marks: list[tuple[int, int, Mark]] = field(default_factory=list)


class _Page:
    """Draws one text (an article, or one notebook cell) with its marks."""

    def __init__(self, kind: str, marks: Marks, counter: list[int]) -> None:
        self.kind = kind
        self.marks = marks
        self.counter = counter
        #: In a table row: its line and where its last cell ended.
        self.row: tuple[int, int] | None = None

    # -- numbering: each mark gets its number on the page as it is drawn

    def number(self, m: Mark) -> Mark:
        if not m.key:
            self.counter[0] += 1
            m.key = self.counter[0]
        self.marks.drawn(m)
        return m

    # -- blocks

    def markdown(self, text: str) -> list[ET.Element]:
        """The text as blocks, its marks drawn (see the module docstring)."""
        lines = text.split("\n")
        tokens = _parser(self.kind).parse(text)
        root = el("div")
        stack: list[ET.Element] = [root]
        tables: list[Sequence[int]] = []  # the lines of the tables being drawn
        for tok in tokens:
            t = tok.type
            top = stack[-1]
            if t.endswith("_close"):
                if len(stack) > 1:
                    stack.pop()
                if t == "tr_close":
                    self.row = None
                if t == "table_close" and tables:  # the rows' numbers known only by line
                    self.line_marks(stack[-1], tables.pop())
                continue
            if t == "paragraph_open":
                if tok.hidden:  # a tight list's paragraph: its text goes in the item
                    stack.append(top)
                else:
                    stack.append(add(top, el("div", {"class": "p"}))[-1])
                continue
            if t == "heading_open":
                stack.append(
                    add(top, el(tok.tag if re.fullmatch(r"h[1-6]", tok.tag) else "h6"))[-1]
                )
                continue
            if t in (
                "bullet_list_open",
                "ordered_list_open",
                "list_item_open",
                "blockquote_open",
                "table_open",
                "thead_open",
                "tbody_open",
                "tr_open",
            ):
                tag = {
                    "bullet_list_open": "ul",
                    "ordered_list_open": "ol",
                    "list_item_open": "li",
                    "blockquote_open": "blockquote",
                    "table_open": "table",
                    "thead_open": "thead",
                    "tbody_open": "tbody",
                    "tr_open": "tr",
                }[t]
                attrs = {"class": "md"} if tag == "table" else {}
                start = tok.attrGet("start")
                if tag == "ol" and isinstance(start, (int, str)) and str(start).isdigit():
                    attrs["start"] = str(start)
                stack.append(add(top, el(tag, attrs))[-1])
                if t == "tr_open" and tok.map:
                    self.row = (tok.map[0], 0)
                if t == "table_open":
                    tables.append(tok.map or (0, 0))
                continue
            if t in ("th_open", "td_open"):
                style = str(tok.attrGet("style") or "")
                align = re.search(r"text-align:(left|center|right)", style)
                attrs = {"class": f"al-{align.group(1)}"} if align else {}
                stack.append(add(top, el(tok.tag, attrs))[-1])
                continue
            if t == "inline":
                self.inline(top, tok, lines)
                continue
            if t in ("fence", "code_block"):
                self.code(top, tok, lines)
                continue
            if t in ("math_block", "math_block_eqno", "amsmath"):
                self.display_math(top, tok, lines)
                continue
            if t == "html_block":
                block = add(top, el("div", {"class": "raw"}, html_text(tok.content)))[-1]
                self.line_marks(block, tok.map)
                continue
            if t == "hr":
                add(top, el("hr"))
                continue
        return list(root)

    def line_marks(self, block: ET.Element, where: Sequence[int] | None) -> None:
        """The marks of a block's lines that were not drawn at their numbers."""
        if not where:
            return
        rest = [self.number(m) for m in self.marks.rest(range(where[0] + 1, where[1] + 1))]
        box_notes = notes(rest, by_line=True)
        if box_notes is not None:
            add(block, " ", box_notes)

    def code(self, parent: ET.Element, tok: Any, lines: Sequence[str]) -> None:
        content = tok.content.removesuffix("\n")
        where = tok.map or (0, 0)
        pre = el("pre", None, self.lines_with_marks(content, lines, where[0], where[1], code=True))
        add(parent, pre)
        self.line_marks(parent, where)

    def lines_with_marks(
        self, content: str, lines: Sequence[str], first: int, last: int, *, code: bool
    ) -> ET.Element:
        """Preformatted text with its marks, line by line."""
        box = el("code")
        table = _align(content, lines, first, last)
        for k, part in enumerate(content.split("\n")):
            if k:
                add(box, "\n")
            ms: list[tuple[int, int, Mark]] = []
            if table is not None:
                line, col = table[k]
                for m in self.marks.on(line + 1):
                    assert m.place.start is not None and m.place.end is not None
                    s, e = m.place.start - col, m.place.end - col
                    if 0 <= s < e <= len(part):
                        ms.append((s, e, self.number(m)))
            add(box, *text_with_marks(part, ms))
        return box

    def display_math(self, parent: ET.Element, tok: Any, lines: Sequence[str]) -> None:
        where = tok.map or (0, 0)
        content = tok.content
        table = _align(content, lines, where[0], where[1])
        ms: list[tuple[int, int, Mark]] = []
        if table is not None:
            offsets, parts = _offsets(content), content.split("\n")
            for k, (line, col) in enumerate(table):
                for m in self.marks.on(line + 1):
                    assert m.place.start is not None and m.place.end is not None
                    s, e = m.place.start - col, m.place.end - col
                    if 0 <= s < e <= len(parts[k]):
                        ms.append((offsets[k] + s, offsets[k] + e, self.number(m)))
        math, drawn = math_with_marks(content, ms, display=True)
        add(parent, el("div", {"class": "math-block"}, math))
        self._notes_after(parent, drawn)
        self.line_marks(parent, where)

    def _notes_after(self, parent: ET.Element, drawn: Sequence[Mark]) -> None:
        """The notes of the numbers a formula marks, after it."""
        box_notes = notes(drawn)
        if box_notes is not None:
            add(parent, box_notes)

    def inline(self, parent: ET.Element, tok: Any, lines: Sequence[str]) -> None:
        """A block's inline content (text, emphasis, code, links, maths) with its marks."""
        content: str = tok.content
        where = tok.map or (0, 0)
        row = self.row if self.row is not None and self.row[0] == where[0] else None
        table = _align(content, lines, where[0], where[1], row[1] if row else None)
        if row is not None and table is not None:  # the next cell starts after this one
            self.row = (row[0], table[0][1] + len(content))
        children = tok.children or []
        spans = self._spans(content, children)
        if table is not None:
            offsets = _offsets(content)
            parts = content.split("\n")
            for k, (line, col) in enumerate(table):
                for m in self.marks.on(line + 1):
                    assert m.place.start is not None and m.place.end is not None
                    s, e = m.place.start - col, m.place.end - col
                    if not 0 <= s < e <= len(parts[k]):
                        continue
                    s, e = offsets[k] + s, offsets[k] + e
                    span = next((x for x in spans.values() if x.start <= s and e <= x.end), None)
                    if span is not None:
                        span.marks.append((s - span.start, e - span.start, self.number(m)))
        stack = [parent]
        after: list[Mark] = []
        for n, child in enumerate(children):
            t = child.type
            top = stack[-1]
            span = spans.get(n)
            marks = span.marks if span is not None else []
            if t == "text":
                add(top, *text_with_marks(child.content, marks))
            elif t == "softbreak":
                add(top, el("br") if self.kind != "md" else "\n")
            elif t == "hardbreak":
                add(top, el("br"))
            elif t == "code_inline":
                add(top, el("code", None, *text_with_marks(child.content, marks)))
            elif t in ("math_inline", "math_inline_double", "math_single", "math_inline_eqno"):
                math, drawn = math_with_marks(
                    child.content, marks, display=t == "math_inline_double"
                )
                add(top, math)
                after.extend(drawn)
            elif t in ("em_open", "strong_open", "s_open"):
                stack.append(
                    add(top, el({"em_open": "em", "strong_open": "strong", "s_open": "s"}[t]))[-1]
                )
            elif t == "link_open":
                href = str(child.attrGet("href") or "")
                attrs = (
                    {"href": href, "rel": "noopener noreferrer"} if _SAFE_LINK.match(href) else {}
                )
                stack.append(add(top, el("a", attrs))[-1])
            elif t.endswith("_close"):
                if len(stack) > 1:
                    stack.pop()
            elif t == "image":
                alt = "".join(c.content for c in child.children or [])
                add(top, el("span", {"class": "muted"}, f"[image: {alt}]"))
            # html_inline: the article's own tags are left out; the text between them stays
        self._notes_after(parent, after)
        if row is None:  # a table's cells leave theirs for after the table
            self.line_marks(parent, where)

    @staticmethod
    def _spans(content: str, children: Sequence[Any]) -> dict[int, _Inline]:
        """Each text, code or maths token's offsets in the block's content (found in order;
        a token whose text differs from its source, an escape or an entity, has none)."""
        out: dict[int, _Inline] = {}
        at = 0
        for n, child in enumerate(children):
            t = child.type
            if t == "softbreak" or t == "hardbreak":
                nl = content.find("\n", at)
                at = nl + 1 if nl >= 0 else at
                continue
            if t in ("text", "code_inline") or t.startswith("math_"):
                text = child.content
                if not text:
                    continue
                found = content.find(text, at)
                if found >= 0:
                    out[n] = _Inline(found, found + len(text))
                    at = found + len(text)
        return out


def _body(tex: str) -> str:
    """A LaTeX document's body: the preamble and what follows ``\\end{document}`` blanked,
    line for line, so that every line keeps its number."""
    lines = tex.split("\n")
    begin = next(
        (k for k, x in enumerate(lines) if x.strip().startswith("\\begin{document}")), None
    )
    if begin is None:
        return tex
    end = next(
        (k for k, x in enumerate(lines) if k > begin and x.strip().startswith("\\end{document}")),
        len(lines),
    )
    return "\n".join("" if k <= begin or k >= end else x for k, x in enumerate(lines))


def _offsets(content: str) -> list[int]:
    """Where each line of ``content`` starts in it."""
    out, at = [], 0
    for part in content.split("\n"):
        out.append(at)
        at += len(part) + 1
    return out


# ----------------------------------------------------------------------------- notebooks


def _cell_text(v: Any) -> str:
    if isinstance(v, list):
        return "".join(str(x) for x in v)
    return str(v) if v is not None else ""


def _outputs(cell: Mapping[str, Any]) -> tuple[str, list[str]]:
    """A code cell's printed text (streams and results, one after the other) and its images."""
    texts: list[str] = []
    images: list[str] = []
    for o in cell.get("outputs") or []:
        if not isinstance(o, Mapping):
            continue
        kind = o.get("output_type")
        if kind == "stream":
            texts.append(_cell_text(o.get("text", "")))
        elif kind in ("execute_result", "display_data"):
            data = o.get("data") or {}
            if not isinstance(data, Mapping):
                continue
            png = data.get("image/png")
            if isinstance(png, (str, list)) and _BASE64.match(_cell_text(png)):
                images.append(re.sub(r"\s", "", _cell_text(png)))
            if data.get("text/plain") is not None:
                texts.append(_cell_text(data["text/plain"]))
        elif kind == "error":
            texts.append(f"{_cell_text(o.get('ename', ''))}: {_cell_text(o.get('evalue', ''))}")
    joined = "".join(t if t.endswith("\n") else t + "\n" for t in texts)
    return joined.removesuffix("\n"), images


def notebook_blocks(
    raw: str, path: str, marks: Sequence[Mark], counter: list[int]
) -> tuple[list[ET.Element], list[Mark]]:
    """A notebook's cells: markdown drawn, code and its printed outputs preformatted.

    Returns:
        The cells, and the marks no cell drew.
    """
    from symtf.draft.read.notebook import notebook_cells

    units: dict[tuple[int | None, bool], list[Mark]] = {}
    for m in marks:
        units.setdefault(m.place.unit, []).append(m)
    out: list[ET.Element] = []
    for k, cell in enumerate(notebook_cells(raw, path)):
        if not isinstance(cell, Mapping):
            continue
        kind = cell.get("cell_type")
        source = _cell_text(cell.get("source", ""))
        box = el("section", {"class": f"cell {kind}", "id": f"cell-{k}"})
        own = Marks(units.pop((k, False), []))
        page = _Page("md", own, counter)
        if kind == "markdown":
            add(box, *page.markdown(source))
        else:
            count = cell.get("execution_count")
            prompt = (
                f"In [{count if isinstance(count, int) else ' '}]:" if kind == "code" else "raw"
            )
            add(box, el("div", {"class": "prompt"}, prompt))
            lines = source.split("\n")
            add(
                box,
                el(
                    "pre",
                    {"class": "code"},
                    page.lines_with_marks(source, lines, 0, len(lines), code=True),
                ),
            )
            page.line_marks(box, (0, len(lines)))
        if kind == "code":
            text, images = _outputs(cell)
            printed = Marks(units.pop((k, True), []))
            opage = _Page("md", printed, counter)
            if text:
                lines = text.split("\n")
                add(
                    box,
                    el(
                        "pre",
                        {"class": "output"},
                        opage.lines_with_marks(text, lines, 0, len(lines), code=True),
                    ),
                )
                opage.line_marks(box, (0, len(lines)))
            for png in images:
                add(
                    box,
                    el(
                        "img", {"src": f"data:image/png;base64,{png}", "alt": f"output of cell {k}"}
                    ),
                )
            _leftover(box, printed, counter)
        _leftover(box, own, counter)
        out.append(box)
    rest = [m for ms in units.values() for m in ms]
    return out, rest


def _leftover(box: ET.Element, marks: Marks, counter: list[int]) -> None:
    """Marks whose line a text has none of: noted at its end."""
    rest = marks.left()
    for m in rest:
        if not m.key:
            counter[0] += 1
            m.key = counter[0]
    box_notes = notes(rest, by_line=True)
    if box_notes is not None:
        add(box, box_notes)


# ----------------------------------------------------------------------------- the page


def _summary(report: DerivationReport, marks: Sequence[Mark]) -> ET.Element:
    """The bar at the top: N checked of M, K off, and the legend."""
    checks = report.checks
    unchecked = sum(1 for m in marks if m.verdict == "unchecked")
    total = len(checks) + unchecked
    off = sum(1 for c in checks if c.verdict in OFF)
    counts: dict[str, int] = {}
    for c in checks:
        counts[c.verdict] = counts.get(c.verdict, 0) + 1
    right = counts.get("exact", 0) + counts.get("rounded", 0)
    parts = [f"✓ {right} right"]
    for verdict in ("slip", "wrong", "undecided", "symbolic"):
        if counts.get(verdict):
            parts.append(f"{VERDICT_WORDS[verdict][0]} {counts[verdict]} {verdict}")
    if unchecked:
        parts.append(f"{UNCHECKED[0]} {unchecked} not checked")
    head = f"{len(checks)} checked of {total} printed numbers, {off} off"
    legend = el("div", {"class": "legend"})
    for verdict, words in (
        ("rounded", "right (exact or correctly rounded)"),
        ("slip", "slip: less than one in the last digit off"),
        ("wrong", "wrong"),
        ("undecided", "undecided"),
        ("symbolic", "depends on a symbol"),
        ("unchecked", "not checked"),
    ):
        sym = UNCHECKED[0] if verdict == "unchecked" else VERDICT_WORDS[verdict][0]
        add(
            legend,
            el("span", {"class": f"v-{verdict}"}, el("span", {"class": "sym"}, sym), f" {words}"),
        )
    add(legend, " Click a number for its exact value and the reason.")
    return el(
        "header",
        {"class": "bar", "role": "status"},
        el("div", {"class": "counts"}, f"symtf: {head}"),
        el("div", None, " · ".join(parts)),
        legend,
    )


def render_post(
    report: DerivationReport,
    text: str,
    kind: str,
    *,
    drafted: Sequence[Any] = (),
    notebook: Mapping[int, tuple[int, int, bool]] | None = None,
) -> str:
    """The article as a page, every number symtf judged marked where it stands.

    Args:
        report: The article's check (its claims' lines are the article's).
        text: The article's text, as read.
        kind: ``md``, ``txt``, ``tex`` or ``ipynb``.
        drafted: Every claim of the draft, for the numbers it left out.
        notebook: For a notebook, what each file line holds (``symtf.draft.code.file_lines``),
            for checks known only by their file line.

    Returns:
        An HTML5 document: inline CSS, MathML, no script, nothing fetched.
    """
    placed, unplaced = marks_of(report, drafted, notebook if kind == "ipynb" else None)
    counter = [0]
    if kind == "ipynb":
        blocks, rest = notebook_blocks(text, report.article or report.path, placed, counter)
    else:
        marks = Marks(placed)
        blocks = _Page(kind, marks, counter).markdown(_body(text) if kind == "tex" else text)
        rest = marks.left()
    rest += unplaced
    body = el("main", {"class": f"symtf post {kind}"}, _summary(report, [*placed, *unplaced]))
    article = el("article", None, *blocks)
    add(body, article)
    if rest:
        for m in rest:
            if not m.key:
                counter[0] += 1
                m.key = counter[0]
        box = el(
            "section", {"class": "unplaced"}, el("h2", None, "Numbers whose place is not known")
        )
        box_notes = notes(rest, by_line=True)
        assert box_notes is not None
        add(box, box_notes)
        add(body, box)
    title = report.title or report.article or report.path
    doc = el(
        "html",
        {"lang": "en"},
        el(
            "head",
            None,
            el("meta", {"charset": "utf-8"}),
            el("meta", {"http-equiv": "Content-Security-Policy", "content": CSP}),
            el("meta", {"name": "viewport", "content": "width=device-width, initial-scale=1"}),
            el("title", None, f"{title} — checked by symtf"),
            el("style", None, CSS + POST_CSS),
        ),
        el("body", None, body),
    )
    return "<!DOCTYPE html>\n" + serialize(doc) + "\n"
