"""A draft's report: the verdicts on what is mapped, then what is left to map."""

from __future__ import annotations

from typing import Any

from symtf.checking.draft import DraftReport
from symtf.checking.report import Report
from symtf.renderers import json as render_json
from symtf.renderers import text as render_text
from symtf.visible import json_text


def render_text_draft(drafts: list[DraftReport]) -> str:
    """Text: the usual report, then each unmapped claim with its suggested steps."""
    out = [render_text.render(Report(tuple(d.report for d in drafts)))]
    for d in drafts:
        if not d.unmapped:
            continue
        out.append(
            f"\n{d.report.path}: {len(d.unmapped)} claim(s) left to map, most printed numbers first"
        )
        for u in d.unmapped:
            where = f" (article line {u.claim.source_line})" if u.claim.source_line else ""
            out.append(f"  {u.claim.label}{where}: {u.size} number(s)")
            if not u.suggestions:
                out.append("      no step of this model matches its numbers")
            for s in u.suggestions:
                out.append(f"      {s.score:4.0%}  {s.toml()}")
    return "\n".join(out) + "\n"


def draft_dict(drafts: list[DraftReport]) -> dict[str, Any]:
    """JSON: the usual report plus ``unmapped`` per derivation."""
    data = render_json.report_dict(Report(tuple(d.report for d in drafts)))
    for entry, d in zip(data["derivations"], drafts, strict=True):
        entry["unmapped"] = [
            {
                "claim": u.claim.label,
                "source_line": u.claim.source_line,
                "numbers": u.size,
                "suggestions": [
                    {
                        "step": s.step,
                        "row": s.row,
                        "col": s.col,
                        "index": list(s.index) if s.index is not None else None,
                        "score": s.score,
                        "toml": s.toml(),
                    }
                    for s in u.suggestions
                ],
            }
            for u in d.unmapped
        ]
    return data


def render_json_draft(drafts: list[DraftReport]) -> str:
    """The JSON form as indented text."""
    return json_text(draft_dict(drafts), indent=2) + "\n"
