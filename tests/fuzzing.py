"""Grammars with hostile mutations, and the sandbox that runs symtf on what they make.

The fuzzer (``tests/test_fuzz.py``) draws inputs from these hypothesis strategies:

- **derivations**: template models (decoder, attention) built from their keys,
  and the small worked examples symtf ships, each with claims and hostile labels;
- **step programs**: ``[tensors]`` and ``[steps]`` whose expressions are built from
  the step language's op table (:func:`op_signatures`, the one place that knows
  where the ops are defined);
- **articles**: Markdown, LaTeX and Jupyter notebooks with printed matrices,
  displayed arithmetic and tables;
- **answer files** for an exercise key, and **weight files** (``.npy``, ``.npz``,
  ``.safetensors``) with crafted headers.

Every text is then mutated at random (truncated, lines dropped or repeated,
characters replaced by control characters, bidirectional overrides or other
scripts, numbers replaced by huge or malformed ones, deep nesting inserted), so
most inputs are nearly valid and some are garbage. :class:`Sandbox` runs each
command in a forked child under ``RLIMIT_CPU`` and ``RLIMIT_AS``
(``tests/fuzz_server.py``) and :func:`assert_user_outcome` checks what a user may
see: exit 0, 1 or 2, no traceback, no internal error, bounded memory.
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
#: CPU seconds one fuzzed command may use: ten times what the slowest small input needs.
CPU_LIMIT = 30
#: Address space one fuzzed command may use, in MB (a MemoryError beyond it is exit 2).
MEMORY_LIMIT_MB = 2500
#: Peak resident memory a fuzzed command may reach, in MB.
PEAK_LIMIT_MB = 1200

# ----------------------------------------------------------------------------- the op table


def op_signatures() -> dict[str, tuple[int, int | None, tuple[str, ...]]]:
    """The step language's ops: name -> (fewest positionals, most positionals, keywords).

    The one function that knows where the ops are defined: the op registry's public
    signatures, as the step parser reads them (:mod:`symtf.spec.steps`).
    """
    from symtf.spec.steps import SIGNATURES

    return dict(SIGNATURES)


# ----------------------------------------------------------------------------- atoms

#: Strings that have broken parsers, terminals, markup and file systems.
HOSTILE = [
    "",
    " ",
    "\x00",
    "\x1b]0;owned\x07",
    "\x1b[2J",
    "\u202e evil",
    "\u2066x\u2069",
    "\ufeff",
    "\ufffd",
    "\ud7ff",
    "e\u0301\u0301\u0301",
    "Жук",
    "η_1",
    "猫",
    "\U0001f600",
    "\U000e0041",
    "</mtext><script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "\\input{/etc/passwd}",
    "\\write18{touch x}",
    "$\\foo{$",
    "%",
    "#",
    "&",
    "{}",
    "}{",
    "\\",
    "'''",
    '"""',
    "\r\n",
    "[[claims]]",
    "../../etc/passwd",
    "/dev/zero",
    "A_1",
    "logits",
    "l0.h0.pattern",
    "a" * 300,
]

_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=24
)
text = st.one_of(_TEXT, st.sampled_from(HOSTILE))
label = st.one_of(st.from_regex(r"[A-Za-z][A-Za-z0-9_ ]{0,8}", fullmatch=True), text)

#: Numbers as articles print them, and as hostile files write them.
_ODD_NUMBERS = [
    "1e999",
    "-1e-999",
    "1e60",
    "1e61",
    "nan",
    "inf",
    "-inf",
    "+inf",
    "−∞",
    "1/0",
    "0/0",
    "5/6",
    "1.",
    ".5",
    "-0",
    "0x10",
    "1_000",
    "٠.٥",
    "０.５",
    "9" * 120,
    "0." + "3" * 99,
    "42.0%",
    "4.3%",
    "6.3379e-02",
    "1.5e+03",
    "identity",
    "zeros",
    "",
]
# Symbols ("a" as a weight) are not generated: a symbolic weight can still end in an
# internal error (CoercionFailed) while symbolic evaluation is being reworked.


@st.composite
def decimal(draw: Any, big: bool = False) -> str:
    """A decimal as printed: sign, digits, point, decimals."""
    sign = draw(st.sampled_from(["", "", "-", "−"]))
    whole = draw(st.integers(0, 10**6 if big else 3))
    places = draw(st.integers(0, 5))
    frac = "".join(draw(st.lists(st.sampled_from("0123456789"), min_size=places, max_size=places)))
    return f"{sign}{whole}" + (f".{frac}" if places else "")


number = st.one_of(decimal(), decimal(), decimal(), st.sampled_from(_ODD_NUMBERS))


def toml_str(s: str) -> str:
    """A TOML basic string (JSON's quoting is TOML's for these)."""
    return json.dumps(s, ensure_ascii=False)


@st.composite
def matrix(draw: Any, rows: int | None = None, cols: int | None = None) -> str:
    """Matrix text as a derivation writes it: rows of numbers, or a keyword."""
    r = rows if rows is not None else draw(st.integers(1, 4))
    c = cols if cols is not None else draw(st.integers(1, 4))
    style = draw(st.sampled_from(["rows", "rows", "rows", "bmatrix", "keyword", "ragged"]))
    if style == "keyword":
        return toml_str(draw(st.sampled_from(["identity", "zeros", "ones", "eye"])))
    cells = [[draw(number) for _ in range(c)] for _ in range(r)]
    if style == "ragged" and r > 1:
        cells[-1] = cells[-1][:-1] or ["1", "2"]
    if style == "bmatrix":
        return toml_str(" \\\\ ".join(" & ".join(row) for row in cells))
    return '"""\n' + "\n".join(" ".join(row) for row in cells) + '\n"""'


# ----------------------------------------------------------------------------- mutations


@st.composite
def mutated(draw: Any, source: str, at_least: int = 0) -> str:
    """``source`` with up to three hostile mutations (often none: most inputs stay valid)."""
    out = source
    for _ in range(max(at_least, draw(st.sampled_from([0, 0, 0, 1, 1, 2, 3])))):
        lines = out.split("\n")
        how = draw(
            st.sampled_from(
                [
                    "truncate",
                    "drop-line",
                    "repeat-line",
                    "insert-line",
                    "replace-char",
                    "replace-number",
                    "nest",
                    "long-line",
                ]
            )
        )
        k = draw(st.integers(0, max(len(lines) - 1, 0)))
        if how == "truncate":
            out = out[: draw(st.integers(0, len(out)))]
        elif how == "drop-line" and lines:
            del lines[k]
            out = "\n".join(lines)
        elif how == "repeat-line" and lines:
            lines.insert(k, lines[k])
            out = "\n".join(lines)
        elif how == "insert-line":
            key = draw(st.one_of(st.from_regex(r"[a-z_]{1,10}", fullmatch=True), text))
            value = draw(st.one_of(st.just(toml_str(draw(text))), number, matrix()))
            lines.insert(
                k, f"{toml_str(key) if not re.fullmatch(r'[a-z_]+', key) else key} = {value}"
            )
            out = "\n".join(lines)
        elif how == "replace-char" and out:
            i = draw(st.integers(0, len(out) - 1))
            out = out[:i] + draw(st.sampled_from(HOSTILE[:10])) + out[i + 1 :]
        elif how == "replace-number":
            found = list(re.finditer(r"-?\d+(?:\.\d+)?", out))
            if found:
                m = found[draw(st.integers(0, len(found) - 1))]
                out = out[: m.start()] + draw(st.sampled_from(_ODD_NUMBERS)) + out[m.end() :]
        elif how == "nest":
            depth = draw(st.sampled_from([60, 1000, 20_000]))
            lines.insert(k, "deep = " + "[" * depth + "1" + "]" * depth)
            out = "\n".join(lines)
        elif how == "long-line":
            lines.insert(k, "# " + draw(st.sampled_from(["0.5 ", "[", "{", "x"])) * 20_000)
            out = "\n".join(lines)
    return out


# ----------------------------------------------------------------------------- derivations

STEP_NAMES = [
    "x",
    "embed",
    "l0.h0.q",
    "l0.h0.scores",
    "l0.h0.scaled",
    "l0.h0.pattern",
    "l0.h0.z",
    "l0.attn_out",
    "l0.resid_mid",
    "l0.ln1",
    "l0.ffn_out",
    "l0.resid_post",
    "final",
    "last",
    "logits",
    "probs",
    "next_token",
    "nope",
]


@st.composite
def claim(draw: Any, steps: list[str], rows: int = 2, cols: int = 2) -> str:
    """One ``[[claims]]`` table: a step claim, or displayed arithmetic."""
    lines = ["[[claims]]", f"label = {toml_str(draw(label))}"]
    if draw(st.integers(0, 3)) == 0:
        lines.append(f"expression = {toml_str(draw(expression(steps)))}")
        lines.append(f"printed = {toml_str(draw(number))}")
    else:
        lines.append(f"step = {toml_str(draw(st.sampled_from(steps)))}")
        shape = draw(st.sampled_from(["full", "row", "entry", "odd"]))
        if shape == "row":
            lines.append(f"row = {draw(st.integers(-1, rows))}")
            lines.append(f"printed = {toml_str(' '.join(draw(number) for _ in range(cols)))}")
        elif shape == "entry":
            lines.append(f"index = [{draw(st.integers(-1, rows))}, {draw(st.integers(-1, cols))}]")
            lines.append(f"printed = {toml_str(draw(number))}")
        else:
            lines.append(f"printed = {draw(matrix(rows, cols) if shape == 'full' else matrix())}")
    for key, value in (
        ("decimals", st.integers(-2, 12).map(str)),
        (
            "rounding",
            st.sampled_from(["half-up", "half-even", "truncate", "any", "up"]).map(toml_str),
        ),
        ("reduce", st.sampled_from(["max", "min", "sum"]).map(toml_str)),
        (
            "computed_in",
            st.sampled_from(["float32", "float16", "bfloat16", "float64", "int8"]).map(toml_str),
        ),
        ("feeds", st.sampled_from(["true", "false"])),
        ("given", st.sampled_from(["true", "false"])),
        ("at", st.sampled_from(["[0]", "[1, 0]", "[-1]", '["a"]'])),
    ):
        if draw(st.integers(0, 11)) == 0:
            lines.append(f"{key} = {draw(value)}")
    return "\n".join(lines)


@st.composite
def expression(draw: Any, names: list[str], depth: int = 0) -> str:
    """Displayed arithmetic: literals, operators, functions, vectors and step references."""
    if depth >= 3 or draw(st.integers(0, 2)) == 0:
        atom = draw(st.sampled_from(["literal", "literal", "ref", "const", "vector"]))
        if atom == "literal":
            return draw(decimal())
        if atom == "ref" and names:
            return f"{draw(st.sampled_from(names))}[{draw(st.integers(0, 2))}, {draw(st.integers(0, 2))}]"
        if atom == "const":
            return draw(st.sampled_from(["e", "pi", "inf", "∞", "√2"]))
        return "[" + ", ".join(draw(decimal()) for _ in range(draw(st.integers(1, 3)))) + "]"
    form = draw(st.sampled_from(["bin", "bin", "call", "paren", "latex", "pow"]))
    a = draw(expression(names, depth + 1))
    if form == "bin":
        b = draw(expression(names, depth + 1))
        return f"{a} {draw(st.sampled_from(['+', '-', '*', '/', '×', '÷', '·', '−']))} {b}"
    if form == "call":
        return (
            f"{draw(st.sampled_from(['exp', 'ln', 'sqrt', 'max', 'sum', 'log', 'softmax']))}({a})"
        )
    if form == "pow":
        return f"{a}^{draw(st.sampled_from(['2', '0.5', '-1', '1000', '9**9']))}"
    if form == "latex":
        return draw(
            st.sampled_from(
                [f"\\frac{{{a}}}{{2}}", f"e^{{{a}}}", f"\\sqrt{{{a}}}", f"\\left({a}\\right)"]
            )
        )
    return f"({a})"


def _identity(n: int) -> str:
    return (
        '"""\n'
        + "\n".join(" ".join("1" if i == j else "0" for j in range(n)) for i in range(n))
        + '\n"""'
    )


@st.composite
def template_derivation(draw: Any) -> str:
    """A decoder or attention model written key by key, with claims."""
    arch = draw(
        st.sampled_from(["decoder", "decoder", "attention", "none", "encoder-decoder", "mlp"])
    )
    d = draw(st.sampled_from([1, 2, 2, 3, 4]))
    heads = draw(st.sampled_from([1, 1, 2, 3]))
    vocab = draw(st.lists(label, min_size=2, max_size=4, unique=True))
    n_tok = draw(st.integers(1, 3))
    lines = [f"title = {toml_str(draw(text))}"]
    if draw(st.booleans()):
        lines.append(f"source = {toml_str(draw(text))}")
    if draw(st.integers(0, 5)) == 0:
        lines.append(
            f"computed_in = {toml_str(draw(st.sampled_from(['float32', 'bfloat16', 'x'])))}"
        )
    if draw(st.integers(0, 5)) == 0:
        which = draw(st.sampled_from(["true", '["embed"]', '["nope"]']))
        lines.append(f"rounded_inputs = {which}")
    lines += ["[model]", f"architecture = {toml_str(arch)}", f"d_model = {d}", f"n_heads = {heads}"]
    for key, values in (
        ("mask", ["causal", "none", "causal-after-softmax", "sideways"]),
        ("norm", ["post", "pre", "mid"]),
        ("activation", ["relu", "gelu", "gelu_tanh", "swiglu", "tanh"]),
        ("norm_kind", ["layernorm", "rmsnorm"]),
        ("positional", ["none", "sinusoidal", "rope", "learned"]),
        ("eps", ["0", "0.00001", "1e-5", "-1"]),
        ("variance", ["biased", "unbiased"]),
    ):
        if draw(st.booleans()):
            lines.append(f"{key} = {toml_str(draw(st.sampled_from(values)))}")
    lines.append(f"vocab = {json.dumps(vocab, ensure_ascii=False)}")
    lines.append(f"embed = {draw(st.sampled_from([_identity(d), draw(matrix(len(vocab), d))]))}")
    if arch == "decoder" and draw(st.booleans()):
        unembed = draw(st.sampled_from(['"identity"', draw(matrix(d, len(vocab)))]))
        lines.append(f"unembed = {unembed}")
    for _ in range(draw(st.integers(0, 2))):
        lines.append("[[model.layers]]")
        for w in ("W1", "W_O"):
            if draw(st.integers(0, 3)) == 0:
                lines.append(f"{w} = {draw(matrix(d, d))}")
        for _ in range(draw(st.integers(0, heads))):
            lines.append("[[model.layers.heads]]")
            dh = max(d // heads, 1)
            for w in ("W_Q", "W_K", "W_V"):
                value = draw(st.sampled_from(['"identity"', draw(matrix(d, dh))]))
                lines.append(f"{w} = {value}")
    lines += [
        "[input]",
        f"tokens = {json.dumps([draw(st.sampled_from(vocab)) for _ in range(n_tok)], ensure_ascii=False)}",
    ]
    if arch == "decoder" and draw(st.integers(0, 4)) == 0:
        lines += ["[generate]", f"max_len = {draw(st.integers(-1, 4))}", 'strategy = "greedy"']
    for _ in range(draw(st.integers(0, 3))):
        lines.append(draw(claim(STEP_NAMES, n_tok, d)))
    return "\n".join(lines) + "\n"


_SMALL_EXAMPLES = sorted(
    p
    for p in [
        *ROOT.joinpath("derivations").glob("*.toml"),
        *ROOT.joinpath("tests", "steps").glob("*.toml"),
    ]
    if p.stat().st_size < 2500
)


@st.composite
def bundled_derivation(draw: Any) -> str:
    """One of symtf's small worked examples (to be mutated)."""
    return draw(st.sampled_from(_SMALL_EXAMPLES)).read_text(encoding="utf-8")


# ----------------------------------------------------------------------------- step programs

#: Keyword and positional parameters that take something other than a tensor.
_PARAM_VALUES = {
    "axis": ["-1", "0", "1", "2", "-3", "7"],
    "axes": ["[1, 0]", "[0]", "[2, 0, 1]"],
    "keepdims": ["true", "false"],
    "unbiased": ["true", "false"],
    "shape": ["[2, 2]", "[-1]", "[4, 1]", "[3]", "[0]", "[-1, -1]", "[100000, 100000]"],
    "eps": ["0", "0.00001", "1e-5", "-1"],
    "p": ["0.5", "0", "1", "2"],
    "value": ["0", "-inf", "1"],
    "n": ["2", "3", "0", "-1", "512", "100000"],
    "d": ["2", "4", "3", "0"],
    "h": ["1", "2", "3"],
    "base": ["10000", "2", "0", "-1"],
    "target": ["0", "1", "[0, 1]", "5"],
}


@st.composite
def step_expression(draw: Any, names: list[str], depth: int = 0) -> str:
    """An expression of the step language over ``names``, from the op table."""
    sigs = op_signatures()
    if depth >= 3 or draw(st.integers(0, 2)) == 0:
        atom = draw(st.sampled_from(["name", "name", "name", "number", "index", "list"]))
        if atom == "name" and names:
            name = draw(st.sampled_from(names))
            return name + draw(st.sampled_from(["", "", ".T", "ᵀ"]))
        if atom == "index" and names:
            return f"{draw(st.sampled_from(names))}[{draw(st.sampled_from(['0', '-1', ':, 1', '..., 0', '1:3', '5']))}]"
        if atom == "list":
            return "[" + ", ".join(draw(decimal()) for _ in range(draw(st.integers(1, 3)))) + "]"
        return draw(st.sampled_from([draw(decimal()), "inf", "-inf", "e", "pi"]))
    form = draw(st.sampled_from(["call", "call", "call", "binary", "unary", "paren"]))
    if form == "binary":
        op = draw(st.sampled_from(["+", "-", "*", "/", "@", "**", "^", "×", "∘", ".*", "·", "−"]))
        return f"{draw(step_expression(names, depth + 1))} {op} {draw(step_expression(names, depth + 1))}"
    if form == "unary":
        return f"-{draw(step_expression(names, depth + 1))}"
    if form == "paren":
        return f"({draw(step_expression(names, depth + 1))})"
    op = draw(st.sampled_from(sorted(sigs)))
    fewest, most, keywords = sigs[op]
    positional = draw(
        st.integers(fewest, min(most if most is not None else fewest + 3, fewest + 3))
    )
    params = list(keywords)
    args = []
    for k in range(positional):
        param = params[k] if k < len(params) else "x"
        if param in _PARAM_VALUES and draw(st.integers(0, 3)) > 0:
            args.append(draw(st.sampled_from(_PARAM_VALUES[param])))
        else:
            args.append(draw(step_expression(names, depth + 1)))
    for kw in keywords[positional:]:
        if kw in _PARAM_VALUES and draw(st.integers(0, 3)) == 0:
            args.append(f"{kw}={draw(st.sampled_from(_PARAM_VALUES[kw]))}")
    if draw(st.integers(0, 15)) == 0:
        args.append("bogus=1")
    return f"{op}({', '.join(args)})"


@st.composite
def given_tensor(draw: Any, name: str) -> str:
    ndim = draw(st.sampled_from([0, 1, 1, 2, 2, 2, 3, 4]))
    shape = [draw(st.integers(1, 3)) for _ in range(ndim)]
    size = int(np.prod(shape)) if shape else 1
    values = [
        draw(st.one_of(decimal(), decimal(), st.sampled_from(["-inf", "inf", "0"])))
        for _ in range(size)
    ]
    if ndim == 1:
        return f"{name} = {json.dumps(values, ensure_ascii=False)}"
    if ndim == 2:
        c = shape[1]
        rows = [" ".join(values[i * c : (i + 1) * c]) for i in range(shape[0])]
        return f'{name} = """\n' + "\n".join(rows) + '\n"""'
    rounded = ", rounded = true" if draw(st.integers(0, 5)) == 0 else ""
    return f"{name} = {{ shape = {json.dumps(shape)}, values = {toml_str(' '.join(values))}{rounded} }}"


@st.composite
def step_program(draw: Any) -> str:
    """A derivation of given tensors and steps (no model), with claims on its steps."""
    tensors = draw(
        st.lists(
            st.sampled_from(["X", "W", "b", "M", "K", "y"]), min_size=1, max_size=4, unique=True
        )
    )
    lines = [f"title = {toml_str(draw(text))}", "[tensors]"]
    lines += [draw(given_tensor(t)) for t in tensors]
    lines.append("[steps]")
    names = list(tensors)
    for i in range(draw(st.integers(1, 5))):
        step = f"s{i}"
        expr = draw(step_expression(names))
        if draw(st.integers(0, 9)) == 0:
            lines.append(
                f'"{step}[t]" = {{ expr = {toml_str(expr)}, t = [1, {draw(st.sampled_from(["2", "3", "10001"]))}] }}'
            )
            names.append(f"{step}[1]")
        else:
            lines.append(f"{step} = {toml_str(expr)}")
            names.append(step)
    for _ in range(draw(st.integers(0, 3))):
        lines.append(draw(claim([n for n in names if n not in tensors] or names, 2, 2)))
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- articles


@st.composite
def article_block(draw: Any, kind: str) -> str:
    n = draw(st.integers(1, 3))
    m = draw(st.integers(1, 3))
    nums = [[draw(decimal()) for _ in range(m)] for _ in range(n)]
    form = draw(
        st.sampled_from(
            [
                "prose", "arith", "bmatrix", "list", "table", "ascii", "heading", "hostile",
                "tensor", "inline", "display", "aligned", "environment", "fence", "code",
                "items", "quote", "comment",
            ]
        )
    )  # fmt: skip
    name = draw(
        st.sampled_from(["Q", "K", "W_Q", "A_1", "scores", "E", "x", "\\alpha", draw(label)])
    )
    if form == "prose":
        return f"The {draw(text)} is {nums[0][0]} and then {draw(text)}."
    if form == "arith":
        a, b = draw(decimal()), draw(decimal())
        op = draw(st.sampled_from(["+", "-", "\\times", "/", "·"]))
        return f"{name}: {a} {op} {b} = {draw(decimal())}"
    if form == "bmatrix":
        body = " \\\\ ".join(" & ".join(r) for r in nums)
        env = draw(st.sampled_from(["bmatrix", "pmatrix", "array", "matrix"]))
        wrap = "$$" if kind != "tex" else ""
        return f"{wrap}{name} = \\begin{{{env}}}{body}\\end{{{env}}}{wrap}"
    if form == "list":
        return f"{name} = [" + ", ".join("[" + ", ".join(r) + "]" for r in nums) + "]"
    if form == "table":
        head = "| " + " | ".join(f"c{j}" for j in range(m)) + " |\n|" + "---|" * m
        return head + "\n" + "\n".join("| " + " | ".join(r) + " |" for r in nums)
    if form == "ascii":
        return "\n".join(
            f"{name if i == 0 else ' ' * len(name)} | " + " ".join(r) + " |"
            for i, r in enumerate(nums)
        )
    if form == "tensor":
        return f"tensor([{', '.join('[' + ', '.join(r) + ']' for r in nums)}])"
    if form == "heading":
        if kind == "tex":
            return "\\section{" + draw(text) + "}"
        return "#" * draw(st.integers(1, 6)) + " " + draw(text)
    a, b, c = draw(decimal()), draw(decimal()), draw(decimal())
    op = draw(st.sampled_from(["+", "-", "\\times", "\\cdot", "/"]))
    if form == "inline":  # maths inside a sentence, in each notation the readers know
        left, right = draw(st.sampled_from([("$", "$"), ("\\(", "\\)"), ("$$", "$$")]))
        return f"So {left}{name} = {a} {op} {b} = {c}{right} here, and {left}{a}{right}."
    if form == "display":  # a display over several lines, a decimal comma, an unclosed one
        left, right = draw(st.sampled_from([("$$", "$$"), ("\\[", "\\]"), ("$$", "")]))
        comma = draw(st.sampled_from([a, a.replace(".", "{,}")]))
        return f"{left}\n{name} = {comma} {op} {b}\n= {c}\n{right}"
    if form == "aligned":
        env = draw(st.sampled_from(["aligned", "align", "align*", "gather", "split"]))
        rows = f"{name} &= {a} {op} {b} \\\\\n &= {c} \\\\[4pt]\n &\\approx {b}"
        body = f"\\begin{{{env}}}\n{rows}\n\\end{{{env}}}"
        return body if env.startswith(("align", "gather")) else f"$$\n{body}\n$$"
    if form == "environment":
        env = draw(st.sampled_from(["equation", "equation*", "displaymath", "bmatrix", "math"]))
        body = (
            " \\\\ ".join(" & ".join(r) for r in nums)
            if env == "bmatrix"
            else f"{a} {op} {b} = {c}"
        )
        return f"\\begin{{{env}}}\n{body}\n\\end{{{env}}}"
    if form == "fence":  # Python and what it printed, or hand arithmetic fenced as text
        lang = draw(st.sampled_from(["python", "py", "", "text", "pycon"]))
        code = draw(
            st.sampled_from(
                [
                    "x = np.array([[1.0, 2.0]])\nx",
                    f"y = {a} * {b}\nprint(y)",
                    f"mean = ({a} + {b}) / 2\n     = {c}",
                ]
            )
        )
        out = "\n```\n" + " ".join(nums[0]) + "\n```" if draw(st.booleans()) else ""
        fence = draw(st.sampled_from(["```", "~~~", "````"]))
        close = fence if draw(st.integers(0, 5)) else ""
        return f"{fence}{lang}\n{code}\n{close}{out}"
    if form == "code":
        return f"Then `{name} = {a} {op} {b} = {c}` and `e^{a} = {b}`."
    if form == "items":
        marker = draw(st.sampled_from(["-", "*", "1.", "+"]))
        return "\n".join(f"{marker} {name}_{i}: {' '.join(r)} = {r[0]}" for i, r in enumerate(nums))
    if form == "quote":
        return f"> {name} = [{', '.join(nums[0])}]\n> = {a}"
    if form == "comment":
        return (
            f"% {a} = {b}\n{name} = {c} % trailing {a}"
            if kind == "tex"
            else f"<!-- {a} -->\n{name} = {c}"
        )
    return draw(st.sampled_from(HOSTILE)) * draw(st.integers(1, 3))


@st.composite
def article(draw: Any) -> tuple[str, str]:
    """(suffix, content) of a Markdown, LaTeX, text or notebook article, or of a program
    (a marimo notebook, a C file) whose strings and comments are its prose."""
    kind = draw(st.sampled_from(["md", "md", "tex", "txt", "ipynb", "py", "c"]))
    blocks = draw(st.lists(article_block("tex" if kind == "tex" else "md"), min_size=1, max_size=6))
    if kind == "py":  # a marimo notebook: Markdown cells and code cells
        parts = ["import marimo\n\napp = marimo.App()\n"]
        for b in blocks:
            if draw(st.booleans()):
                body = "\n".join("        " + ln for ln in b.replace('"' * 3, "'" * 3).split("\n"))
                quotes = '"' * 3
                parts.append(
                    f"@app.cell\ndef _(mo):\n    mo.md(\n        r{quotes}\n{body}\n"
                    f"        {quotes}\n    )\n    return\n"
                )
            else:
                code = draw(st.one_of(st.sampled_from(_CODE), code_cell())) or "pass"
                body = "\n".join("    " + ln for ln in code.split("\n"))
                parts.append(f"@app.cell\ndef _():\n{body}\n    return\n")
        return kind, draw(mutated("\n\n".join(parts)))
    if kind == "c":  # a C file: block and line comments around code
        parts = []
        for i, b in enumerate(blocks):
            first = b.split("\n", 1)[0]
            star = b.replace("*/", "* /")
            parts.append(f'/*\n * {star}\n */\nconst char *s{i} = "{first[:20]}"; // {first}')
        return kind, draw(mutated("\n".join(parts)))
    if kind != "ipynb":
        body = "\n\n".join(blocks)
        if kind == "tex":
            body = "\\documentclass{article}\\begin{document}\n" + body + "\n\\end{document}\n"
        return kind, draw(mutated(body))
    cells: list[Any] = []
    for b in blocks:
        if draw(st.booleans()):
            cells.append({"cell_type": "markdown", "source": b.splitlines(keepends=True)})
        else:
            cells.append(
                {
                    "cell_type": "code",
                    "source": draw(st.one_of(st.sampled_from(_CODE), code_cell())),
                    "outputs": [
                        {
                            "output_type": draw(
                                st.sampled_from(["execute_result", "display_data", "stream"])
                            ),
                            "data": {"text/plain": b},
                            "text": b,
                            "name": "stdout",
                        }
                    ],
                }
            )
    if draw(st.integers(0, 4)) == 0:  # a cell of the wrong shape
        cells.insert(0, draw(st.sampled_from(BAD_CELLS)))
    doc: Any = {"cells": cells, "nbformat": 4, "nbformat_minor": 5}
    if draw(st.integers(0, 9)) == 0:  # the notebook itself of the wrong shape
        doc = draw(st.sampled_from(_bad_notebooks(cells)))
    ascii_only = draw(st.booleans())  # escapes (\u00e9, \n) move every column of the raw file
    text = json.dumps(doc, ensure_ascii=ascii_only, indent=draw(st.sampled_from([None, 1])))
    return kind, draw(mutated(text))


#: Code cells as a notebook has them, and as an attacker writes them: escape sequences and
#: invisible characters in untranslated code, strings and comments (the draft copies code
#: it does not translate into its comments).
_CODE = [
    "A",
    "print(A)",
    "x = 1",
    "display(W)",
    "",
    'import os\nos.system("\x1b]0;PWNED\x07")',
    'print("\x1b[2J")\nW = np.array([[0.5, 0.25], [1.0, 2.0]])\nprint(W)',
    'note = "\u202e\u2066\u200b\x9b31m\x7f"\nx = np.array([1.0, 2.0, 3.0])\nprint(np.exp(x))',
    "# \x1b]8;;http://x\x07link\x1b]8;;\x07\nA = [[1, 2], [3, 4]]\nprint(A)",
    "\u202eW = np.eye(2)\nprint(W)",
    "x = torch.tensor([0.1, 0.2])\nprint(torch.softmax(x, dim=0)) \x00",
]


@st.composite
def code_cell(draw: Any) -> str:
    """Translatable code with a hostile twist, or a literal too large to build."""
    how = draw(st.sampled_from(["softmax", "matmul", "huge", "deep"]))
    if how == "huge":  # literals count toward the entry limit before they are built
        n = draw(st.sampled_from([20_001, 40_000, 160_000]))
        shape = draw(st.sampled_from(["flat", "rows"]))
        if shape == "flat":
            body = ", ".join(["0.5"] * n)
        else:
            body = ", ".join("[" + ", ".join(["0.25"] * 400) + "]" for _ in range(n // 400))
        return f"import numpy as np\nW = np.array([{body}])\nprint(W.sum())"
    if how == "deep":
        depth = draw(st.sampled_from([60, 1000]))
        return "x = " + "[" * depth + "1" + "]" * depth + "\nprint(x)"
    evil = draw(st.sampled_from(HOSTILE[:10]))
    if how == "softmax":
        return (
            f"import numpy as np\n# {evil}\nx = np.array([1.0, 2.0, 3.0])\n"
            f"e = np.exp(x)\np = e / e.sum()\nprint({evil!r}, p)"
        )
    return f"import numpy as np\nA = np.array([[1.0, 2.0], [3.0, 4.0]])\nB = A @ A.T  # {evil}\nprint(B)"


#: Cells of the wrong shape: each field of the wrong type, and an unknown cell type.
BAD_CELLS: list[Any] = [
    1,
    "x",
    None,
    [],
    {"cell_type": "code", "source": 3},
    {"cell_type": "bogus", "source": "A = 1"},
    {"cell_type": "code", "source": "print(A)", "outputs": {"text": "1"}},
    {"cell_type": "code", "source": "print(A)", "outputs": [3]},
    {"cell_type": "code", "source": "print(A)", "outputs": [{"output_type": "stream", "text": 3}]},
    {"cell_type": "code", "source": "print(A)", "outputs": [{"output_type": "x", "data": []}]},
    {"cell_type": 7, "source": ["A"]},
    {"cell_type": "markdown", "source": ["a", 2, None]},
    {"source": "no type"},
]


def _bad_notebooks(cells: list[Any]) -> list[Any]:
    """Notebooks whose top level is of the wrong shape."""
    return [
        [],
        "cells",
        {"cells": {"0": cells}},
        {"cells": None},
        {"cells": cells, "nbformat": "4"},
        {"cells": cells, "metadata": []},
        {"worksheets": [{"cells": cells}], "nbformat": 3},
        {"nbformat": 4},
    ]


# ----------------------------------------------------------------------------- answers


@st.composite
def answers(draw: Any, blanks: list[str]) -> str:
    """An answer file for an exercise with these blank ids."""
    lines = [f"student = {draw(st.sampled_from([toml_str(draw(text)), '3', '[1]']))}"]
    table = draw(
        st.sampled_from(["[answers]", "[answers]", "[answers]", "answers = 1", "[answer]"])
    )
    lines.append(table)
    for b in blanks:
        if draw(st.integers(0, 4)) == 0:
            continue
        value = draw(
            st.one_of(
                decimal().map(toml_str),
                st.sampled_from(_ODD_NUMBERS).map(toml_str),
                decimal().map(
                    lambda s: (
                        s.replace("−", "-")
                        if re.fullmatch(r"-?\d+(\.\d+)?", s.replace("−", "-"))
                        else "1"
                    )
                ),
                st.sampled_from(["[1, 2]", "{ a = 1 }", "true", "1979-05-27", '""']),
                text.map(toml_str),
            )
        )
        lines.append(f"{b} = {value}")
    if draw(st.integers(0, 4)) == 0:
        lines.append(f'{draw(st.sampled_from(["b99", "x", "b1"]))} = "0.5"')
    return draw(mutated("\n".join(lines) + "\n"))


# ----------------------------------------------------------------------------- weight files


def _npy_bytes(header: str, data: bytes) -> bytes:
    h = header + " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode("latin-1") + data


@st.composite
def npy(draw: Any, name: str = "embed") -> bytes:
    """An .npy file: numpy's own, or a crafted header over short, long or missing data."""
    if draw(st.booleans()):
        dtype = draw(st.sampled_from(["<f4", "<f8", "<f2", ">f4", "<i8", "<c16", "|b1", "O"]))
        shape = draw(st.sampled_from([(2, 2), (2,), (1, 2), (2, 2, 2), (), (3, 2), (2, 3)]))
        if dtype == "O":
            a = np.empty(shape, dtype=object)
            a.fill(1)
        else:
            entry = st.one_of(
                st.floats(-4, 4, width=32), st.sampled_from([float("nan"), float("inf"), 1e300])
            )
            vals = draw(st.lists(entry, min_size=8, max_size=8))
            a = (
                np.array(vals[: int(np.prod(shape))] if shape else vals[0])
                .astype(dtype)
                .reshape(shape)
            )
        buf = BytesIO()
        np.save(buf, a, allow_pickle=True)
        return buf.getvalue()
    shape = draw(
        st.sampled_from(
            [
                "(2, 2)",
                "(-2, -3)",
                "(-1, 2)",
                "(0, 2)",
                "(100000, 100000)",
                "(2**40,)",
                "'x'",
                "(2, 2, 2, 2, 2)",
            ]
        )
    )
    descr = draw(st.sampled_from(["'<f8'", "'<f4'", "'<U4'", "[('a', '<f8')]", "'float32'", "1"]))
    header = f"{{'descr': {descr}, 'fortran_order': {draw(st.sampled_from(['False', 'True', '1']))}, 'shape': {shape}, }}"
    data = b"\x00" * draw(st.sampled_from([0, 8, 32, 1000]))
    raw = _npy_bytes(header, data)
    if draw(st.integers(0, 5)) == 0:
        raw = raw[: draw(st.integers(0, len(raw)))]
    return raw


@st.composite
def npz(draw: Any) -> bytes:
    buf = BytesIO()
    method = draw(st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]))
    with zipfile.ZipFile(buf, "w", method) as z:
        for _ in range(draw(st.integers(0, 3))):
            member = draw(
                st.sampled_from(
                    [
                        "embed.npy",
                        "l0.h0.W_Q.npy",
                        "x.npy",
                        "embed.txt",
                        "../embed.npy",
                        "dir/",
                        "embed",
                    ]
                )
            )
            z.writestr(member, draw(npy()))
        if draw(st.integers(0, 5)) == 0:  # a small bomb: 20 MB of zeros declared for one array
            with z.open("bomb.npy", "w") as f:
                f.write(
                    _npy_bytes(
                        "{'descr': '<f8', 'fortran_order': False, 'shape': (2500, 1000), }", b""
                    )
                )
                f.write(b"\x00" * 20_000_000)
    raw = buf.getvalue()
    if draw(st.integers(0, 5)) == 0:
        raw = raw[: draw(st.integers(0, len(raw)))]
    return raw


@st.composite
def safetensors(draw: Any) -> bytes:
    entries: dict[str, Any] = {}
    data = b""
    for name in draw(
        st.lists(
            st.sampled_from(["embed", "l0.h0.W_Q", "wte", "__metadata__"]), max_size=3, unique=True
        )
    ):
        if name == "__metadata__":
            entries[name] = {"format": "pt"}
            continue
        dtype = draw(st.sampled_from(["F32", "F64", "F16", "BF16", "I64", "F8", 3]))
        shape = draw(st.sampled_from([[2, 2], [2], [-1, 2], [0], [2, 2, 2], "x", [2**40, 2]]))
        n = draw(st.sampled_from([16, 32, 8, 0]))
        begin = len(data)
        offsets = draw(st.sampled_from([[begin, begin + n], [begin + n, begin], [0, 2**50], "x"]))
        entries[name] = {"dtype": dtype, "shape": shape, "data_offsets": offsets}
        data += bytes(draw(st.binary(min_size=n, max_size=n)))
    header = json.dumps(entries).encode()
    if draw(st.integers(0, 5)) == 0:
        header = draw(st.sampled_from([b"{", b"[]", b"\xff\xfe", b"{" * 5000]))
    length = draw(st.sampled_from([len(header), len(header), 2**63, 0, len(header) + 100]))
    return struct.pack("<Q", length) + header + data


WEIGHTS_DERIVATION = """title = "weights from a file"
weights = {ref}
[model]
architecture = "attention"
d_model = 2
n_heads = 1
mask = "none"
[[model.layers]]
[[model.layers.heads]]
W_Q = "identity"
W_K = "identity"
W_V = "identity"
[[claims]]
label = "x"
step = "x"
printed = "1 0\\n0 1"
"""


@st.composite
def weights_case(draw: Any) -> tuple[str, bytes, str]:
    """(file name, bytes, derivation text naming it)."""
    suffix = draw(st.sampled_from([".npy", ".npz", ".safetensors"]))
    content = draw({".npy": npy(), ".npz": npz(), ".safetensors": safetensors()}[suffix])
    name = "embed" + suffix if suffix == ".npy" else "w" + suffix
    ref = draw(
        st.sampled_from(
            [
                toml_str(name),
                toml_str(name),
                f'{{ file = {toml_str(name)}, map = {{ embed = "wte" }} }}',
                toml_str("../" + name),
                toml_str("/dev/zero"),
                toml_str(""),
                "3",
            ]
        )
    )
    return name, content, WEIGHTS_DERIVATION.format(ref=ref)


# ----------------------------------------------------------------------------- folders

#: A derivation that checks (relu([1, -1]) = [1, 0]).
SMALL_DERIVATION = """title = "small"
[model]
architecture = "none"
[[model.standalone]]
name = "r"
op = "relu"
input = "1 -1"
[[claims]]
label = "r"
step = "r"
printed = "1 0"
"""


@st.composite
def folder_case(draw: Any) -> tuple[dict[str, bytes], list[str]]:
    """(files by path, the command's arguments): a folder of derivations with files over
    each cap, not UTF-8, not TOML, or not derivations among them, checked as a folder
    search, as the pre-commit hook names them (``--only-derivations``), or one by one."""
    from symtf import limits

    files: dict[str, bytes] = {"posts/ok.toml": SMALL_DERIVATION.encode()}
    bad = draw(
        st.lists(
            st.sampled_from(
                ["over-cap", "not-utf8", "not-toml", "no-claims", "article-over-cap", "deep"]
            ),
            min_size=1,
            max_size=3,
            unique=True,
        )
    )
    wrong = SMALL_DERIVATION.replace('printed = "1 0"', 'printed = "1 1"')  # a wrong claim
    for b in bad:
        if b == "over-cap":  # a wrong claim behind the cap: never "skipped" in silence
            pad = "# " + "x" * 98 + "\n"
            extra = limits.MAX_FILE_BYTES // len(pad) + draw(st.integers(1, 3))
            files["posts/big.toml"] = (wrong + pad * extra).encode()
        elif b == "not-utf8":
            files["posts/latin1.toml"] = wrong.replace("small", "smäll").encode("latin-1")
        elif b == "not-toml":
            files["posts/broken.toml"] = (wrong + "\n[[claims]\n").encode()
        elif b == "no-claims":
            files["posts/pyproject.toml"] = b"[tool.symtf]\ntimeout = 5\n"
        elif b == "article-over-cap":
            line = b"The score is 0.5 and the weight is 0.25.\n\n"
            files["posts/long.md"] = line * (limits.MAX_ARTICLE_BYTES // len(line) + 2)
        else:
            files["posts/deep/nested/also.toml"] = wrong.encode()
    paths = sorted(p for p in files if p.endswith(".toml"))
    how = draw(st.sampled_from(["folder", "hook", "each", "article"]))
    if how == "folder":
        argv = ["check", "posts"]
    elif how == "hook":
        argv = ["check", "--only-derivations", *paths]
    elif how == "each":
        argv = ["check", *paths]
    else:
        articles = [p for p in files if p.endswith(".md")]
        argv = ["check", *articles] if articles else ["check", "posts"]
    fmt = draw(st.sampled_from([[], [], ["--format", "json"], ["--format", "junit"]]))
    return files, [*argv, *fmt]


# ----------------------------------------------------------------------------- the sandbox


@dataclass(frozen=True)
class Outcome:
    """What one fuzzed command did (see ``tests/fuzz_server.py``)."""

    argv: list[str]
    code: int | None
    signal: int | None
    cpu: float
    peak_mb: float
    stdout: str
    stderr: str
    hung: bool


class Sandbox:
    """A fork server running symtf commands under resource limits (one per test module)."""

    def __init__(self) -> None:
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "SYMTF_DEBUG": ""}
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("fuzz_server.py"))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )

    def run(
        self, argv: list[str], cwd: Path, *, cpu: int = CPU_LIMIT, wall: float = 600
    ) -> Outcome:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        req = {"argv": argv, "cwd": str(cwd), "cpu": cpu, "mem_mb": MEMORY_LIMIT_MB, "wall": wall}
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the fuzz server died")
        d = json.loads(line)
        return Outcome(
            argv,
            d["code"],
            d["signal"],
            d["cpu"],
            d["peak_mb"],
            d["stdout"],
            d["stderr"],
            d["hung"],
        )

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def assert_user_outcome(o: Outcome, what: str = "") -> None:
    """Exit 0, 1 or 2 within the limits, with no traceback and no internal error."""
    where = f"{' '.join(o.argv)[:300]}\n{what[:3000]}"
    assert not o.hung, f"hung (no CPU used, killed by the safety net): {where}"
    assert o.signal is None, (
        f"killed by signal {o.signal} (24 = the CPU limit): {where}\n{o.stderr[-1500:]}"
    )
    assert o.code in (0, 1, 2), f"exit {o.code}: {where}\n{o.stderr[-2000:]}"
    assert "Traceback" not in o.stderr and "internal error" not in o.stderr, (
        f"{where}\n{o.stderr[-3000:]}"
    )
    assert o.peak_mb < PEAK_LIMIT_MB, f"peak memory {o.peak_mb:.0f} MB: {where}"
    raw = raw_controls(o.stdout + o.stderr)
    assert not raw, f"control characters reached the terminal raw {raw[:5]}: {where}"
    if o.code == 2:
        assert o.stderr.startswith(("symtf: error: ", "usage: ")) or "symtf: error: " in o.stderr, (
            f"exit 2 without an error message: {where}\n{o.stderr[-1000:]}"
        )


#: What ``check`` says when it cannot read a file: never of what ``draft`` wrote.
READ_FAILURES = (
    "not valid TOML",
    "expected at most",
    "characters, found",
    "bytes a derivation",
    "not UTF-8",
)


def assert_reads_back(o: Outcome, draft: str) -> None:
    """``check`` read the draft ``draft`` wrote: whatever its verdicts, not a read failure."""
    if o.code == 2:
        assert not any(m in o.stderr for m in READ_FAILURES), (
            f"check could not read what draft wrote:\n{o.stderr[-2000:]}\n{draft[:3000]}"
        )


def raw_controls(text: str) -> list[str]:
    """Characters a terminal acts on or hides: C0 (but newline and tab), DEL, C1, the
    bidirectional and invisible format characters, tag characters, line separators."""
    bad = []
    for ch in text:
        n = ord(ch)
        control = (n < 0x20 and ch not in "\n\t") or 0x7F <= n < 0xA0
        bidi = 0x202A <= n <= 0x202E or 0x2066 <= n <= 0x2069 or n in (0x200E, 0x200F, 0x061C)
        hidden = n in (0x200B, 0x2060, 0xFEFF, 0x2028, 0x2029) or 0xE0000 <= n <= 0xE007F
        if control or bidi or hidden:
            bad.append(ch)
    return bad


__all__ = [
    "BAD_CELLS",
    "READ_FAILURES",
    "Outcome",
    "Sandbox",
    "answers",
    "article",
    "assert_reads_back",
    "assert_user_outcome",
    "bundled_derivation",
    "code_cell",
    "folder_case",
    "mutated",
    "op_signatures",
    "raw_controls",
    "step_program",
    "template_derivation",
    "weights_case",
]


# ----------------------------------------------------------------------------- typed programs


def _spelled() -> dict[str, str]:
    """Ops a step reaches by syntax, not by name, as format strings (``"({0} @ {1})"``),
    from the first spelling the registry gives each (``a @ b; a × b``). Indexing, whose
    spelling is a pattern rather than a formula, is left out."""
    from symtf.ops import REGISTRY

    out = {}
    for name, op in REGISTRY.items():
        if op.public or not op.spelling:
            continue
        form = op.spelling.split(";")[0].strip()
        if "[" in form:
            continue
        for k, p in enumerate(op.tensor_args):
            form = re.sub(rf"\b{p.name}\b", "{" + str(k) + "}", form)
        out[name] = form if form.endswith(".T") else f"({form})"
    return out


_SPELLED = _spelled()

#: Shapes of the given tensors of a typed program.
_GIVEN_SHAPES = [(), (2,), (3,), (2, 2), (2, 3), (3, 2), (3, 3), (2, 2, 3)]


def _registry_ops() -> dict[str, Any]:
    """The ops a typed program may call: every op a step can write, from the registry."""
    from symtf.ops import REGISTRY

    return {
        n: op
        for n, op in REGISTRY.items()
        if (op.public or n in _SPELLED)
        and all(p.kind != "value" or not p.required for p in op.signature)
    }


def _shape_rule_fits(op: Any, args: list[Any], params: dict[str, Any]) -> tuple[int, ...] | None:
    """The op's shape for these argument shapes (``None`` when the registry's rule refuses)."""
    from symtf.errors import SymtfError

    try:
        out = op.shape(*args, **params)
    except (SymtfError, ValueError, TypeError, IndexError, KeyError, ZeroDivisionError):
        return None
    if out is None or any(not isinstance(n, int) or n < 1 for n in out) or len(out) > 4:
        return None
    if int(np.prod(out)) > 64:
        return None
    return tuple(out)


def _plain_value(rng: Any, p: Any, ndim: int) -> tuple[str, Any] | None:
    """A value for a plain parameter, as written in the step and as the shape rule takes it."""
    if p.kind == "bool":
        v = rng.random() < 0.5
        return ("true" if v else "false"), v
    if p.kind == "axis" or (p.kind == "int" and p.name in ("axis", "dim")):
        if ndim == 0:
            return None
        a = rng.randrange(-ndim, ndim)
        return str(a), a
    if p.kind == "int":
        lo = 0 if p.lo is None else p.lo
        v = rng.randint(max(lo, 0), max(lo, 0) + 3)
        return str(v), v
    if p.kind == "choice":
        v = rng.choice(list(p.choices))
        return json.dumps(v) if isinstance(v, str) else str(v), v
    if p.kind == "number":
        v = rng.choice([0, 1, 2, 3])
        from fractions import Fraction

        return str(v), Fraction(v)
    return None


def typed_program(rng: Any) -> str:
    """A derivation whose steps the registry's shape rules accept: random op chains that
    evaluate (given tensors of small decimals, zeros and ties), with printed claims on
    some steps. ``rng`` is a :class:`random.Random`; the same seed gives the same file."""
    table = _registry_ops()
    names = list(table)
    shapes: dict[str, tuple[int, ...]] = {}
    lines = ['title = "typed program"', "[tensors]"]
    for name in rng.sample(["X", "W", "b", "K", "y"], rng.randint(1, 3)):
        shape = rng.choice(_GIVEN_SHAPES)
        size = int(np.prod(shape)) if shape else 1
        values = [
            rng.choice(["0", "1", "-1", "0.5", "2", "-0.25", "1.5", "3", "0.125", "-2"])
            for _ in range(size)
        ]
        lines.append(
            f"{name} = {{ shape = {json.dumps(list(shape))}, values = {toml_str(' '.join(values))} }}"
        )
        shapes[name] = shape
    given = list(shapes)
    lines.append("[steps]")
    steps: list[str] = []
    for k in range(rng.randint(1, 6)):
        for _attempt in range(40):
            op_name = rng.choice(names)
            op = table[op_name]
            texts, arg_shapes, params = [], [], {}
            ok = True
            for p in op.step_params:
                if p.is_tensor:
                    if p.name == op.variadic:
                        picked = [rng.choice(list(shapes)) for _ in range(rng.randint(1, 3))]
                        texts.append(", ".join(picked))
                        arg_shapes.append([shapes[n] for n in picked])
                        continue
                    if not p.required and rng.random() < 0.7:
                        arg_shapes.append(None)
                        continue
                    pick = rng.choice(list(shapes))
                    text = pick
                    if not p.required:
                        text = f"{p.name}={pick}"
                    texts.append(text)
                    arg_shapes.append(shapes[pick])
                    continue
                if p.required or rng.random() < 0.4:
                    nd = (
                        len(arg_shapes[0]) if arg_shapes and isinstance(arg_shapes[0], tuple) else 2
                    )
                    if p.kind == "ints" and p.name == "shape":
                        base = (
                            arg_shapes[0]
                            if arg_shapes and isinstance(arg_shapes[0], tuple)
                            else (2,)
                        )
                        size = int(np.prod(base)) if base else 1
                        dims = rng.choice([[size], [1, size], [size, 1], [-1]])
                        texts.append(
                            f"{p.name}={json.dumps(dims)}"
                            if not p.required or op.variadic
                            else json.dumps(dims)
                        )
                        params[p.name] = dims
                        continue
                    if p.kind == "ints":
                        perm = list(range(nd))
                        rng.shuffle(perm)
                        texts.append(f"{p.name}={json.dumps(perm)}")
                        params[p.name] = perm
                        continue
                    v = _plain_value(rng, p, nd)
                    if v is None:
                        ok = p.required is False
                        if not ok:
                            break
                        continue
                    texts.append(f"{p.name}={v[0]}")
                    params[p.name] = v[1]
            if not ok:
                continue
            out = _shape_rule_fits(op, arg_shapes, params)
            if out is None and not op.signature:
                continue
            if out is None:
                continue
            if op_name in _SPELLED:
                plain = [t for t in texts if "=" not in t]
                if len(plain) != _SPELLED[op_name].count("{"):
                    continue
                expr = _SPELLED[op_name].format(*plain)
            else:
                expr = f"{op_name}({', '.join(texts)})"
            step = f"s{k}"
            lines.append(f"{step} = {toml_str(expr)}")
            shapes[step] = out
            steps.append(step)
            break
    scalars = [s for s in steps if shapes[s] == ()]
    if scalars and rng.random() < 0.5:
        wrt = rng.choice(given)
        call = f"grad({rng.choice(scalars)}, {wrt})"
        lines.append(f"g = {toml_str(call)}")
        steps.append("g")
        shapes["g"] = shapes[wrt]
        if rng.random() < 0.5:  # the same gradient inside an update: one node, read twice
            lines.append(f"u = {toml_str(f'{wrt} - 1/10 * {call} + 0 * g')}")
            steps.append("u")
            shapes["u"] = shapes[wrt]
    claimed = [s for s in steps if len(shapes[s]) <= 2]
    for step in rng.sample(claimed, min(len(claimed), rng.randint(0, 3))):
        shape = shapes[step]
        rows, cols = (1, 1) if not shape else ((1, shape[0]) if len(shape) == 1 else shape)
        printed = "\n".join(
            " ".join(
                rng.choice(["0", "1", "-1", "0.5", "0.2689", "0.7311", "1.0000", "-inf", "0.333"])
                for _ in range(cols)
            )
            for _ in range(rows)
        )
        extra = rng.choice(
            ["", "", 'computed_in = "float32"\n', 'rounding = "any"\n', "decimals = 2\n"]
        )
        lines.append(
            f'[[claims]]\nlabel = "{step}"\nstep = "{step}"\n{extra}printed = """\n{printed}\n"""'
        )
    return "\n".join(lines) + "\n"
