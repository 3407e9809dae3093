"""The stable JSON contract (fields may be added, never renamed)."""

from __future__ import annotations

import json
from typing import Any

from symtf import __version__
from symtf.compare import Check, Report


def check_dict(c: Check) -> dict[str, Any]:
    """One check as a JSON object."""
    d: dict[str, Any] = {
        "claim": c.claim,
        "step": c.step,
        "index": list(c.index) if c.index is not None else None,
        "printed": c.printed,
        "expected": c.expected,
        "exact": c.exact,
        "verdict": c.verdict,
        "explanation": c.explanation,
    }
    d.update(c.extra)
    return d


def report_dict(report: Report) -> dict[str, Any]:
    """The whole report as a JSON-ready dict."""
    return {
        "symtf": __version__,
        "derivations": [
            {
                "path": d.path,
                "title": d.title,
                "checks": [check_dict(c) for c in d.checks],
                "counts": d.counts,
            }
            for d in report.derivations
        ],
    }


def render(report: Report) -> str:
    """The report as indented JSON text."""
    return json.dumps(report_dict(report), indent=2, ensure_ascii=False) + "\n"
