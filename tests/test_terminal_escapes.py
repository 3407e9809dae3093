"""Control characters from a file never reach a terminal raw, whatever prints them.

An article, a notebook and a derivation carry escape sequences, C1 controls, DEL,
bidirectional overrides and invisible format characters in every place a user writes
text: titles, labels, notebook code (copied into the draft's comments when it is not
translated), printed outputs, file names. Every command that prints is run on them,
and its standard output and error must hold none of these characters raw (the set is
written out here, independently of :mod:`symtf.visible`). Text a program reads back
(JSON, the TOML a draft writes) must also keep each value exactly.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import symtf
from symtf import visible
from symtf.cli import main

SYMTF_HOME = str(Path(symtf.__file__).resolve().parent.parent)

#: What retitles a terminal, clears it, starts a C1 control sequence, reorders or hides
#: text: the characters no output may carry raw.
EVIL = "\x1b]0;PWNED\x07\x1b[2J\x9b31m\x7f\u202e\u2066\u200b\u2060\ufeff\U000e0041\u2028"


def _raw(text: str) -> list[str]:
    """The characters of ``text`` a terminal would act on or hide (newline and tab apart)."""
    bad = []
    for ch in text:
        n = ord(ch)
        if (n < 0x20 and ch not in "\n\t") or 0x7F <= n < 0xA0:
            bad.append(ch)  # C0 (ESC, BEL, CR …), DEL, C1 (CSI …)
        elif 0x202A <= n <= 0x202E or 0x2066 <= n <= 0x2069 or n in (0x200E, 0x200F, 0x061C):
            bad.append(ch)  # bidirectional embeddings, overrides, isolates, marks
        elif 0x200B <= n <= 0x200B or 0x2060 <= n <= 0x2064 or n in (0xFEFF, 0x00AD):
            bad.append(ch)  # zero-width space, word joiner, invisible operators, BOM, soft hyphen
        elif 0xE0000 <= n <= 0xE007F or n in (0x2028, 0x2029):
            bad.append(ch)  # tag characters; line and paragraph separators
    return bad


def _notebook(path: Path) -> None:
    """Untranslated code with an escape sequence, a printed output, a hostile heading."""
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": [f"# Softmax {EVIL}\n"]},
        {
            "cell_type": "code",
            "metadata": {},
            "execution_count": 1,
            "source": [
                "import numpy as np\n",
                "import os\n",
                'os.system("\x1b]0;PWNED\x07")\n',
                f'note = "{EVIL}"\n',
                "x = np.array([1.0, 2.0, 3.0])\n",
                "e = np.exp(x)\n",
                "p = e / e.sum()\n",
                "print(p)\n",
            ],
            "outputs": [
                {
                    "output_type": "stream",
                    "name": "stdout",
                    "text": ["[0.09003057 0.24472847 0.66524096]\n"],
                }
            ],
        },
    ]
    doc = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")


def _derivation(path: Path) -> None:
    # relu([1, -1]) = [1, 0]: the printed 1 1 is one unit off in its second entry
    evil = visible.toml_string(EVIL)[1:-1]
    path.write_text(
        f'title = "Title {evil}"\n[model]\narchitecture = "none"\n[[model.standalone]]\n'
        f'name = "r"\nop = "relu"\ninput = "1 -1"\n[[claims]]\nlabel = "A {evil}"\n'
        'step = "r"\nprinted = "1 1"\n',
        encoding="utf-8",
    )


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_draft_copies_no_escape_sequence_of_the_notebook_to_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``symtf draft`` wrote untranslated code raw into its comments, on standard output:
    the notebook's ``os.system("\\x1b]0;PWNED\\x07")`` set the terminal's title."""
    nb = tmp_path / "n.ipynb"
    _notebook(nb)
    code, out, err = _run(capsys, "draft", str(nb))
    assert code == 0, err
    assert _raw(out) == [] and _raw(err) == [], (out, err)
    assert 'os.system("\\x1b]0;PWNED\\x07")' in out  # spelled out, not lost


def test_what_draft_writes_check_reads_with_control_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The draft was not valid TOML ("Found invalid character '\\x1b'"): ``check`` of the
    notebook was exit 2, and so was ``check`` of what ``draft -o`` wrote. p = softmax of
    [1, 2, 3] rounds to the printed 8 decimals: exit 0."""
    nb = tmp_path / "n.ipynb"
    _notebook(nb)
    draft = tmp_path / "n.toml"
    assert _run(capsys, "draft", str(nb), "-o", str(draft))[0] == 0
    text = draft.read_text(encoding="utf-8")
    tomllib.loads(text)
    assert _raw(text) == []
    for target in (draft, nb):
        code, out, err = _run(capsys, "check", str(target))
        assert code == 0, err
        assert _raw(out) == [] and _raw(err) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "{d}"],
        ["check", "{d}", "--format", "json"],
        ["check", "{d}", "--format", "junit"],
        ["check", "{d}", "--format", "sarif"],
        ["check", "{d}", "--format", "github"],
        ["check", "{d}", "-q"],
        ["explain", "{d}", "A {evil}"],
        ["steps", "{d}"],
        ["steps", "{d}", "--format", "json"],
        ["extract", "{nb}"],
        ["extract", "{nb}", "--format", "json"],
        ["check", "{nb}", "--format", "json"],
        ["draft", "{missing}"],
        ["explain", "{d}", "no such label {evil}"],
        ["check", "{d}", "--format", "{evil}"],
        # the surfaces that rewrite and annotate articles
        ["check", "{d}", "--diff"],
        ["check", "{d}", "--fix"],
        ["check", "{md}", "--diff"],
        ["check", "{md}", "--format", "json"],
        ["check", "{md}", "--format", "github"],
        ["html", "{md}", "-o", "{page}"],
        ["html", "{nb}", "-o", "{page}"],
    ],
)
def test_no_command_prints_a_control_character_raw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    d = tmp_path / "d.toml"
    _derivation(d)
    nb = tmp_path / "n.ipynb"
    _notebook(nb)
    missing = tmp_path / f"gone{EVIL}.md"
    md = tmp_path / "post.md"
    # e = 2.718, e^2 = 7.389 (a slip: 7.38905… rounds to 7.389, so written 7.398 is off)
    md.write_text(
        f"# Softmax {EVIL}\n\nThe logits {EVIL} give e^1 = 2.718 and e^2 = 7.398.\n",
        encoding="utf-8",
    )
    page = tmp_path / "page.html"
    args = [a.format(d=d, nb=nb, missing=missing, evil=EVIL, md=md, page=page) for a in argv]
    try:
        code, out, err = _run(capsys, *args)
    except SystemExit as e:  # a usage error (argparse)
        code, captured = int(e.code or 0), capsys.readouterr()
        out, err = captured.out, captured.err
    assert code in (0, 1, 2), err
    assert _raw(out) == [], out
    assert _raw(err) == [], err
    if argv[0] == "html":  # the page: nothing that acts, reorders or hides (MathML's
        # invisible operators, U+2061 to U+2064, are markup the formulas need)
        shown = page.read_text(encoding="utf-8")
        assert [ch for ch in _raw(shown) if not "\u2061" <= ch <= "\u2064"] == [], shown
        assert "PWNED" in shown and "\\u202e" in shown  # spelled out, not lost
    if "json" in argv and code != 2:
        data = json.loads(out)  # the values themselves are kept, escaped in JSON's syntax
        if argv[0] == "check" and argv[1] == "{d}":
            labels = [c["claim"] for d_ in data["derivations"] for c in d_["checks"]]
            assert labels and all(label == f"A {EVIL}" for label in labels), labels


def test_exercise_grade_and_their_files_keep_control_characters_inert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = tmp_path / "d.toml"
    _derivation(d)
    folder = tmp_path / "ex"
    code, out, err = _run(capsys, "exercise", str(d), "-o", str(folder), "--no-pdf", "--blank", "1")
    assert code == 0, err
    assert _raw(out) == [] and _raw(err) == []
    answers = folder / "answers.toml"
    text = answers.read_text(encoding="utf-8")
    tomllib.loads(text)  # what exercise writes, grade reads
    assert _raw(text) == []
    for fmt in ([], ["--format", "json"]):
        code, out, err = _run(capsys, "grade", str(folder / "key.toml"), str(answers), *fmt)
        assert code in (0, 1), err
        assert _raw(out) == [] and _raw(err) == []


def test_the_pytest_plugin_prints_no_control_character_raw(tmp_path: Path) -> None:
    """A failed claim, a file the check refuses (a step that does not exist, named with the
    escape sequences), and one that cannot be read at all."""
    d = tmp_path / "d.toml"
    _derivation(d)
    evil = visible.toml_string(EVIL)[1:-1]
    (tmp_path / "bad.toml").write_text(
        f'title = "t"\n[tensors]\nx = ["1"]\n[[claims]]\nlabel = "c"\nstep = "no {evil}"\n'
        'printed = "1"\n',
        encoding="utf-8",
    )
    (tmp_path / "broken.toml").write_text(
        f'[[claims]]\nlabel = "c"\nstep = "x"\nprinted = 1\ntitle = "{evil}\n',
        encoding="utf-8",
    )
    r = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--symtf", "."),
            *("-rA", "--continue-on-collection-errors"),
        ],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="surrogateescape",
        cwd=tmp_path,
        timeout=600,
        env={"PYTHONPATH": SYMTF_HOME, "PATH": "/usr/bin:/bin"},
    )
    assert "1 failed" in r.stdout and "2 errors" in r.stdout, r.stdout[-3000:]
    assert "no \\x1b]0;PWNED\\x07" in r.stdout, r.stdout[-3000:]
    assert _raw(r.stdout) == [] and _raw(r.stderr) == [], r.stdout[-3000:]


@pytest.mark.parametrize(
    "ch",
    [
        *"\x00\x07\x1b\x7f\x85\x9b\u061c\u200b\u200e\u202e\u2060\u2066\u2069\ufeff\u00ad\u2028\ufffe",
        "\U000e0041",
        "\U000e007f",
    ],
)
def test_every_character_of_the_rule_is_spelled_out_and_kept_as_a_value(ch: str) -> None:
    text = f"a{ch}b"
    assert _raw(visible.line(text)) == [] and ch not in visible.line(text)
    assert ch not in visible.toml_string(text)
    assert tomllib.loads(f"k = {visible.toml_string(text)}")["k"] == text
    assert ch not in visible.json_text({"k": text})
    assert json.loads(visible.json_text({"k": text}))["k"] == text


@pytest.mark.parametrize(
    "text", ["Grüße η 注意 🙂", "می\u200cخواهم", "क्षि", "👩\u200d👩\u200d👧", "\u00a0x"]
)
def test_ordinary_text_and_the_joiners_scripts_need_are_kept(text: str) -> None:
    assert visible.line(text) == text and visible.toml_string(text) == f'"{text}"'


@pytest.mark.parametrize("separator", ["\x0c", "\x85", "\u2028", "\u2029", "\x0b", "\x1c"])
def test_a_line_is_the_files_line_whatever_other_separators_it_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], separator: str
) -> None:
    """Lines are counted at line feeds, as the file numbers them: a form feed, U+0085 or
    U+2028 inside a line put every later number of the prose one line further per such
    character (line 5 of a 5-line article for a number on line 3). 0.5 + 0.25 = 0.75, so
    the displayed 0.76 of line 5 is off; the prose of line 3 is not read as a step."""
    md = tmp_path / "post.md"
    md.write_text(
        f"Intro{separator} text{separator}more.\n\nWe add 0.5 + 0.25 = 0.76 here.\n\n"
        "$$0.5 + 0.25 = 0.76$$\n",
        encoding="utf-8",
    )
    code, out, _ = _run(capsys, "check", str(md), "--format", "json")
    assert code == 1, out
    [d] = json.loads(out)["derivations"]
    assert [(c["source_line"], c["printed"], c["verdict"]) for c in d["checks"]] == [
        (5, "0.76", "wrong")
    ]
    assert {u["source_line"] for u in d["unchecked"]} == {3}, d["unchecked"]
