"""JUnit XML: one test case per claim, so CI systems show a post's numbers as tests.

The document follows the ``junit-10.xsd`` schema pytest validates its own
reports with: a ``testsuite`` per derivation file (``file``, ``time``,
``tests``, ``failures``, ``errors``, ``skipped``), a ``testcase`` per claim
(``classname`` the file, ``name`` the label) with a ``failure`` for a slip or a
wrong number and ``skipped`` for an undecided one. An article's printed numbers
that were not checked are skipped test cases saying why, and an article with
fewer checked than ``--require-checked`` asks has a failing case ``printed
numbers checked``. That schema gives a test case
no line attribute, so each failure and skip says ``FILE:LINE`` (the line the
number was printed on) in its message;
times are per file (a file's claims are checked together). A file that could
not be checked is a suite whose one test case ``load`` fails with type
``bad-input`` (the schema has no ``error`` element that CI systems read).
"""

from __future__ import annotations

from xml.etree import ElementTree as ET

from symtf import visible
from symtf.checking.report import FAILING, DerivationReport, Report
from symtf.renderers._claims import Located, one_line, unchecked_line
from symtf.renderers.text import coverage_problem


def _place(path: str, line: int | None) -> str:
    return f"{path}:{line}" if line is not None else path


def _time(seconds: float | None) -> str:
    return f"{seconds or 0.0:.3f}"


def _suite(parent: ET.Element, d: DerivationReport, report: Report) -> tuple[int, int, int]:
    too_few = any(x is d for x in report.too_few_checked)
    failures = sum(1 for r in d.results if r.verdict in FAILING) + too_few
    skipped = sum(1 for r in d.results if r.verdict in ("undecided", "symbolic"))
    skipped += len(d.unchecked)
    tests = len(d.results) + len(d.unchecked) + too_few
    suite = ET.SubElement(
        parent,
        "testsuite",
        name=visible.line(d.path),
        tests=str(tests),
        failures=str(failures),
        errors="0",
        skipped=str(skipped),
        time=_time(d.seconds),
        file=visible.line(d.path),
    )
    for r in d.results:
        case = ET.SubElement(
            suite, "testcase", classname=visible.line(d.path), name=visible.line(r.claim.label)
        )
        checks = [Located(d, r, c, k) for k, c in enumerate(r.checks)]
        bad = [x for x in checks if x.check.verdict in FAILING]
        if bad:
            first = bad[0]
            fail = ET.SubElement(
                case,
                "failure",
                type=r.verdict,
                message=visible.line(
                    f"{_place(d.path, first.printed_line)}: {len(bad)} printed number(s) off: "
                    f"{one_line(first.check)}"
                ),
            )
            fail.text = visible.block(
                "\n".join(f"{_place(d.path, x.printed_line)}: {one_line(x.check)}" for x in bad)
            )
        elif r.verdict in ("undecided", "symbolic"):
            x = next(x for x in checks if x.check.verdict == r.verdict)
            message = f"{_place(d.path, x.printed_line)}: {one_line(x.check)}"
            ET.SubElement(case, "skipped", type=r.verdict, message=visible.line(message))
    for u in d.unchecked:  # an article's numbers not checked: each a skipped case, with why
        case = ET.SubElement(
            suite, "testcase", classname=visible.line(d.path), name=visible.line(u.label)
        )
        message = f"{_place(d.path, u.line or None)}: not checked: {unchecked_line(u)}"
        ET.SubElement(case, "skipped", type="not-checked", message=visible.line(message))
    if too_few:
        case = ET.SubElement(
            suite, "testcase", classname=visible.line(d.path), name="printed numbers checked"
        )
        problem = visible.line(coverage_problem(d, report))
        fail = ET.SubElement(case, "failure", type="too-few-checked", message=problem)
        fail.text = problem
    return tests, failures, skipped


def render(report: Report) -> str:
    """The report as a JUnit XML document."""
    suites = ET.Element("testsuites", name="symtf")
    tests = failures = 0
    for d in report.derivations:
        t, f, _ = _suite(suites, d, report)
        tests, failures = tests + t, failures + f
    for e in report.errors:
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=visible.line(e.path),
            tests="1",
            failures="1",
            errors="0",
            skipped="0",
            file=visible.line(e.path),
        )
        case = ET.SubElement(suite, "testcase", classname=visible.line(e.path), name="load")
        err = ET.SubElement(case, "failure", type="bad-input", message=visible.line(e.error))
        err.text = visible.block(e.error)
    suites.set("tests", str(tests + len(report.errors)))
    suites.set("failures", str(failures + len(report.errors)))
    suites.set("errors", "0")
    total = sum(d.seconds or 0.0 for d in report.derivations)
    suites.set("time", _time(total))
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
