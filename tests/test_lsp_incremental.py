"""The language server's worker: what an edit reuses gives what a fresh draft gives.

The reference is ``symtf.draft.draft_text`` on the edited text, run from scratch:
a resumed search must write the same derivation, byte for byte, for every edit
tried, and must have resumed (not started over) where the edit allows it.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from symtf.draft import draft_text
from symtf.lsp.incremental import State, _drafted
from symtf.lsp.worker import read_message, write_message

ROOT = Path(__file__).resolve().parent.parent


def _article(name: str) -> Path | None:
    for base in (ROOT.parent, ROOT.parent.parent):
        p = base / "shared" / "articles" / name
        if p.exists():
            return p
    return None


SEED = _article("000_b60c289f27ab6d88.txt")
WORKSHEET = ROOT / "tests" / "draft_sources" / "toyai_example3_worksheet.md"
ARTICLES = [
    p
    for p in (
        SEED,
        WORKSHEET,
        ROOT / "tests" / "draft_sources" / "djimra_hand_calculation.md",
    )
    if p is not None
]
_NUMBER = re.compile(r"(?<![\w.])-?\d+\.\d+(?![\d.])")


def _edits(text: str, n: int, seed: int) -> list[tuple[int, int, str]]:
    """``n`` printed numbers of the text with their last digit changed: (start, end, new)."""
    found = [(m.start(), m.end(), m.group()) for m in _NUMBER.finditer(text)]
    rng = random.Random(seed)
    picks = sorted(rng.sample(range(len(found)), min(n, len(found))))
    return [
        (found[k][0], found[k][1], found[k][2][:-1] + str((int(found[k][2][-1]) + 1) % 10))
        for k in picks
    ]


def _kind(path: Path) -> str:
    return "md" if path.suffix == ".md" else "txt"


#: The longest articles: the source article's eight edits take half a minute or more, the
#: longer worksheet's about fifteen seconds; they run with the slow sweeps
#: (``pytest -m ""``), and the shorter worksheet stays in the default run.
SLOW = (SEED, WORKSHEET)
RESUMED = [
    pytest.param(p, id=p.name, marks=[pytest.mark.slow] if p in SLOW else []) for p in ARTICLES
]


@pytest.mark.parametrize("path", RESUMED)
def test_a_resumed_search_writes_the_draft_a_fresh_one_writes(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    kind = _kind(path)
    first, search, _ = _drafted(text, kind, str(path), None)
    assert first.toml == draft_text(text, kind, path=str(path)).toml
    resumed = adopted = 0
    for start, end, new in _edits(text, 8, seed=len(text)):
        edited = text[:start] + new + text[end:]
        got, again, _ = _drafted(edited, kind, str(path), search)
        assert again is not None
        resumed += again.resumed_at > 0
        adopted += again.adopted
        assert got.toml == draft_text(edited, kind, path=str(path)).toml, (start, new)
        # searched again from the edit's printing on, but for the printings it kept
        assert len(again.reads) == len(again.article.printings)
    assert resumed >= 4  # most edits leave printings before them to reuse
    assert adopted > 0  # and some leave the search's state after them as it was


#: The first article (the source article where it is beside the project, about 40 s, else
#: the longer worksheet: both with the slow sweeps) and the shorter worksheet, in the
#: default run.
FIRST_AND_LAST = [
    pytest.param(p, id=p.name, marks=[pytest.mark.slow] if p in SLOW else [])
    for p in (ARTICLES[0], ARTICLES[-1])
]


@pytest.mark.parametrize("path", FIRST_AND_LAST)
def test_printings_after_an_edit_keep_their_outcome_only_when_the_search_comes_back(
    path: Path,
) -> None:
    """An edit that leaves its printing's step as it was: the printings after it keep their
    outcomes unsearched, but for those whose search reads printed numbers; an edit that
    changes the step searches every printing after it again."""
    text = path.read_text(encoding="utf-8")
    kind = _kind(path)
    _, search, _ = _drafted(text, kind, str(path), None)
    assert search is not None
    n = len(search.article.printings)
    kept: list[int] = []
    for start, end, new in _edits(text, 12, seed=3):
        edited = text[:start] + new + text[end:]
        got, again, _ = _drafted(edited, kind, str(path), search)
        assert again is not None
        assert got.toml == draft_text(edited, kind, path=str(path)).toml, (start, new)
        if again.adopted:
            kept.append(again.adopted)
            # what read another printing's numbers was searched again
            assert again.adopted <= n - again.resumed_at - sum(search.reads[again.resumed_at :])
    assert kept


def test_pooled_values_are_the_values_of_the_tensors_the_search_knows() -> None:
    """Every pre-filter value a resumed search holds, taken from the document's pool or
    computed, is the value of its candidate over the tensors this search knows: computed
    again from scratch over them, it is the same. An edit to a given tensor's number changes
    the values over it, and those are not taken from the pool."""
    import numpy as np

    from symtf.draft.infer.prefilter import fill

    path = ARTICLES[-1]
    text = path.read_text(encoding="utf-8")
    kind = _kind(path)
    _, search, _ = _drafted(text, kind, str(path), None)
    assert search is not None
    took = 0
    for start, end, new in _edits(text, 4, seed=11):
        edited = text[:start] + new + text[end:]
        got, again, _ = _drafted(edited, kind, str(path), search)
        assert again is not None
        assert got.toml == draft_text(edited, kind, path=str(path)).toml, (start, new)
        took += again.took
        fresh: dict[object, object] = {}
        values = {k: x.value for k, x in again.known.items()}
        fill(list(again._memo), values.__getitem__, fresh)
        for e, v in again._memo.items():
            w = fresh[e]
            assert (v is None) == (w is None), e
            if v is not None:
                assert isinstance(v, np.ndarray) and isinstance(w, np.ndarray)
                assert np.allclose(v, w, rtol=1e-12, atol=0, equal_nan=True), e
    assert took > 0  # values were taken from the pool, not computed again


def test_the_pool_keys_each_value_on_the_tensors_its_candidate_reads() -> None:
    """Each candidate the pool holds, after a search and an edit's resumed search, is kept
    with the known tensors it reads (worked out from the pool's entries of the candidates it
    reads), the same as reading its tree: a value kept under fewer tensors would be taken
    after an edit to a tensor it reads."""
    from symtf.draft.templates import inputs

    path = ARTICLES[-1]
    text = path.read_text(encoding="utf-8")
    kind = _kind(path)
    _, search, _ = _drafted(text, kind, str(path), None)
    assert search is not None
    (start, end, new), *_ = _edits(text, 1, seed=5)
    _, again, _ = _drafted(text[:start] + new + text[end:], kind, str(path), search)
    assert again is not None and again.pool is search.pool
    entries = again.pool.entries
    assert len(entries) > 100
    deep = 0
    for e, (ins, _values) in entries.items():
        assert ins == tuple(sorted(inputs(e))), e
        deep += any(type(a).__name__ == "Call" for a in e.args)
    assert deep  # candidates over candidates, whose inputs come from the pool's entries


@pytest.mark.parametrize("path", FIRST_AND_LAST)
def test_edits_on_edits_and_an_undo_give_what_a_fresh_worker_gives(path: Path) -> None:
    """A chain of edits, each resuming the last one's search, then back to the start: every
    result (the report as JSON, the fixes, the draft) is what a fresh worker finds. The
    source article (over two minutes) runs with the slow sweeps; a worksheet stays in the
    default run."""
    text = path.read_text(encoding="utf-8")
    kind = _kind(path)
    state = State()
    state.check("doc", text, kind, str(path))
    current = text
    for start, end, new in reversed(_edits(text, 3, seed=7)):  # from the end: offsets hold
        current = current[:start] + new + current[end:]
        found, reused = state.check("doc", current, kind, str(path))
        assert reused.startswith("the search of printings 1 to ")
        assert found == State().check("fresh", current, kind, str(path))[0]
    found, reused = state.check("doc", text, kind, str(path))
    assert reused.startswith("the result of the same text")
    assert found == State().check("fresh", text, kind, str(path))[0]


@pytest.mark.parametrize("path", FIRST_AND_LAST)
def test_edits_each_undone_give_what_a_fresh_worker_gives(path: Path) -> None:
    """An author tries a number and takes it back, again and again: each edit starts from the
    unedited text's search and check (the undo brings them back) with the traces of the edit
    before, and every result (the report as JSON, the fixes, the draft) is what a fresh
    worker finds. The source article runs with the slow sweeps."""
    text = path.read_text(encoding="utf-8")
    kind = _kind(path)
    state = State()
    state.check("doc", text, kind, str(path))
    unedited = state.docs["doc"].checked
    assert unedited is not None
    for start, end, new in _edits(text, 4, seed=11):
        edited = text[:start] + new + text[end:]
        found, _ = state.check("doc", edited, kind, str(path))
        assert found == State().check("fresh", edited, kind, str(path))[0], (start, new)
        assert state.docs["doc"].last is not None
        _, reused = state.check("doc", text, kind, str(path))
        assert reused.startswith("the result of the same text")
        assert state.docs["doc"].checked is unedited  # what the next edit starts from


def test_an_edit_to_the_prose_reuses_the_check_and_gives_a_fresh_result(tmp_path: Path) -> None:
    path = ARTICLES[0]
    text = path.read_text(encoding="utf-8")
    kind = _kind(path)
    state = State()
    state.check("doc", text, kind, str(path))
    # a word of the last line's prose, after every printed number: the derivation is the same
    last = text.rstrip("\n").rsplit("\n", 1)[1]
    word = re.search(r"[A-Za-z]{4,}", last)
    assert word is not None
    at = len(text.rstrip("\n")) - len(last) + word.start()
    edited = text[:at] + word.group().upper() + text[at + len(word.group()) :]
    found, reused = state.check("doc", edited, kind, str(path))
    assert reused.endswith("the check of the same drafted derivation")
    assert found == State().check("fresh", edited, kind, str(path))[0]


MOVED = """\
# Two scores

The query is $q = [1.5, 0.5]$ and the keys are $k_1 = [0.2, 0.4]$, $k_2 = [1.0, 0.6]$.

$$
q \\cdot k_1 = 1.5 \\times 0.2 + 0.5 \\times 0.4 = 0.5
$$

$$
q \\cdot k_2 = 1.5 \\times 1.0 + 0.5 \\times 0.6 = 1.8
$$

Their sum is $0.5 + 1.8 = 2.3$, and their mean $2.3 / 2 = 1.25$.
"""


def test_edits_that_move_later_lines_give_what_a_fresh_worker_gives() -> None:
    """A number written with one more digit, then a line added above the rest: the segments
    after each edit stand elsewhere in the file and are taken from the last reading (not read
    again), and the result (the report as JSON with each number's line and columns, the
    fixes, the draft) is what a fresh worker finds."""
    state = State()
    state.check("doc", MOVED, "md", "post.md")
    longer = MOVED.replace("[1.5, 0.5]", "[1.50, 0.5]")  # the same value, a column wider
    lower = longer.replace("\n\n$$\nq \\cdot k_1", "\n\nThe first:\n\n$$\nq \\cdot k_1")
    assert lower.count("\n") == MOVED.count("\n") + 2
    for edited in (longer, lower):
        found, _ = state.check("doc", edited, "md", "post.md")
        assert state.docs["doc"].segments.hits > 0
        fresh = State().check("fresh", edited, "md", "post.md")[0]
        assert found == fresh
    # the mean is off (1.15 is 2.3 / 2), at its place in the last text
    (off,) = [c for c in found["derivation"]["checks"] if c["verdict"] == "wrong"]
    line = lower.splitlines()[off["source_line"] - 1]
    assert line[off["source_column"] - 1 : off["source_end_column"] - 1] == "1.25"


def test_an_article_over_the_limits_is_refused_as_the_command_refuses_it() -> None:
    """A printed vector of 600 entries (a derivation holds at most 512 a row): the worker
    refuses it with the command's own words, before searching."""
    from symtf.errors import LimitError

    text = "# Big\n\nThe vector is $v = [" + ", ".join(["0.1"] * 600) + "]$.\n"
    with pytest.raises(LimitError) as command:
        draft_text(text, "md", path="post.md")
    with pytest.raises(LimitError) as worker:
        State().check("doc", text, "md", "post.md")
    assert "the printed matrix v" in str(command.value)
    assert str(worker.value) == str(command.value)


def test_an_article_with_code_is_searched_whole() -> None:
    text = (ROOT / "tests" / "draft_sources" / "sanjiv_temperature_snippet.md").read_text(
        encoding="utf-8"
    )
    draft, search, reused = _drafted(text, "md", "post.md", None)
    if search is None:
        assert "code" in reused
    assert draft.toml == draft_text(text, "md", path="post.md").toml


def test_an_article_with_code_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its draft is the one a fresh reading gives, from the reading the worker made."""
    from symtf.draft import article

    text = (ROOT / "tests" / "draft_sources" / "micwill_layer_norm_snippet.md").read_text(
        encoding="utf-8"
    )
    fresh = draft_text(text, "md", path="post.md").toml
    reads: list[str] = []
    read = article.read_article

    def counted(*args: Any, **kwargs: Any) -> Any:
        reads.append(args[0])
        return read(*args, **kwargs)

    monkeypatch.setattr(article, "read_article", counted)
    draft, search, _ = _drafted(text, "md", "post.md", None)
    assert search is None and draft.toml == fresh
    assert len(reads) == 1


# ----------------------------------------------------------------------------- the worker process


def _worker() -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "symtf.lsp.worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.stdout is not None
    ready = read_message(proc.stdout)
    assert ready["ready"] is True
    return proc


def test_the_worker_answers_cancels_and_refuses_over_its_pipe(tmp_path: Path) -> None:
    proc = _worker()
    assert proc.stdin is not None and proc.stdout is not None
    try:
        line = "Row {k}: $v_{k} = [0.{k:03d}, 1.5, -2.25]$ and more text about it.\n"
        big = "".join(line.format(k=k % 1000) for k in range(40_000))
        job = {"id": 1, "key": "big", "version": 1, "text": big, "kind": "md"}
        write_message(proc.stdin, {"job": {**job, "name": "big.md", "timeout": 600}})
        time.sleep(1.0)  # well inside the draft of 40,000 lines
        write_message(proc.stdin, {"cancel": 1})
        got = read_message(proc.stdout)
        assert (got["id"], got["status"]) == (1, "cancelled")
        huge = {"id": 2, "key": "huge", "version": 1, "text": "x" * 5_000_001, "kind": "md"}
        write_message(proc.stdin, {"job": {**huge, "name": "huge.md", "timeout": 60}})
        got = read_message(proc.stdout)
        assert got["status"] == "error" and "at most 5,000,000 bytes" in got["error"]
        small = {
            "id": 3,
            "key": "s",
            "version": 4,
            "text": "# t\n\n$x = 1 + 1 = 3$\n",
            "kind": "md",
        }
        write_message(proc.stdin, {"job": {**small, "name": "s.md", "timeout": 60}})
        got = read_message(proc.stdout)
        assert (got["id"], got["version"], got["status"]) == (3, 4, "ok")
        checks = got["derivation"]["checks"]
        assert [(c["printed"], c["verdict"]) for c in checks] == [("3", "wrong")]
        write_message(proc.stdin, {"cancel": 99})  # no such job: ignored
        write_message(proc.stdin, {"job": {**small, "id": 4, "name": "s.md", "timeout": 60}})
        got = read_message(proc.stdout)
        assert got["id"] == 4 and got["reused"].startswith("the result of the same text")
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
