"""Derivation files: TOML → a frozen, validated :class:`Derivation`.

A derivation file is data only. Nothing in it is executed, evaluated or passed
to ``sympify``; every number is read from its text into an exact rational, and
every error names the file, the key, what was expected and what was found.
The ``[model]`` table is read by :mod:`symtf.spec.modelread`, the claims by
:mod:`symtf.spec.claims`.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sympy

from symtf import limits
from symtf.errors import SpecError
from symtf.numbers import DEFAULT_ROUNDING, ROUNDING_MODES, toml_float
from symtf.numbers import join_infinities as _join_infinities
from symtf.numbers import split_rows as _split_rows
from symtf.numbers import toml_kind as _kind
from symtf.spec.claims import Claim, float_format, read_claim

# The model's dataclasses and the typed reader live in symtf.spec.model and symtf.spec.tomlread (so
# that seq2seq and generate need not import this module).
from symtf.spec.model import Model, parse_generate
from symtf.spec.modelread import FILE_WEIGHTS, finish, read_model, read_tokens, read_words
from symtf.spec.symbols import SymbolSpec, check_used, reading
from symtf.spec.symbols import parse as parse_table
from symtf.spec.toml_lines import line_of, locate, string_lines
from symtf.spec.tomlread import _Reader

if TYPE_CHECKING:  # the step graph is imported only by files that have steps
    import symtf.spec.steps as graph_spec
    from symtf.spec.seq2seq import Seq2SeqModel


MAX_FILE_BYTES = limits.MAX_FILE_BYTES


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
    token = FILE_WEIGHTS.set(True)
    try:
        return _derivation(data, name, text)
    finally:
        FILE_WEIGHTS.reset(token)


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
        model, tokens = (
            Model(architecture="none", vocab=read_words(vocab_raw, f"{name}: vocab")),
            (),
        )
    elif isinstance(model_raw, dict) and model_raw.get("architecture") == "encoder-decoder":
        from symtf.spec.seq2seq import parse as parse_seq2seq

        model, tokens = parse_seq2seq(top, name)
    else:
        model = read_model(_Reader(model_raw, "model"), name)
        tokens = read_tokens(top.get("input"), model, name)
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
    claims = tuple(read_claim(c, i, name, rounding) for i, c in enumerate(claims_raw))
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
    computed_in = float_format(top, "computed_in", name)
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
            widths = g.widths if g.widths is not None else tensor_half_widths(g.texts)
            item = RoundedInput(g.name, g.flat, (widths,))
            rounded_inputs = (rounded_inputs or RoundedInputs()).with_input(item)
    finish(top, name)
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
            and g.widths is None  # a float32 print is known to its float32 value
            and any(half_width(t) for t in g.texts)
            and all(v.is_Rational or v.is_infinite for v in g.values)
        ):
            out[g.name] = None
    return out


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
