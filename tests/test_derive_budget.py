"""``symtf derive`` keeps a budget of CPU time, and ``derive --list`` runs no proof.

A proof only computes, so its budget counts the process's CPU time: waiting (for the
cores of a loaded machine, here a sleep) does not use it up, and work does.
"""

from __future__ import annotations

import time

import pytest

from symtf import cli, derive
from symtf.cli import time_budget
from symtf.errors import LimitError


def test_a_cpu_budget_does_not_count_waiting() -> None:
    with time_budget(0.3, "work", clock="cpu"):
        time.sleep(1.0)


def test_a_cpu_budget_ends_work_and_says_what_it_counted() -> None:
    start = time.process_time()
    with (
        pytest.raises(LimitError, match=r"work: exceeded the time budget of 0\.3 s of CPU time"),
        time_budget(0.3, "work", clock="cpu"),
    ):
        while time.process_time() - start < 30:
            sum(range(10_000))
    assert time.process_time() - start < 10


def test_derive_counts_cpu_time(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["derive", "--help"])
    assert "time budget in CPU seconds (default: 60)" in " ".join(capsys.readouterr().out.split())
    code = cli.main(["derive", "attention-backward", "--timeout", "0.2"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "derive attention-backward: exceeded the time budget of 0.2 s of CPU time" in err


def test_list_runs_no_proof(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from symtf.derive import core, proof

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("derive --list ran a proof or a check")

    for module, name in ((proof, "check_all"), (proof, "check"), (core, "verify")):
        monkeypatch.setattr(module, name, refuse)
    monkeypatch.setattr(core, "symbolic_check", refuse)
    monkeypatch.setattr(core, "numeric_check", refuse)
    assert cli.main(["derive", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split()[0] for ln in lines] == derive.names()
    # softmax-jacobian's det J = 0 has no general proof: its one unproved statement.
    jac = next(ln for ln in lines if ln.startswith("softmax-jacobian"))
    assert "checked for n ≤ 4 (4 of 5 statements proved for all n)" in jac
