"""The stable JSON contract (fields may be added, never renamed).

Version 1 is described by the JSON Schema ``symtf/schemas/report-v1.schema.json``
(shipped in the package, :func:`schema` reads it). Every ``exact`` is a decimal
``decimal.Decimal`` parses (``-inf`` for a masked entry); a value whose decimal
expansion goes on is cut after at least 15 significant digits and flagged by
``exact_truncated``. ``exact`` is null only where there is no number: a word or
token claim, or (rarely) a value no certified decimal could be found for.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from symtf import __version__
from symtf.checking.report import Check, ClaimResult, DerivationReport, Report
from symtf.renderers._claims import kind, located

#: Version of the JSON contract written by :func:`report_dict`.
CONTRACT = 1
_ELLIPSIS = "…"


def exact_fields(exact: str | None) -> dict[str, Any]:
    """``exact`` as a parseable decimal and whether it was cut short."""
    if exact is None:
        return {"exact": None, "exact_truncated": False}
    # The ellipsis ends the digits: "0.333…", or stands before the exponent: "1.234…e-70".
    truncated = _ELLIPSIS in exact
    return {"exact": exact.replace(_ELLIPSIS, ""), "exact_truncated": truncated}


def _readings(extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(extra)
    for key in ("as_displayed", "exact_reading"):
        reading = out.get(key)
        if isinstance(reading, dict) and "exact" in reading:
            out[key] = {**reading, **exact_fields(reading["exact"])}
    return out


def check_dict(
    c: Check,
    result: ClaimResult | None = None,
    path: str | None = None,
    printed_line: int | None = None,
) -> dict[str, Any]:
    """One check as a JSON object.

    Args:
        c: The check.
        result: The claim it belongs to (adds ``kind``, ``line`` and ``printed_line``).
        path: The derivation file (adds ``file``).
        printed_line: The line the number was printed on (see ``Located.printed_line``).
    """
    d: dict[str, Any] = {
        "claim": c.claim,
        "step": c.step,
        "index": list(c.index) if c.index is not None else None,
        "printed": c.printed,
        "expected": c.expected,
        **exact_fields(c.exact),
        "verdict": c.verdict,
        "explanation": c.explanation,
    }
    if result is not None:
        d["kind"] = kind(result)
    if path is not None:
        d["file"] = path
    if result is not None:
        d["line"] = result.claim.line
        d["printed_line"] = printed_line if printed_line is not None else result.claim.line
    d.update(_readings(c.extra))
    return d


def derivation_dict(d: DerivationReport) -> dict[str, Any]:
    """One derivation file's checks."""
    return {
        "path": d.path,
        "title": d.title,
        "checks": [
            check_dict(x.check, x.result, d.path, x.printed_line) for x in located(Report((d,)))
        ],
        "counts": d.counts,
    }


def report_dict(report: Report) -> dict[str, Any]:
    """The whole report as a JSON-ready dict."""
    return {
        "symtf": __version__,
        "contract": CONTRACT,
        "derivations": [derivation_dict(d) for d in report.derivations],
        "errors": [{"path": e.path, "error": e.error} for e in report.errors],
    }


def render(report: Report) -> str:
    """The report as indented JSON text."""
    return json.dumps(report_dict(report), indent=2, ensure_ascii=False) + "\n"


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of :func:`report_dict`'s output."""
    text = resources.files("symtf").joinpath("schemas/report-v1.schema.json").read_text("utf-8")
    return json.loads(text)
