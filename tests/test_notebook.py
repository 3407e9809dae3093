"""The example notebook runs from top to bottom in a real kernel and shows HTML, not TeX.

Executed with nbclient (the notebook runner nbconvert uses) in a fresh
ipykernel; these are test extras. Skipped only when they are not installed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import symtf

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parent.parent
#: Where the symtf under test was imported from (a checkout, or an installed wheel):
#: child processes import the same one.
SYMTF_HOME = str(Path(symtf.__file__).resolve().parent.parent)
NOTEBOOK = ROOT / "examples" / "checking.ipynb"


def test_example_notebook_runs_and_displays_html(monkeypatch: pytest.MonkeyPatch) -> None:
    # The kernel imports the symtf under test: this checkout's, or the installed wheel's.
    monkeypatch.setenv("PYTHONPATH", SYMTF_HOME)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(ROOT / "examples")}},
    ).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    rich = [o["data"] for o in outputs if o.get("output_type") == "execute_result"]
    html = [d["text/html"] for d in rich if "text/html" in d]
    assert len(html) >= 3  # the report, one step, the trace
    report_html = html[0]
    assert "<math" in report_html and "<script" not in report_html
    assert 'class="v v-slip"' in report_html and "-2.048" in report_html
    # The plain-text fallback every display carries is a summary, not an object dump.
    assert all(len(d["text/plain"]) < 4000 for d in rich)
    printed = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "printed -2.049 -> -2.048 (slip)" in printed
    assert re.search(r"<Report of 1 derivation\(s\): 549 printed numbers", printed)
