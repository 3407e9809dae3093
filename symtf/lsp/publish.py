"""Diagnostics of a result, per document (a notebook's per cell).

Each ``slip`` or ``wrong`` number of the report is one diagnostic, at its range in
the document (its whole line where the report gives no column): Warning for a
slip, Error for a wrong number; its message the verdict and the check's
explanation, its code the cause (``propagated-rounding``, ``inherited`` …), its
source ``symtf``, its related information the root of an inherited number. The
numbers the draft could not check are Information diagnostics when the user asks
(``showUnchecked``). A document that could not be checked gets one diagnostic at
its start saying why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lsprotocol import types

from symtf.lsp import features
from symtf.lsp.config import Settings
from symtf.lsp.text import Span, Text
from symtf.renderers import safe

__all__ = ["diagnostics", "lsp_range"]

SOURCE = "symtf"
#: The place fields of a number (JSON report), the ones :meth:`features.Doc.where` reads.
_PLACE_KEYS = (
    "source_line",
    "source_column",
    "source_end_column",
    "cell_index",
    "cell_line",
    "cell_column",
)


def lsp_range(text: Text, span: Span) -> types.Range:
    """A span as the client's range."""
    a, b = text.position(span.start), text.position(span.end)
    return types.Range(
        start=types.Position(line=a[0], character=a[1]),
        end=types.Position(line=b[0], character=b[1]),
    )


def diagnostics(
    result: Mapping[str, Any],
    located: Sequence[features.Located],
    doc: features.Doc,
    settings: Settings,
) -> dict[str, list[types.Diagnostic]]:
    """The diagnostics of a result, by document URI."""
    out: dict[str, list[types.Diagnostic]] = {}
    if result.get("status") == "error":
        error = str(result.get("error", "not checked"))
        budget = "time budget" in error
        out[doc.uri if not doc.cells else doc.cells[0][0]] = [
            types.Diagnostic(
                range=types.Range(
                    start=types.Position(line=0, character=0),
                    end=types.Position(line=0, character=0),
                ),
                message=safe.block(error),
                severity=types.DiagnosticSeverity.Warning
                if budget
                else types.DiagnosticSeverity.Error,
                code="time-budget" if budget else "not-checked",
                source=SOURCE,
            )
        ]
        return out
    for k, x in enumerate(located):
        c = x.check
        severity = features.severity_of(c)
        if severity is None:
            continue
        where = x.where or _first_line(doc)
        related = None
        root = features.root_of(c, located) if c.get("cause") == "inherited" else None
        if root is not None and root.where is not None:
            related = [
                types.DiagnosticRelatedInformation(
                    location=types.Location(
                        uri=root.where.uri, range=lsp_range(root.where.text, root.where.span)
                    ),
                    message=f"the root: {safe.line(root.check.get('claim'))} printed "
                    f"{safe.line(root.check.get('printed'))}",
                )
            ]
        out.setdefault(where.uri, []).append(
            types.Diagnostic(
                range=lsp_range(where.text, where.span),
                message=features.message(c),
                severity=types.DiagnosticSeverity(severity),
                code=str(c.get("cause") or c.get("verdict")),
                source=SOURCE,
                related_information=related,
                data={
                    "check": k,
                    "claim": c.get("claim"),
                    "index": c.get("index"),
                    "verdict": c.get("verdict"),
                    "printed": c.get("printed"),
                },
            )
        )
    if settings.show_unchecked:
        for u in (result.get("derivation") or {}).get("unchecked", []):
            # One diagnostic per number where the reader kept each number's place, else one
            # on the claim's line.
            places = u.get("places")
            if not isinstance(places, list) or not places:
                places = [{"source_line": u.get("source_line")}]
            what = u.get("numbers")
            count = f" ({what} number(s))" if isinstance(what, int) and len(places) == 1 else ""
            for p in places:
                if not isinstance(p, Mapping):
                    continue
                place = doc.where({k: p.get(k) for k in _PLACE_KEYS})
                if place is None:
                    continue
                out.setdefault(place.uri, []).append(
                    types.Diagnostic(
                        range=lsp_range(place.text, place.span),
                        message=f"not checked: {safe.line(u.get('claim'))}{count}: "
                        f"{safe.line(u.get('reason', ''))}",
                        severity=types.DiagnosticSeverity.Information,
                        code=f"unchecked-{u.get('why', 'unmapped')}",
                        source=SOURCE,
                    )
                )
    return out


def _first_line(doc: features.Doc) -> features.Where:
    uri, text = (doc.uri, doc.text) if not doc.cells else doc.cells[0]
    span = text.line_span(1) or Span(0, 0)
    return features.Where(uri, text, span, False)
