"""GitHub Actions workflow commands: each off number annotates its line of the derivation.

``symtf check --format github`` prints one ``::error`` line per slip or wrong
number, a ``::warning`` per undecided one, an ``::error`` per file that could
not be checked, a ``::notice`` per printed number of an article left unchecked
(with its reason), and an ``::error`` for an article with fewer numbers checked
than ``--require-checked`` asks (a ``::warning`` under half, without it); GitHub shows them on the pull request's diff. Values are escaped
as the Actions toolkit does (``%``, CR and LF in the message; also ``:`` and
``,`` in properties), and control characters in labels are made visible first.
"""

from __future__ import annotations

from symtf import visible
from symtf.checking.report import FAILING, Report
from symtf.renderers._claims import error_line, located, one_line, unchecked_line
from symtf.renderers.text import coverage_problem


def escape_data(text: str) -> str:
    """A workflow command's message, escaped."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value, escaped."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(level: str, message: str, *, file: str, line: int | None, title: str) -> str:
    """One workflow command line (``::error file=…,line=…,title=…::message``)."""
    props = [f"file={escape_property(visible.line(file))}"]
    if line is not None:
        props.append(f"line={line}")
    props.append(f"title={escape_property(visible.line(title))}")
    return f"::{level} {','.join(props)}::{escape_data(visible.line(message))}"


def render(report: Report) -> str:
    """The off and not decided (undecided, symbolic) numbers and the bad files, as workflow commands."""
    out = []
    for x in located(report):
        c = x.check
        if c.verdict in FAILING:
            level = "error"
        elif c.verdict in ("undecided", "symbolic"):
            level = "warning"
        else:
            continue
        title = f"symtf: {c.claim} is {c.verdict}"
        out.append(command(level, one_line(c), file=x.file, line=x.printed_line, title=title))
    for e in report.errors:
        out.append(
            command(
                "error", e.error, file=e.path, line=error_line(e.error), title="symtf: bad input"
            )
        )
    for d in report.derivations:  # an article's numbers not checked, each with its reason
        for u in d.unchecked:
            what = f"not checked: {unchecked_line(u)}"
            out.append(
                command(
                    "notice",
                    what,
                    file=d.article or d.path,
                    line=u.line or None,
                    title="symtf: not checked",
                )
            )
    for level, found in (("error", report.too_few_checked), ("warning", report.few_checked)):
        for d in found:
            out.append(
                command(
                    level,
                    coverage_problem(d, report),
                    file=d.article or d.path,
                    line=None,
                    title="symtf: printed numbers not checked",
                )
            )
    return "".join(line + "\n" for line in out)
