"""An article's labels typeset as maths through one path (:mod:`symtf.renderers.labels`).

The expected LaTeX is written by hand, as a person typesetting the label would write it:
a symbol with its subscript or transpose, a root, an operator between numbers is maths;
a word, a sentence, a lone number is text, as the article wrote it.
"""

from __future__ import annotations

import re

import pytest

from symtf.renderers.html.maths import label_html
from symtf.renderers.labels import entry_math, label_math, label_plain, label_tex, parts

CASES = [
    # the labels the worked examples print, as a person typesets them
    ("Q_1 K_1^T", r"$Q_{1}\,K_{1}^{\top}$"),
    ("sqrt(2)", r"$\sqrt{2}$"),
    ("sqrt(2) scale divisor", r"$\sqrt{2}$ scale divisor"),
    ("d_k", r"$d_{k}$"),
    ("1.1*1.1 = 1.21", r"$1.1 \cdot 1.1 = 1.21$"),
    ("S_1 + M", r"$S_{1} + M$"),
    ("O = H W_O = H", r"$O = H\,W_{O} = H$"),
    ("K^T", r"$K^{\top}$"),
    ("W_{Q}", r"$W_{Q}$"),
    ("Y_final", r"$Y_{\text{final}}$"),
    ("sqrt(d_k)", r"$\sqrt{d_{k}}$"),
    ("√2", r"$\sqrt{2}$"),
    ("Q_1 K_1^T / sqrt(d_k)", r"$Q_{1}\,K_{1}^{\top} / \sqrt{d_{k}}$"),
    ("sigma^2", r"$\sigma^{2}$"),
    ("z^((2))", r"$z^{(2)}$"),
    ("e^{-1.9}", r"$e^{-1.9}$"),
    ("softmax(S_1)", r"$\operatorname{softmax}(S_{1})$"),
    ("Y", "$Y$"),  # a whole label of one letter is a symbol
    ("h_{\\text{AI}}", r"$h_{\text{AI}}$"),  # written in LaTeX: read, then typeset
    # maths in a sentence: the maths typeset, the words left as text
    ("H_1 AI row: weights", r"$H_{1}$ AI row: weights"),
    ("A_1, row 2", r"$A_{1}$, row 2"),
    ("R_2 I", r"$R_{2}$ I"),
    # text stays text
    ("X sum love: result", "X sum love: result"),
    ("LN1 I: standard deviation", "LN1 I: standard deviation"),
    ("scaled Birds row", "scaled Birds row"),
    ("head 2: love attends to itself", "head 2: love attends to itself"),
    ("I love AI", "I love AI"),
    ("step 3 of 5", "step 3 of 5"),
    ("H (heads concatenated)", "H (heads concatenated)"),
    ("attn_scores_2", r"attn{\ttfamily\char95}scores{\ttfamily\char95}2"),
]


@pytest.mark.parametrize(("label", "tex"), CASES)
def test_a_label_is_typeset_as_a_person_would(label: str, tex: str) -> None:
    assert label_tex(label) == tex


@pytest.mark.parametrize(
    "hostile",
    [
        r"x_1 \input{/etc/passwd} $y$",
        r"Q_1 \write18{rm -rf /} K^T",
        "A_1 & {50%} \\ #$^~_",
        "</mtext><script>alert(1)</script> d_k",
        "W_{Q}}\\def\\x{1}",
    ],
)
def test_nothing_of_a_label_reaches_latex_or_html_unescaped(hostile: str) -> None:
    tex = label_tex(hostile)
    assert not re.search(r"\\(input|write|def|include)", tex)
    # the maths pieces hold only what the grammar builds; the rest is escaped text
    for piece in parts(hostile):
        if piece.math:
            assert re.fullmatch(r"[A-Za-z0-9_{}^\\,.=+\-/() ]*", piece.text), piece
    assert "<script" not in label_html(hostile)
    math = label_math(hostile)
    assert not re.search(r"\\(input|write|def)\b", math)


def test_the_same_label_reads_the_same_in_every_output() -> None:
    label = "Q_1 K_1^T / sqrt(d_k)"
    assert label_plain(label) == "Q_1 K_1ᵀ / √(d_k)"
    page = label_html(label)
    assert page.count("<math") == 1 and "<msqrt>" in page and "⊤" in page
    assert label_math(label) == r"Q_{1}\,K_{1}^{\top} / \sqrt{d_{k}}"


@pytest.mark.parametrize(
    ("label", "at", "tex"),
    [
        # the key's left side: an entry of a labelled table, counted from 1
        ("S_1", "1,1", r"(S_{1})_{1,1}"),
        ("Y", "2,3", "Y_{2,3}"),
        ("sqrt(2)", "1,1", r"(\sqrt{2})_{1,1}"),
        ("LN1 I: centered", "6", r"[\text{LN1 I: centered}]_{6}"),
        ("d_k", "", "{d_{k}}"),
    ],
)
def test_an_entry_of_a_labelled_table_reads_as_maths(label: str, at: str, tex: str) -> None:
    assert entry_math(label, at) == tex
