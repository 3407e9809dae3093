"""Files a derivation names stay inside its folder, and every file is read through one capped reader.

A weights file, an exercise key's derivation and the files of a checked folder
are resolved (``..`` and links) and refused when they lead outside the folder
that names them, unless ``--allow-path DIR`` allows another folder. Whatever is
read (derivations, articles, weights, answers, keys) must be a regular file no
larger than its cap; the refusal names the file and states the cap with its
unit, and no message ever quotes a byte of a file that is not what it should be.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest
from limited import run_symtf

from symtf import cli, files
from symtf.errors import SpecError

EYE = np.eye(2, dtype=np.float32)

#: An attention model whose embedding comes from a weights file named ``{ref}``.
FROM_WEIGHTS = """title = "weights from a file"
weights = "{ref}"
[model]
architecture = "attention"
d_model = 2
n_heads = 1
mask = "none"
[[model.layers]]
[[model.layers.heads]]
W_Q = "identity"
W_K = "identity"
W_V = "identity"
[[claims]]
label = "x"
step = "x"
printed = "1 0\\n0 1"
"""

#: A tiny model with claims on the attention pattern (an exercise can blank them).
TINY = """title = "tiny"
[model]
architecture = "attention"
d_model = 2
n_heads = 1
mask = "none"
vocab = ["a", "b"]
embed = "1 0\\n0 1"
[[model.layers]]
[[model.layers.heads]]
W_Q = "1 0\\n0 2"
W_K = "identity"
W_V = "identity"
[input]
tokens = ["a", "b"]
[[claims]]
label = "A"
step = "l0.h0.pattern"
printed = "0.731 0.269\\n0.119 0.881"
"""


def _derivation(folder: Path, ref: str, name: str = "d.toml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    p.write_text(FROM_WEIGHTS.format(ref=ref), encoding="utf-8")
    return p


def _check(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str]:
    code = cli.main(["check", *args])
    cap = capsys.readouterr()
    return code, cap.out + cap.err


# ----------------------------------------------------------------------------- confinement


def test_weights_inside_the_folder_are_read(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "sub").mkdir()
    np.save(tmp_path / "sub" / "embed.npy", EYE)
    (tmp_path / "lnk").mkdir()
    os.symlink("../sub/embed.npy", tmp_path / "lnk" / "embed.npy")  # a link that stays inside
    for ref in ("sub/embed.npy", "sub/../sub/embed.npy", "lnk/embed.npy"):
        code, out = _check(capsys, str(_derivation(tmp_path, ref)))
        assert code == 0, out


@pytest.mark.parametrize("how", ["dotdot", "absolute", "symlink", "symlinked folder"])
def test_weights_outside_the_folder_are_refused(
    how: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    np.save(outside / "embed.npy", EYE)
    here = tmp_path / "here"
    here.mkdir()
    ref = {
        "dotdot": "../outside/embed.npy",
        "absolute": str(outside / "embed.npy"),
        "symlink": "embed.npy",
        "symlinked folder": "w/embed.npy",
    }[how]
    if how == "symlink":
        os.symlink(outside / "embed.npy", here / "embed.npy")
    if how == "symlinked folder":
        os.symlink(outside, here / "w")
    d = _derivation(here, ref)
    code, out = _check(capsys, str(d))
    assert code == 2, out
    assert str(d) in out and "weights" in out and "--allow-path" in out
    assert "Traceback" not in out
    # The user may allow the folder.
    code, out = _check(capsys, str(d), "--allow-path", str(outside))
    assert code == 0, out


def test_a_weights_link_to_a_system_file_is_refused_and_never_quoted(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\n", encoding="utf-8")
    here = tmp_path / "here"
    here.mkdir()
    os.symlink(secret / "passwd", here / "embed.npy")
    d = _derivation(here, "embed.npy")
    code, out = _check(capsys, str(d))
    assert code == 2 and "symbolic link" in out and "root:x" not in out
    # Allowed, it is read and refused as what it is, without a byte of it in the message.
    code, out = _check(capsys, str(d), "--allow-path", str(secret))
    assert code == 2, out
    assert "not a .npy array" in out
    assert "root:x" not in out and "b'" not in out


@pytest.mark.parametrize("suffix", [".npy", ".npz", ".safetensors"])
def test_weights_of_the_wrong_format_are_never_quoted(
    suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    (tmp_path / f"w{suffix}").write_bytes(b"root:x:0:0:TOPSECRET\n" * 3)
    code, out = _check(capsys, str(_derivation(tmp_path, f"w{suffix}")))
    assert code == 2, out
    assert "TOPSECRET" not in out and "root:x" not in out and "b'" not in out
    assert not re.search(r"\d{6,}", out.replace(str(tmp_path), ""))  # no bytes read as a number


def test_a_checked_folder_keeps_to_itself(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "t.toml").write_text(TINY, encoding="utf-8")
    posts = tmp_path / "posts"
    posts.mkdir()
    (posts / "a.toml").write_text(TINY, encoding="utf-8")
    os.symlink(outside / "t.toml", posts / "b.toml")
    code, out = _check(capsys, str(posts))
    assert code == 2  # b.toml is refused, a.toml is still checked
    assert "b.toml" in out and "symbolic link" in out and "a.toml — tiny" in out


def test_allow_path_must_be_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    d = _derivation(tmp_path, "embed.npy")
    code, out = _check(capsys, str(d), "--allow-path", str(tmp_path / "missing"))
    assert code == 2 and "--allow-path" in out and "expected a folder" in out


@pytest.mark.parametrize("value", ["", " ", "\t"])
def test_an_empty_allow_path_is_a_usage_error(
    value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    # Run from the folder that holds the weights: read as a path, "" is the working folder,
    # and from / it would let a derivation read every file on the machine.
    outside = tmp_path / "outside"
    outside.mkdir()
    np.save(outside / "embed.npy", EYE)
    d = _derivation(tmp_path / "here", str(outside / "embed.npy"))
    monkeypatch.chdir(outside)
    with pytest.raises(SystemExit) as exit_:
        cli.main(["check", str(d), "--allow-path", value])
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert "--allow-path" in err and "expected a folder" in err, err
    with pytest.raises(SpecError, match="expected a folder"), files.allow_paths([value]):
        pass  # the API refuses it too


@pytest.mark.parametrize(
    "command",
    [
        ["check"],
        ["explain", "{d}", "x"],
        ["steps"],
        ["html"],
        ["latex"],
        ["exercise", "{d}", "-o", "{out}", "--no-pdf", "--blank", "1"],
        ["whatif", "{d}", "--symbol", "l0.h0.W_Q[0,0]=a"],
        ["derive", "softmax-jacobian", "--at", "{d}:x[0]"],
    ],
)
def test_every_command_that_reads_a_derivation_takes_allow_path(
    command: list[str], tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    np.save(outside / "embed.npy", EYE)
    d = _derivation(tmp_path / "here", "../outside/embed.npy")
    args = [a.format(d=d, out=tmp_path / "out") for a in command]
    if not any("{d}" in a for a in command):
        args.append(str(d))
    refused = run_symtf(*args)
    assert refused.returncode == 2 and "--allow-path" in refused.stderr, refused.stderr[-500:]
    allowed = run_symtf(*args, "--allow-path", str(outside))
    assert "leads outside" not in allowed.stderr and "Traceback" not in allowed.output
    assert allowed.returncode in (0, 1, 2), allowed.stderr[-500:]


# ----------------------------------------------------------------------------- one capped reader


def _exercise(tmp_path: Path) -> Path:
    src = tmp_path / "tiny.toml"
    src.write_text(TINY, encoding="utf-8")
    out = tmp_path / "ex"
    r = run_symtf("exercise", str(src), "-o", str(out), "--no-pdf", "--blank", "2")
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture(scope="module")
def exercise(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _exercise(tmp_path_factory.mktemp("exercise"))


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_grade_refuses_answers_from_dev_zero_unread(exercise: Path, tmp_path: Path) -> None:
    answers = tmp_path / "answers.toml"
    answers.symlink_to("/dev/zero")
    r = run_symtf("grade", str(exercise / "key.toml"), str(answers), memory_mb=1500)
    assert r.returncode == 2, r.stderr
    assert str(answers) in r.stderr and "character device" in r.stderr
    assert r.peak_mb is not None and r.peak_mb < 400  # nothing was drained


def test_grade_refuses_a_fifo_without_waiting(exercise: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "answers.toml"
    os.mkfifo(fifo)
    # A reader that waited for a writer would block without using CPU: the safety net
    # would end it (a failure); refused unopened, it returns at once.
    r = run_symtf("grade", str(exercise / "key.toml"), str(fifo), wall_safety=120)
    assert r.returncode == 2 and "FIFO" in r.stderr, r.stderr


def test_grade_caps_the_answers_and_states_the_cap(exercise: Path, tmp_path: Path) -> None:
    answers = tmp_path / "answers.toml"
    answers.write_text("# padding\n" * 300_000, encoding="utf-8")  # 3 MB
    r = run_symtf("grade", str(exercise / "key.toml"), str(answers))
    assert r.returncode == 2, r.stderr
    assert str(answers) in r.stderr and "2,000,000 bytes" in r.stderr and "3,000,000" in r.stderr


def test_grade_reads_the_key_s_derivation_only_beside_the_key(
    exercise: Path, tmp_path: Path
) -> None:
    import shutil

    ex = tmp_path / "ex"
    shutil.copytree(exercise, ex)
    real = tmp_path / "elsewhere.toml"
    (ex / "derivation.toml").rename(real)
    (ex / "derivation.toml").symlink_to(real)
    r = run_symtf("grade", str(ex / "key.toml"), str(ex / "answers.toml"))
    assert r.returncode == 2 and "derivation" in r.stderr and "symbolic link" in r.stderr
    if Path("/dev/zero").exists():
        (ex / "derivation.toml").unlink()
        (ex / "derivation.toml").symlink_to("/dev/zero")
        r = run_symtf("grade", str(ex / "key.toml"), str(ex / "answers.toml"), memory_mb=1500)
        assert r.returncode == 2, r.stderr
        assert r.peak_mb is not None and r.peak_mb < 400


@pytest.mark.parametrize("kind", ["fifo", "folder", "large", "binary"])
def test_extract_reads_through_the_capped_reader(kind: str, tmp_path: Path) -> None:
    article = tmp_path / "post.md"
    if kind == "fifo":
        os.mkfifo(article)
    elif kind == "folder":
        article.mkdir()
    elif kind == "large":
        article.write_bytes(b"0.5 " * 1_500_001)  # 6 MB
    else:
        article.write_bytes(b"\xff\xfeTOPSECRET")
    r = run_symtf("extract", str(article), wall_safety=120)
    assert r.returncode == 2, r.stderr
    assert str(article) in r.stderr and "TOPSECRET" not in r.stderr
    if kind == "large":
        assert "5,000,000 bytes" in r.stderr and "6,000,004 bytes" in r.stderr


def test_the_reader_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(SpecError, match="FIFO"):
        files.read_bytes(fifo, 10)
    with pytest.raises(SpecError, match="folder"):
        files.read_bytes(tmp_path, 10)
    with pytest.raises(SpecError, match="at most 10 bytes, found 11 bytes"):
        (tmp_path / "f").write_bytes(b"x" * 11)
        files.read_bytes(tmp_path / "f", 10)


def test_a_derivation_too_large_states_the_cap_and_its_unit(tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    big.write_bytes(b"# x\n" * 600_000)
    r = run_symtf("check", str(big))
    assert r.returncode == 2
    assert str(big) in r.stderr and "at most 2,000,000 bytes (2 MB)" in r.stderr


# ----------------------------------------------------------------------------- hostile weights


def _npy_with_header(path: Path, shape: str, data: bytes = b"") -> None:
    header = f"{{'descr': '<f8', 'fortran_order': False, 'shape': {shape}, }}"
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    path.write_bytes(
        b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + data
    )


@pytest.mark.parametrize("shape", ["(-2, -3)", "(-1, 2)", "(2, -1)", "(0, 2)", "(2, 2, 2)", "()"])
def test_npy_shapes_that_are_not_matrices_are_refused(
    shape: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    _npy_with_header(tmp_path / "embed.npy", shape, b"\x00" * 64)
    code, out = _check(capsys, str(_derivation(tmp_path, "embed.npy")))
    assert code == 2, out
    assert "'embed'" in out and "shape" in out and "internal error" not in out


def test_an_npz_zip_bomb_is_refused_before_it_is_inflated(tmp_path: Path) -> None:
    import zipfile

    # 72 MB of zeros (a 3000 x 3000 float64 array) deflate to a few hundred kB.
    bomb = tmp_path / "w.npz"
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (3000, 3000), }"
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z, z.open("embed.npy", "w") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
        chunk = b"\x00" * (1 << 20)
        for _ in range(72_000_000 // len(chunk) + 1):
            f.write(chunk)
    assert bomb.stat().st_size < 1_000_000
    r = run_symtf("check", str(_derivation(tmp_path, "w.npz")), memory_mb=1500)
    assert r.returncode == 2, r.stderr
    assert "w.npz" in r.stderr and "zip bomb" in r.stderr and "bytes" in r.stderr
    # Inflating it would take 72 MB, and 72 MB more as float64: it was never inflated.
    # The baseline is the same command refusing a file it never opens, in the same
    # environment (the interpreter and symtf's imports alone take 80 MB or more).
    base = run_symtf("check", str(_derivation(tmp_path / "base", "missing.npz")), memory_mb=1500)
    assert base.returncode == 2 and base.peak_mb is not None, base.stderr
    assert r.peak_mb is not None and r.peak_mb < base.peak_mb + 100, (r.peak_mb, base.peak_mb)
