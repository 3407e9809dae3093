"""A blog's repository, built here, goes red under every CI integration: ``symtf check``,
``pytest --symtf`` and the pre-commit hook, each as a user runs it, and green under all
three after ``symtf check --fix``.

The repository: ``posts/`` with one post that holds one slip (e^2 printed 7.390, which
rounds to 7.389), a right post, a README full of numbers that is no worked example, a
``[tool.symtf]`` that includes the posts, and a ``.pre-commit-config.yaml``. The hook
is the one ``.pre-commit-hooks.yaml`` defines (its entry and file types), run by
pre-commit itself in a git repository with the ``symtf`` under test on ``PATH``;
``.ci/integrations`` also installs it the way pre-commit users get it
(``pre-commit try-repo``) and runs the GitHub Action's steps on the same blog.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: e^1 = 2.71828…, e^3 = 20.0855…, 2.718 + 7.389 + 20.086 = 30.193: right; e^2 = 7.389056…
#: printed 7.390 is 0.94 of a unit off, a slip.
SLIPPED = """# Softmax by hand

Softmax exponentiates each score: $e^{1} \\approx 2.718$, $e^{2} \\approx 7.390$ and
$e^{3} \\approx 20.086$. Their sum is

$$2.718 + 7.389 + 20.086 = 30.193$$
"""
SLIP_LINE = 3  # the line of 7.390, counted by hand
RIGHT = "# Two exponentials\n\nBy hand, $e^{1} \\approx 2.718$ and $e^{2} \\approx 7.389$.\n"
README = "# blog\n\nBuilt with Python 3.12; 2.5 million visits; pi is 3.15.\n"
PYPROJECT = """[project]
name = "blog"
version = "1"

[tool.symtf]
include = ["posts/**/*.md"]
timeout = 120
"""


def _pre_commit() -> list[str] | None:
    """How to run pre-commit here, or None when it is not installed."""
    found = shutil.which("pre-commit")
    if found:
        return [found]
    try:
        import pre_commit  # noqa: F401
    except ImportError:
        return None
    return [sys.executable, "-m", "pre_commit"]


def _hook_config() -> str:
    """A .pre-commit-config.yaml running this checkout's hook definition as a local hook."""
    import yaml

    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    local = {k: v for k, v in hook.items() if k not in ("language", "minimum_pre_commit_version")}
    local["language"] = "system"  # the symtf on PATH: this checkout's, not one pip installs
    return yaml.safe_dump({"repos": [{"repo": "local", "hooks": [local]}]})


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    repo = tmp_path / "blog"
    (repo / "posts" / "2024").mkdir(parents=True)
    (repo / "posts" / "softmax.md").write_text(SLIPPED, encoding="utf-8")
    (repo / "posts" / "2024" / "right.md").write_text(RIGHT, encoding="utf-8")
    (repo / "README.md").write_text(README, encoding="utf-8")
    (repo / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    return repo


def _env(tmp_path: Path) -> dict[str, str]:
    """The environment of a user's shell: a ``symtf`` command on PATH that runs this checkout."""
    bin_ = tmp_path / "bin"
    bin_.mkdir(exist_ok=True)
    shim = bin_ / "symtf"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m symtf "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "GIT_"))}
    env.update(
        PATH=f"{bin_}{os.pathsep}{env.get('PATH', '')}",
        PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),
        GIT_AUTHOR_NAME="ci",
        GIT_AUTHOR_EMAIL="ci@localhost",
        GIT_COMMITTER_NAME="ci",
        GIT_COMMITTER_EMAIL="ci@localhost",
        OPENBLAS_NUM_THREADS="1",
        OMP_NUM_THREADS="1",
    )
    return env


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False
    )


def test_a_slip_in_a_post_turns_every_integration_red(blog: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)

    # 1. symtf check, with no path: the posts [tool.symtf] includes.
    check = _run(["symtf", "check"], blog, env)
    assert check.returncode == 1, check.stdout + check.stderr
    assert "posts/softmax.md" in check.stdout and "posts/2024/right.md" in check.stdout
    assert "README.md" not in check.stdout
    assert f"line {SLIP_LINE}" in check.stdout and "printed 7.390" in check.stdout
    annotations = _run(["symtf", "check", "--format", "github"], blog, env)
    assert f"::error file=posts/softmax.md,line={SLIP_LINE}," in annotations.stdout

    # 2. pytest --symtf: one item per claim, the slip's item fails at the post's line.
    plugin = ["-p", "no:symtf", "-p", "symtf.pytest_plugin", "-p", "no:cacheprovider"]
    tests = _run([sys.executable, "-m", "pytest", *plugin, "--symtf", "-rs"], blog, env)
    assert tests.returncode == 1, tests.stdout + tests.stderr
    assert f"(softmax.md:{SLIP_LINE})" in tests.stdout and " 1 failed" in tests.stdout
    assert "README.md" not in tests.stdout

    # 3. The pre-commit hook, in a git repository, on every file.
    pre_commit = _pre_commit()
    if pre_commit is None:
        if os.environ.get("SYMTF_REQUIRE_PRECOMMIT"):
            pytest.fail("pre-commit is not installed (SYMTF_REQUIRE_PRECOMMIT is set)")
        pytest.skip("pre-commit is not installed (pip install pre-commit)")
    (blog / ".pre-commit-config.yaml").write_text(_hook_config(), encoding="utf-8")
    for git in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "posts"]):
        assert _run(git, blog, env).returncode == 0
    hook = _run([*pre_commit, "run", "--all-files"], blog, env)
    assert hook.returncode == 1, hook.stdout + hook.stderr
    assert "posts/softmax.md" in hook.stdout and "printed 7.390" in hook.stdout
    assert "skipped (not included by [tool.symtf]): README.md" in hook.stdout
    # a commit that touches only the README and the right post passes
    only = _run([*pre_commit, "run", "--files", "README.md", "posts/2024/right.md"], blog, env)
    assert only.returncode == 0, only.stdout + only.stderr

    # 4. After `symtf check --fix` (no path: the posts [tool.symtf] includes): e^2 =
    #    7.38905…, so 7.390 is rewritten as 7.389 and every other byte of the post is
    #    unchanged; the same three runs are green.
    fixed = _run(["symtf", "check", "--fix"], blog, env)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert (blog / "posts" / "softmax.md").read_text(encoding="utf-8") == SLIPPED.replace(
        "7.390$", "7.389$"
    )
    assert (blog / "posts" / "2024" / "right.md").read_text(encoding="utf-8") == RIGHT
    again = _run(["symtf", "check"], blog, env)
    assert again.returncode == 0, again.stdout + again.stderr
    tests = _run([sys.executable, "-m", "pytest", *plugin, "--symtf", "-rs"], blog, env)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert _run(["git", "commit", "-qam", "fixed"], blog, env).returncode == 0
    hook = _run([*pre_commit, "run", "--all-files"], blog, env)
    assert hook.returncode == 0, hook.stdout + hook.stderr
