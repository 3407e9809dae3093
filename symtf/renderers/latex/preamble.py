"""A compilable LaTeX document around a body: the project preamble, and the fonts and
engine its characters need (plain pdfLaTeX, pdfLaTeX with T1 fonts, or LuaLaTeX).
"""

from __future__ import annotations

from symtf.renderers.tex import escape

PREAMBLE = r"""\documentclass[11pt]{article}
\usepackage[margin=2cm]{geometry}
\usepackage{amsmath}
\usepackage{amssymb}
\usepackage{booktabs}
\usepackage{longtable}
\usepackage{array}
\usepackage{xcolor}
\usepackage{graphicx}
\setcounter{MaxMatrixCols}{20}
\allowdisplaybreaks
\renewcommand{\labelitemi}{$\bullet$}
\setlength{\parindent}{0pt}
\setlength{\parskip}{0.5ex}
\setlength{\emergencystretch}{3em}
\newcommand{\symtfok}{\textcolor{green!50!black}{$\checkmark$}}
\newcommand{\symtfbad}{\textcolor{red!75!black}{$\boldsymbol{\times}$}}
\newcommand{\symtfslip}{\textcolor{orange!85!black}{$\boldsymbol{\pm}$}}
\newcommand{\symtfundecided}{\textcolor{gray}{\textbf{?}}}
\newcommand{\symtfwrong}[1]{\textcolor{red!75!black}{\underline{#1}}}
\newsavebox{\symtfbox}
\newcommand{\symtffitto}[2]{\sbox{\symtfbox}{#2}\ifdim\wd\symtfbox>#1\relax\resizebox{#1}{!}{\usebox{\symtfbox}}\else\usebox{\symtfbox}\fi}
\newcommand{\symtffit}[1]{\symtffitto{\linewidth}{#1}}
\newcommand{\symtfpick}[3]{\sbox{\symtfbox}{#1}\ifdim\wd\symtfbox>\linewidth\relax\sbox{\symtfbox}{#2}\ifdim\wd\symtfbox>\linewidth\relax\symtffit{#3}\else\usebox{\symtfbox}\fi\else\usebox{\symtfbox}\fi}
\newcommand{\symtfstep}[1]{\hfill{\normalfont\small #1}}
"""

#: Marks of a value that depends on a symbol: added to the preamble of a document that uses them.
SYMBOLIC_MACROS = r"""\newcommand{\symtfsymbolic}{\textcolor{blue!65!black}{$\boldsymbol{f}$}}
\newcommand{\symtfdepends}[1]{\textcolor{blue!65!black}{#1}}
"""


#: Fonts for a document that holds characters pdfLaTeX's default fonts lack:
#: Latin Modern (the same look), falling back to DejaVu for Greek, Cyrillic, Hebrew, ...
UNICODE_FONTS = r"""\usepackage{fontspec}
\directlua{luaotfload.add_fallback("symtffallback", {"DejaVuSerif:mode=harf;", "DejaVuSans:mode=harf;"})}
\setmainfont{Latin Modern Roman}[RawFeature={fallback=symtffallback}]
\setmonofont{Latin Modern Mono}[RawFeature={fallback=symtffallback}]
"""
#: The first line of a document that needs LuaLaTeX (read by editors, latexmk and symtf).
LUALATEX_MAGIC = "% !TEX program = lualatex\n"

#: Characters beyond ASCII that pdfLaTeX sets with T1 fonts and UTF-8 input: the
#: letters of Latin-1 and Latin Extended-A that LaTeX's ``t1enc.dfu`` declares,
#: and the quotes, dashes and guillemets of European text.
T1_TEXT = frozenset(
    "ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞßàáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿ"
    "ĀāĂăĄąĆćĈĉĊċČčĎďĐđĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĨĩĪīĬĭĮįİıĲĳĴĵĶķĹĺĻļĽľŁłŃńŅņŇňŊŋ"
    "ŌōŎŏŐőŒœŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽžȘșȚț"
    "¡¿«»‘’‚“”„‹›–—\u00a0"
)
#: What a pdfLaTeX document with characters of :data:`T1_TEXT` loads (Latin Modern
#: where the ``lmodern`` package is installed, else the EC fonts of the same design).
T1_FONTS = r"""\usepackage[T1]{fontenc}
\usepackage[utf8]{inputenc}
\IfFileExists{lmodern.sty}{\usepackage{lmodern}}{}
"""


def standalone(title: str, body: str, *, subtitle: str = "") -> str:
    """Wrap a LaTeX body in a compilable document with the project preamble.

    A document that is all ASCII is plain pdfLaTeX; one whose other characters
    are Latin letters and punctuation of :data:`T1_TEXT` (``pájaros``, ``Łódź``)
    is pdfLaTeX with T1 fonts and UTF-8 input (:data:`T1_FONTS`). A document with
    characters pdfLaTeX cannot set (Greek text, Cyrillic, Hebrew, CJK, ...)
    starts with :data:`LUALATEX_MAGIC` and loads :data:`UNICODE_FONTS`.

    Args:
        title: Plain-text title (escaped here).
        body: LaTeX body (already LaTeX; not escaped).
        subtitle: Plain-text line under the title (escaped here), e.g. the source.

    Returns:
        A complete ``.tex`` document.
    """
    author = (
        "\\author{\\normalsize\\parbox{0.9\\linewidth}{\\centering " + escape(subtitle) + "}}\n"
        if subtitle
        else "\\author{}\n"
    )
    rest = (
        "\\title{"
        + escape(title)
        + "}\n"
        + author
        + "\\date{}\n\\begin{document}\n\\maketitle\n"
        + body.rstrip("\n")
        + "\n\\end{document}\n"
    )
    preamble = PREAMBLE
    if "\\symtfsymbolic" in body or "\\symtfdepends" in body:
        preamble += SYMBOLIC_MACROS
    if rest.isascii():
        return preamble + rest
    first, _, packages = preamble.partition("\n")
    if all(ch.isascii() or ch in T1_TEXT for ch in rest):
        return first + "\n" + T1_FONTS + packages + rest
    return LUALATEX_MAGIC + first + "\n" + UNICODE_FONTS + packages + rest


def needs_lualatex(tex: str) -> bool:
    """Whether a document from :func:`standalone` must be compiled with LuaLaTeX."""
    return tex.startswith(LUALATEX_MAGIC)
