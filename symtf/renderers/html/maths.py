"""Mathematics as native MathML, converted from the same LaTeX the lecture notes use
(:mod:`latex2mathml`) and made portable across browsers; an article's labels typeset.
"""

from __future__ import annotations

import html
import re
from typing import Any

from symtf import visible

# ----------------------------------------------------------------------------- MathML


def label_html(label: str) -> str:
    """An article's label as HTML: its text escaped, its maths as MathML (the pieces
    :func:`symtf.renderers.labels.parts` reads)."""
    from symtf.renderers.labels import parts

    return "".join(mathml(p.text) if p.math else html.escape(p.text) for p in parts(label))


def mathml(tex: str, *, display: bool = False) -> str:
    r"""Math-mode LaTeX as native MathML (no ``xmlns``: HTML5 knows ``<math>``).

    The converter builds an element tree; this module writes that tree out
    itself (:func:`_serialize`), escaping every text and attribute value as it
    goes, so text from a derivation file (a vocabulary word ``</mtext><script>``)
    can only ever be text. LaTeX the converter cannot read is shown as text.

    Example:
        >>> mathml(r"\frac{1}{2}").startswith('<math display="inline">')
        True
        >>> mathml(r"\text{</mtext><b>}")
        '<math display="inline"><mrow><mtext>&lt;/mtext&gt;&lt;b&gt;</mtext></mrow></math>'
    """
    from latex2mathml.converter import convert_to_element

    mode = "block" if display else "inline"
    try:
        root = convert_to_element(_portable(tex), display=mode)
    except Exception:  # the converter's own errors are plain Exceptions: show the source
        return f'<math display="{mode}"><mtext>{_text(tex)}</mtext></math>'
    root.attrib.pop("xmlns", None)
    return _serialize(root)


#: Character references the converter writes into its tree's text (``&#x0003C;``).
_CHAR_REF = re.compile(r"&#(?:x([0-9A-Fa-f]{1,6})|([0-9]{1,7}));")
#: Element and attribute names as the converter writes them; anything else is dropped.
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,40}\Z")


def _text(s: str) -> str:
    """Tree text as HTML: the converter's character references decoded, then all escaped."""

    def char(m: re.Match[str]) -> str:
        n = int(m[1], 16) if m[1] is not None else int(m[2])
        return chr(n) if 0 < n <= 0x10FFFF and not 0xD800 <= n <= 0xDFFF else ""

    decoded = _CHAR_REF.sub(char, s)
    # no control character in a page, and none that reorders or hides it (the one rule)
    return html.escape(visible.page(decoded), quote=True)


def _serialize(root: Any) -> str:
    """An element tree as markup, every text and attribute value escaped (no recursion)."""
    out: list[str] = []
    todo: list[tuple[Any, bool]] = [(root, False)]
    while todo:
        el, closing = todo.pop()
        tag = el.tag if isinstance(el.tag, str) and _NAME.match(el.tag) else "mrow"
        if closing:
            out.append(f"</{tag}>{_text(el.tail or '')}")
            continue
        attrs = "".join(
            f' {k}="{_text(str(v))}"' for k, v in el.attrib.items() if _NAME.match(str(k))
        )
        out.append(f"<{tag}{attrs}>{_text(el.text or '')}")
        todo.append((el, True))
        todo.extend((child, False) for child in reversed(list(el)))
    return "".join(out)


def _portable(tex: str) -> str:
    """Replace the notes' own macros with standard ones the converter knows."""
    tex = tex.replace(r"{\scriptstyle\ldots}", r"\ldots").replace(r"\phantom{=}\quad", r"\quad")
    # Each matrix in its own fenced group, so its brackets fit it and not its neighbour.
    for env, left, right in (("bmatrix", "[", "]"), ("pmatrix", "(", ")"), ("vmatrix", "|", "|")):
        tex = tex.replace(f"\\begin{{{env}}}", f"\\left{left}\\begin{{matrix}}")
        tex = tex.replace(f"\\end{{{env}}}", f"\\end{{matrix}}\\right{right}")
    tex = tex.replace(r"-\infty", r"{-\infty}")  # a sign, not a subtraction
    return re.sub(r"\\symtfwrong\{([^{}]*)\}", r"\1", tex)
