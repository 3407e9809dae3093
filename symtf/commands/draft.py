"""``symtf draft``: infer an article's derivation; and ``symtf check ARTICLE`` on top of it.

``symtf draft post.md -o post.toml`` writes the derivation the draft infers
(given tensors, steps with a comment on what each matched, claims with their
article lines; ``step = "?"`` for what no step explains) for a person to review
and edit. :func:`check_article` drafts and checks in one run, and reports every
verdict at the article's own line.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from symtf.commands import add_timeout

DESCRIPTION = """\
Read an article or notebook as it stands (Markdown .md, plain text .txt, LaTeX
.tex, Jupyter .ipynb) and write the derivation it implies: the printed inputs as
given tensors, the step behind each printed matrix (found by a search whose
certified values reproduce the printed entries at their printed precision;
notebook code translated from its syntax tree, never run), and a claim for
every printed number with its article line. What no step explains stays
step = "?" with the best candidates in a comment. Then:

  symtf check post.toml        # after reviewing and editing
  symtf check post.md          # draft and check in one run
"""

#: Most claims dropped, one at a time, before an article's check gives up.
MAX_DROPPED = 200


def configure(subparsers: Any) -> None:
    """Add the ``draft`` sub-command."""
    p = subparsers.add_parser(
        "draft",
        help="infer an article's or notebook's derivation and write it for review",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "article",
        metavar="ARTICLE",
        help="a .md, .txt, .tex or .ipynb file, or a program (.py, .c, .h, …)",
    )
    p.add_argument(
        "-o", "--output", metavar="FILE.toml", help="write the derivation here (default: stdout)"
    )
    add_timeout(p, 60.0)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``symtf draft``; returns the exit code."""
    from symtf import files
    from symtf.cli import progress, time_budget
    from symtf.commands import note
    from symtf.draft import draft_file, sizing

    progress(f"drafting {args.article} ...")
    with time_budget(getattr(args, "timeout", 60.0), str(args.article)):
        draft = draft_file(args.article)
    sizing.refuse_text(draft.toml, str(args.article))  # what draft writes, check reads
    if args.output:
        files.write_text(args.output, draft.toml)  # whole or not at all
        unmapped = sum(u.size for u in draft.unmapped)
        note(
            f"{args.output}: {draft.steps} step(s) inferred in {draft.seconds:.1f} s; "
            f'{len(draft.unmapped)} claim(s) ({unmapped} printed number(s)) left with step = "?", '
            f"{len(draft.unread)} unreadable; next: symtf check {args.output}"
        )
    else:
        files.write_stdout(draft.toml)
    return 0


def is_article(path: str | Path) -> bool:
    """Whether ``symtf check`` drafts this file before checking it (by its suffix)."""
    from symtf.files import ARTICLE_SUFFIXES, PROGRAM_SUFFIXES  # not symtf.draft: no TOML needs it

    return Path(path).suffix.lower() in ARTICLE_SUFFIXES + PROGRAM_SUFFIXES


@dataclasses.dataclass(frozen=True)
class CheckedArticle:
    """An article drafted and checked in one run (see :func:`checked_article`).

    Attributes:
        derivation: The draft, with only the claims the check could read (``drafted``
            keeps every claim of the draft, ``step = "?"`` ones too).
        toml: The draft as text.
        report: Its check: lines are the article's, ``unchecked`` lists what was left out.
    """

    derivation: Any
    toml: str
    report: Any


def check_article(path: str | Path, drafted: Any = None) -> Any:
    """Draft an article and check the draft in one run (the caller sets the time budget).

    ``drafted``: the article's :class:`~symtf.draft.Draft`, when the caller drafted it
    already (the pytest plugin drafts at collection, to know the claims).

    The report's lines are the article's (``DerivationReport.article``); what the
    draft could not check is listed in ``DerivationReport.unchecked``. A claim the
    check cannot read is left out with its reason, and the others are checked.

    Raises:
        SymtfError: The article cannot be read (missing, too large, not UTF-8, not a
            notebook), naming the file.
    """
    if drafted is not None:
        return check_drafted(drafted, str(path))
    return checked_article(path).report


def checked_article(path: str | Path, text: str | None = None) -> CheckedArticle:
    """:func:`check_article`, with the derivation it checked and the draft's text.

    Args:
        path: The article.
        text: Its text, when the caller has read it already (read once, drawn as read).

    Raises:
        SymtfError: The article cannot be read, naming the file.
    """
    from symtf.draft import article_kind
    from symtf.extract import read_article_text

    if text is None:
        text = read_article_text(path)
    return _checked_text(text, str(path), article_kind(path))


def check_article_text(text: str, name: str, kind: str) -> Any:
    """:func:`check_article` of an article given as text (an editor's unsaved buffer).

    Args:
        text: The article, as it would be read from its file.
        name: The file it is (or will be), for messages and the report.
        kind: ``md``, ``tex``, ``ipynb`` or ``txt`` (see :func:`symtf.draft.article_kind`).

    Raises:
        SymtfError: The text cannot be read as that kind of article, naming ``name``.
    """
    return _checked_text(text, name, kind).report


def _checked_text(text: str, name: str, kind: str) -> CheckedArticle:
    from symtf.draft import draft_text
    from symtf.limits import guard

    start = time.perf_counter()
    with guard(name):
        draft = draft_text(text, kind, path=name)
    return checked_draft(draft, name, start=start)


def check_drafted(
    draft: Any, name: str, *, start: float | None = None, check: Callable[[Any], Any] | None = None
) -> Any:
    """Check an article's :class:`~symtf.draft.Draft` (the second half of :func:`check_article`).

    ``start``: when the work on the article began (``perf_counter``), for the report's seconds.
    ``check``: checks a derivation in place of :func:`symtf.checking.compare.check` (the
    language server's reuses its last check: :mod:`symtf.checking.incremental`).
    """
    return checked_draft(draft, name, start=start, check=check).report


def checked_draft(
    draft: Any, name: str, *, start: float | None = None, check: Callable[[Any], Any] | None = None
) -> CheckedArticle:
    """:func:`check_drafted`, with the derivation it checked and the draft's text."""
    from symtf import spec
    from symtf.checking import compare
    from symtf.draft import Unread
    from symtf.errors import SpecError
    from symtf.limits import guard

    start = time.perf_counter() if start is None else start
    with guard(name):
        derivation = spec.loads(draft.toml, name)
        claims = [c for c in derivation.claims if not c.unmapped]
        unread = list(draft.unread)
        for _ in range(MAX_DROPPED):
            checked = dataclasses.replace(
                derivation, claims=tuple(claims), drafted=derivation.claims
            )
            try:
                report = (check or compare.check)(checked)
                break
            except SpecError as e:  # one claim the check cannot read: say so, check the rest
                bad = _claim_of(str(e), claims)
                if bad is None:
                    raise
                claims.remove(bad)
                shown = bad.expression or bad.step or ""
                unread.append(Unread(bad.label, bad.source_line or 0, shown, _reason(str(e), name)))
        else:
            raise SpecError(f"{name}: more than {MAX_DROPPED} claims could not be read")
    report = dataclasses.replace(
        report,
        article=name,
        unchecked=(*_not_copied(draft.unmapped, report), *unread),
        inputs=draft.stated,
        given=draft.inputs,
        seconds=time.perf_counter() - start,
    )
    return CheckedArticle(checked, draft.toml, report)


def _not_copied(unmapped: Any, report: Any) -> list[Any]:
    """The draft's unmapped printings, less the literals that got a verdict of their own
    (copy slips, :mod:`symtf.checking.lineage`; literals read as expressions,
    :mod:`symtf.checking.expressed`): each such literal is checked, once."""
    copies = [
        (r.claim.source_line, c.printed)
        for r in report.results
        for c in r.checks
        if "literal_of" in c.extra
    ]
    out = []
    for u in unmapped:
        key = (u.line, getattr(u, "text", None))
        if key in copies:
            copies.remove(key)
            continue
        out.append(u)
    return out


def _claim_of(message: str, claims: list[Any]) -> Any:
    """The claim an error message names (``FILE: claims[7].expression: …``)."""
    m = re.search(r"claims\[(\d+)\]", message)
    if m is None:
        return None
    where = f"claims[{m.group(1)}]"
    return next((c for c in claims if c.where.endswith(where)), None)


def _reason(message: str, name: str) -> str:
    text = message.removeprefix(f"{name}: ")
    return re.sub(r"^claims\[\d+\]\.?\w*: ", "", text)
