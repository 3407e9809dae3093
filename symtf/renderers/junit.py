"""JUnit XML: one test case per claim, so CI systems show a post's numbers as tests."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from symtf.compare import FAILING, Report
from symtf.renderers.safe import block, line


def render(report: Report) -> str:
    """The report as a JUnit XML document."""
    suites = ET.Element("testsuites", name="symtf")
    for d in report.derivations:
        failures = sum(1 for r in d.results if r.verdict in FAILING)
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=line(d.path),
            tests=str(len(d.results)),
            failures=str(failures),
        )
        for r in d.results:
            case = ET.SubElement(
                suite, "testcase", classname=line(d.path), name=line(r.claim.label)
            )
            bad = [c for c in r.checks if c.verdict in FAILING]
            if bad:
                lines = [
                    f"{c.index or ''} printed {c.printed}, exact {c.exact}, expected {c.expected}: "
                    f"{c.explanation}"
                    for c in bad
                ]
                fail = ET.SubElement(case, "failure", message=f"{len(bad)} number(s) {r.verdict}")
                fail.text = block("\n".join(lines))
            elif r.verdict in ("undecided", "symbolic"):
                why = next((c.explanation for c in r.checks if c.verdict == r.verdict), "")
                ET.SubElement(
                    case, "skipped", message=line(f"{r.verdict}: {why}" if why else r.verdict)
                )
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
