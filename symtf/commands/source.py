"""What a command reads: a derivation file, a bundled example's name, or an article as it stands.

Every command that takes a worked example (``html``, ``latex``, ``explain``, ``exercise``,
``whatif``, ``steps``) reads it here. An article or notebook (``.md``, ``.ipynb``, ``.tex``,
``.txt``) is drafted in memory as ``symtf check`` drafts it (:mod:`symtf.commands.draft`),
and the command works on the claims the draft could map: a printing no step explains
(``step = "?"``) or a claim the check cannot read is left out, and :func:`left_out` says
which numbers those are.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from symtf import files

if TYPE_CHECKING:
    from symtf.checking.report import DerivationReport
    from symtf.spec import Derivation

#: Most left-out claims named one by one before the rest are counted.
MAX_NAMED = 12
#: Most printed numbers of one left-out claim quoted.
MAX_QUOTED = 4


@dataclass(frozen=True)
class Source:
    """A worked example as a command reads it.

    Attributes:
        path: The file as named on the command line (or the bundled example's file).
        derivation: The derivation; for an article, the draft with only the claims that
            can be checked (``drafted`` keeps them all, unmapped ones too).
        text: The derivation as TOML text (an article's draft, ``step = "?"`` claims and all).
        article: The article's path, when the source is an article drafted in memory.
        unchecked: For an article: what the draft could not check
            (:class:`symtf.draft.Unmapped` and :class:`symtf.draft.Unread`).
        report: For an article: the check that found which claims can be read (its
            lines are the article's); ``None`` for a derivation file.
        article_text: For an article: its text, as it was read and drafted.
    """

    path: str
    derivation: Derivation
    text: str
    article: str | None = None
    unchecked: tuple[Any, ...] = ()
    report: DerivationReport | None = None
    article_text: str = ""


def is_article(path: str | Path) -> bool:
    """Whether this file is drafted before a command reads it (by its suffix)."""
    from symtf.commands.draft import is_article as by_suffix

    return by_suffix(path)


def read(path: str | Path, *, check: bool = True) -> Source:
    """Read a derivation file, a bundled example, or an article (drafted in memory).

    The caller sets the time budget and the resource guard around the call.

    Args:
        path: What the command line named.
        check: For an article, check the draft (which finds the claims the check cannot
            read, and gives :attr:`Source.report`); without it, only the unmapped claims
            are left out (for a command that checks nothing, such as ``steps``).

    Raises:
        SymtfError: For a missing or bad file, naming it.
    """
    from symtf import bundled, files, spec

    if is_article(path):
        return _article(str(path), check=check)
    file = bundled.resolve(path)  # a path, or a bundled example's name
    text = files.read_text(file, spec.MAX_FILE_BYTES, what="a derivation")
    return Source(str(path), spec.loads(text, str(file)), text)


def _article(path: str, *, check: bool) -> Source:
    from symtf import spec
    from symtf.commands.draft import checked_article
    from symtf.draft import article_kind, draft_text
    from symtf.extract import read_article_text

    text = read_article_text(path)  # read once: what is drafted is what a page draws
    if check:
        drafted = checked_article(path, text)
        return Source(
            path,
            drafted.derivation,
            drafted.toml,
            path,
            drafted.report.unchecked,
            drafted.report,
            text,
        )
    draft = draft_text(text, article_kind(path), path=path)
    full = spec.loads(draft.toml, path)
    claims = tuple(c for c in full.claims if not c.unmapped)
    derivation = dataclasses.replace(full, claims=claims, drafted=full.claims)
    return Source(path, derivation, draft.toml, path, (*draft.unmapped, *draft.unread), None, text)


def left_out(source: Source) -> str | None:
    """The printed numbers of an article a command leaves out, in words; ``None`` if none.

    Each is named by its article line and label, with the numbers it printed: a printing no
    step explains (``step = "?"``) or a claim the check cannot read (with the reason).
    """
    from symtf.renderers.safe import line as safe_line

    if source.article is None or not source.unchecked:
        return None
    # The draft's unmapped claims, in order; each Unmapped is paired with the first one of its
    # line and label (the draft makes a label unique with its line: ``d_k (line 145)``).
    waiting = [c for c in source.derivation.drafted if c.unmapped]

    def printed_of(u: Any) -> tuple[tuple[Any, ...], ...]:
        for c in waiting:
            if c.source_line == u.line and c.label.removesuffix(f" (line {u.line})") == u.label:
                waiting.remove(c)
                return tuple(c.printed)
        return ()

    unmapped = [u for u in source.unchecked if not hasattr(u, "reason")]
    unread = [u for u in source.unchecked if hasattr(u, "reason")]
    parts: list[str] = []
    if unmapped:
        n = sum(u.size for u in unmapped)
        parts.append(
            f"{n} printed number(s) in {len(unmapped)} claim(s) no step explains "
            '(step = "?") are left out'
        )
    if unread:
        parts.append(f"{len(unread)} claim(s) the check cannot read are left out")
    lines = [f"{source.article}: " + "; ".join(parts) + ":"]
    for u in [*unmapped, *unread][:MAX_NAMED]:
        if hasattr(u, "reason"):
            what = f"{u.text[:60]}: {u.reason.splitlines()[0]}"
        else:
            rows = printed_of(u)
            numbers = [getattr(x, "text", str(x)) for row in rows for x in row]
            quoted = ", ".join(numbers[:MAX_QUOTED]) + (", …" if len(numbers) > MAX_QUOTED else "")
            what = f"{quoted} ({u.note})" if quoted else u.note
        lines.append(f"  line {u.line}: {u.label}: {what}")
    more = len(unmapped) + len(unread) - MAX_NAMED
    if more > 0:
        lines.append(f"  … and {more} more")
    return "\n".join(safe_line(x) for x in lines)


def warn_left_out(source: Source) -> None:
    """Print :func:`left_out` on stderr (a warning: ``--quiet`` does not silence it)."""
    text = left_out(source)
    if text is not None:
        files.say(f"symtf: warning: {text}")


def traced(source: Source) -> DerivationReport:
    """The source checked, with the exact trace every step is shown from (notes, pages).

    An article's check is the one :func:`read` ran (its lines are the article's).

    Raises:
        LimitError: When the exact values would not fit, or the time budget ran out.
    """
    from symtf.checking import compare
    from symtf.limits import enforce

    if source.report is None:
        return compare.check_traced(source.derivation)
    enforce(source.derivation)
    if source.report.not_reached:
        from symtf.errors import LimitError

        raise LimitError(
            f"{source.path}: exceeded the time budget: {len(source.report.not_reached)} of "
            f"{len(source.report.results)} claims were not checked (raise it with --timeout)"
        )
    return compare.traced(source.report, source.derivation)
