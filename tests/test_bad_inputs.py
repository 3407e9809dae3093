"""Hostile and broken derivation files, each run through the real command line.

Every file in ``tests/bad_inputs/`` states what ``symtf check`` must do with it,
in a first-line comment::

    # expect: exit=2 key=model.layers[0].heads[0].W_Q

or, for files that cannot hold a comment (empty files, binary garbage), in a
``NAME.toml.expect`` file beside it holding ``exit=2 key=...``. For exit 2 the
error on stderr must name the file and contain the key; for exit 0 or 1 the key
must appear in the output. No case may print a traceback or take 5 s.

Injection strings in the corpus try to create a file named ``SYMTF_CANARY`` in
the working directory; the command runs in an empty directory that must still
be empty afterwards. A few cases are too large to keep in the repository (a
1,000 × 1,000 weight matrix) and are written at test time.

Starting Python and importing SymPy costs about half a second per process, so
by default the cases run through ``symtf.cli.main`` inside one separate worker
process per core (the same entry point, the same exit codes and streams, and
the working directory is still the sandbox); :data:`SMOKE` cases also run as
``python -m symtf.cli check FILE``. Set ``SYMTF_FULL_CLI=1`` to give every case
its own ``python -m symtf.cli`` process.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from limited import run_symtf

CORPUS = Path(__file__).parent / "bad_inputs"
CANARY = "SYMTF_CANARY"
#: CPU-time limit per case, process start-up included (CPU time, not the wall clock: the
#: cases run beside other work).
CASE_SECONDS = 5.0
_HEADER = re.compile(r"^# expect: exit=(\d) key=(.+)$")
_SIDECAR = re.compile(r"^exit=(\d) key=(.+)$")


@dataclass(frozen=True)
class Case:
    """One input file and what the command must do with it."""

    path: Path
    exit: int
    key: str


@dataclass(frozen=True)
class Outcome:
    """What the command did."""

    returncode: int | None  # None: killed after the hard timeout
    stdout: str
    stderr: str
    seconds: float


def _expectation(path: Path) -> Case:
    side = path.with_name(path.name + ".expect")
    if side.exists():
        m = _SIDECAR.match(side.read_text(encoding="utf-8").strip())
    else:
        first = path.read_bytes().split(b"\n", 1)[0].decode("utf-8", errors="replace")
        m = _HEADER.match(first.strip())
    if m is None:
        raise ValueError(f"{path.name}: no '# expect: exit=N key=...' header and no .expect file")
    return Case(path, int(m.group(1)), m.group(2).strip())


def corpus_cases() -> list[Case]:
    """The stored corpus, in name order."""
    return [_expectation(p) for p in sorted(CORPUS.glob("*.toml"))]


# ----------------------------------------------------------------------------- generated cases

_MODEL_HEAD = 'title = "big"\n[model]\nd_model = {d}\nvocab = ["a", "b"]\n'
_MODEL_TAIL = """unembed = "zeros"
[[model.layers]]
[[model.layers.heads]]
W_Q = {wq}
W_K = "identity"
W_V = "identity"
[input]
tokens = ["a"]
"""


def _rows(n: int, m: int, rng: random.Random) -> str:
    return "\n".join(" ".join(str(rng.randint(0, 9)) for _ in range(m)) for _ in range(n))


def generated_cases(folder: Path) -> list[Case]:
    """Cases too large to store: written into ``folder``."""
    rng = random.Random(0)
    out = []

    # A 1,000 x 1,000 weight matrix is more than 2 MB of text: refused before parsing.
    p = folder / "weight_1000x1000.toml"
    embed = '"""\n' + _rows(2, 1000, rng) + '\n"""\n'
    p.write_text(
        "# expect: exit=2 key=at most 2,000,000 bytes\n"
        + _MODEL_HEAD.format(d=1000)
        + f"embed = {embed}"
        + _MODEL_TAIL.format(wq='"""\n' + _rows(1000, 1000, rng) + '\n"""'),
        encoding="utf-8",
    )
    out.append(Case(p, 2, "at most 2,000,000 bytes"))

    # 160 x 160 fits the file but not the entry cap: refused with the key named.
    p = folder / "weight_160x160.toml"
    embed = '"""\n' + _rows(2, 160, rng) + '\n"""\n'
    p.write_text(
        _MODEL_HEAD.format(d=160)
        + f"embed = {embed}"
        + _MODEL_TAIL.format(wq='"""\n' + _rows(160, 160, rng) + '\n"""'),
        encoding="utf-8",
    )
    out.append(Case(p, 2, "model.layers[0].heads[0].W_Q"))

    # The same as an array of arrays of TOML integers.
    p = folder / "weight_160x160_array.toml"
    arr = "[" + ", ".join("[" + ", ".join("1" for _ in range(160)) + "]" for _ in range(160)) + "]"
    p.write_text(
        _MODEL_HEAD.format(d=160) + f"embed = {embed}" + _MODEL_TAIL.format(wq=arr),
        encoding="utf-8",
    )
    out.append(Case(p, 2, "model.layers[0].heads[0].W_Q"))

    # 5,000 claims, the last with an unknown step: found after checking the others.
    p = folder / "many_claims.toml"
    base = (CORPUS / "minus_zero_printed.toml").read_text(encoding="utf-8")
    filler = '[[claims]]\nlabel = "c{i}"\nstep = "x"\nprinted = "1 0"\nrow = 0\n'
    body = "".join(filler.format(i=i) for i in range(1, 5_000))
    p.write_text(base + body + '[[claims]]\nlabel = "last"\nstep = "nope"\nprinted = "1"\n')
    out.append(Case(p, 2, "claims[5000].step"))
    return out


# ----------------------------------------------------------------------------- running


#: One case of each kind, always run as its own ``python -m symtf.cli`` process.
SMOKE = (
    "empty.toml",
    "binary_garbage.toml",
    "inject_title.toml",
    "inject_expression.toml",
    "inject_matrix_cell.toml",
    "digits_5000_toml_int.toml",
    "deep_nested_arrays.toml",
    "circular_claims.toml",
    "weight_1000x1000.toml",
)

# Runs cases through symtf.cli.main in this one process; prints one JSON line per case.
_WORKER = r"""
import io, json, sys, time, traceback
from contextlib import redirect_stderr, redirect_stdout
from symtf.cli import main

for path in json.loads(sys.stdin.read()):
    out, err = io.StringIO(), io.StringIO()
    start = time.process_time()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = main(["check", path])
    except BaseException:
        code = -1
        err.write(traceback.format_exc())
    line = {"path": path, "code": code, "stdout": out.getvalue(), "stderr": err.getvalue(),
            "seconds": time.process_time() - start}
    sys.__stdout__.write(json.dumps(line) + "\n")
    sys.__stdout__.flush()
"""


def _run(case: Case, cwd: Path) -> Outcome:
    """One case as its own ``symtf check FILE`` process (its CPU time, not the wall clock)."""
    try:
        r = run_symtf("check", str(case.path), cwd=cwd, cpu_seconds=10 * CASE_SECONDS)
    except subprocess.TimeoutExpired as e:
        return Outcome(None, str(e.stdout or ""), str(e.stderr or ""), float("inf"))
    return Outcome(r.returncode, r.stdout, r.stderr, r.cpu_seconds or 0.0)


def _run_batch(cases: list[Case], cwd: Path) -> dict[str, Outcome]:
    """Many cases through ``symtf.cli.main`` in one worker process."""
    r = subprocess.run(
        [sys.executable, "-c", _WORKER],
        input=json.dumps([str(c.path) for c in cases]),
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=cwd,
        timeout=600,
        env={**os.environ, "SYMTF_DEBUG": ""},
    )
    got = {}
    for line in r.stdout.splitlines():
        d = json.loads(line)
        got[Path(d["path"]).name] = Outcome(d["code"], d["stdout"], d["stderr"], d["seconds"])
    for c in cases:  # a worker that died leaves its remaining cases without an outcome
        got.setdefault(c.path.name, Outcome(None, "", r.stderr, 0.0))
    return got


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty working directory for the command: the canary would appear here."""
    return tmp_path_factory.mktemp("cwd")


@pytest.fixture(scope="module")
def all_cases(tmp_path_factory: pytest.TempPathFactory) -> list[Case]:
    """The stored corpus plus the generated large cases."""
    return corpus_cases() + generated_cases(tmp_path_factory.mktemp("generated"))


@pytest.fixture(scope="module")
def outcomes(all_cases: list[Case], sandbox: Path) -> Iterator[dict[str, Outcome]]:
    """Every case run once, one worker per core."""
    workers = max(2, os.cpu_count() or 2)
    results: dict[str, Outcome] = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        if os.environ.get("SYMTF_FULL_CLI"):
            # One after another: a process's CPU time is read from the children waited for.
            for c in all_cases:
                results[c.path.name] = _run(c, sandbox)
        else:
            chunks = [all_cases[k::workers] for k in range(workers)]
            for part in pool.map(lambda cs: _run_batch(cs, sandbox), chunks):
                results.update(part)
    yield results


@pytest.mark.parametrize("name", SMOKE)
def test_case_as_its_own_process(name: str, all_cases: list[Case], sandbox: Path) -> None:
    case = next(c for c in all_cases if c.path.name == name)
    _assert_outcome(case, _run(case, sandbox))


def test_corpus_is_large_enough() -> None:
    cases = corpus_cases()
    assert len(cases) >= 50
    assert {c.exit for c in cases} >= {0, 2}


@pytest.mark.parametrize(
    "name",
    [c.path.name for c in corpus_cases()]
    + [
        "weight_1000x1000.toml",
        "weight_160x160.toml",
        "weight_160x160_array.toml",
        "many_claims.toml",
    ],
)
def test_case(name: str, all_cases: list[Case], outcomes: dict[str, Outcome]) -> None:
    case = next(c for c in all_cases if c.path.name == name)
    _assert_outcome(case, outcomes[name])


def _assert_outcome(case: Case, got: Outcome) -> None:
    name = case.path.name
    everything = got.stdout + got.stderr
    assert got.returncode is not None, f"{name}: no exit code ({got.stderr[-300:]})"
    assert "Traceback" not in everything
    assert "internal error" not in everything
    assert got.returncode == case.exit, f"{name}: exit {got.returncode}, stderr: {got.stderr}"
    if case.exit == 2:
        assert str(case.path) in got.stderr, f"{name}: the error does not name the file"
        assert case.key in got.stderr, f"{name}: the error does not name {case.key!r}"
        assert got.stderr.startswith("symtf: error: ")
        assert got.stdout == ""
    else:
        assert case.key in everything
    assert got.seconds < CASE_SECONDS, f"{name}: took {got.seconds:.1f} s of CPU time"


def test_nothing_was_executed(outcomes: dict[str, Outcome], sandbox: Path) -> None:
    assert outcomes  # every case has run
    assert list(sandbox.iterdir()) == []
    for place in (Path.cwd(), CORPUS, CORPUS.parent, Path.home()):
        assert not (place / CANARY).exists()


def test_injection_strings_cover_every_string_field() -> None:
    fields = {c.path.stem.removeprefix("inject_") for c in corpus_cases()}
    for field in (
        "title", "source", "label", "note", "step", "expression", "printed", "vocab",
        "tokens", "word", "matrix_text", "matrix_cell", "architecture", "mask", "norm",
        "activation", "eps", "scale", "rounding", "reduce", "stands_for_key",
        "stands_for_value", "standalone_name", "standalone_op", "standalone_input",
    ):  # fmt: skip
        assert field in fields


# ----------------------------------------------------------------------------- limits


def _slow_model(d: int = 32, n: int = 16, heads: int = 2, layers: int = 3, seed: int = 1) -> str:
    """A random decoder within every size cap whose exact check takes about 20 s."""
    rng = random.Random(seed)

    def mat(r: int, c: int) -> str:
        rows = (" ".join(f"{rng.randint(-99, 99) / 100}" for _ in range(c)) for _ in range(r))
        return '"""\n' + "\n".join(rows) + '\n"""'

    vocab = ", ".join(f'"t{i}"' for i in range(n))
    lines = [
        'title = "slow"',
        "[model]",
        f"d_model = {d}",
        f"n_heads = {heads}",
        f"vocab = [{vocab}]",
        f"embed = {mat(n, d)}",
        f"unembed = {mat(d, n)}",
    ]
    for _ in range(layers):
        lines.append("[[model.layers]]")
        for _ in range(heads):
            lines.append("[[model.layers.heads]]")
            lines += [f"{w} = {mat(d, d // heads)}" for w in ("W_Q", "W_K", "W_V")]
    lines += ["[input]", f"tokens = [{vocab}]"]
    lines += ["[[claims]]", 'label = "p"', 'step = "probs"', f'printed = "{" ".join(["0.1"] * n)}"']
    return "\n".join(lines) + "\n"


def test_time_budget_refuses_instead_of_hanging(tmp_path: Path) -> None:
    path = tmp_path / "slow.toml"
    path.write_text(_slow_model(), encoding="utf-8")
    # The budget is wall-clock time; what the test bounds is the CPU the child spent
    # (it would go on computing for minutes if the budget were not kept).
    r = run_symtf("check", "--timeout", "1", str(path), cwd=tmp_path, cpu_seconds=60)
    assert r.returncode == 2, r.stderr
    assert str(path) in r.stderr
    assert "time budget of 1 s" in r.stderr
    assert "--timeout" in r.stderr
    assert "Traceback" not in r.stderr
    assert r.cpu_seconds is not None and r.cpu_seconds < 10


def test_help_documents_the_limits() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "symtf", "check", "--help"], capture_output=True, text=True
    )
    assert r.returncode == 0
    assert "--timeout" in r.stdout
    assert "time budget per derivation" in r.stdout
    assert "limits:" in r.stdout


def test_documented_limits_match_the_code() -> None:
    from symtf import cli, numbers, spec
    from symtf.commands.check import VERDICT_HELP

    text = " ".join(VERDICT_HELP.split())
    assert f"{spec.MAX_FILE_BYTES:,} bytes" in text
    assert f"{spec.MAX_DIM} rows or columns" in text
    assert f"{spec.MAX_ENTRIES:,} entries" in text
    assert f"over {numbers.MAX_NUMBER_CHARS} characters" in text
    assert f"beyond ±{numbers.MAX_EXPONENT}" in text
    assert f"default {cli.DEFAULT_TIMEOUT:g}" in text
