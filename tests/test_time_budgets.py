"""Every command keeps a time budget, and legal input is accepted rather than refused.

The budget (``--timeout``, default 60 s) is wall-clock time, but these tests bound
what the child did with it in CPU time (see ``limited.py``): a child that stops
when its budget ends has used at most that budget of CPU plus its start-up,
whatever the load on the machine; one that kept going past it would use more.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path

import pytest
from fuzzing import BAD_CELLS
from limited import run_symtf
from tiny_derivations import standalone

from symtf import cli
from symtf.cli import time_budget
from symtf.commands import check
from symtf.errors import LimitError, SymtfError

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "derivations" / "i_love_ai.toml"
#: CPU seconds a child may spend starting up and unwinding, beyond its budget.
GRACE = 15


def _commands() -> list[str]:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    # `completion` prints a fixed script and reads nothing: there is no work to budget.
    return sorted(c for c in sub.choices if c != "completion")


@pytest.mark.parametrize("command", _commands())
def test_every_command_takes_a_timeout_with_a_default_of_60_s(command: str, tmp_path: Path) -> None:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    if command == "lsp":
        # The server's budget is a setting ([tool.symtf] timeout, then the client's), not a flag.
        from symtf.lsp.config import Settings

        assert Settings().timeout == 60.0
        return
    timeout = next(a for a in sub.choices[command]._actions if a.dest == "timeout")
    if command == "check":
        # check leaves it unset so that [tool.symtf] timeout can fill it; without a table it is 60.
        assert timeout.default is None
        args = sub.choices[command].parse_args(["x.md"])
        with contextlib.chdir(tmp_path):
            check.project_settings(args)
        assert args.timeout == 60.0
        return
    assert timeout.default == 60.0


def test_the_budget_is_not_swallowed_by_fallbacks() -> None:
    # Checking code falls back on SymtfError (another method, another precision); the
    # budget must end the work anyway, however often it is caught.
    start = time.process_time()
    with pytest.raises(LimitError, match=r"time budget of 0\.2 s"), time_budget(0.2, "work"):
        while time.process_time() - start < 30:
            try:
                sum(range(10_000))
            except SymtfError:
                pass
            except Exception:
                pass
    assert time.process_time() - start < 10


def test_extract_keeps_its_budget_on_a_long_one_line_article(tmp_path: Path) -> None:
    article = tmp_path / "one-line.md"
    article.write_text(("0.123 + 0.5 = 0.623 " * 260_000)[:4_900_000], encoding="utf-8")
    r = run_symtf("extract", str(article), "--timeout", "5", cpu_seconds=120)
    assert r.returncode in (0, 2), r.stderr
    if r.returncode == 2:
        assert str(article) in r.stderr and "time budget of 5 s" in r.stderr
    assert r.cpu_seconds is not None and r.cpu_seconds < 5 + GRACE


def test_a_layernorm_of_512_rows_keeps_the_budget(tmp_path: Path) -> None:
    rows = "\n".join(
        " ".join(f"{((i * 39 + j) * 7919 % 1999 - 999) / 1000}" for j in range(39))
        for i in range(512)
    )
    claim = (
        '[[claims]]\nlabel = "ln"\nstep = "op"\nrow = 0\nprinted = "'
        + " ".join(["0.1"] * 39)
        + '"\n'
    )
    p = tmp_path / "ln.toml"
    p.write_text(standalone("layernorm", rows, claim, eps="0.00001"), encoding="utf-8")
    r = run_symtf("check", str(p), "--timeout", "5", cpu_seconds=200)
    assert r.returncode in (1, 2), r.stderr
    if r.returncode == 2:
        assert "time budget of 5 s" in r.stderr
    assert r.cpu_seconds is not None and r.cpu_seconds < 5 + GRACE


def test_whatif_follows_each_claim_once_however_often_it_is_named() -> None:
    labels = ",".join(["A_1"] * 10_000)
    r = run_symtf(
        "whatif", str(SEED), "--symbol", "l0.h0.W_Q[0,0]=a", "--claims", labels, cpu_seconds=300
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("A_1") >= 1
    # Following A_1 once costs what it costs; ten thousand times would cost far more.
    assert r.cpu_seconds is not None and r.cpu_seconds < 60


def test_whatif_refuses_too_many_entries_at_once(tmp_path: Path) -> None:
    n = 16
    eye = "\n".join(" ".join("1" if i == j else "0" for j in range(n)) for i in range(n))
    words = [f"w{i}" for i in range(n)]
    p = tmp_path / "wide.toml"
    p.write_text(
        f'title = "wide"\n[model]\narchitecture = "attention"\nd_model = {n}\nn_heads = 1\n'
        f'mask = "none"\nvocab = {json.dumps(words)}\nembed = """\n{eye}\n"""\n'
        '[[model.layers]]\n[[model.layers.heads]]\nW_Q = "identity"\nW_K = "identity"\n'
        f'W_V = "identity"\n[input]\ntokens = {json.dumps(words)}\n'
        '[[claims]]\nlabel = "A"\nstep = "l0.h0.pattern"\n'
        f'printed = """\n{chr(10).join(" ".join(["0.1"] * n) for _ in range(n))}\n"""\n',
        encoding="utf-8",
    )
    r = run_symtf("whatif", str(p), "--symbol", "l0.h0.W_Q[0,0]=a", "--claims", "A")
    assert r.returncode == 2 and "at most 200" in r.stderr, r.stderr


# About 30 s of one core: with the slow sweeps. The default run keeps a shorter chain's
# recursion test (test_robustness.py::test_a_chain_of_softmax_steps_is_evaluated_without_recursion).
@pytest.mark.slow
def test_two_thousand_chained_softmax_steps_are_checked(tmp_path: Path) -> None:
    # softmax of softmax … of [0.1, 0.2, 0.3] tends to the uniform [1/3, 1/3, 1/3]; after
    # 2,000 steps the entries agree with 1/3 far beyond four decimals.
    lines = ['title = "a long chain"', "[tensors]", 'x = ["0.1", "0.2", "0.3"]', "[steps]"]
    lines.append('s0 = "softmax(x)"')
    lines += [f's{i} = "softmax(s{i - 1})"' for i in range(1, 2000)]
    lines += ["[[claims]]", 'label = "last"', 'step = "s1999"', 'printed = "0.3333 0.3333 0.3333"']
    p = tmp_path / "chain.toml"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = run_symtf("check", str(p), "--timeout", "3000", cpu_seconds=600)
    assert r.returncode == 0, r.stderr
    assert "nested too deeply" not in r.stderr and "3 rounded" in r.stdout


# ----------------------------------------------------------------------------- notebooks


@pytest.mark.parametrize(
    ("cells", "where"),
    [
        ([1, 2], "cells[0]"),
        ([{"cell_type": "code", "source": 5}], "cells[0].source"),
        ([{"cell_type": "markdown", "source": ["a", 3]}], "cells[0].source"),
        ([{"cell_type": "sql", "source": "x"}], "cells[0].cell_type"),
        ([{"cell_type": "markdown", "source": "x"}, "y"], "cells[1]"),
        ([{"cell_type": "code", "source": "A", "outputs": {"a": 1}}], "cells[0].outputs"),
        ([{"cell_type": "code", "source": "A", "outputs": [3]}], "cells[0].outputs[0]"),
        (
            [{"cell_type": "code", "source": "A", "outputs": [{"output_type": "print"}]}],
            "cells[0].outputs[0].output_type",
        ),
        (
            [
                {
                    "cell_type": "code",
                    "source": "A",
                    "outputs": [{"output_type": "stream", "text": {"x": 1}}],
                }
            ],
            "cells[0].outputs[0].text",
        ),
        (
            [
                {
                    "cell_type": "code",
                    "source": "A",
                    "outputs": [{"output_type": "execute_result", "data": ["x"]}],
                }
            ],
            "cells[0].outputs[0].data",
        ),
    ],
)
@pytest.mark.parametrize("command", ["extract", "draft", "check"])
def test_a_notebook_with_cells_of_the_wrong_type_is_exit_2_naming_the_cell(
    cells: list, where: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Every command that reads a notebook refuses a malformed cell: ``check`` and ``draft``
    read past ``outputs`` given as a table, or a cell of type ``bogus``, and said "all
    printed numbers check out"."""
    nb = tmp_path / "nb.ipynb"
    nb.write_text(json.dumps({"cells": cells, "nbformat": 4}), encoding="utf-8")
    out = tmp_path / "draft.toml"
    argv = [command, str(nb)] if command == "check" else [command, str(nb), "-o", str(out)]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert f"{nb}: {where}" in err and "expected" in err, err
    assert not out.exists()


@pytest.mark.parametrize("command", ["check", "draft", "extract"])
@pytest.mark.parametrize("bad", range(len(BAD_CELLS)))
def test_every_malformed_cell_of_the_fuzzer_is_refused_by_every_reader(
    bad: int, command: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """The fuzzer's cells of the wrong shape, first in an otherwise sound notebook: exit 2
    naming the cell (its mutations make it no oracle for this; here each is taken alone)."""
    cells = [
        BAD_CELLS[bad],
        {"cell_type": "markdown", "source": "The weights are 0.25 and 0.75."},
    ]
    nb = tmp_path / "nb.ipynb"
    nb.write_text(json.dumps({"cells": cells, "nbformat": 4}), encoding="utf-8")
    out = tmp_path / "out.toml"
    argv = [command, str(nb)] if command == "check" else [command, str(nb), "-o", str(out)]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert f"{nb}: cells[0]" in err and "expected" in err, err
    assert not out.exists()


def test_a_notebook_whose_numbers_check_out_is_still_refused_for_a_bogus_cell(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """The reported case: numbers that check out (softmax of [1, 2] printed as
    [0.2689, 0.7311], by hand: e/(e+e^2) = 0.26894…) beside a cell of the wrong type."""
    code = {
        "cell_type": "code",
        "source": "x = torch.tensor([1.0, 2.0])\nx.softmax(-1)",
        "outputs": [
            {"output_type": "execute_result", "data": {"text/plain": "tensor([0.2689, 0.7311])"}}
        ],
    }
    good = {"cells": [{"cell_type": "markdown", "source": "Softmax of [1, 2]."}, code]}
    nb = tmp_path / "nb.ipynb"
    nb.write_text(json.dumps(good), encoding="utf-8")
    assert cli.main(["check", str(nb)]) == 0
    capsys.readouterr()
    for k, bad in enumerate(
        [
            {**good, "cells": [{"cell_type": "bogus", "source": "x"}, code]},
            {**good, "cells": [good["cells"][0], {**code, "outputs": {"0": code["outputs"][0]}}]},
        ]
    ):
        nb.write_text(json.dumps(bad), encoding="utf-8")
        assert cli.main(["check", str(nb)]) == 2, k
        err = capsys.readouterr().err
        assert f"{nb}: cells[{k}]" in err, err


@pytest.mark.parametrize("text", ["[" * 100_000, '{"cells": ' + "[" * 50_000, "[1]", "null"])
def test_a_notebook_that_is_not_one_is_exit_2(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    nb = tmp_path / "nb.ipynb"
    nb.write_text(text, encoding="utf-8")
    assert cli.main(["extract", str(nb)]) == 2
    err = capsys.readouterr().err
    assert str(nb) in err and "Jupyter notebook" in err, err


def test_a_good_notebook_still_gives_its_printed_values(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    nb = tmp_path / "nb.ipynb"
    cells = [
        {"cell_type": "raw", "source": "ignored"},
        {"cell_type": "markdown", "source": ["S = 0.5 + 0.25 = 0.75\n"]},
        {
            "cell_type": "code",
            "source": "A",
            "outputs": [
                {"output_type": "execute_result", "data": {"text/plain": ["array([[0.5, 0.25]])"]}},
                {"output_type": "error", "ename": "E", "evalue": "", "traceback": []},
            ],
        },
    ]
    nb.write_text(json.dumps({"cells": cells}), encoding="utf-8")
    assert cli.main(["extract", str(nb), "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert any(f["expression"] for f in found) and any(
        f["printed"] == [["0.5", "0.25"]] for f in found
    )
