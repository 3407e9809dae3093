"""The pytest plugin, run by pytest itself (pytester) in a repository of its own."""

from __future__ import annotations

from pathlib import Path

# pytester's in-process runs drop the modules first imported inside them, and numpy
# cannot be imported twice in one process: import it here, before any inner run.
import numpy  # noqa: F401
import pytest
from tiny_derivations import tiny_model

from symtf import bundled
from symtf.cli import main

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent

# Load this checkout's plugin whether or not an installed symtf registered it already.
PLUGIN = (
    "-p",
    "no:symtf",
    "-p",
    "symtf.pytest_plugin",
    "-W",
    "ignore::pytest.PytestAssertRewriteWarning",
)

DERIVATION = (
    tiny_model()
    + """
[[claims]]
label = "embedding rows"
step = "x"
printed = "1 0\\n0 1"

[[claims]]
label = "second row, misprinted"
step = "x"
row = 1
printed = "0 3"
"""
)
#: Line of the second [[claims]] header above, counted by hand.
OFF_LINE = 19

PYPROJECT = """[project]
name = "blog"
version = "1"

[tool.pytest.ini_options]
addopts = "-p no:cacheprovider"
"""

NOT_A_DERIVATION = '''title = "settings"
help = """
[[claims]]
is how a derivation lists its printed numbers
"""
'''


@pytest.fixture
def repo(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".toml", pyproject=PYPROJECT)
    pytester.makefile(".toml", settings=NOT_A_DERIVATION)
    (pytester.path / "posts").mkdir()
    (pytester.path / "posts" / "tiny.toml").write_text(DERIVATION, encoding="utf-8")
    return pytester


def test_collects_only_derivations_in_a_repository_with_pyproject(repo: pytest.Pytester) -> None:
    result = repo.runpytest(*PLUGIN, "--symtf", ".", "--collect-only", "-q")
    assert result.ret == 0, result.stdout.str()
    ids = [line for line in result.outlines if "::" in line]
    assert ids == [
        "posts/tiny.toml::embedding rows",
        "posts/tiny.toml::second row, misprinted",
    ]


def test_without_the_option_no_toml_is_collected(repo: pytest.Pytester) -> None:
    result = repo.runpytest(*PLUGIN, ".", "--collect-only", "-q")
    assert "tiny.toml" not in result.stdout.str()


def test_a_failing_claim_shows_one_readable_line(repo: pytest.Pytester) -> None:
    result = repo.runpytest(*PLUGIN, "--symtf", ".", "-v")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    # The exact value of x[1, 1] is 1 (identity embedding row); printed 3, 2 units off.
    result.stdout.fnmatch_lines(
        [
            "posts/tiny.toml::embedding rows PASSED*",
            "posts/tiny.toml::second row, misprinted FAILED*",
            f"*second row, misprinted (tiny.toml:{OFF_LINE})*",
        ]
    )
    assert (
        "\nsecond row, misprinted[1, 1]: wrong: printed 3, exact 1, correctly rounded 1: "
        "off by 2 in the last digit: should be 1" in out
    )
    assert "Traceback" not in out and "def runtest" not in out
    assert "misprinted[1, 0]" not in out  # the right entry of the row is not listed


def test_k_selects_by_label_words_and_by_underscored_label(repo: pytest.Pytester) -> None:
    for expr in ("second_row", "second and misprinted", "second_row_misprinted"):
        result = repo.runpytest(*PLUGIN, "--symtf", ".", "-k", expr)
        result.assert_outcomes(failed=1, deselected=1)
    result = repo.runpytest(*PLUGIN, "--symtf", ".", "-k", "embedding_rows")
    result.assert_outcomes(passed=1, deselected=1)


def test_a_bad_file_is_one_collection_error_with_the_cli_message(
    repo: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = repo.path / "posts" / "bad.toml"
    bad.write_text(DERIVATION.replace("row = 1\n", "row = 1\nbogus = 2\n"), encoding="utf-8")
    assert main(["check", str(bad)]) == 2
    cli_message = capsys.readouterr().err.strip()
    assert cli_message.startswith("symtf: error: ") and "claims[1].bogus" in cli_message

    result = repo.runpytest(*PLUGIN, "--symtf", str(bad))
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert cli_message in out
    assert "Traceback" not in out and "spec.py" not in out


@pytest.mark.parametrize(
    ("content", "says"),
    [
        # A wrong claim (x[1, 1] is 1, printed 3) behind 2,000,001 bytes of comments.
        (DERIVATION + "# padding\n" * 200_001, "2,000,000 bytes"),
        (DERIVATION.replace('title = "tiny"', 'title = """tiny'), "not valid TOML"),
    ],
    ids=["over the size cap", "not valid TOML"],
)
def test_a_file_that_cannot_be_read_is_an_error_not_a_pass(
    content: str, says: str, repo: pytest.Pytester
) -> None:
    (repo.path / "posts" / "tiny.toml").unlink()
    (repo.path / "posts" / "big.toml").write_text(content, encoding="utf-8")
    (repo.path / "posts" / "utf16.toml").write_bytes(DERIVATION.encode("utf-16"))
    result = repo.runpytest(*PLUGIN, "--symtf", ".")
    out = result.stdout.str()
    assert result.ret != 0 and "passed" not in out.splitlines()[-1], out
    result.assert_outcomes(errors=2)
    assert "posts/big.toml" in out and says in out
    assert "posts/utf16.toml" in out and "expected UTF-8 text" in out
    assert "settings.toml" not in out  # a readable TOML file without claims is still skipped


def test_checking_happens_in_runtest_within_the_time_limit(repo: pytest.Pytester) -> None:
    love = repo.path / "posts" / "i_love_ai.toml"
    love.write_bytes(bundled.get("i_love_ai").read_bytes())
    repo.makepyprojecttoml(PYPROJECT + 'symtf_timeout = "0.001"\n')
    collected = repo.runpytest(*PLUGIN, "--symtf", str(love), "--collect-only", "-q")
    assert collected.ret == 0  # collection only reads the file
    result = repo.runpytest(*PLUGIN, "--symtf", str(love))
    out = result.stdout.str()
    assert "exceeded the time budget of 0.001 s" in out
    assert result.parseoutcomes().get("failed", 0) > 10 and "passed" not in out.splitlines()[-1]


@pytest.mark.parametrize("value", ["-5", "nan", "inf", "1e9", "soon"])
def test_a_bad_symtf_timeout_is_refused_before_collection(
    value: str, repo: pytest.Pytester
) -> None:
    # The values symtf check --timeout refuses (negative, not finite, over a day, text).
    repo.makepyprojecttoml(PYPROJECT + f'symtf_timeout = "{value}"\n')
    result = repo.runpytest(*PLUGIN, "--symtf", ".")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "symtf_timeout: expected a number of seconds" in err and repr(value) in err, err
    assert "Traceback" not in err and "passed" not in result.stdout.str()


def test_symtf_timeout_zero_is_no_budget(repo: pytest.Pytester) -> None:
    repo.makepyprojecttoml(PYPROJECT + 'symtf_timeout = "0"\n')
    result = repo.runpytest(*PLUGIN, "--symtf", ".")
    result.assert_outcomes(passed=1, failed=1)


def test_symtf_files_selects_by_pattern(repo: pytest.Pytester) -> None:
    other = repo.path / "drafts"
    other.mkdir()
    (other / "draft.toml").write_text(DERIVATION, encoding="utf-8")
    repo.makepyprojecttoml(PYPROJECT + 'symtf_files = ["drafts/*.toml"]\n')
    result = repo.runpytest(*PLUGIN, "--symtf", ".", "--collect-only", "-q")
    ids = [line for line in result.outlines if "::" in line]
    assert ids and all(i.startswith("drafts/draft.toml::") for i in ids)


def test_item_location_is_the_claim_line(repo: pytest.Pytester) -> None:
    items = repo.inline_genitems(*PLUGIN, "--symtf", ".")[0]
    [off] = [i for i in items if i.name == "second row, misprinted"]
    path, line, domain = off.reportinfo()
    assert Path(path).name == "tiny.toml" and line == OFF_LINE - 1  # pytest counts from 0
    assert domain == f"second row, misprinted (tiny.toml:{OFF_LINE})"


def test_dotted_labels_keep_their_node_id(repo: pytest.Pytester) -> None:
    dotted = DERIVATION.replace("embedding rows", "love.love: first row")
    (repo.path / "posts" / "tiny.toml").write_text(dotted, encoding="utf-8")
    result = repo.runpytest(*PLUGIN, "--symtf", ".", "-v")
    result.stdout.fnmatch_lines(["posts/tiny.toml::love.love: first row PASSED*"])


SYMBOLIC_EPS = (
    tiny_model("symbolic eps", eps="e", tokens=["a"])
    + """
[[claims]]
label = "norm"
step = "l0.ln1"
printed = "1.000 -1.000"
"""
)


def test_an_undecided_claim_is_skipped(repo: pytest.Pytester) -> None:
    # With a symbolic eps, (x - mean) / sqrt(var + eps) has no decimal value to round.
    (repo.path / "posts" / "tiny.toml").write_text(SYMBOLIC_EPS, encoding="utf-8")
    result = repo.runpytest(*PLUGIN, "--symtf", ".", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["SKIPPED*symbolic*"])


# ----------------------------------------------------------------------------- articles

#: A post whose e^2 is printed 7.390: e^2 = 7.38905609… rounds to 7.389 (a slip).
POST = """# Softmax by hand

Softmax exponentiates each score: $e^{1} \\approx 2.718$, $e^{2} \\approx 7.390$ and
$e^{3} \\approx 20.086$. Their sum is

$$2.718 + 7.389 + 20.086 = 30.193$$
"""


def _notebook(printed_weights: str) -> str:
    """A notebook whose printed softmax of [1, 2, 3] is ``printed_weights``.

    By hand: e = [2.71828, 7.38906, 20.08554], sum 30.19287, weights [0.09003, 0.24473,
    0.66524], which print with 3 decimals as [0.09, 0.245, 0.665].
    """
    import nbformat

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(
        "import numpy as np\nx = np.array([1.0, 2.0, 3.0])\ne = np.exp(x)\n"
        "print(e.round(3))\nprint((e / e.sum()).round(3))"
    )
    cell.outputs = [
        nbformat.v4.new_output(
            "stream", name="stdout", text=f"[ 2.718  7.389 20.086]\n{printed_weights}\n"
        )
    ]
    nb.cells.append(cell)
    return str(nbformat.writes(nb))


def _line_of(path: Path, needle: str) -> int:
    """The 1-based line of the file that holds ``needle`` (found in the text, by hand's rule)."""
    [line] = [k for k, t in enumerate(path.read_text("utf-8").splitlines(), 1) if needle in t]
    return line


@pytest.fixture
def blog(pytester: pytest.Pytester) -> pytest.Pytester:
    """A blog: a post with a slip, a notebook with a slip, a README, a draft [tool.symtf] excludes."""
    pytester.makefile(
        ".toml",
        pyproject=PYPROJECT
        + '\n[tool.symtf]\ninclude = ["posts/**/*.md", "notebooks/*.ipynb"]\n'
        + 'exclude = ["posts/drafts"]\n',
    )
    (pytester.path / "posts" / "drafts").mkdir(parents=True)
    (pytester.path / "posts" / "softmax.md").write_text(POST, encoding="utf-8")
    (pytester.path / "posts" / "drafts" / "wip.md").write_text(POST, encoding="utf-8")
    (pytester.path / "notebooks").mkdir()
    (pytester.path / "notebooks" / "softmax.ipynb").write_text(
        _notebook("[0.09  0.244 0.665]"), encoding="utf-8"
    )
    (pytester.path / "README.md").write_text("# blog\n\npi is 3.15\n", encoding="utf-8")
    return pytester


def test_articles_the_project_includes_are_collected(blog: pytest.Pytester) -> None:
    result = blog.runpytest(*PLUGIN, "--symtf", ".", "--collect-only", "-q")
    assert result.ret == 0, result.stdout.str()
    files = {line.split("::")[0] for line in result.outlines if "::" in line}
    assert files == {"notebooks/softmax.ipynb", "posts/softmax.md"}  # no README, no draft
    ids = [line for line in result.outlines if "::" in line]
    assert "posts/softmax.md::printed numbers checked" in ids


def test_a_slip_in_a_post_fails_at_the_post_s_line(blog: pytest.Pytester) -> None:
    post = blog.path / "posts" / "softmax.md"
    notebook = blog.path / "notebooks" / "softmax.ipynb"
    result = blog.runpytest(*PLUGIN, "--symtf", ".", "-rs")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed") == 2, result.stdout.str()  # one slip in each
    out = result.stdout.str()
    assert f"(softmax.md:{_line_of(post, '7.390')})" in out
    assert "printed 7.390" in out and "correctly rounded 7.389" in out
    assert f"(softmax.ipynb:{_line_of(notebook, '0.244')})" in out  # the raw file's line
    assert "printed 0.244" in out and "correctly rounded 0.245" in out
    assert "Traceback" not in out


def test_an_article_named_on_the_command_line_is_collected(pytester: pytest.Pytester) -> None:
    pytester.makefile(".toml", pyproject=PYPROJECT)  # no [tool.symtf]
    (pytester.path / "post.md").write_text(POST, encoding="utf-8")
    searched = pytester.runpytest(*PLUGIN, "--symtf", ".", "--collect-only", "-q")
    assert "post.md" not in searched.stdout.str()  # a search finds no article unconfigured
    named = pytester.runpytest(*PLUGIN, "--symtf", "post.md", "--collect-only", "-q")
    assert any(line.startswith("post.md::") for line in named.outlines), named.stdout.str()


def test_numbers_not_checked_are_a_skip_listing_them_or_a_failure_under_the_rule(
    pytester: pytest.Pytester,
) -> None:
    # The tutorial's post: its draft reads more numbers than it checks (the figures come
    # from the report, whatever the reader finds); the coverage item says which, and why.
    post = ROOT / "docs" / "tutorial" / "softmax-post.md"
    (pytester.path / "post.md").write_bytes(post.read_bytes())
    pytester.makefile(".toml", pyproject=PYPROJECT)
    result = pytester.runpytest(*PLUGIN, "--symtf", "post.md", "-rs", "-k", "printed_numbers")
    out = result.stdout.str()
    assert "printed numbers checked" in out and "not checked: line " in out, out
    result.assert_outcomes(skipped=1, deselected=result.parseoutcomes().get("deselected", 0))
    pytester.makefile(".toml", pyproject=PYPROJECT + "\n[tool.symtf]\nrequire-checked = 100\n")
    result = pytester.runpytest(*PLUGIN, "--symtf", "post.md", "-k", "printed_numbers")
    assert "fewer than the 100% --require-checked asks for" in result.stdout.str()
    result.assert_outcomes(failed=1, deselected=result.parseoutcomes().get("deselected", 0))


def test_a_bad_tool_symtf_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makefile(".toml", pyproject=PYPROJECT + '\n[tool.symtf]\nincludes = ["x"]\n')
    result = pytester.runpytest(*PLUGIN, "--symtf", ".")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "tool.symtf.includes: unknown key" in result.stderr.str()
