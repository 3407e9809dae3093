"""A draft derivation written from what the reader found (``symtf extract``)."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from symtf.draft.read.items import Found, Rows
from symtf.place import Place, place_toml
from symtf.visible import comment, toml_block, toml_string

__all__ = ["draft_toml", "places_key"]

_INPUT_LABEL = re.compile(
    r"^(?:W|E|emb|embed|embedding|pos|PE|X_?emb|tokens?|vocab|weights?)(?:_|$|\b)", re.I
)


@functools.lru_cache(maxsize=4096)  # labels repeat: a long article asks for the same few
def _tensor_name(label: str) -> str | None:
    """A given-tensor name for a label (``W_Q^((1))`` → ``W_Q_1``), or None."""
    name = re.sub(r"[^A-Za-z0-9_]+", "_", label).strip("_")  # a TOML bare key is ASCII
    return name if name.isidentifier() and not name[0].isdigit() and len(name) <= 40 else None


def _toml_string(s: str) -> str:
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return f'"{s}"'  # nothing to escape (the common case, fast)
    return toml_string(s)


def _printed(rows: Rows) -> str:
    if len(rows) == 1:
        return _toml_string(" ".join(rows[0]))
    return toml_block("\n".join(" ".join(r) for r in rows))


def places_key(places: tuple[Place, ...]) -> str:
    """``places = [...]``: where each printed entry stands (one inline table per entry)."""
    if len(places) == 1:
        return f"places = [{place_toml(places[0])}]"
    return "places = [\n" + "".join(f"  {place_toml(p)},\n" for p in places) + "]"


def draft_toml(found: list[Found], *, source: str, title: str | None = None) -> str:
    """A draft derivation holding every found value (steps to be mapped: ``step = "?"``).

    What looks like an input (a label such as ``W_Q``, ``E`` or ``pos``) becomes
    a given tensor; every other matrix, vector or number becomes a claim; each
    displayed arithmetic line becomes an expression claim, ready to check. Each
    claim carries its article line (``source_line``) and the place of each
    printed entry (``places``).
    """
    lines = [
        comment(f"Draft derivation extracted by `symtf extract` from {source}."),
        "# Every printed string is copied verbatim, with its source line and places. Map each",
        '# claim\'s step (step = "?" until then; `symtf check --draft` suggests candidates),',
        "# then remove `draft = true`.",
        "",
        f"title = {_toml_string(title or 'Draft: ' + Path(source).name)}",
        f"source = {_toml_string(source)}",
        "draft = true",
        "",
        "[model]",
        'architecture = "none"   # replace with the article\'s model to check step claims',
        "",
    ]
    claims: list[str] = []
    tensors: list[str] = []
    tensor_names: set[str] = set()
    seen_labels: dict[str, int] = {}

    def unique(label: str) -> str:
        n = seen_labels.get(label, 0)
        seen_labels[label] = n + 1
        return label if n == 0 else f"{label} ({n + 1})"

    for f in found:
        where = f"line {f.line}" + (f", cell {f.cell}" if f.cell is not None else "")
        name = _tensor_name(f.label)
        if (
            f.kind in ("matrix", "vector")
            and name
            and _INPUT_LABEL.match(name)
            and name not in tensor_names
        ):
            tensor_names.add(name)
            tensors.append(f"{name} = {_printed(f.rows)}   {comment(f'{where}: {f.label}')}")
            continue
        block = ["[[claims]]", f"label = {_toml_string(unique(f.label))}"]
        if f.kind == "arithmetic":
            written = " ".join((f.latex or f.expression or "").split())
            block.append(f"expression = {_toml_string(written)}")
            if f.expression and f.expression != written:
                block.append(comment(f"read as: {f.expression[:300]}"))
        else:
            block.append('step = "?"')
        block.append(f"printed = {_printed(f.rows)}")
        line = f.places[0].line if f.places and f.cell is not None else f.line
        block.append(f"source_line = {line}")
        if f.places and len(f.places) == sum(len(r) for r in f.rows):
            block.append(places_key(f.places))
        if f.context:
            block.append(comment(f"{where}: {f.context[:160]}"))
        claims.append("\n".join(block))
    if tensors:
        lines += [
            "# What looks like the article's inputs, as given tensors for [steps] to use.",
            "[tensors]",
            *tensors,
            "",
        ]
    lines += ["\n\n".join(claims), ""]
    return "\n".join(lines)
