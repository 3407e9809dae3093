"""The documentation says what the code does: the tutorial's outputs are real, its files
check as it says, and every README section a page includes exists.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from symtf.cli import main

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
TUTORIAL = DOCS / "tutorial"


def console_blocks(page: Path) -> list[tuple[list[str], list[str]]]:
    """Each ``console`` block of a page: the command's words and the output lines shown."""
    blocks = re.findall(r"```console\n(.*?)```", page.read_text(encoding="utf-8"), re.DOTALL)
    out = []
    for block in blocks:
        first, *rest = block.rstrip("\n").split("\n")
        assert first.startswith("$ symtf "), first
        out.append((re.findall(r'"[^"]*"|\S+', first[len("$ symtf ") :]), rest))
    return out


@pytest.mark.parametrize("k", range(len(console_blocks(DOCS / "tutorial.md"))))
def test_the_tutorial_shows_real_output(
    k: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    words, shown = console_blocks(DOCS / "tutorial.md")[k]
    for f in TUTORIAL.iterdir():
        (tmp_path / f.name).write_bytes(f.read_bytes())
    monkeypatch.chdir(tmp_path)
    main([w.strip('"') for w in words])
    got = capsys.readouterr()
    lines = (got.out + got.err).rstrip("\n").split("\n")
    for n, line in enumerate(shown):
        if line.endswith(" …"):  # the page shows the rest of the output abridged
            assert lines[n].startswith(line[:-1]), (n, lines[n])
            break
        assert lines[n] == line, n


def test_the_tutorial_derivation_has_the_slip_it_describes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check", str(TUTORIAL / "softmax-post.toml")]) == 1
    assert "1 exact, 2 rounded, 1 slip" in capsys.readouterr().out


def test_every_included_readme_section_exists() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    starts = re.findall(r"<!-- --8<-- \[start:([\w-]+)\] -->", readme)
    ends = re.findall(r"<!-- --8<-- \[end:([\w-]+)\] -->", readme)
    assert starts == ends and len(set(starts)) == len(starts)
    for page in DOCS.glob("*.md"):
        for name in re.findall(r'--8<-- "README\.md:([\w-]+)"', page.read_text(encoding="utf-8")):
            assert name in starts, (page.name, name)
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in ("tutorial", "derivations", "verdicts", "ci", "teaching", "api"):
        assert f"{page}.md" in nav and (DOCS / f"{page}.md").exists(), page
