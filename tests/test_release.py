"""The release the README points users at exists: the ``rev`` of its pre-commit snippet
and the ``@`` of its Action snippet name a tag of this repository, and that tag is the
commit whose ``pyproject.toml`` and changelog give its version. The pictures the README
and the docs show exist.

The tag checks need the repository's history: from an unpacked sdist (no ``.git``) or a
clone that fetched no tags they skip, saying so.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _snippet_revs() -> dict[str, str]:
    """Where each snippet pins symtf: the pre-commit hook's ``rev`` and the Action's ``@``."""
    hook = re.findall(r"^\s*rev:\s*(\S+)\s*$", README, re.MULTILINE)
    action = re.findall(r"^- uses: <owner>/symtf@(\S+)", README, re.MULTILINE)
    assert len(hook) == 1 and len(action) == 1, (hook, action)
    return {"pre-commit rev": hook[0], "Action": action[0]}


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=60
    )


@pytest.fixture(scope="module")
def repository() -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("no .git here (an unpacked sdist): the release tag cannot be looked up")
    if shutil.which("git") is None:
        pytest.skip("git is not installed: the release tag cannot be looked up")
    if not _git("tag", "--list").stdout.strip():
        pytest.skip("this clone has no tags (git fetch --tags brings them)")


def test_both_snippets_pin_the_same_release() -> None:
    revs = _snippet_revs()
    assert len(set(revs.values())) == 1, revs
    assert re.fullmatch(r"v\d+\.\d+\.\d+", revs["Action"]), revs


def test_the_hook_file_shows_the_readme_s_rev() -> None:
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    assert f"rev: {_snippet_revs()['pre-commit rev']}" in hooks


def test_the_snippets_rev_is_a_tag_of_this_repository(repository: None) -> None:
    rev = _snippet_revs()["pre-commit rev"]
    found = _git("rev-parse", "--verify", "--quiet", f"refs/tags/{rev}^{{commit}}")
    assert found.returncode == 0, f"{rev} is no tag of this repository (git tag -a {rev})"


def test_the_tagged_commit_is_that_release(repository: None) -> None:
    rev = _snippet_revs()["pre-commit rev"]
    version = rev.removeprefix("v")
    if _git("rev-parse", "--verify", "--quiet", f"refs/tags/{rev}").returncode != 0:
        pytest.skip(f"no tag {rev} (the test above says so)")
    pyproject = _git("show", f"{rev}:pyproject.toml").stdout
    assert re.search(rf'^version = "{re.escape(version)}"$', pyproject, re.MULTILINE), pyproject
    changelog = _git("show", f"{rev}:CHANGELOG.md").stdout
    assert re.search(rf"^## \[{re.escape(version)}\] - \d{{4}}-\d\d-\d\d$", changelog, re.MULTILINE)
    for used in (".pre-commit-hooks.yaml", "action.yml"):  # what the snippets run
        assert _git("cat-file", "-e", f"{rev}:{used}").returncode == 0, used
    assert _git("cat-file", "-t", f"refs/tags/{rev}").stdout.strip() == "tag", "not annotated"


def test_every_picture_the_readme_and_the_docs_show_exists() -> None:
    shown = re.findall(r"!\[[^\]]*\]\((docs/[^)\s]+)\)", README)
    for page in (ROOT / "docs").glob("*.md"):
        text = page.read_text(encoding="utf-8")
        shown += [f"docs/{p}" for p in re.findall(r"!\[[^\]]*\]\(([^)\s:]+)\)", text)]
    assert shown
    missing = sorted({p for p in shown if not (ROOT / p).is_file()})
    assert not missing, f"pictures shown but missing (python docs/make_images.py): {missing}"
