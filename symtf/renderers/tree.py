"""Pages as element trees: build them, write them out escaped, and MathML from LaTeX.

A page symtf writes from an article is never assembled from markup strings: its
elements are built here (:func:`el`, :func:`add`) and written out by :func:`serialize`,
which escapes every text and attribute value and drops control characters. Formulas
come from the MathML converter's own element tree (:func:`convert`), its character
references decoded and any name it should not write dropped; an article's own HTML is
reduced to its text (:func:`html_text`).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from xml.etree import ElementTree as ET

from symtf import visible

#: Elements written without a closing tag.
_VOID = frozenset({"meta", "br", "hr", "img", "wbr"})
#: Tag and attribute names a converted formula may carry; others are dropped.
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,40}\Z")
#: Character references the MathML converter writes into its tree's text.
_CHAR_REF = re.compile(r"&#(?:x([0-9A-Fa-f]{1,6})|([0-9]{1,7}));")


def el(tag: str, attrs: Mapping[str, str] | None = None, *children: ET.Element | str) -> ET.Element:
    """An element with its attributes, text and children (strings become text)."""
    e = ET.Element(tag, dict(attrs or {}))
    add(e, *children)
    return e


def add(parent: ET.Element, *items: ET.Element | str) -> ET.Element:
    """Append children and text to ``parent`` (text after the last child is its tail)."""
    for item in items:
        if isinstance(item, str):
            if not item:
                continue
            if len(parent):
                last = parent[-1]
                last.tail = (last.tail or "") + item
            else:
                parent.text = (parent.text or "") + item
        else:
            parent.append(item)
    return parent


def _clean(text: str) -> str:
    """Text with no control character to act and none to reorder or hide the page (the one
    rule, :func:`symtf.visible.page`)."""
    return visible.page(text)


def _attr(value: str) -> str:
    """An attribute value in double quotes: ``&``, ``<``, ``>`` and ``"`` escaped."""
    return html.escape(_clean(value), quote=False).replace('"', "&quot;")


def serialize(root: ET.Element) -> str:
    """An element tree as HTML5, every text and attribute value escaped (no recursion).

    ``<style>`` holds the page's own CSS only (never text from the article), written as is.
    """
    out: list[str] = []
    todo: list[tuple[ET.Element, bool]] = [(root, False)]
    while todo:
        node, closing = todo.pop()
        tag = str(node.tag)
        if closing:
            if tag not in _VOID:
                out.append(f"</{tag}>")
            out.append(html.escape(_clean(node.tail or ""), quote=False))
            continue
        attrs = "".join(f' {k}="{_attr(str(v))}"' for k, v in node.attrib.items())
        out.append(f"<{tag}{attrs}>")
        if tag == "style":
            css = node.text or ""
            if "</" in css:
                raise ValueError("a style element may hold only the page's own CSS")
            out.append(css)
        else:
            out.append(html.escape(_clean(node.text or ""), quote=False))
        todo.append((node, True))
        todo.extend((child, False) for child in reversed(list(node)))
    return "".join(out)


def _decoded(root: ET.Element) -> ET.Element:
    """The converter's tree with its character references decoded and foreign names dropped."""

    def char(m: re.Match[str]) -> str:
        n = int(m[1], 16) if m[1] is not None else int(m[2])
        return chr(n) if 0 < n <= 0x10FFFF and not 0xD800 <= n <= 0xDFFF else ""

    for node in root.iter():
        if not isinstance(node.tag, str) or not _NAME.match(node.tag):
            node.tag = "mrow"
        for k in [k for k in node.attrib if not _NAME.match(str(k))]:
            del node.attrib[k]
        node.text = _CHAR_REF.sub(char, node.text) if node.text else node.text
        node.tail = _CHAR_REF.sub(char, node.tail) if node.tail else node.tail
    return root


def convert(tex: str, display: bool) -> ET.Element | None:
    """A formula as MathML (``display``: a block), or ``None`` when the converter cannot read it."""
    from latex2mathml.converter import convert_to_element

    try:
        root = convert_to_element(tex, display="block" if display else "inline")
    except Exception:  # the converter's own errors are plain Exceptions: show the source
        return None
    root.attrib.pop("xmlns", None)
    return _decoded(root)


def html_text(markup: str) -> str:
    """The text of a block of the article's own HTML (its tags left out, never copied)."""
    import html.parser

    class _Text(html.parser.HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.parts: list[str] = []

        def handle_data(self, data: str) -> None:
            self.parts.append(data)

    p = _Text()
    p.feed(markup)
    p.close()
    return "".join(p.parts).strip("\n")
