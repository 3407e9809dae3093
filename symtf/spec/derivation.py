"""Derivation files: TOML → a frozen, validated :class:`Derivation`.

A derivation file is data only. Nothing in it is executed, evaluated or passed
to ``sympify``; every number is read from its text into an exact rational, and
every error names the file, the key, what was expected and what was found.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sympy

from symtf import limits
from symtf.errors import SpecError
from symtf.numbers import (
    DEFAULT_ROUNDING,
    ROUNDING_MODES,
    Printed,
    claim_grid,
    is_label,
    on_grid,
    parse_printed,
    protect_thousands_separators,
    split_printed,
    strip_labels,
    toml_float,
)
from symtf.numbers import join_infinities as _join_infinities
from symtf.numbers import split_rows as _split_rows
from symtf.numbers import toml_kind as _kind
from symtf.place import Place

# The model's dataclasses and the typed reader live in symtf.spec.model and symtf.spec.tomlread (so
# that seq2seq and generate need not import this module); their names stay importable here.
from symtf.spec.model import (
    ACTIVATIONS,
    ARCHITECTURES,
    HEAD_PROJECTIONS,
    LAYER_PROJECTIONS,
    MASKS,
    NORM_KINDS,
    NORMS,
    POSITIONALS,
    ROPE_PAIRS,
    SOFTMAX_AXES,
    STANDALONE_OPS,
    VARIANCES,
    Head,
    Layer,
    Model,
    Standalone,
    parse_generate,
)
from symtf.spec.places import read_places
from symtf.spec.symbols import NAME as SYMBOL_NAME
from symtf.spec.symbols import SymbolSpec, check_used, make, reading
from symtf.spec.symbols import parse as parse_table
from symtf.spec.toml_lines import line_of, locate, string_lines
from symtf.spec.tomlread import MAX_DIM, _cell, _Reader, _vector, matrix

if TYPE_CHECKING:  # the step graph is imported only by files that have steps
    import symtf.spec.steps as graph_spec
    from symtf.spec.seq2seq import Seq2SeqModel

MAX_FILE_BYTES = limits.MAX_FILE_BYTES
#: Set while a derivation with a weights file is read: dimensions may then exceed MAX_DIM.
_FILE_WEIGHTS: ContextVar[bool] = ContextVar("symtf_file_weights", default=False)


def _max_dim() -> int:
    """The largest dimension allowed: MAX_DIM, or symtf.spec.weights.MAX_FILE_DIM with a weights file."""
    if not _FILE_WEIGHTS.get():
        return MAX_DIM
    from symtf.spec.weights import MAX_FILE_DIM

    return MAX_FILE_DIM


#: The step of a draft claim that is not mapped yet.
UNMAPPED = "?"
_STEP = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$")
_STEP_NODE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*(\[-?\d+\])?$")  # also state[2]

#: Claim kinds checked by symtf.checking.assertions (``assert = "..."``).
ASSERTIONS = ("tokens", "teacher-forcing")
REDUCTIONS = ("max", "min", "sum")


@dataclass(frozen=True)
class Claim:
    """Numbers an article printed, and where in the computation they belong.

    Attributes:
        label: The article's own name for it (unique in the file).
        where: ``file: claims[i]`` for messages.
        step: Canonical step, or ``None`` for an expression claim.
        printed: The printed entries, row by row (a scalar is ``((p,),)``).
        word: For ``next_token`` and ``rank`` claims, the printed token.
        row, col, index: Which part of the step is printed.
        rounding: Rounding mode the article is held to.
        reduce: ``max``/``min``/``sum`` of the selected entries, or ``None``.
        rank: For a ``rank`` claim, the position in the ranking (1 = largest).
        expression: The displayed arithmetic, for an expression claim.
        stands_for: Literal text → trace reference it stands for.
        computed_in: The float format the article computed this claim in, if stated.
        feeds: Whether this is the printed version later steps used (replay prefers it).
        given: A number the article states rather than computes (a constant it sets,
            ``w = 0.2``): never checked, counted among the inputs; a displayed line that
            repeats it reads it as written.
        restates: The label of the claim whose printed number this one repeats
            (``5.490`` written again in ``3.320 / 5.490``): when that number is off, this
            one is inherited from it, not a mistake of its own.
        match_literals: Whether undeclared literals may be read as exact values.
        note: Free text.
    """

    label: str
    where: str
    step: str | None
    printed: tuple[tuple[Printed, ...], ...] = ()
    word: str | None = None
    row: int | None = None
    col: int | None = None
    index: tuple[int, int] | None = None
    rounding: str = "nearest"  # an exact tie accepts either neighbour
    reduce: str | None = None
    rank: int | None = None
    expression: str | None = None
    stands_for: Mapping[str, str] = field(default_factory=dict)
    note: str = ""
    assertion: str | None = (
        None  # ``assert = "tokens" | "teacher-forcing"`` (symtf.checking.assertions)
    )
    at: tuple[int, ...] | None = None  # leading indices of a 3-D/4-D step (the 2-D slice printed)
    #: The article's float format for this claim (symtf.checking.framework).
    computed_in: str | None = None
    feeds: bool = False  # the printed version later steps used (symtf.checking.diagnose replay)
    given: bool = False  # a constant the article sets: an input, never checked
    restates: str | None = None  # the label of the claim whose printed number this repeats
    match_literals: bool = True  # False for stands_for = "none" (symtf.checking.displayed)
    source_line: int | None = None  # line in the article (drafts written by ``symtf extract``)
    #: Where each printed entry stands in the article, row by row (``places``; drafts).
    places: tuple[Place, ...] = ()
    line: int | None = None  # 1-based line of the claim's ``[[claims]]`` header, if it has one
    #: Line of each printed row when the rows could be told apart, else of ``printed =``.
    printed_lines: tuple[int, ...] = ()

    @property
    def unmapped(self) -> bool:
        """A draft's claim whose step is not known yet (``step = "?"``)."""
        return self.step == UNMAPPED


@dataclass(frozen=True)
class Derivation:
    """A worked example: a model, its input and the article's printed claims."""

    path: str
    title: str
    source: str
    model: Model | Seq2SeqModel
    tokens: tuple[int, ...]
    claims: tuple[Claim, ...]
    #: Given tensors (``[tensors]``) and user steps (``[steps]``, unrolled), see symtf.graph.
    tensors: tuple[graph_spec.GivenTensor, ...] = ()
    steps: tuple[graph_spec.StepNode, ...] = ()
    computed_in: str | None = None  # the article's float format (symtf.checking.framework)
    rounded_inputs: Any = (
        None  # symtf.backends.rounded.RoundedInputs: inputs known to their print only
    )
    draft: bool = False  # ``draft = true``: written by ``symtf extract``, steps still to map
    #: Conventions applied as rewrites of the template's graph nodes: ``(name, scope)``
    #: pairs (symtf.graph.conventions, symtf.graph.rewrite); never read from a file.
    rewrites: tuple[tuple[str, str], ...] = ()
    #: Line of each table and key in the file (``claims[3].printed`` -> 170), see symtf.spec.toml_lines.
    lines: Mapping[str, int] = field(default_factory=dict, compare=False, repr=False)
    #: Inputs written with a decimal point, by the name ``rounded_inputs`` would give them
    #: (symtf.checking.causes asks whether their rounding explains an off number).
    written_inputs: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    #: The ``[symbols]`` table: each declared symbol's assumption, range and value.
    symbols: Mapping[str, SymbolSpec] = field(default_factory=dict)
    #: A draft's claims in the article's order, ``step = "?"`` ones included, when only the
    #: placed ones are checked (symtf.checking.draft): a displayed line's literal that
    #: repeats a printed number no step places is read as that rounded print
    #: (symtf.checking.repeated).
    drafted: tuple[Claim, ...] = field(default=(), compare=False, repr=False)


# ----------------------------------------------------------------------------- reading


def _printed_rows(v: Any, where: str) -> tuple[tuple[Printed, ...], ...]:
    if isinstance(v, str):
        if len(v) > 100_000:
            raise SpecError(
                f"{where}: expected printed values of at most 100,000 characters, found {len(v)}"
            )
        pasted = split_printed(v, where)  # a numpy/torch/TF print, or a nested list
        if pasted is None:  # rows text, perhaps a table with labels and 1,234 groupings
            cells = strip_labels(
                _split_rows(_join_infinities(protect_thousands_separators(v))), where
            )
        else:
            cells = pasted[0]
        if pasted is not None and pasted[1]:
            cells = [[_Shortened(c) for c in r] for r in cells]
    elif isinstance(v, list) and all(isinstance(r, list) for r in v):
        cells = v
    elif isinstance(v, list):
        cells = [v]
    else:
        raise SpecError(f"{where}: expected the printed value(s) as a string, found {_kind(v)}")
    if not cells or not cells[0]:
        raise SpecError(f"{where}: expected printed values, found none")
    m = len(cells[0])
    out = []
    for i, r in enumerate(cells):
        if len(r) != m:
            raise SpecError(f"{where}: ragged rows: row 0 has {m} entries, row {i} has {len(r)}")
        out.append(tuple(_printed_cell(c, f"{where}[{i}][{j}]") for j, c in enumerate(r)))
    return tuple(out)


class _Shortened(str):
    """A cell of a pasted array print: numpy drops its trailing zeros (``0.54`` is ``0.540``)."""


def _printed_cell(c: Any, where: str) -> Printed:
    if isinstance(c, str) and is_label(c):
        raise SpecError(
            f"{where}: expected a printed number, found the label {c!r} (a table's header row and "
            "row labels are read only before the numbers)"
        )
    p = parse_printed(c, where=where)
    return replace(p, shortened=True) if isinstance(c, _Shortened) else p


# ----------------------------------------------------------------------------- loading


def load(path: str | Path) -> Derivation:
    """Read and validate a derivation file, or the bundled derivation of that name.

    Args:
        path: A derivation file; a name such as ``"i_love_ai"`` that is no file
            here reads the bundled example of that name.

    Raises:
        SpecError: With the file, the key, what was expected and what was found.
    """
    from symtf import bundled, files

    if not Path(path).exists():
        path = bundled.named(str(path)) or path
    name = str(path)
    # At most MAX_FILE_BYTES are read; devices and FIFOs are refused unread.
    return loads(files.read_text(path, MAX_FILE_BYTES, name=name, what="a derivation"), name)


def loads(text: str, name: str = "<string>") -> Derivation:
    """Validate a derivation given as TOML text; ``name`` is used in messages."""
    if not text.strip():
        raise SpecError(
            f"{name}: expected a derivation (title, [model], [[claims]]), found an empty file"
        )
    try:
        data = tomllib.loads(text, parse_float=toml_float)
    except ValueError as e:  # TOMLDecodeError, or an integer of more than 4300 digits
        raise SpecError(f"{name}: not valid TOML ({e})") from None
    except RecursionError:
        raise SpecError(f"{name}: not valid TOML (nested too deeply)") from None
    lines = locate(text)
    try:
        d = _with_weights(data, name, text)
    except SpecError as e:  # every message names the file, and the line where it is known
        msg = str(e) if str(e).startswith(f"{name}: ") else f"{name}: {e}"
        raise SpecError(with_line(msg, name, lines)) from None
    rows = text.splitlines()
    claims = tuple(
        dataclasses.replace(
            c, line=line_of(lines, f"claims[{i}]"), printed_lines=_printed_lines(c, i, rows, lines)
        )
        for i, c in enumerate(d.claims)
    )
    return dataclasses.replace(d, claims=claims, lines=lines)


def _printed_lines(
    claim: Claim, i: int, rows: list[str], lines: Mapping[str, int]
) -> tuple[int, ...]:
    """One line per printed row of a claim, or the line of its ``printed`` key."""
    key = lines.get(f"claims[{i}].printed")
    if key is None:
        return ()
    per_row = [
        n for n, part in string_lines(rows, key) for _ in _split_rows(_join_infinities(part))
    ]
    return tuple(per_row) if per_row and len(per_row) == len(claim.printed) else (key,)


def with_line(message: str, name: str, lines: Mapping[str, int]) -> str:
    """``message`` with ``(line N)`` added when it starts with ``name: KEY`` and KEY has a line.

    The note ends the message's first line (a parse error may go on with the
    expression and a caret under the fault).

    Args:
        message: An error message, ``name: key: what was expected, what was found``.
        name: The file's name as it starts the message.
        lines: The file's line map (:func:`symtf.spec.toml_lines.locate`).
    """
    prefix = f"{name}: "
    first, newline, rest = message.partition("\n")
    if not message.startswith(prefix) or re.search(r"\(line \d+\)$", first):
        return message
    n = line_of(dict(lines), first[len(prefix) :])
    return message if n is None else f"{first} (line {n}){newline}{rest}"


def _decoder_generation(raw: Any, model: Model, tokens: tuple[int, ...], name: str) -> Model:
    """A decoder-only model's ``[generate]`` table: decode after the prompt."""
    if raw is None:
        return model
    if model.architecture != "decoder" or (model.unembed is None and not model.tied):
        raise SpecError(f"{name}: generate: needs a decoder with an unembedding (model.unembed)")
    if not isinstance(raw, dict):
        raise SpecError(f"{name}: generate: expected a table, found {_kind(raw)}")
    raw = dict(raw)
    stop_word = raw.pop("stop", None)
    stop = None
    if stop_word is not None:
        if stop_word not in model.vocab:
            raise SpecError(
                f"{name}: generate.stop: expected a word of model.vocab, found {_kind(stop_word)}"
            )
        stop = model.vocab.index(stop_word)
    room = None
    if model.pos is not None and model.positional in ("given", "learned"):
        room = model.pos.rows - len(tokens)
        if room < 1:
            raise SpecError(
                f"{name}: generate: model.pos has {model.pos.rows} rows, no room to generate after "
                f"{len(tokens)} prompt tokens"
            )
    g = parse_generate(raw, name, room)
    if g is not None and g.strategy == "sample" and g.max_len == 0:
        raise SpecError(f"{name}: generate.max_len: required for sampling after a prompt")
    return dataclasses.replace(model, generate=g, stop=stop)


def _with_weights(data: dict[str, Any], name: str, text: str | None = None) -> Derivation:
    """Fill the model from a ``weights`` file (symtf.spec.weights) if the data names one."""
    if not isinstance(data, dict) or data.get("weights") is None:
        return _derivation(data, name, text)
    from symtf.spec.weights import inject

    inject(data, data["weights"], name)
    token = _FILE_WEIGHTS.set(True)
    try:
        return _derivation(data, name, text)
    finally:
        _FILE_WEIGHTS.reset(token)


def _derivation(data: dict[str, Any], name: str, text: str | None = None) -> Derivation:
    """The derivation, its symbols made as ``[symbols]`` declares them (symtf.spec.symbols)."""
    declared = parse_table(data.get("symbols") if isinstance(data, dict) else None, name)
    with reading(declared) as state:
        d = _read(data, name, text)
    check_used(state, name)
    return dataclasses.replace(d, symbols=declared) if declared else d


def _read(data: dict[str, Any], name: str, text: str | None = None) -> Derivation:
    top = _Reader(data, "")
    top.where = ""
    title = top.string("title")
    if title is None:
        raise SpecError(f"{name}: title: required key is missing")
    source = top.string("source", "") or ""
    top.get("symtf")
    top.get("weights")  # read by _with_weights
    top.get("symbols")  # read by _derivation
    tensors_raw, steps_raw = top.get("tensors"), top.get("steps")
    raw_claims = data.get("claims")
    arithmetic_only = (
        isinstance(raw_claims, list)
        and bool(raw_claims)
        and all(isinstance(c, dict) and "step" not in c and "assert" not in c for c in raw_claims)
    )  # displayed arithmetic alone reads no model
    model_raw = (
        top.require("model")
        if tensors_raw is None and steps_raw is None and not arithmetic_only
        else top.get("model")
    )
    tensors: tuple[Any, ...] = ()
    model: Model | Seq2SeqModel
    tokens: tuple[int, ...]
    steps: tuple[Any, ...] = ()
    if tensors_raw is not None or steps_raw is not None:
        import symtf.spec.steps as graph_spec

        tensors = graph_spec.parse_tensors(tensors_raw, name)
        model_raw = graph_spec.given_input(model_raw, tensors, name)  # a given x for attention
    vocab_raw = top.get("vocab")
    if vocab_raw is not None and model_raw is not None:
        raise SpecError(f"{name}: vocab: give the words in model.vocab when the file has a [model]")
    if model_raw is None:  # a graph of given tensors and steps only
        model, tokens = Model(architecture="none", vocab=_words(vocab_raw, f"{name}: vocab")), ()
    elif isinstance(model_raw, dict) and model_raw.get("architecture") == "encoder-decoder":
        from symtf.spec.seq2seq import parse as parse_seq2seq

        model, tokens = parse_seq2seq(top, name)
    else:
        model = _model(_Reader(model_raw, "model"), name)
        tokens = _tokens(top.get("input"), model, name)
        model = _decoder_generation(top.get("generate"), model, tokens, name)
    if steps_raw is not None:
        steps = graph_spec.parse_steps(
            steps_raw, name, tensors, has_model=model_raw is not None, text=text
        )
    claims_raw = top.get("claims", [])
    if not isinstance(claims_raw, list) or not all(isinstance(c, dict) for c in claims_raw):
        raise SpecError(
            f"{name}: claims: expected an array of tables ([[claims]]), found {_kind(claims_raw)}"
        )
    # A file-wide rounding rule (a claim's own ``rounding`` wins); without one, an exact
    # tie accepts either neighbour.
    rounding = top.choice("rounding", ROUNDING_MODES, DEFAULT_ROUNDING)
    claims = tuple(_claim(c, i, name, rounding) for i, c in enumerate(claims_raw))
    draft = top.boolean("draft", False)
    seen: dict[str, int] = {}
    for i, c in enumerate(claims):
        if c.label in seen:
            raise SpecError(
                f"{name}: claims[{i}].label: expected a unique label, found {c.label!r} again "
                f"(first at claims[{seen[c.label]}])"
            )
        seen[c.label] = i
    for i, c in enumerate(claims):
        if c.restates is not None and seen.get(c.restates, i) == i:
            raise SpecError(
                f"{name}: claims[{i}].restates: expected the label of another claim, found "
                f"{c.restates!r}"
            )
    computed_in = _computed_in(top, "computed_in", name)
    rounded_inputs = None
    if top.get("rounded_inputs") is not None:
        from symtf.backends.rounded import parse_rounded_inputs

        rounded_inputs, named = parse_rounded_inputs(
            top.get("rounded_inputs"), model_raw, model, name, tuple(g.name for g in tensors)
        )
        # a given tensor named in rounded_inputs is marked as if it said rounded = true
        tensors = tuple(
            dataclasses.replace(g, rounded=True) if g.name in named else g for g in tensors
        )
        tensors = tuple(_flat(g) for g in tensors)
    marked = [g for g in tensors if g.rounded]
    if marked:  # given tensors known only to their printed precision (symtf.backends.rounded)
        from symtf.backends.rounded import RoundedInput, RoundedInputs, tensor_half_widths

        for g in marked:
            item = RoundedInput(g.name, g.flat, (tensor_half_widths(g.texts),))
            rounded_inputs = (rounded_inputs or RoundedInputs()).with_input(item)
    _done(top, name)
    return Derivation(
        name,
        title,
        source,
        model,
        tokens,
        claims,
        tensors,
        steps,
        computed_in,
        rounded_inputs,
        draft,
        written_inputs=_written_inputs(model_raw, model, tensors, name),
    )


def _written_inputs(
    model_raw: Any, model: Model | Seq2SeqModel, tensors: tuple[Any, ...], name: str
) -> dict[str, Any]:
    """Every input written with a decimal point (what ``rounded_inputs`` could name), for the
    diagnosis: a model input as its :class:`~symtf.backends.rounded.RoundedInput`, a given tensor as ``None``."""
    from symtf.backends.rounded import half_width, parse_rounded_inputs

    out: dict[str, Any] = {}
    if isinstance(model_raw, dict) and model.architecture in ("decoder", "attention", "none"):
        try:
            inputs, _ = parse_rounded_inputs(True, model_raw, model, name)
        except SpecError:
            inputs = None
        for n, item in (inputs or {}).items():
            if any(h for row in item.half for h in row):
                out[n] = item
    for g in tensors:
        if (
            not g.rounded
            and any(half_width(t) for t in g.texts)
            and all(v.is_Rational or v.is_infinite for v in g.values)
        ):
            out[g.name] = None
    return out


def _is_word(v: Any) -> bool:
    """A printed value that is one vocabulary word (``"cat"``), not a number or a table."""
    if not isinstance(v, str) or len(v.split()) != 1 or split_printed(v, "printed") is not None:
        return False
    return is_label(v.strip()) and not v.strip().startswith(("(", "[", "tensor", "array"))


def _words(raw: Any, where: str) -> tuple[str, ...]:
    """A ``vocab``: the model's tokens, or a step file's words a claim on a score vector or an
    argmax may print."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(t, str) and t for t in raw):
        raise SpecError(f"{where}: expected an array of non-empty strings, found {_kind(raw)}")
    if len(set(raw)) != len(raw):
        raise SpecError(f"{where}: expected distinct tokens, found a repeated one")
    if len(raw) > 5000:
        raise SpecError(f"{where}: expected at most 5000 tokens, found {len(raw)}")
    return tuple(raw)


def _flat(g: Any) -> Any:
    """A given tensor marked rounded, with the 1×N row its rounding intervals are known by."""
    if not g.rounded or g.flat is not None:
        return g
    if not all(v.is_Rational or v.is_infinite for v in g.values):
        raise SpecError(
            f"{g.where}: expected numbers in a tensor named in rounded_inputs "
            "(a symbol has no rounding interval)"
        )
    return dataclasses.replace(g, flat=sympy.ImmutableMatrix([list(g.values)]))


#: Floating-point formats an article's framework may have computed in (symtf.checking.framework).
FLOAT_FORMATS = ("float64", "float32", "float16", "bfloat16")


def _computed_in(r: _Reader, key: str, where: str) -> str | None:
    v = r.get(key)
    if v is None:
        return None
    if v not in FLOAT_FORMATS:
        raise SpecError(
            f"{where}: {r.key(key)}: expected one of {', '.join(FLOAT_FORMATS)}, found {_kind(v)}"
        )
    return str(v)


def _done(r: _Reader, name: str) -> None:
    try:
        r.done()
    except SpecError as e:
        raise SpecError(f"{name}: {e}") from None


def _model(r: _Reader, name: str) -> Model:
    w = f"{name}: model"
    arch = r.choice("architecture", ARCHITECTURES, "decoder")
    standalone = _standalone(r.get("standalone", []), name)
    if arch == "none":
        _done(r, name)
        return Model(architecture="none", standalone=standalone)
    d_model = r.integer("d_model", lo=1, hi=_max_dim())
    if d_model is None:
        raise SpecError(f"{w}.d_model: required key is missing")
    n_heads = r.integer("n_heads", 1, lo=1)
    if d_model % n_heads and r.get("d_head") is None:
        raise SpecError(f"{w}.n_heads: expected a divisor of d_model = {d_model}, found {n_heads}")
    d_head = r.integer("d_head", d_model // n_heads, lo=1, hi=_max_dim())
    mask = r.choice("mask", MASKS, "causal")
    mask_value = _mask_value(r.get("mask_value"), mask, f"{w}.mask_value")
    norm = r.choice("norm", NORMS, "post")
    norm_kind = r.choice("norm_kind", NORM_KINDS, "layernorm")
    variance = r.choice("variance", VARIANCES, "biased")
    activation = r.choice("activation", ACTIVATIONS, "relu")
    eps = _cell(r.get("eps", 0), f"{w}.eps", symbols=True)
    _nonnegative(eps, f"{w}.eps")
    d_ff = r.integer("d_ff", lo=1, hi=_max_dim())
    scale_raw = r.get("scale")
    scale = None if scale_raw is None else _cell(scale_raw, f"{w}.scale", symbols=True)
    if scale is not None and scale == 0:
        raise SpecError(f"{w}.scale: expected a non-zero divisor, found 0")
    vocab = list(_words(r.get("vocab", []), f"{w}.vocab"))
    V = len(vocab)
    if arch == "decoder":
        if not vocab:
            raise SpecError(f"{w}.vocab: required for a decoder")
        embed = matrix(r.require("embed"), f"{w}.embed", shape=(V, d_model))
        unembed_raw = r.get("unembed")
        unembed = (
            None if unembed_raw is None else matrix(unembed_raw, f"{w}.unembed", shape=(d_model, V))
        )
    else:
        embed = matrix(r.require("embed"), f"{w}.embed", shape=(None, d_model))
        unembed = None
        if vocab and len(vocab) != embed.rows:
            raise SpecError(
                f"{w}.vocab: expected {embed.rows} tokens (one per embed row), found {len(vocab)}"
            )
    pos_raw = r.get("pos")
    pos = None if pos_raw is None else matrix(pos_raw, f"{w}.pos", shape=(None, d_model))
    positional = r.choice("positional", POSITIONALS, "none" if pos is None else "given")
    if positional in ("given", "learned") and pos is None:
        raise SpecError(f"{w}.pos: required for positional = {positional!r} (the table of rows)")
    if positional not in ("given", "learned") and pos is not None:
        raise SpecError(
            f"{w}.pos: expected no table with positional = {positional!r} (the rows are computed)"
        )
    pos_base = _cell(r.get("pos_base", 10000), f"{w}.pos_base", symbols=True)
    if pos_base.is_Rational and pos_base <= 0:
        raise SpecError(f"{w}.pos_base: expected a positive number, found {pos_base}")
    rope_pairs = r.choice("rope_pairs", ROPE_PAIRS, "adjacent")
    if positional == "rope" and d_head % 2:
        raise SpecError(f"{w}.d_head: rotary positions need an even d_head, found {d_head}")
    tied = r.boolean("tie_embeddings", False)
    if tied:
        if arch != "decoder":
            raise SpecError(f"{w}.tie_embeddings: only a decoder has an unembedding to tie")
        if unembed is not None:
            raise SpecError(
                f"{w}.unembed: expected no unembed with tie_embeddings = true (it is embed transposed)"
            )
        unembed = sympy.ImmutableMatrix(embed.T) if isinstance(embed, sympy.MatrixBase) else embed.T
    final_norm = r.boolean("final_norm", False)
    lnf_gamma = _vector(r.get("lnf_gamma"), f"{w}.lnf_gamma", d_model, 1)
    lnf_beta = _vector(r.get("lnf_beta"), f"{w}.lnf_beta", d_model, 0)
    lnf_eps_raw = r.get("lnf_eps")
    lnf_eps = None if lnf_eps_raw is None else _cell(lnf_eps_raw, f"{w}.lnf_eps", symbols=True)
    if lnf_eps is not None:
        _nonnegative(lnf_eps, f"{w}.lnf_eps")
    lnf_variance = (
        None
        if r.table.get("lnf_variance") is None
        else r.choice("lnf_variance", VARIANCES, "biased")
    )
    for k in ("lnf_gamma", "lnf_beta", "lnf_eps", "lnf_variance"):
        if not final_norm and r.table.get(k) is not None:
            raise SpecError(f"{w}.{k}: given, but final_norm is false")
    layers_raw = r.get("layers", [])
    if not isinstance(layers_raw, list) or not all(isinstance(x, dict) for x in layers_raw):
        raise SpecError(
            f"{w}.layers: expected an array of tables ([[model.layers]]), found {_kind(layers_raw)}"
        )
    if not layers_raw:
        raise SpecError(f"{w}.layers: expected at least one [[model.layers]] table, found none")
    if arch == "attention" and len(layers_raw) != 1:
        raise SpecError(
            f"{w}.layers: an attention-only model has exactly one layer, found {len(layers_raw)}"
        )
    layers = tuple(
        _layer(
            _Reader(x, f"model.layers[{i}]"),
            name,
            d_model,
            n_heads,
            d_head,
            full=arch == "decoder",
            activation=activation,
            d_ff=d_ff,
        )
        for i, x in enumerate(layers_raw)
    )
    _done(r, name)
    return Model(
        arch,
        d_model,
        n_heads,
        d_head,
        mask,
        norm,
        eps,
        activation,
        scale,
        tuple(vocab),
        embed,
        pos,
        unembed,
        layers,
        standalone,
        positional=positional,
        pos_base=pos_base,
        rope_pairs=rope_pairs,
        norm_kind=norm_kind,
        variance=variance,
        final_norm=final_norm,
        lnf_gamma=lnf_gamma if final_norm else None,
        lnf_beta=lnf_beta if final_norm else None,
        tied=tied,
        lnf_eps=lnf_eps,
        lnf_variance=lnf_variance,
        mask_value=mask_value,
    )


_NEG_INF = re.compile(r"^-\s*(inf|infinity|∞)$", re.IGNORECASE)


def _mask_value(raw: Any, mask: str, where: str) -> sympy.Expr | None:
    """A causal mask's fill above the diagonal: ``None`` for −∞ (the default, also when
    written ``"-inf"``), an exact number below 0, a symbol ``m`` or its negative ``-M``."""
    if raw is None:
        return None
    if mask != "causal":
        raise SpecError(
            f'{where}: applies to mask = "causal" only (the fill above the diagonal, before '
            f"the softmax); found mask = {mask!r}"
        )
    text = raw.strip().replace("−", "-") if isinstance(raw, str) else None
    if text is not None and _NEG_INF.match(text):
        return None
    if text is not None and text.startswith("-") and SYMBOL_NAME.match(text[1:].strip()):
        return -make(text[1:].strip())  # -M: the symbol M, negated
    expected = (
        f"{where}: expected a negative number (like -1e9 or -10000), a symbol (m or -M) or -inf"
    )
    try:
        value = _cell(raw, where, symbols=True)
    except SpecError:
        raise SpecError(f"{expected}, found {_kind(raw)}") from None
    if not value.is_Symbol and not value < 0:
        raise SpecError(f"{expected}, found {raw if not isinstance(raw, str) else repr(raw)}")
    return value


def _nonnegative(x: sympy.Expr, where: str) -> None:
    if x.is_Rational and x < 0:
        raise SpecError(f"{where}: expected a number >= 0, found {x}")


def _square(m: sympy.ImmutableMatrix | None, name: str, where: str) -> None:
    if m is not None and m.rows != m.cols:
        raise SpecError(
            f"{where}.transposed: {name} is {m.rows}x{m.cols}; only a square matrix can be applied as x·Wᵀ"
        )


def _layer(
    r: _Reader,
    name: str,
    d: int,
    h: int,
    dh: int,
    *,
    full: bool,
    activation: str = "relu",
    d_ff: int | None = None,
) -> Layer:
    w = f"{name}: {r.where}"
    heads_raw = r.require("heads")
    if not isinstance(heads_raw, list) or not all(isinstance(x, dict) for x in heads_raw):
        raise SpecError(f"{w}.heads: expected an array of tables, found {_kind(heads_raw)}")
    if len(heads_raw) != h:
        raise SpecError(f"{w}.heads: expected {h} heads (model.n_heads), found {len(heads_raw)}")
    heads = []
    for k, hr in enumerate(heads_raw):
        hrd = _Reader(hr, f"{r.where}.heads[{k}]")
        hw = f"{name}: {hrd.where}"
        W_Q, W_K, W_V = (
            matrix(hrd.require(m), f"{hw}.{m}", shape=(d, dh)) for m in HEAD_PROJECTIONS
        )
        b_Q, b_K, b_V = (
            None if hrd.get(b) is None else _vector(hrd.get(b), f"{hw}.{b}", dh, 0)
            for b in ("b_Q", "b_K", "b_V")
        )
        scale_raw = hrd.get("scale")
        head_scale = None if scale_raw is None else _cell(scale_raw, f"{hw}.scale", symbols=True)
        if head_scale is not None and head_scale == 0:
            raise SpecError(f"{hw}.scale: expected a non-zero divisor, found 0")
        transposed = hrd.names("transposed", HEAD_PROJECTIONS)
        for nm, m in zip(HEAD_PROJECTIONS, (W_Q, W_K, W_V), strict=True):
            if nm in transposed:
                _square(m, nm, hw)
        heads.append(
            Head(
                W_Q,
                W_K,
                W_V,
                b_Q,
                b_K,
                b_V,
                head_scale,
                hrd.boolean("transpose_k", True),
                hrd.choice("softmax_axis", SOFTMAX_AXES, "rows"),
                transposed,
            )
        )
        _done(hrd, name)
    W_O_raw = r.get("W_O", "identity" if h * dh == d else None)
    if W_O_raw is None and full:
        raise SpecError(
            f"{w}.W_O: required when n_heads * d_head ({h * dh}) differs from d_model ({d})"
        )
    W_O = None if W_O_raw is None else matrix(W_O_raw, f"{w}.W_O", shape=(h * dh, d))
    b_O_raw = r.get("b_O")
    b_O = None if b_O_raw is None else _vector(b_O_raw, f"{w}.b_O", d, 0)
    W3 = b3 = None
    if full:
        W1 = matrix(r.get("W1", "identity"), f"{w}.W1", shape=(d, d_ff))
        hidden = W1.cols
        b1 = _vector(r.get("b1"), f"{w}.b1", hidden, 0)
        W2 = matrix(r.get("W2", "identity"), f"{w}.W2", shape=(hidden, d))
        b2 = _vector(r.get("b2"), f"{w}.b2", d, 0)
        if activation == "swiglu":
            W3 = matrix(r.get("W3", "identity"), f"{w}.W3", shape=(d, hidden))
            b3 = _vector(r.get("b3"), f"{w}.b3", hidden, 0)
        elif r.table.get("W3") is not None or r.table.get("b3") is not None:
            raise SpecError(f"{w}.W3: only a swiglu FFN has a third matrix (model.activation)")
    else:
        W1 = W2 = sympy.ImmutableMatrix(sympy.eye(d))
        b1 = b2 = sympy.ImmutableMatrix(1, d, [0] * d)
    ln = [
        _vector(r.get(k), f"{w}.{k}", d, 1 if k.endswith("gamma") else 0)
        for k in ("ln1_gamma", "ln1_beta", "ln2_gamma", "ln2_beta")
    ]
    ln_eps = []
    for key in ("ln1_eps", "ln2_eps"):
        raw = r.get(key)
        e = None if raw is None else _cell(raw, f"{w}.{key}", symbols=True)
        if e is not None:
            _nonnegative(e, f"{w}.{key}")
        ln_eps.append(e)
    ln_var = [
        None if r.table.get(k) is None else r.choice(k, VARIANCES, "biased")
        for k in ("ln1_variance", "ln2_variance")
    ]
    transposed = r.names("transposed", LAYER_PROJECTIONS)
    for nm, m in (("W_O", W_O), ("W1", W1), ("W2", W2), ("W3", W3)):
        if nm in transposed:
            _square(m, nm, w)
    _done(r, name)
    return Layer(
        tuple(heads),
        W_O,
        W1,
        b1,
        W2,
        b2,
        ln[0],
        ln[1],
        ln[2],
        ln[3],
        b_O=b_O,
        W3=W3,
        b3=b3,
        ln1_eps=ln_eps[0],
        ln2_eps=ln_eps[1],
        ln1_variance=ln_var[0],
        ln2_variance=ln_var[1],
        transposed=transposed,
    )


def _standalone(raw: Any, name: str) -> tuple[Standalone, ...]:
    if not isinstance(raw, list) or not all(isinstance(x, dict) for x in raw):
        raise SpecError(
            f"{name}: model.standalone: expected an array of tables, found {_kind(raw)}"
        )
    out = []
    names: set[str] = set()
    for i, x in enumerate(raw):
        r = _Reader(x, f"model.standalone[{i}]")
        nm = r.string("name")
        if nm is None or not _STEP.match(nm) or (nm.startswith(("l", "x")) and nm[1:2].isdigit()):
            raise SpecError(
                f"{name}: {r.key('name')}: expected a step name like ln_example, found {nm!r}"
            )
        if nm in names:
            raise SpecError(f"{name}: {r.key('name')}: expected a unique name, found {nm!r} again")
        names.add(nm)
        op = r.choice("op", STANDALONE_OPS, "layernorm")
        inp = matrix(r.require("input"), f"{name}: {r.key('input')}", shape=(None, None))
        eps_raw = r.get("eps")
        eps = None if eps_raw is None else _cell(eps_raw, f"{name}: {r.key('eps')}", symbols=True)
        if eps is not None:
            _nonnegative(eps, f"{name}: {r.key('eps')}")
        variance = r.choice("variance", VARIANCES, "biased")
        _done(r, name)
        out.append(Standalone(nm, op, inp, eps, variance))
    return tuple(out)


def _tokens(raw: Any, model: Model, name: str) -> tuple[int, ...]:
    if model.architecture != "decoder":
        if raw is not None:
            r = _Reader(raw, "input")
            r.get("tokens")
            r.get("token_ids")
            _done(r, name)
        n = model.embed.rows if model.embed is not None else 0
        return tuple(range(n))
    if raw is None:
        raise SpecError(f"{name}: input: required table is missing (input.tokens = [...])")
    r = _Reader(raw, "input")
    toks, ids = r.get("tokens"), r.get("token_ids")
    _done(r, name)
    if (toks is None) == (ids is None):
        raise SpecError(f"{name}: input: expected exactly one of tokens or token_ids")
    if toks is not None:
        if not isinstance(toks, list) or not toks:
            raise SpecError(
                f"{name}: input.tokens: expected a non-empty array of strings, found {_kind(toks)}"
            )
        out = []
        for i, t in enumerate(toks):
            if t not in model.vocab:
                raise SpecError(
                    f"{name}: input.tokens[{i}]: expected a word of model.vocab, found {_kind(t)}"
                )
            out.append(model.vocab.index(t))
    else:
        if not isinstance(ids, list) or not ids:
            raise SpecError(
                f"{name}: input.token_ids: expected a non-empty array, found {_kind(ids)}"
            )
        out = []
        for i, t in enumerate(ids):
            if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < len(model.vocab):
                raise SpecError(
                    f"{name}: input.token_ids[{i}]: expected an id from 0 to {len(model.vocab) - 1}, found {_kind(t)}"
                )
            out.append(t)
    if model.pos is not None and len(out) > model.pos.rows:
        raise SpecError(
            f"{name}: input: expected at most {model.pos.rows} tokens (model.pos has that many rows), found {len(out)}"
        )
    return tuple(out)


def _claim(
    raw: dict[str, Any], i: int, name: str, rounding_default: str = DEFAULT_ROUNDING
) -> Claim:
    r = _Reader(raw, f"claims[{i}]")
    where = f"{name}: claims[{i}]"
    label = r.string("label", max_len=200)
    if not label:
        raise SpecError(
            f"{where}.label: required key is missing (the article's name for these numbers)"
        )
    step = r.string("step", max_len=200)
    expression = r.string("expression", max_len=2000)
    assertion = r.string("assert", max_len=40)
    if assertion is not None and (assertion not in ASSERTIONS or expression is not None):
        raise SpecError(
            f"{where}.assert: expected one of {', '.join(ASSERTIONS)} (without expression), found {assertion!r}"
        )
    if assertion is None and (step is None) == (expression is None):
        raise SpecError(f"{where}: expected exactly one of step or expression")
    if step is not None and step != UNMAPPED and not _STEP_NODE.match(step):
        raise SpecError(f"{where}.step: expected a step name like l0.h0.pattern, found {step!r}")
    printed_raw = r.get("printed")
    if printed_raw is None and expression is not None:
        # "e^{2.309} \approx 10.068": the value after the last relation is what the article printed.
        from symtf.language.latexmath import split_display

        lhs, value = split_display(expression)
        if value is not None:
            expression, printed_raw = lhs, value
    if printed_raw is None:
        printed_raw = r.require("printed")
    rank = r.integer("rank", lo=1, hi=10_000)
    word = None
    printed: tuple[tuple[Printed, ...], ...] = ()
    if (
        step == "next_token"
        or rank is not None
        or assertion is not None
        or (step is not None and _is_word(printed_raw))
    ):
        if not isinstance(printed_raw, str) or not printed_raw.strip():
            raise SpecError(
                f"{where}.printed: expected a vocabulary word, found {_kind(printed_raw)}"
            )
        word = printed_raw.strip()
    else:
        printed = _printed_rows(printed_raw, f"{where}.printed")
    index_raw = r.get("index")
    index = None
    if index_raw is not None:
        if (
            not isinstance(index_raw, list)
            or not 1 <= len(index_raw) <= 4
            or not all(
                isinstance(k, int) and not isinstance(k, bool) and 0 <= k < _max_dim()
                for k in index_raw
            )
        ):
            raise SpecError(
                f"{where}.index: expected [row, column] (or all N indices of an N-D step) with whole numbers, found {_kind(index_raw)}"
            )
        index = tuple(index_raw)
    at_raw = r.get("at")
    at = None
    if at_raw is not None:
        if (
            not isinstance(at_raw, list)
            or not 1 <= len(at_raw) <= 2
            or not all(
                isinstance(k, int) and not isinstance(k, bool) and 0 <= k < _max_dim()
                for k in at_raw
            )
        ):
            raise SpecError(
                f"{where}.at: expected the leading indices [b] or [b, h] of a 3-D/4-D step, found {_kind(at_raw)}"
            )
        at = tuple(at_raw)
    row = r.integer("row", lo=0, hi=_max_dim())
    col = r.integer("col", lo=0, hi=_max_dim())
    if index is not None and (row is not None or col is not None):
        raise SpecError(f"{where}.index: expected index alone, found it together with row/col")
    decimals = r.integer("decimals", lo=0, hi=30)
    rounding = r.choice("rounding", ROUNDING_MODES, rounding_default)
    reduce = r.get("reduce")
    if reduce is not None and reduce not in REDUCTIONS:
        raise SpecError(
            f"{where}.reduce: expected one of {', '.join(REDUCTIONS)}, found {_kind(reduce)}"
        )
    stands_raw = r.get("stands_for", {})
    match_literals = stands_raw != "none"  # "none": every literal stands only for itself
    if stands_raw == "none":
        stands_raw = {}
    if not isinstance(stands_raw, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and len(v) < 200 for k, v in stands_raw.items()
    ):
        raise SpecError(
            f'{where}.stands_for: expected a table of literal = "step[i, j]" or "none", found {_kind(stands_raw)}'
        )
    note = r.string("note", "") or ""
    computed_in = _computed_in(r, "computed_in", name)
    feeds = r.boolean("feeds", False)
    given = r.boolean("given", False)
    restates = r.string("restates", None)
    source_line = r.integer("source_line", lo=1, hi=10_000_000)
    count = sum(len(row_) for row_ in printed) if printed else 1
    places = read_places(r.get("places"), f"{where}.places", count)
    _done(r, name)
    stated = decimals is not None
    if printed and decimals is None:
        decimals = claim_grid(printed)
    if printed:  # a claim's decimals is the grid of integers and numpy's shortened prints
        printed = tuple(
            tuple(on_grid(p, decimals, stated=stated) for p in row_) for row_ in printed
        )
    return Claim(
        label,
        where,
        step,
        printed,
        word,
        row,
        col,
        index,
        rounding,
        reduce,
        rank,
        expression,
        dict(stands_raw),
        note,
        assertion,
        at,
        computed_in=computed_in,
        feeds=feeds,
        given=given,
        restates=restates,
        match_literals=match_literals,
        source_line=source_line,
        places=places,
    )
