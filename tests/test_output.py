"""Every file symtf writes is written whole or not at all, and a write error is exit 2.

Outputs go through one writer (``symtf.files``): a temporary file in the target's
folder, then ``os.replace``; a set of files (an exercise, a what-if) appears
together. The tests make writes fail the ways a user's machine does: a full disk
(``RLIMIT_FSIZE``: a write past the limit fails, as when the disk fills), a
read-only folder (run without root's permission overrides), ``-o /dev/full``, an
``-o`` naming a folder or a path under a regular file, and standard output on a
full device. Signals are sent to a real subprocess in the middle of its work
(LaTeX running, an exercise being written): temporary folders are removed and
no half set of files is left.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from limited import child_environment, run_symtf

from symtf import cli, files
from symtf.commands.latex import missing_tex

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "derivations" / "i_love_ai.toml"
SMALL = ROOT / "derivations" / "rope_toy.toml"
HAS_TEX = shutil.which("latexmk") is not None and shutil.which("pdflatex") is not None
needs_tex = pytest.mark.skipif(
    not HAS_TEX and os.environ.get("SYMTF_REQUIRE_TEX") != "1", reason="TeX is not installed"
)
# The lualatex program comes with texlive-latex-base; the packages its documents load
# (luaotfload.sty, fontspec.sty) with texlive-luatex.
_NO_LUALATEX = "latexmk or pdflatex" if not HAS_TEX else missing_tex("lualatex")
needs_lualatex = pytest.mark.skipif(
    _NO_LUALATEX is not None and os.environ.get("SYMTF_REQUIRE_TEX") != "1",
    reason=f"{_NO_LUALATEX} not installed (texlive-luatex; SYMTF_REQUIRE_TEX=1 to fail instead)",
)

ARTICLE = "Scores: 5.652 + 5.652 + 10.068 = 21.372\n\n$$Q = \\begin{bmatrix}1 & 0\\\\0 & 1\\end{bmatrix}$$\n"


def _article(tmp: Path) -> Path:
    p = tmp / "post.md"
    p.write_text(ARTICLE * 200, encoding="utf-8")
    return p


def _commands(tmp: Path, out: str) -> dict[str, list[str]]:
    """A command per writer, each writing to ``out``."""
    return {
        "html": ["html", str(SMALL), "-o", out],
        "latex": ["latex", str(SMALL), "-o", out],
        "extract": ["extract", str(_article(tmp)), "-o", out],
        "exercise": ["exercise", str(SMALL), "-o", out, "--no-pdf", "--blank", "2"],
        "whatif": ["whatif", str(SMALL), "--symbol", "l0.h0.W_Q[0,0]=a", "-o", out],
    }


def _refused(r: object, path: str, *reasons: str) -> None:
    err = r.stderr  # type: ignore[attr-defined]
    assert r.returncode == 2, err  # type: ignore[attr-defined]
    assert err.startswith("symtf: error: ") and "Traceback" not in err, err
    assert path in err, err
    assert any(x in err for x in reasons), err


# ----------------------------------------------------------------------------- write errors


@pytest.mark.parametrize("command", ["html", "latex", "extract"])
def test_dev_full_is_exit_2_naming_it(command: str, tmp_path: Path) -> None:
    r = run_symtf(*_commands(tmp_path, "/dev/full")[command])
    _refused(r, "/dev/full", "No space left on device")


@pytest.mark.parametrize("command", ["html", "latex", "extract", "exercise", "whatif"])
def test_output_under_a_regular_file_is_exit_2(command: str, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    target = str(blocker / "out")
    r = run_symtf(*_commands(tmp_path, target)[command])
    _refused(r, target, "not a folder", "Not a directory", "expected a folder")
    assert blocker.read_text(encoding="utf-8") == "x"


@pytest.mark.parametrize("command", ["html", "latex", "extract"])
def test_output_naming_a_folder_is_exit_2(command: str, tmp_path: Path) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    r = run_symtf(*_commands(tmp_path, str(folder))[command])
    _refused(r, str(folder), "folder")
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("command", ["html", "latex", "extract", "check", "steps", "derive"])
def test_standard_output_on_a_full_device_is_exit_2(command: str, tmp_path: Path) -> None:
    args = {
        "html": ["html", str(SMALL)],
        "latex": ["latex", str(SMALL)],
        "extract": ["extract", str(_article(tmp_path))],
        "check": ["check", str(SMALL)],
        "steps": ["steps", str(SMALL)],
        "derive": ["derive", "softmax-jacobian", "--latex"],
    }[command]
    with open("/dev/full", "w") as full:
        r = run_symtf(*args, stdout=full.fileno())
    _refused(r, "standard output", "No space left on device")


@pytest.mark.parametrize("command", ["html", "latex", "extract", "exercise", "whatif"])
def test_a_full_disk_leaves_the_old_output_whole(command: str, tmp_path: Path) -> None:
    target = tmp_path / ("out" if command in ("exercise", "whatif") else "out.file")
    if command in ("exercise", "whatif"):
        target.mkdir()
        (target / "keep.txt").write_text("kept", encoding="utf-8")
    else:
        target.write_text("the previous version\n", encoding="utf-8")
    # Every file written may hold at most 4 kB: the larger outputs fail part-way. whatif's
    # matplotlib starts with no font cache, as on a fresh machine: writing it fails too.
    fresh = {"MPLCONFIGDIR": str(tmp_path / "mpl")} if command == "whatif" else None
    r = run_symtf(*_commands(tmp_path, str(target))[command], file_bytes=4096, env=fresh)
    _refused(r, str(target), "File too large", "No space left")
    if target.is_dir():
        assert sorted(p.name for p in target.iterdir()) == ["keep.txt"]  # no half set, no temp
    else:
        assert target.read_text(encoding="utf-8") == "the previous version\n"
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".symtf-")] == []


@pytest.mark.parametrize("command", ["html", "exercise", "whatif", "extract"])
def test_a_read_only_folder_is_exit_2_with_the_reason(command: str, tmp_path: Path) -> None:
    ro = tmp_path / "read-only"
    ro.mkdir()
    ro.chmod(0o555)
    target = str(ro / ("sub" if command in ("exercise", "whatif") else "out.file"))
    try:
        r = run_symtf(*_commands(tmp_path, target)[command], honour_permissions=True)
    finally:
        ro.chmod(0o755)
    _refused(r, target, "Permission denied", "Read-only file system")
    assert list(ro.iterdir()) == []


def test_a_link_in_the_way_is_replaced_not_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    link = tmp_path / "page.html"
    link.symlink_to(victim)
    assert cli.main(["html", str(SMALL), "-o", str(link)]) in (0, 1)
    assert victim.read_text(encoding="utf-8") == "precious"
    assert not link.is_symlink() and link.read_text(encoding="utf-8").startswith("<!DOCTYPE")


def test_an_existing_file_keeps_its_permissions(tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    out.write_text("old", encoding="utf-8")
    out.chmod(0o640)
    assert cli.main(["html", str(SMALL), "-o", str(out)]) in (0, 1)
    assert out.stat().st_mode & 0o777 == 0o640


def test_the_writer_leaves_no_temporary_file_on_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*_: object) -> None:
        raise KeyboardInterrupt  # an interrupt between the write and the rename

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(KeyboardInterrupt):
        files.write_bytes(tmp_path / "f", b"x" * 10)
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------------------- LaTeX failures


@needs_tex
def test_a_latex_compile_error_is_exit_2_with_the_first_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    from symtf.renderers import latex as L

    broken = "\\documentclass{article}\\begin{document}\\symtfnosuchmacro\\end{document}\n"
    monkeypatch.setattr(L, "document", lambda *a, **k: broken)
    out = tmp_path / "notes.tex"
    code = cli.main(["latex", str(SMALL), "-o", str(out), "--pdf"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Undefined control sequence" in err and str(out.with_suffix(".pdf")) in err
    assert "internal error" not in err and not out.with_suffix(".pdf").exists()


@needs_lualatex
def test_a_label_lualatex_cannot_read_still_compiles(tmp_path: Path) -> None:
    # U+FFFD is what LuaTeX itself writes for an invalid byte: in the input it is an error.
    text = SMALL.read_text(encoding="utf-8").replace('title = "', 'title = "\ufffd \u0000 Жук ', 1)
    src = tmp_path / "odd.toml"
    src.write_text(text.replace("\u0000", "\\u0000"), encoding="utf-8")
    r = run_symtf("latex", str(src), "-o", str(tmp_path / "odd.tex"), "--pdf")
    assert r.returncode in (0, 1), r.stderr
    assert (tmp_path / "odd.pdf").exists()


# ----------------------------------------------------------------------------- signals


def _start(args: list[str], tmp: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "symtf", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_environment(TMPDIR=str(tmp)),
    )


def _wait_for(proc: subprocess.Popen, found: object, what: str) -> None:
    """Poll until ``found()`` holds (the child reached the point to interrupt)."""
    for _ in range(6000):
        if found():  # type: ignore[operator]
            return
        if proc.poll() is not None:
            pytest.fail(f"the command ended before {what}: {proc.communicate()[1][-500:]}")
        time.sleep(0.05)
    proc.kill()
    pytest.fail(f"never saw {what}")


def _engines_in(folder: Path) -> list[int]:
    """Processes whose working folder is inside ``folder`` (LaTeX left running)."""
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cwd = os.readlink(f"/proc/{pid}/cwd")
            except OSError:
                continue
            if cwd.startswith(str(folder)):
                out.append(int(pid))
    return out


@needs_tex
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_latex_removes_its_temporary_folder(sig: int, tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "notes.tex"
    proc = _start(["latex", str(SEED), "-o", str(out), "--pdf"], tmp)

    def compiling() -> bool:
        return any((d / "doc.tex").exists() for d in tmp.glob("symtf-latex-*"))

    _wait_for(proc, compiling, "LaTeX started")
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    if proc.returncode in (0, 1):  # it finished before the signal landed: then it is whole
        assert out.with_suffix(".pdf").read_bytes().startswith(b"%PDF"), err
        assert list(tmp.iterdir()) == []  # and its temporary folder is gone all the same
        return
    assert proc.returncode == 128 + sig, err
    assert "Traceback" not in err and ("terminated" in err or "interrupted" in err)
    assert list(tmp.iterdir()) == []  # the temporary folder is gone
    assert _engines_in(tmp) == []  # and no LaTeX process is left in it
    assert not out.with_suffix(".pdf").exists()


@needs_tex
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_exercise_leaves_no_half_set(sig: int, tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "ex"
    # The seven text files are staged before the PDFs are compiled: interrupt the compile.
    proc = _start(["exercise", str(SEED), "-o", str(out), "--blank", "4"], tmp)

    def writing() -> bool:
        return any(tmp.glob("symtf-latex-*/doc.tex"))

    _wait_for(proc, writing, "the exercise being written")
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    if proc.returncode == 0:  # it finished before the signal landed: then it is whole
        assert len(list(out.iterdir())) >= 7
        return
    assert proc.returncode == 128 + sig, err
    assert "Traceback" not in err
    assert not out.exists() or list(out.iterdir()) == []
    assert list(tmp.iterdir()) == []
