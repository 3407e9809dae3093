"""A fuzzer in the suite: grammar-built hostile inputs never reach a traceback, a hang or exit 3.

Inputs come from the grammars of ``tests/fuzzing.py`` (derivations, step
programs, articles, answer files, weight files), each mutated at random. Every
command runs in a forked child under CPU-time and address-space limits, and must
end with exit 0, 1 or 2, no traceback, no internal error, and bounded memory.

CI runs a fixed number of examples per grammar, the same ones every run
(``derandomize``). For a longer, random run::

    SYMTF_FUZZ_EXAMPLES=2000 SYMTF_FUZZ_RANDOM=1 pytest tests/test_fuzz.py -n 2 -p no:randomly

A failure prints the command and the input; hypothesis shrinks it first.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fuzzing import (
    Sandbox,
    answers,
    article,
    assert_reads_back,
    assert_user_outcome,
    bundled_derivation,
    folder_case,
    mutated,
    op_signatures,
    step_program,
    template_derivation,
    typed_program,
    weights_case,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

#: Examples per grammar in CI (about two minutes for all of them on two cores).
EXAMPLES = int(os.environ.get("SYMTF_FUZZ_EXAMPLES", "25"))

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=not os.environ.get("SYMTF_FUZZ_RANDOM"),
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)

#: Folders of files over the caps: fewer examples (each writes a few MB).
FUZZ_FEW = settings(FUZZ, max_examples=max(EXAMPLES // 5, 1))

#: Commands run on a derivation, by how often (checking most).
DERIVATION_COMMANDS = [
    ["check"],
    ["check"],
    ["check"],
    ["check", "--format", "json"],
    ["check", "--format", "junit"],
    ["check", "--format", "sarif"],
    ["check", "--format", "github"],
    ["steps"],
    ["explain"],
    ["html", "-o", "page.html"],
    ["latex", "-o", "notes.tex"],
    # what a derivation may read: an empty folder, the current one, one relative to it
    ["check", "--allow-path", ""],
    ["check", "--allow-path", "."],
    ["check", "--allow-path", "sub/../.."],
]


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    box = Sandbox()
    yield box
    box.close()


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


class _Case:
    """A fresh folder per example, removed afterwards."""

    def __init__(self, base: Path) -> None:
        self.dir = Path(tempfile.mkdtemp(dir=base))

    def __enter__(self) -> Path:
        return self.dir

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def _run_on_derivation(sandbox: Sandbox, folder: Path, text: str, command: list[str]) -> None:
    path = folder / "d.toml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    argv = [command[0], "d.toml", *command[1:]]
    if command[0] == "explain":
        argv.append("x")  # a label that may or may not exist
    assert_user_outcome(sandbox.run(argv, folder), text)


def test_the_grammar_reads_the_op_table() -> None:
    sigs = op_signatures()
    assert {"softmax", "layernorm", "concat", "abs"} <= set(sigs)
    assert sigs["softmax"][2][:1] == ("x",) and sigs["concat"][1] is None  # variadic


@FUZZ
@given(data=st.data())
def test_fuzz_template_derivations(data: st.DataObject, sandbox: Sandbox, scratch: Path) -> None:
    text = data.draw(template_derivation().flatmap(mutated), label="derivation")
    command = data.draw(st.sampled_from(DERIVATION_COMMANDS), label="command")
    with _Case(scratch) as folder:
        _run_on_derivation(sandbox, folder, text, command)


@FUZZ
@given(data=st.data())
def test_fuzz_bundled_examples_mutated(
    data: st.DataObject, sandbox: Sandbox, scratch: Path
) -> None:
    text = data.draw(bundled_derivation().flatmap(mutated), label="derivation")
    command = data.draw(st.sampled_from(DERIVATION_COMMANDS[:4]), label="command")
    with _Case(scratch) as folder:
        _run_on_derivation(sandbox, folder, text, command)


@FUZZ
@given(data=st.data())
def test_fuzz_step_programs(data: st.DataObject, sandbox: Sandbox, scratch: Path) -> None:
    text = data.draw(step_program().flatmap(mutated), label="derivation")
    command = data.draw(st.sampled_from(DERIVATION_COMMANDS[:8]), label="command")
    with _Case(scratch) as folder:
        _run_on_derivation(sandbox, folder, text, command)


@FUZZ
@given(data=st.data())
def test_fuzz_typed_programs(data: st.DataObject, sandbox: Sandbox, scratch: Path) -> None:
    # op chains the registry's shape rules accept, so they reach evaluation and the verdicts
    import random

    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    text = typed_program(random.Random(seed))
    command = data.draw(st.sampled_from(DERIVATION_COMMANDS), label="command")
    with _Case(scratch) as folder:
        _run_on_derivation(sandbox, folder, text, command)


@FUZZ
@given(data=st.data())
def test_fuzz_articles(data: st.DataObject, sandbox: Sandbox, scratch: Path) -> None:
    """An article extracted or drafted; what either writes, ``check`` reads."""
    suffix, content = data.draw(article(), label="article")
    how = data.draw(st.sampled_from(["extract", "draft"]), label="how")
    with _Case(scratch) as folder:
        path = folder / f"post.{suffix}"
        path.write_text(content, encoding="utf-8", errors="surrogatepass")
        o = sandbox.run([how, path.name, "-o", "draft.toml"], folder)
        assert_user_outcome(o, content)
        if o.code == 0 and (folder / "draft.toml").exists():
            draft = (folder / "draft.toml").read_text(encoding="utf-8")
            argv = (
                ["check", "--draft", "draft.toml"] if how == "extract" else ["check", "draft.toml"]
            )
            c = sandbox.run(argv, folder)
            assert_user_outcome(c, draft)
            assert_reads_back(c, draft)


@FUZZ_FEW
@given(data=st.data())
def test_fuzz_folders_with_files_over_each_cap(
    data: st.DataObject, sandbox: Sandbox, scratch: Path
) -> None:
    files, argv = data.draw(folder_case(), label="folder")
    with _Case(scratch) as folder:
        for name, content in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(content)
        assert_user_outcome(sandbox.run(argv, folder), " ".join(sorted(files)))


@pytest.fixture(scope="module")
def exercise(scratch: Path, sandbox: Sandbox) -> tuple[Path, list[str]]:
    """An exercise written by symtf exercise: its folder and its blank ids."""
    src = Path(__file__).resolve().parent.parent / "derivations" / "rope_toy.toml"
    folder = scratch / "exercise"
    o = sandbox.run(["exercise", str(src), "-o", str(folder), "--no-pdf", "--blank", "3"], scratch)
    assert o.code == 0, o.stderr
    import tomllib

    key = tomllib.loads((folder / "key.toml").read_text(encoding="utf-8"))
    return folder, [b["id"] for b in key["blanks"]]


@FUZZ
@given(data=st.data())
def test_fuzz_answer_files(
    data: st.DataObject, sandbox: Sandbox, scratch: Path, exercise: tuple[Path, list[str]]
) -> None:
    folder, blanks = exercise
    text = data.draw(answers(blanks), label="answers")
    fmt = data.draw(st.sampled_from([[], ["--format", "json"]]), label="format")
    with _Case(scratch) as case:
        (case / "answers.toml").write_text(text, encoding="utf-8", errors="surrogatepass")
        argv = ["grade", str(folder / "key.toml"), "answers.toml", *fmt]
        assert_user_outcome(sandbox.run(argv, case), text)


@FUZZ
@given(data=st.data())
def test_fuzz_exercise_keys(
    data: st.DataObject, sandbox: Sandbox, scratch: Path, exercise: tuple[Path, list[str]]
) -> None:
    folder, blanks = exercise
    key = (folder / "key.toml").read_text(encoding="utf-8")
    text = data.draw(mutated(key, at_least=1), label="key")
    student = data.draw(answers(blanks), label="answers")
    with _Case(scratch) as case:
        shutil.copy(folder / "derivation.toml", case / "derivation.toml")
        (case / "key.toml").write_text(text, encoding="utf-8", errors="surrogatepass")
        (case / "answers.toml").write_text(student, encoding="utf-8", errors="surrogatepass")
        o = sandbox.run(["grade", "key.toml", "answers.toml"], case)
        assert_user_outcome(o, text + "\n----- answers -----\n" + student)


@FUZZ
@given(data=st.data())
def test_fuzz_weight_files(data: st.DataObject, sandbox: Sandbox, scratch: Path) -> None:
    name, content, text = data.draw(weights_case(), label="weights")
    with _Case(scratch) as folder:
        (folder / name).write_bytes(content)
        _run_on_derivation(sandbox, folder, text, ["check"])
