"""SARIF 2.1.0: code-scanning results, one per off or undecided number and per bad file.

Each result names a rule (``slip``, ``wrong``, ``undecided``, ``bad-input``,
``not-checked``, ``too-few-checked``), a level (``error`` for what makes
``symtf check`` fail, ``warning`` for an undecided number or an article with
under half its numbers checked, ``note`` for a number not checked) and the derivation file and line of the claim, so a code
scanning service annotates the line where the number was printed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

from symtf import __version__, visible
from symtf.checking.report import FAILING, Report
from symtf.renderers._claims import error_line, located, one_line, unchecked_line
from symtf.renderers.text import coverage_problem

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"

RULES = (
    ("slip", "A printed number is one unit in the last place off (not a correct rounding)."),
    ("wrong", "A printed number is further off than one unit in the last place."),
    ("undecided", "The exact value cannot be separated from a rounding boundary."),
    ("symbolic", "The value depends on a symbol of the file: it is reported as an expression."),
    ("bad-input", "A derivation file could not be checked."),
    ("not-checked", "A printed number of an article that no step explains or symtf cannot read."),
    (
        "too-few-checked",
        "An article has a smaller share of its printed numbers checked than required.",
    ),
)


def _uri(path: str) -> str:
    p = Path(path)
    if p.is_absolute():
        return p.as_uri()
    return quote(p.as_posix())


def _location(path: str, line: int | None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(path)}}
    if line is not None:
        physical["region"] = {"startLine": line}
    return {"physicalLocation": physical}


def _result(rule: str, level: str, message: str, path: str, line: int | None) -> dict[str, Any]:
    return {
        "ruleId": rule,
        "ruleIndex": [r for r, _ in RULES].index(rule),
        "level": level,
        "message": {"text": visible.line(message)},
        "locations": [_location(path, line)],
    }


def report_dict(report: Report) -> dict[str, Any]:
    """The report as a SARIF 2.1.0 log."""
    results = []
    for x in located(report):
        c = x.check
        if c.verdict in FAILING:
            results.append(_result(c.verdict, "error", one_line(c), x.file, x.printed_line))
        elif c.verdict in ("undecided", "symbolic"):
            results.append(_result(c.verdict, "warning", one_line(c), x.file, x.printed_line))
    for e in report.errors:
        results.append(_result("bad-input", "error", e.error, e.path, error_line(e.error)))
    for d in report.derivations:  # an article's numbers not checked, each with its reason
        for u in d.unchecked:
            why = f"not checked: {unchecked_line(u)}"
            results.append(_result("not-checked", "note", why, d.article or d.path, u.line or None))
    for level, found in (("error", report.too_few_checked), ("warning", report.few_checked)):
        for d in found:
            problem = coverage_problem(d, report)
            results.append(_result("too-few-checked", level, problem, d.article or d.path, None))
    rules = [
        {"id": rule, "shortDescription": {"text": text}, "fullDescription": {"text": text}}
        for rule, text in RULES
    ]
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "symtf", "version": __version__, "rules": rules}},
                "results": results,
            }
        ],
    }


def render(report: Report) -> str:
    """The report as SARIF 2.1.0 JSON text."""
    return visible.json_text(report_dict(report), indent=2) + "\n"
