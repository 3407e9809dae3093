"""``[tool.symtf]`` in ``pyproject.toml``: found as ruff finds its table, read strictly, and
obeyed by ``symtf check`` (no path, a folder, the hook's ``--only-derivations``).

The files each case should check are fixed by how the case was built (which files
exist, which patterns name them), never read back from symtf's own output.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from symtf.cli import main
from symtf.errors import SpecError
from symtf.spec import config as project

ROOT = Path(__file__).resolve().parent.parent

#: A post whose second exponential is printed one short of a correct rounding:
#: e^2 = 7.38905609… rounds to 7.389, and 7.390 is 0.94 of a unit off (a slip).
POST = """# Softmax by hand

Softmax exponentiates each score: $e^{1} \\approx 2.718$, $e^{2} \\approx 7.390$ and
$e^{3} \\approx 20.086$. Their sum is

$$2.718 + 7.389 + 20.086 = 30.193$$
"""
#: The line of 7.390 in POST, counted by hand.
SLIP_LINE = 3

#: A post with every number right: e^1, e^2 and their sum 2.718 + 7.389 = 10.107.
RIGHT_POST = """# Two exponentials

By hand, $e^{1} \\approx 2.718$ and $e^{2} \\approx 7.389$.
"""

#: A README with numbers that are no worked example: never to be checked by a search.
README = "# blog\n\nBuilt with Python 3.12; 2.5 million visits, pi is 3.15.\n"

#: A derivation with a wrong claim: the identity's x[1, 1] is 1, printed 3.
WRONG_TOML = """title = "wrong"
[tensors]
x = "1 0\\n0 1"
[[claims]]
label = "x"
step = "x"
printed = "1 0\\n0 3"
"""


def _pyproject(table: str) -> str:
    return f'[project]\nname = "blog"\nversion = "1"\n\n[tool.symtf]\n{table}'


@pytest.fixture
def blog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A blog: posts (one with a slip, one right, a draft), a README, a derivation folder."""
    (tmp_path / "posts" / "2024").mkdir(parents=True)
    (tmp_path / "posts" / "drafts").mkdir()
    (tmp_path / "posts" / "softmax.md").write_text(POST, encoding="utf-8")
    (tmp_path / "posts" / "2024" / "right.md").write_text(RIGHT_POST, encoding="utf-8")
    (tmp_path / "posts" / "drafts" / "wip.md").write_text(POST, encoding="utf-8")
    (tmp_path / "README.md").write_text(README, encoding="utf-8")
    (tmp_path / "derivations").mkdir()
    shutil.copy(ROOT / "derivations" / "rope_toy.toml", tmp_path / "derivations" / "rope.toml")
    (tmp_path / "pyproject.toml").write_text(
        _pyproject('include = ["posts/**/*.md"]\nexclude = ["posts/drafts"]\n'),
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def _checked(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    """The exit code and the files a JSON report checked, as named."""
    code = main([*args, "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    return code, [d.get("article") or d["path"] for d in data["derivations"]]


# ----------------------------------------------------------------------------- reading


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("posts/**/*.md", "posts/a.md", True),  # ** spans no folder too
        ("posts/**/*.md", "posts/2024/06/a.md", True),
        ("posts/**/*.md", "posts/a.ipynb", False),
        ("posts/**/*.md", "old/posts/a.md", False),  # anchored at the project's folder
        ("notebooks/*.ipynb", "notebooks/a.ipynb", True),
        ("notebooks/*.ipynb", "notebooks/x/a.ipynb", False),  # * stays within one name
        ("*.md", "a.md", True),
        ("*.md", "posts/a.md", False),
        ("**/*.md", "posts/a.md", True),
        ("posts/[ab].md", "posts/b.md", True),
        ("posts/[!ab].md", "posts/b.md", False),
        ("posts/?.md", "posts/c.md", True),
        ("posts/?.md", "posts/cc.md", False),
        ("a.b", "axb", False),  # a dot is a dot
    ],
)
def test_patterns_match_as_documented(pattern: str, path: str, matches: bool) -> None:
    assert bool(project.pattern_regex(pattern).fullmatch(path)) is matches


def test_the_nearest_pyproject_with_a_table_is_found_from_the_working_folder_up(
    tmp_path: Path,
) -> None:
    (tmp_path / "pyproject.toml").write_text(_pyproject("timeout = 7\n"), encoding="utf-8")
    sub = tmp_path / "site" / "posts"
    sub.mkdir(parents=True)
    # a pyproject.toml without [tool.symtf] on the way up is passed over, as ruff does
    (tmp_path / "site" / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    found = project.find(sub)
    assert found is not None and found.timeout == 7.0
    assert found.path == (tmp_path / "pyproject.toml").resolve()
    assert project.find(tmp_path.parent) is None or project.find(tmp_path.parent) != found


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ('includes = ["posts/*.md"]\n', "tool.symtf.includes: unknown key"),
        ('include = "posts/*.md"\nfoo = 1\n', "tool.symtf.foo: unknown key"),
        ("include = 3\n", "tool.symtf.include: expected an array of patterns, found int 3"),
        ("include = [3]\n", "tool.symtf.include[0]: expected a pattern (a string)"),
        ('include = ["../other/*.md"]\n', "tool.symtf.include[0]: expected a pattern inside"),
        ('exclude = ["/etc/*"]\n', "tool.symtf.exclude[0]: expected a pattern inside"),
        ('include = [""]\n', "tool.symtf.include[0]: expected a pattern such as"),
        ("timeout = -5\n", "tool.symtf.timeout: expected a number of seconds greater than 0"),
        ("timeout = inf\n", "tool.symtf.timeout: expected a number of seconds greater than 0"),
        (
            'timeout = "60"\n',
            "tool.symtf.timeout: expected a number of seconds, found the string '60'",
        ),
        ('allow-undecided = "yes"\n', "tool.symtf.allow-undecided: expected true or false"),
        ("require-checked = 150\n", "tool.symtf.require-checked: expected a percentage from 0"),
        ("require-checked = true\n", "tool.symtf.require-checked: expected a percentage from 0"),
    ],
)
def test_a_bad_table_names_the_file_and_the_key(
    table: str, says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    (tmp_path / "pyproject.toml").write_text(_pyproject(table), encoding="utf-8")
    with pytest.raises(SpecError, match=r"pyproject\.toml: ") as e:
        project.find(tmp_path)
    assert says in str(e.value), str(e.value)
    monkeypatch.chdir(tmp_path)  # the command line says the same, exit 2, no traceback
    code, _, err = _run(capsys, "check")
    assert code == 2 and says in err and "Traceback" not in err


def test_an_unknown_key_suggests_the_known_one(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(_pyproject("require_checked = 90\n"), "utf-8")
    with pytest.raises(SpecError, match="did you mean require-checked"):
        project.find(tmp_path)


def test_a_pyproject_that_is_not_valid_toml_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.symtf\ninclude = 1\n", encoding="utf-8")
    with pytest.raises(SpecError, match=r"pyproject\.toml: not valid TOML"):
        project.find(tmp_path)


# ----------------------------------------------------------------------------- which files


def test_check_with_no_path_checks_what_include_names(
    blog: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, checked = _checked(capsys, "check")
    # the two posts include names; not the draft (excluded), the README or the derivation
    assert sorted(checked) == ["posts/2024/right.md", "posts/softmax.md"]
    assert code == 1  # the slip of posts/softmax.md


def test_the_slip_is_reported_at_its_line(blog: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "check", "--format", "github")
    assert code == 1
    assert f"::error file=posts/softmax.md,line={SLIP_LINE}," in out


def test_a_folder_search_finds_articles_only_when_configured(
    blog: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, checked = _checked(capsys, "check", ".")
    assert sorted(checked) == ["derivations/rope.toml", "posts/2024/right.md", "posts/softmax.md"]
    (blog / "pyproject.toml").write_text('[project]\nname = "blog"\n', encoding="utf-8")
    code, checked = _checked(capsys, "check", ".")
    assert checked == ["derivations/rope.toml"]  # without [tool.symtf]: derivations only
    assert code == 0


def test_the_hook_checks_included_posts_and_skips_the_readme(
    blog: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # what pre-commit passes: every changed file of the hook's types
    named = ["README.md", "pyproject.toml", "posts/2024/right.md", "posts/drafts/wip.md"]
    code = main(["check", "--only-derivations", "--format", "json", *named])
    data = json.loads(capsys.readouterr().out)
    assert [d["article"] for d in data["derivations"]] == ["posts/2024/right.md"]
    assert sorted(data["skipped"]) == ["README.md", "posts/drafts/wip.md", "pyproject.toml"]
    assert code == 0
    code, out, _ = _run(capsys, "check", "--only-derivations", "README.md", "posts/softmax.md")
    assert code == 1
    assert "1 file(s) skipped (not included by [tool.symtf]): README.md" in out


def test_a_named_file_is_always_checked(blog: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, checked = _checked(capsys, "check", "posts/drafts/wip.md")
    assert checked == ["posts/drafts/wip.md"] and code == 1


def test_include_that_matches_nothing_is_an_error(
    blog: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (blog / "pyproject.toml").write_text(_pyproject('include = ["essays/*.md"]\n'), "utf-8")
    code, _, err = _run(capsys, "check")
    assert code == 2 and "tool.symtf.include: no file matches essays/*.md" in err


def test_without_include_no_path_searches_the_project(
    blog: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (blog / "pyproject.toml").write_text(_pyproject("timeout = 30\n"), "utf-8")
    (blog / "derivations" / "wrong.toml").write_text(WRONG_TOML, encoding="utf-8")
    code, checked = _checked(capsys, "check")
    assert sorted(checked) == ["derivations/rope.toml", "derivations/wrong.toml"]
    assert code == 1


# ----------------------------------------------------------------------------- settings


SYMBOLIC = """title = "a symbol"
[tensors]
w = "w"
[steps]
y = "2 * w"
[[claims]]
label = "y"
step = "y"
printed = "0.5"
"""


def test_allow_undecided_comes_from_the_table_and_the_command_line_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "sym.toml").write_text(SYMBOLIC, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "sym.toml"]) == 1  # a symbolic number is a failure by default
    (tmp_path / "pyproject.toml").write_text(_pyproject("allow-undecided = true\n"), "utf-8")
    assert main(["check", "sym.toml"]) == 0
    assert main(["check", "--no-allow-undecided", "sym.toml"]) == 1
    capsys.readouterr()


def test_timeout_comes_from_the_table_and_the_command_line_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    from symtf.commands.check import project_settings

    (tmp_path / "pyproject.toml").write_text(_pyproject("timeout = 7.5\n"), "utf-8")
    monkeypatch.chdir(tmp_path)
    args = argparse.Namespace(timeout=None, allow_undecided=None, require_checked=None)
    project_settings(args)
    assert (args.timeout, args.allow_undecided, args.require_checked) == (7.5, False, None)
    args = argparse.Namespace(timeout=3.0, allow_undecided=True, require_checked=10.0)
    project_settings(args)
    assert (args.timeout, args.allow_undecided, args.require_checked) == (3.0, True, 10.0)
