"""The stable JSON contract (fields may be added, never renamed).

Version 1 is described by the JSON Schema ``symtf/schemas/report-v1.schema.json``
(shipped in the package, :func:`schema` reads it); every field written here is
declared there.

Two kinds of field carry numbers:

- *Decimal fields* (``exact``, ``printed_value``, ``expected_value``,
  ``units_off``, the ends of ``enclosure`` and of ``solutions``) are strings
  ``decimal.Decimal`` parses (``-inf``/``inf`` for an infinity). A value whose
  decimal expansion goes on is cut after its leading digits and flagged by the
  field's ``…_truncated`` companion: the value then lies within one unit of the
  last digit shown (beyond it for ``units_off``, whose six digits are certain).
- *Text fields* ``printed`` and ``expected`` keep the article's notation:
  ``42.0%``, ``5/6``, ``-inf`` or ``−∞`` stay as written, so that a report can
  quote the article. Their values are ``printed_value`` and ``expected_value``.

``exact`` is null only where there is no number: a word or token claim, or
(rarely) a value no certified decimal could be found for.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from symtf import __version__
from symtf.checking.located import rational_text
from symtf.checking.report import Check, ClaimResult, DerivationReport, Report
from symtf.errors import SymtfError
from symtf.numbers import format_fixed, parse_printed
from symtf.renderers._claims import kind, located, place_of
from symtf.visible import json_text

#: Version of the JSON contract written by :func:`report_dict`.
CONTRACT = 1
_ELLIPSIS = "…"


def decimal_fields(name: str, text: str | None) -> dict[str, Any]:
    """``name`` as a parseable decimal and ``name_truncated``: whether it was cut short.

    The checks write a value that goes on with an ellipsis, which ends the digits
    (``0.333…``) or stands before the exponent (``1.234…e-70``); JSON drops it
    and says so in the flag.
    """
    if text is None:
        return {name: None, f"{name}_truncated": False}
    return {name: text.replace(_ELLIPSIS, ""), f"{name}_truncated": _ELLIPSIS in text}


def exact_fields(exact: str | None) -> dict[str, Any]:
    """``exact`` as a parseable decimal and whether it was cut short."""
    return decimal_fields("exact", exact)


def value_of_print(text: str | None) -> str | None:
    """The value of a printed number (``42.0%``, ``5/6``, ``−∞``) as a decimal, or ``None``.

    A fraction whose decimal goes on keeps 20 significant digits and an ellipsis
    (see :func:`decimal_fields`).
    """
    if text is None:
        return None
    try:
        p = parse_printed(text)
    except SymtfError:
        return None
    if p.value is None:
        return "-inf" if p.is_neg_inf else "inf"
    if p.is_fraction:
        return rational_text(p.value)
    if p.style == "sci":  # the printed mantissa's digits and its exponent
        mantissa, _, exponent = p.text.lower().partition("e")
        return f"{mantissa.lstrip('+').rstrip('.')}e{int(exponent)}"
    return format_fixed(p.value, max(p.decimals, 0))


def _value_fields(c: Check, number: bool) -> dict[str, Any]:
    printed = value_of_print(c.printed) if number else None
    expected = value_of_print(c.expected) if number else None
    return {
        **decimal_fields("printed_value", printed),
        **decimal_fields("expected_value", expected),
    }


def _solution_fields(sets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A solution set's intervals with their ends made parseable."""
    return [
        {**s, **decimal_fields("lo", s.get("lo")), **decimal_fields("hi", s.get("hi"))}
        for s in sets
    ]


def _link_fields(link: dict[str, Any]) -> dict[str, Any]:
    """One link of a chain, its decimals made parseable as the claim's own are."""
    out = {**link, **exact_fields(link.get("exact"))}
    for reading in ("as_displayed", "exact_reading"):
        if isinstance(link.get(reading), dict):
            out[reading] = {**link[reading], **exact_fields(link[reading].get("exact"))}
    return out


def _extra_fields(extra: dict[str, Any]) -> dict[str, Any]:
    """The checks' further fields, with every decimal in them made parseable."""
    out: dict[str, Any] = {}
    for key, value in extra.items():
        if key in ("as_displayed", "exact_reading") and isinstance(value, dict):
            out[key] = {**value, **exact_fields(value.get("exact"))}
        elif key == "links" and isinstance(value, list):  # a chain: each link's readings
            out[key] = [_link_fields(link) for link in value]
        elif key == "units_off":
            out.update(decimal_fields("units_off", value))
        elif key == "solutions" and isinstance(value, list):
            out[key] = _solution_fields(value)
        elif key == "held_solutions" and isinstance(value, list):
            out[key] = [{**h, "solutions": _solution_fields(h.get("solutions", []))} for h in value]
        else:
            out[key] = value
    return out


def check_dict(
    c: Check,
    result: ClaimResult | None = None,
    path: str | None = None,
    printed_line: int | None = None,
    line: int | None = None,
    position: int = 0,
) -> dict[str, Any]:
    """One check as a JSON object.

    Args:
        c: The check.
        result: The claim it belongs to (adds ``kind``, ``line`` and ``printed_line``).
        path: The derivation file (adds ``file``).
        printed_line: The line the number was printed on (see ``Located.printed_line``).
        line: The claim's line where it is not the claim's own (an article's claims).
        position: Which of the claim's checks it is (its printed entry's place in order):
            a claim that records its places gives this number's own ``source_line``,
            ``source_column``, ``source_end_column`` and, in a notebook, ``cell``,
            ``cell_line``, ``cell_column`` and ``cell_output``.
    """
    claim_kind = kind(result) if result is not None else None
    d: dict[str, Any] = {
        "claim": c.claim,
        "step": c.step,
        "index": list(c.index) if c.index is not None else None,
        "entry": c.extra.get("entry"),
        "printed": c.printed,
        "expected": c.expected,
        **exact_fields(c.exact),
        **_value_fields(c, claim_kind in ("number", "expression", None)),
        "verdict": c.verdict,
        "explanation": c.explanation,
    }
    if claim_kind is not None:
        d["kind"] = claim_kind
    if path is not None:
        d["file"] = path
    if result is not None:
        d["line"] = line if line is not None else result.claim.line
        d["printed_line"] = printed_line if printed_line is not None else d["line"]
        place = place_of(result, c, position)
        if place is not None:
            d.update(place.fields())
        elif result.claim.source_line is not None:
            d["source_line"] = result.claim.source_line
    d.update(_extra_fields(c.extra))
    return d


def derivation_dict(d: DerivationReport, too_few: bool | None = None) -> dict[str, Any]:
    """One derivation file's checks (``too_few``: the report's verdict on its share checked,
    written as ``too_few_checked`` when ``--require-checked`` was given)."""
    out: dict[str, Any] = {
        "path": d.path,
        "title": d.title,
        "checks": [
            check_dict(x.check, x.result, x.file, x.printed_line, x.line, x.position)
            for x in located(Report((d,)))
        ],
        "counts": d.counts,
        "coverage": {
            "printed": d.printed_count,
            "checked": d.checked_count,
            "not_checked": d.unchecked_count,
            "given": d.given,
        },
    }
    if d.not_reached:
        out["not_reached"] = list(d.not_reached)
    if d.article is not None:
        out["article"] = d.article
        out["unchecked"] = [_unchecked(u) for u in d.unchecked]
        out["inputs"] = [_input(u) for u in d.inputs]
    if too_few is not None:
        out["too_few_checked"] = too_few
    return out


def _unchecked(u: Any) -> dict[str, Any]:
    """A printed claim an article's draft could not check: no step explains it, or unreadable.

    Where the reader knows them, the places of its numbers: the first one's fields
    beside ``source_line``, and every one in ``places``.
    """
    places = tuple(getattr(u, "places", ()) or ())
    where: dict[str, Any] = {}
    if places:  # source_line and the columns beside it are the first number's
        where = {**places[0].fields(), "places": [p.fields() for p in places]}
    if hasattr(u, "reason"):
        return {
            "claim": u.label,
            "source_line": u.line,
            "why": "unread",
            "numbers": int(getattr(u, "size", 1)),
            "text": u.text,
            "reason": u.reason,
        } | where
    return {
        "claim": u.label,
        "source_line": u.line,
        "why": "unmapped",
        "numbers": u.size,
        "reason": u.note,
        "candidates": list(u.candidates),
    } | where


def _input(u: Any) -> dict[str, Any]:
    """A printing an article states as an input (a given tensor): where its numbers stand."""
    places = tuple(getattr(u, "places", ()) or ())
    out: dict[str, Any] = {"claim": u.label, "source_line": u.line, "numbers": u.size}
    if places:
        out |= places[0].fields() | {"places": [p.fields() for p in places]}
    return out


def report_dict(report: Report) -> dict[str, Any]:
    """The whole report as a JSON-ready dict."""
    few = {id(d) for d in report.too_few_checked}
    ruled = report.require_checked is not None
    return {
        "symtf": __version__,
        "contract": CONTRACT,
        "derivations": [
            derivation_dict(d, (id(d) in few) if ruled and d.article is not None else None)
            for d in report.derivations
        ],
        "errors": [{"path": e.path, "error": e.error} for e in report.errors],
        "skipped": list(report.skipped),
        "require_checked": report.require_checked,
    }


def render(report: Report) -> str:
    """The report as indented JSON text."""
    return json_text(report_dict(report), indent=2) + "\n"


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of :func:`report_dict`'s output."""
    text = resources.files("symtf").joinpath("schemas/report-v1.schema.json").read_text("utf-8")
    out: dict[str, Any] = json.loads(text)
    return out
