"""Checking a made-up article in a test: write it, check it, and list each number's verdict
where the number stands (its own line and column, not its claim's first line)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from symtf.commands.draft import check_article
from symtf.renderers import json as render_json
from symtf.renderers._claims import place_of


def _post(tmp_path: Path, text: str, name: str, newline: str = "\n") -> Path:
    path = tmp_path / name
    path.write_bytes(text.replace("\n", newline).encode("utf-8"))
    return path


def placed(tmp_path: Path, text: str, name: str = "post.md") -> list[tuple[Any, ...]]:
    """(line of the number itself, printed, verdict, cause) of every checked number."""
    out: list[tuple[Any, ...]] = []
    for r in check_article(_post(tmp_path, text, name)).results:
        for k, c in enumerate(r.checks):
            place = place_of(r, c, k)
            line = place.line if place is not None else r.claim.source_line
            out.append((line, c.printed, c.verdict, c.extra.get("cause")))
    return out


def placed_verdicts(tmp_path: Path, text: str) -> list[tuple[int | None, str, str]]:
    """(line of the number itself, printed, verdict) of every checked number."""
    return [(line, printed, verdict) for line, printed, verdict, _ in placed(tmp_path, text)]


def json_checks(
    tmp_path: Path, text: str, name: str = "post.md", newline: str = "\n"
) -> list[dict[str, Any]]:
    """The JSON report's checks of the article."""
    checks: list[dict[str, Any]] = render_json.derivation_dict(
        check_article(_post(tmp_path, text, name, newline))
    )["checks"]
    return checks


def position(text: str, needle: str, nth: int = 0) -> tuple[int, int]:
    """The 1-based (line, column) of the ``nth`` occurrence of ``needle`` in ``text``."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    line = text.count("\n", 0, at) + 1
    return line, at - (text.rfind("\n", 0, at) + 1) + 1


def verdicts_at(checks: list[dict[str, Any]], text: str, needle: str, nth: int = 0) -> set[str]:
    """The verdicts on the number written at the ``nth`` occurrence of ``needle``."""
    line, column = position(text, needle, nth)
    return {
        c["verdict"] for c in checks if (c["source_line"], c.get("source_column")) == (line, column)
    }


def verdicts_by_line(
    tmp_path: Path, text: str, name: str = "post.md"
) -> dict[int, list[tuple[str, str]]]:
    """(printed, verdict) of every checked number, by the line of the number itself."""
    out: dict[int, list[tuple[str, str]]] = {}
    for r in check_article(_post(tmp_path, text, name)).results:
        places = r.claim.places
        for k, c in enumerate(r.checks):
            line = places[k].line if len(places) == len(r.checks) else r.claim.source_line
            out.setdefault(line or 0, []).append((c.printed, c.verdict))
    return out


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the first line of ``text`` holding ``needle``."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)
