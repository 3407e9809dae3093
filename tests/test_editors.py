"""The editor set-ups of docs/editors.md, run in the editors this machine has.

Each test takes its snippet from docs/editors.md (by the block's title), so the
page says what was run. The editor opens a post with one slip (softmax([2.0, 0.1,
0.7])[1] = 0.10517…, printed 0.106: tests/test_fix.py checks it with mpmath) and
must show symtf's diagnostic on that line. A test is skipped, saying which editor
is missing, where none is installed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="symtf lsp needs pygls (pip install 'symtf[lsp]')")

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "editors.md"

POST = """# Attention weights from scores

The scores of the three queries against the three keys are

$$S = \\begin{bmatrix} 0.5 & 1.2 & -0.3 \\\\ 2.0 & 0.1 & 0.7 \\\\ -1.1 & 0.4 & 0.9 \\end{bmatrix}$$

Taking the softmax of each row gives the attention weights:

$$A = \\begin{bmatrix} 0.289 & 0.581 & 0.130 \\\\ 0.703 & 0.106 & 0.192 \\\\ 0.078 & 0.348 & 0.574 \\end{bmatrix}$$
"""
#: The 0-based line of the slipped weight.
SLIP_LINE = 8


def snippet(title: str) -> str:
    """The code block of docs/editors.md with this title."""
    text = DOCS.read_text(encoding="utf-8")
    m = re.search(r'```\w+ title="' + re.escape(title) + r'"\n(.*?)\n```', text, re.S)
    assert m is not None, f"docs/editors.md has no block titled {title!r}"
    return m.group(1)


@pytest.fixture()
def symtf_on_path(tmp_path: Path) -> dict[str, str]:
    """An environment whose ``symtf`` is this checkout's."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "symtf"
    script.write_text(
        f'#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m symtf "$@"\n', encoding="utf-8"
    )
    script.chmod(0o755)
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp_path),
    }


def _nvim_version() -> tuple[int, int] | None:
    nvim = shutil.which("nvim")
    if nvim is None:
        return None
    out = subprocess.run([nvim, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"NVIM v(\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


HARNESS = """
vim.api.nvim_create_autocmd("VimEnter", { callback = function()
  vim.wait(600000, function() return #vim.diagnostic.get(0) > 0 end, 100)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(0)) do
    table.insert(out, { lnum = d.lnum, severity = d.severity, source = d.source,
                        message = d.message })
  end
  vim.fn.writefile({ vim.fn.json_encode(out) }, RESULT)
  vim.cmd("qa!")
end })
"""


def test_neovim_shows_the_slip(tmp_path: Path, symtf_on_path: dict[str, str]) -> None:
    version = _nvim_version()
    if version is None:
        pytest.skip("Neovim is not installed (apt-get install neovim)")
    title = "init.lua (Neovim 0.7)" if version < (0, 8) else "init.lua (Neovim 0.8 and later)"
    result = tmp_path / "diagnostics.json"
    init = tmp_path / "init.lua"
    init.write_text(
        f"RESULT = {json.dumps(str(result))}\n" + snippet(title) + HARNESS, encoding="utf-8"
    )
    post = tmp_path / "post.md"
    post.write_text(POST, encoding="utf-8")
    subprocess.run(
        ["nvim", "--headless", "-u", str(init), str(post)],
        env=symtf_on_path,
        cwd=tmp_path,
        capture_output=True,
        timeout=900,
        check=False,
    )
    diags = json.loads(result.read_text(encoding="utf-8"))
    assert [(d["lnum"], d["severity"], d["source"]) for d in diags] == [(SLIP_LINE, 2, "symtf")]
    assert "0.106 is a slip (correctly rounded: 0.105)" in diags[0]["message"]


EMACS_HARNESS = """
(setq symtf-result %s)
(find-file %s)
(unless (eglot-current-server) (call-interactively #'eglot))
(let ((deadline (+ (float-time) 600)))
  (while (and (< (float-time) deadline) (null (flymake-diagnostics)))
    (accept-process-output nil 0.5)
    (when flymake-mode (flymake-start))))
(let ((found (mapcar (lambda (d)
                       (list (cons 'line (line-number-at-pos (flymake-diagnostic-beg d)))
                             (cons 'type (symbol-name (flymake-diagnostic-type d)))
                             (cons 'text (flymake-diagnostic-text d))))
                     (flymake-diagnostics))))
  (with-temp-file symtf-result (insert (json-encode (or found [])))))
(kill-emacs 0)
"""


def test_emacs_eglot_shows_the_slip(tmp_path: Path, symtf_on_path: dict[str, str]) -> None:
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.skip("Emacs is not installed (apt-get install emacs-nox elpa-eglot)")
    probe = subprocess.run(
        [emacs, "--batch", "--eval", "(progn (package-initialize) (require 'eglot))"],
        capture_output=True,
        env=symtf_on_path,
    )
    if probe.returncode != 0:
        pytest.skip("Emacs has no eglot (Emacs 29, or apt-get install elpa-eglot)")
    result = tmp_path / "diagnostics.json"
    post = tmp_path / "post.txt"
    post.write_text(POST, encoding="utf-8")
    init = tmp_path / "init.el"
    init.write_text(
        "(package-initialize)\n"
        + snippet("init.el")
        + EMACS_HARNESS % (json.dumps(str(result)), json.dumps(str(post))),
        encoding="utf-8",
    )
    subprocess.run(
        [emacs, "--batch", "-l", str(init)],
        env=symtf_on_path,
        cwd=tmp_path,
        capture_output=True,
        timeout=900,
        check=False,
    )
    diags = json.loads(result.read_text(encoding="utf-8"))
    assert [(d["line"], d["type"]) for d in diags] == [(SLIP_LINE + 1, "eglot-warning")]
    assert "0.106 is a slip" in diags[0]["text"]


def test_the_vscode_extension_declares_what_the_page_says() -> None:
    """editors/vscode: its manifest's settings and languages (the extension itself needs VS Code)."""
    manifest = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text())
    props = manifest["contributes"]["configuration"]["properties"]
    assert set(props) == {"symtf.command", "symtf.timeout", "symtf.showUnchecked"}
    assert props["symtf.command"]["default"] == ["symtf", "lsp"]
    code = (ROOT / "editors" / "vscode" / "extension.js").read_text()
    for language in ("markdown", "latex", "plaintext", "toml"):
        assert f"onLanguage:{language}" in manifest["activationEvents"]
        assert f'"{language}"' in code
    node = shutil.which("node")
    if node is not None:
        r = subprocess.run([node, "--check", str(ROOT / "editors" / "vscode" / "extension.js")])
        assert r.returncode == 0
