"""``symtf lsp`` driven over stdio as an editor drives it (pytest-lsp).

One server serves the whole module. Expected diagnostics come from how each
document was built (the numbers a test edits, the slips it put there, verified with
mpmath where the text says so) or from ``symtf check --format json`` run as a
separate command on the same text, never from the server itself.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pygls", reason="symtf lsp needs pygls (pip install 'symtf[lsp]')")
pytest_lsp = pytest.importorskip("pytest_lsp", reason="the language server tests use pytest-lsp")

from lsprotocol import types  # noqa: E402
from pygls.protocol import default_converter  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features  # noqa: E402

from symtf.lsp.notebook import Cell, write  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.asyncio(loop_scope="module")


def _article(name: str) -> Path | None:
    for base in (ROOT.parent, ROOT.parent.parent):
        p = base / "shared" / "articles" / name
        if p.exists():
            return p
    return None


SEED = _article("000_b60c289f27ab6d88.txt")
needs_seed = pytest.mark.skipif(
    SEED is None, reason="the source articles (../shared/articles) are not beside the project"
)
#: How long a test waits for the server before it reports a hang (not a speed limit).
PATIENCE = 1200.0


# ----------------------------------------------------------------------------- the client


class Recorder:
    """Every publishDiagnostics, with its version, and the requests a server sends."""

    def __init__(self) -> None:
        self.published: dict[str, list[tuple[int | None, list[types.Diagnostic]]]] = {}
        self.changed = asyncio.Event()
        self.edits: list[types.ApplyWorkspaceEditParams] = []


def _client() -> LanguageClient:
    client = LanguageClient(converter_factory=default_converter)
    features = dict(DEFAULT_CLIENT_FEATURES)
    record = Recorder()
    client.record = record  # type: ignore[attr-defined]

    def publish(ls: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        ls.diagnostics[params.uri] = params.diagnostics
        record.published.setdefault(params.uri, []).append((params.version, params.diagnostics))
        record.changed.set()

    def apply_edit(
        ls: LanguageClient, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult:
        record.edits.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish
    features[types.WORKSPACE_APPLY_EDIT] = apply_edit
    register_lsp_features(client, features)
    return client


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "symtf", "lsp"],
        server_env={**os.environ, "PYTHONPATH": str(ROOT), "SYMTF_DEBUG": "1"},
        client_factory=_client,
    ),
)
async def client(lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("workspace")
    # a budget no check of these small posts reaches, even on a loaded machine (as in _cli_json)
    (root / "pyproject.toml").write_text("[tool.symtf]\ntimeout = 600\n", encoding="utf-8")
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                workspace=types.WorkspaceClientCapabilities(
                    apply_edit=True,
                    workspace_edit=types.WorkspaceEditClientCapabilities(
                        document_changes=True,
                        resource_operations=[types.ResourceOperationKind.Create],
                    ),
                    configuration=False,
                ),
                text_document=types.TextDocumentClientCapabilities(
                    publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
                        version_support=True, related_information=True
                    ),
                    hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
                ),
                notebook_document=types.NotebookDocumentClientCapabilities(
                    synchronization=types.NotebookDocumentSyncClientCapabilities()
                ),
            ),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="posts")],
        )
    )
    yield
    await lsp_client.shutdown_session()


async def _published(
    client: LanguageClient, uri: str, version: int, *, where: Callable[[Any], bool] | None = None
) -> list[types.Diagnostic]:
    """The diagnostics the server publishes for ``uri`` at ``version`` (waits for them)."""
    record: Recorder = client.record  # type: ignore[attr-defined]

    async def wait() -> list[types.Diagnostic]:
        while True:
            for v, diags in reversed(record.published.get(uri, [])):
                if v == version and (where is None or where(diags)):
                    return list(diags)
            record.changed.clear()
            await record.changed.wait()

    return await asyncio.wait_for(wait(), PATIENCE)


_versions: dict[str, int] = {}


def _open(client: LanguageClient, path: str, text: str, language: str = "markdown") -> str:
    uri = Path(path).as_uri() if path.startswith("/") else path
    _versions[uri] = 1
    client.record.published.pop(uri, None)  # type: ignore[attr-defined]  # an earlier test's
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id=language, version=1, text=text
            )
        )
    )
    return uri


def _edit(client: LanguageClient, uri: str, line: int, start: int, end: int, new: str) -> int:
    _versions[uri] += 1
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=_versions[uri]),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=line, character=start),
                        end=types.Position(line=line, character=end),
                    ),
                    text=new,
                )
            ],
        )
    )
    return _versions[uri]


def _close(client: LanguageClient, uri: str) -> None:
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


def _cli_json(path: Path) -> dict[str, Any]:
    r = subprocess.run(
        [sys.executable, "-m", "symtf", "check", str(path), "--format", "json", "--timeout", "600"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)["derivations"][0]


# ----------------------------------------------------------------------------- the source article


@needs_seed
async def test_the_source_articles_three_slips_arrive_at_their_places(
    client: LanguageClient,
) -> None:
    """Lines 306 (the displayed line and its result) and 311 (the logit vector): −2.049."""
    assert SEED is not None
    text = SEED.read_text(encoding="utf-8")
    uri = _open(client, str(SEED), text, "plaintext")
    diags = await _published(client, uri, 1)
    lines = text.split("\n")
    assert sorted(d.range.start.line for d in diags) == [305, 305, 310]
    for d in diags:
        assert d.severity == types.DiagnosticSeverity.Warning
        assert d.source == "symtf" and d.code == "propagated-rounding"
        assert "-2.049 is a slip (correctly rounded: -2.048)" in d.message
        row = lines[d.range.start.line]
        shown = row[d.range.start.character : d.range.end.character]
        assert d.range.end.line == d.range.start.line
        # the number itself: the report gives each number its columns
        assert shown == "-2.049", (shown, row)
    _close(client, uri)


@needs_seed
async def test_an_edit_to_the_correct_rounding_removes_its_diagnostic(
    client: LanguageClient,
) -> None:
    assert SEED is not None
    text = SEED.read_text(encoding="utf-8")
    uri = _open(client, str(SEED), text, "plaintext")
    await _published(client, uri, 1)
    row = text.split("\n")[310]
    k = row.index("-2.049")
    version = _edit(client, uri, 310, k, k + 6, "-2.048")
    diags = await _published(client, uri, version)
    assert sorted(d.range.start.line for d in diags) == [305, 305]  # the displayed line stays
    _close(client, uri)


@needs_seed
async def test_hover_gives_the_verdict_the_values_the_cause_and_the_step(
    client: LanguageClient,
) -> None:
    assert SEED is not None
    text = SEED.read_text(encoding="utf-8")
    uri = _open(client, str(SEED), text, "plaintext")
    await _published(client, uri, 1)
    k = text.split("\n")[310].index("-2.049")
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=310, character=k + 2),
        )
    )
    assert hover is not None
    value = hover.contents.value  # type: ignore[union-attr]
    for part in (
        "symtf: slip",
        "printed `-2.049`",
        "correctly rounded `-2.048`",
        "`propagated-rounding`",
        "z = h_AI @ W_vocab",  # the step, as the draft names it after the article's z
        "exact `-2.04837",
    ):
        assert part in value, (part, value)
    nothing = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=0, character=0),
        )
    )
    assert nothing is None
    _close(client, uri)


# ----------------------------------------------------------------------------- edits downstream

CODE_POST = """# Attention weights by hand, then in numpy

The scores of one query against three keys, and their softmax:

```python
import numpy as np

scores = np.array([2.0, 0.1, 0.7])
weights = np.exp(scores) / np.exp(scores).sum()
print(weights.round(3))
```

```
[0.703 0.105 0.192]
```

The first key takes most of the attention.
"""


async def test_editing_a_score_brings_diagnostics_to_the_softmax_row(
    client: LanguageClient, tmp_path: Path
) -> None:
    """softmax([2, 0.1, 0.7]) = [0.70319, 0.10517, 0.19164]; with 0.105 for 0.1 it is
    [0.70282, 0.10565, 0.19154] (mpmath, 30 digits): the printed 0.105 becomes a slip."""
    import mpmath

    with mpmath.workdps(30):
        e = [mpmath.exp(mpmath.mpf(x)) for x in ("2.0", "0.105", "0.7")]
        w = [v / sum(e) for v in e]
    assert [mpmath.nstr(v, 3) for v in w] == ["0.703", "0.106", "0.192"]
    uri = _open(client, str(tmp_path / "scores.md"), CODE_POST)
    assert await _published(client, uri, 1) == []
    line = CODE_POST.split("\n").index("scores = np.array([2.0, 0.1, 0.7])")
    k = CODE_POST.split("\n")[line].index("0.1")
    version = _edit(client, uri, line, k, k + 3, "0.105")
    diags = await _published(client, uri, version)
    row = CODE_POST.split("\n").index("[0.703 0.105 0.192]")
    assert [d.range.start.line for d in diags] == [row]  # below the score, on the printed row
    assert diags[0].severity == types.DiagnosticSeverity.Warning
    assert "0.105 is a slip (correctly rounded: 0.106)" in diags[0].message
    _close(client, uri)


async def test_stale_versions_are_never_published_and_the_last_one_is(
    client: LanguageClient, tmp_path: Path
) -> None:
    uri = _open(client, str(tmp_path / "typing.md"), CODE_POST)
    line = CODE_POST.split("\n").index("scores = np.array([2.0, 0.1, 0.7])")
    k = CODE_POST.split("\n")[line].index("0.1")
    last = 1
    for digit in "12345":  # typing 0.1 → 0.11 → … quickly: each version supersedes the last
        last = _edit(client, uri, line, k + 3, k + 3 + (digit != "1"), digit)
    diags = await _published(client, uri, last)
    assert isinstance(diags, list)
    record: Recorder = client.record  # type: ignore[attr-defined]
    versions = [v for v, _ in record.published[uri]]
    assert versions == sorted(versions) and versions[-1] == last
    _close(client, uri)


# ----------------------------------------------------------------------------- code actions

SELF_ATTENTION = ROOT / "derivations" / "steps_self_attention_noproj.toml"


def _mutated() -> str:
    """The bundled self-attention example with 0.731 → 0.732 (wrong) and 0.612 → 0.613 (slip);
    tests/test_fix.py confirms both against mpmath."""
    good = SELF_ATTENTION.read_text(encoding="utf-8")
    return good.replace("0.060 0.731 0.209", "0.060 0.732 0.209").replace(
        "0.575 1.224 0.201 0.612", "0.575 1.224 0.201 0.613"
    )


def _apply(text: str, edits: list[types.TextEdit]) -> str:
    lines = text.split("\n")
    for e in sorted(
        edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True
    ):
        row = lines[e.range.start.line]
        assert e.range.start.line == e.range.end.line
        lines[e.range.start.line] = (
            row[: e.range.start.character] + e.new_text + row[e.range.end.character :]
        )
    return "\n".join(lines)


def _edits_of(edit: types.WorkspaceEdit | None, uri: str) -> list[types.TextEdit]:
    assert edit is not None and edit.document_changes
    out = []
    for change in edit.document_changes:
        assert isinstance(change, types.TextDocumentEdit) and change.text_document.uri == uri
        out.extend(e for e in change.edits if isinstance(e, types.TextEdit))
    return out


async def test_code_actions_replace_one_number_and_fix_all(
    client: LanguageClient, tmp_path: Path
) -> None:
    """A derivation file: its numbers' places are those of its printed strings."""
    bad = _mutated()
    uri = _open(client, str(tmp_path / "attention.toml"), bad, "toml")
    diags = await _published(client, uri, 1)
    lines = bad.split("\n")
    shown = sorted(
        (lines[d.range.start.line][d.range.start.character : d.range.end.character], d.severity)
        for d in diags
    )
    assert shown == [
        ("0.613", types.DiagnosticSeverity.Warning),
        ("0.732", types.DiagnosticSeverity.Error),
    ]
    wrong = next(d for d in diags if d.severity == types.DiagnosticSeverity.Error)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=wrong.range,
            context=types.CodeActionContext(diagnostics=[wrong]),
        )
    )
    assert actions is not None
    replace = [
        a for a in actions if isinstance(a, types.CodeAction) and a.title == "Replace with 0.731"
    ]
    assert len(replace) == 1 and replace[0].is_preferred
    assert replace[0].diagnostics and replace[0].diagnostics[0].range == wrong.range
    one = _apply(bad, _edits_of(replace[0].edit, uri))
    assert one == bad.replace("0.060 0.732 0.209", "0.060 0.731 0.209")
    fix_all = [
        a for a in actions if isinstance(a, types.CodeAction) and a.kind == "source.fixAll.symtf"
    ]
    assert len(fix_all) == 1 and "2 number(s)" in fix_all[0].title
    fixed = _apply(bad, _edits_of(fix_all[0].edit, uri))
    assert fixed == SELF_ATTENTION.read_text(encoding="utf-8")  # byte for byte
    only = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=wrong.range,
            context=types.CodeActionContext(diagnostics=[], only=["source.fixAll"]),
        )
    )
    assert only is not None and [getattr(a, "kind", None) for a in only] == ["source.fixAll.symtf"]
    _close(client, uri)


async def test_an_inherited_numbers_diagnostic_points_at_its_root(
    client: LanguageClient, tmp_path: Path
) -> None:
    """The weight [1, 1] printed 0.781 (tests/test_fix.py: it is 0.7307…), and the output row
    computed from that printed row: its 1.771 and 0.886 are inherited from the weight."""
    good = SELF_ATTENTION.read_text(encoding="utf-8")
    bad = good.replace("0.060 0.731 0.209", "0.060 0.781 0.209").replace(
        "0.269 1.671 0.060 0.835", "0.269 1.771 0.060 0.886"
    )
    uri = _open(client, str(tmp_path / "inherited.toml"), bad, "toml")
    diags = await _published(client, uri, 1)
    lines = bad.split("\n")

    def shown(r: types.Range) -> str:
        return lines[r.start.line][r.start.character : r.end.character]

    inherited = sorted((shown(d.range), d) for d in diags if d.code == "inherited")
    assert [x for x, _ in inherited] == ["0.886", "1.771"]
    for _, d in inherited:
        assert d.related_information is not None
        root = d.related_information[0]
        assert root.location.uri == uri and shown(root.location.range) == "0.781"
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=inherited[0][1].range,
            context=types.CodeActionContext(diagnostics=[inherited[0][1]]),
        )
    )
    titles = [a.title for a in actions or []]
    assert "Replace with 0.835 (inherited: its root is off too; fix that first)" in titles
    _close(client, uri)


@needs_seed
async def test_the_source_articles_logit_has_a_replace_action_at_its_columns(
    client: LanguageClient,
) -> None:
    assert SEED is not None
    text = SEED.read_text(encoding="utf-8")
    uri = _open(client, str(SEED), text, "plaintext")
    diags = await _published(client, uri, 1)
    on_311 = [d for d in diags if d.range.start.line == 310]
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=on_311[0].range,
            context=types.CodeActionContext(diagnostics=on_311),
        )
    )
    titles = [a.title for a in actions or []]
    assert "symtf: show the derivation" in titles
    lines = text.split("\n")
    start = lines[310].index("-2.049")
    assert (on_311[0].range.start.character, on_311[0].range.end.character) == (start, start + 6)
    replace = [a for a in actions or [] if a.title == "Replace with -2.048"]
    assert len(replace) == 1
    new = _apply(text, _edits_of(replace[0].edit, uri))  # type: ignore[union-attr]
    assert new.split("\n")[310] == lines[310].replace("-2.049", "-2.048")
    on_306 = [
        a.title
        for a in (
            await client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    range=types.Range(
                        start=types.Position(line=305, character=0),
                        end=types.Position(line=305, character=len(lines[305])),
                    ),
                    context=types.CodeActionContext(diagnostics=[]),
                )
            )
            or []
        )
    ]
    assert not [t for t in on_306 if t.startswith("Replace with")]  # right as written
    _close(client, uri)


async def test_show_the_derivation_opens_an_untitled_toml_document(
    client: LanguageClient, tmp_path: Path
) -> None:
    uri = _open(client, str(tmp_path / "post.md"), CODE_POST)
    await _published(client, uri, 1)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(
                start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
            ),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    show = [a for a in actions or [] if a.title == "symtf: show the derivation"]
    assert len(show) == 1
    # lsprotocol reads any code action that holds a command as a Command (its hook asks only
    # whether "command" is a key), here one whose command is the Command object, as text. The
    # wire carries a CodeAction; an editor tells the two apart by the command's type.
    action = show[0]
    command = action.command
    if isinstance(command, types.Command):
        name, arguments = command.command, command.arguments
    else:
        inner = ast.literal_eval(str(command))
        assert action.title == inner["title"]
        name, arguments = inner["command"], inner["arguments"]
    assert name == "symtf.showDerivation"
    record: Recorder = client.record  # type: ignore[attr-defined]
    before = len(record.edits)
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=name, arguments=arguments)
    )
    assert result["opened"] is True and result["uri"] == "untitled:post.derivation.toml"
    assert result["toml"].startswith("# Derivation drafted by `symtf draft`")
    edit = record.edits[before].edit
    assert edit.document_changes is not None
    create, insert = edit.document_changes
    assert isinstance(create, types.CreateFile) and create.uri == "untitled:post.derivation.toml"
    assert isinstance(insert, types.TextDocumentEdit)
    assert insert.edits[0].new_text == result["toml"]
    assert "weights" in result["toml"] and "[[claims]]" in result["toml"]
    assert client.shown_documents[-1].uri == "untitled:post.derivation.toml"
    _close(client, uri)


# ----------------------------------------------------------------------------- notebooks

NOTEBOOK_CELLS = [
    (1, "# Attention weights from scores\n"),
    (
        1,
        "The scores of the three queries against the three keys are\n\n"
        "$$S = \\begin{bmatrix} 0.5 & 1.2 & -0.3 \\\\ 2.0 & 0.1 & 0.7 \\\\ "
        "-1.1 & 0.4 & 0.9 \\end{bmatrix}$$\n",
    ),
    (2, "import numpy as np\n"),
    (
        1,
        "Taking the softmax of each row gives the attention weights:\n\n"
        "$$A = \\begin{bmatrix} 0.289 & 0.581 & 0.130 \\\\ 0.703 & 0.106 & 0.192 \\\\ "
        "0.078 & 0.348 & 0.574 \\end{bmatrix}$$\n",
    ),
]


async def test_a_notebook_documents_slip_is_shown_in_its_cell(
    client: LanguageClient, tmp_path: Path
) -> None:
    """softmax([2.0, 0.1, 0.7])[1] = 0.10517… (tests/test_fix.py checks it): 0.106 is a slip."""
    nb_uri = (tmp_path / "weights.ipynb").as_uri()
    cells = [
        types.NotebookCell(kind=types.NotebookCellKind(kind), document=f"{nb_uri}#cell{k}")
        for k, (kind, _) in enumerate(NOTEBOOK_CELLS)
    ]
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=nb_uri, notebook_type="jupyter-notebook", version=1, cells=cells
            ),
            cell_text_documents=[
                types.TextDocumentItem(
                    uri=f"{nb_uri}#cell{k}",
                    language_id="markdown" if kind == 1 else "python",
                    version=1,
                    text=text,
                )
                for k, (kind, text) in enumerate(NOTEBOOK_CELLS)
            ],
        )
    )
    diags = await _published(client, f"{nb_uri}#cell3", 1)
    assert len(diags) == 1 and diags[0].range.start.line == 2
    at = NOTEBOOK_CELLS[3][1].split("\n")[2].index("0.106")  # the number itself, in its cell
    assert (diags[0].range.start.character, diags[0].range.end.character) == (at, at + 5)
    assert "0.106 is a slip (correctly rounded: 0.105)" in diags[0].message
    assert await _published(client, f"{nb_uri}#cell1", 1) == []
    # the same notebook written as a file and checked by the command agrees
    layout = write(
        [
            Cell(c.document, kind, text)
            for c, (kind, text) in zip(cells, NOTEBOOK_CELLS, strict=True)
        ]
    )
    path = tmp_path / "weights_file.ipynb"
    path.write_text(layout.text, encoding="utf-8")
    off = [c for c in _cli_json(path)["checks"] if c["verdict"] in ("slip", "wrong")]
    assert [(c["printed"], c["verdict"]) for c in off] == [("0.106", "slip")]
    # editing the cell to the correct rounding clears it
    row = NOTEBOOK_CELLS[3][1].split("\n")[2]
    k = row.index("0.106")
    client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(version=2, uri=nb_uri),
            change=types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(
                    text_content=[
                        types.NotebookDocumentCellContentChanges(
                            document=types.VersionedTextDocumentIdentifier(
                                uri=f"{nb_uri}#cell3", version=2
                            ),
                            changes=[
                                types.TextDocumentContentChangePartial(
                                    range=types.Range(
                                        start=types.Position(line=2, character=k),
                                        end=types.Position(line=2, character=k + 5),
                                    ),
                                    text="0.105",
                                )
                            ],
                        )
                    ]
                )
            ),
        )
    )
    assert await _published(client, f"{nb_uri}#cell3", 2) == []
    client.notebook_document_did_close(
        types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=nb_uri),
            cell_text_documents=[types.TextDocumentIdentifier(uri=c.document) for c in cells],
        )
    )


# ----------------------------------------------------------------------------- settings


async def test_show_unchecked_from_the_client_adds_information_diagnostics(
    client: LanguageClient, tmp_path: Path
) -> None:
    # The code's printed weights check out; the sentence's lone 0.6 is a number no step gives.
    text = CODE_POST.replace("takes most of the", "takes about 0.6 of the")
    uri = _open(client, str(tmp_path / "unchecked.md"), text)
    assert await _published(client, uri, 1) == []
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"symtf": {"showUnchecked": True}})
    )
    diags = await _published(client, uri, 1, where=bool)
    assert [d.severity for d in diags] == [types.DiagnosticSeverity.Information]
    assert diags[0].message.startswith("not checked: line 17")
    assert (diags[0].range.start.line, diags[0].range.start.character) == (16, 26)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"symtf": {"showUnchecked": False}})
    )
    assert await _published(client, uri, 1, where=lambda d: not d) == []
    _close(client, uri)


async def test_settings_from_pyproject_and_from_the_client(tmp_path: Path) -> None:
    from symtf.lsp import config

    said: list[str] = []
    (tmp_path / "pyproject.toml").write_text(
        '[tool.symtf]\ntimeout = 7.5\ninclude = ["posts/*.md"]\n[tool.symtf.lsp]\n'
        "show-unchecked = true\n",
        encoding="utf-8",
    )
    s = config.from_pyproject(tmp_path, said.append)
    assert (s.timeout, s.show_unchecked) == (7.5, True)
    s = config.from_client(s, {"symtf": {"timeout": "soon", "showUnchecked": False}}, said.append)
    assert (s.timeout, s.show_unchecked) == (7.5, False)
    assert said == [
        "symtf: setting timeout: ignored 'soon' (expected seconds, more than 0 and at most 3600)"
    ] or (len(said) == 1 and said[0].startswith("symtf: setting timeout: ignored 'soon'"))
    (tmp_path / "pyproject.toml").write_text("[tool.symtf\n", encoding="utf-8")
    assert config.from_pyproject(tmp_path, said.append) == config.Settings()


# ----------------------------------------------------------------------------- hostile text


def _rss_mb(pid: int) -> float:
    """Resident memory of a process and its children, in MB (Linux /proc)."""
    total = 0.0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            status = Path(f"/proc/{p}/status").read_text()
            children = Path(f"/proc/{p}/task/{p}/children").read_text().split()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) / 1024
        todo.extend(int(c) for c in children)
    return total


HOSTILE = (
    "# \x1b]0;pwned\x07 Title\u202e\n\x00\x01 $x = [0.5, 1.5]$ \r\r\n\u2028 line\x0c\x1c"
    "\n$$S = \\begin{bmatrix} 0.5 & 1.2 \\\\ \ud800 \\end{bmatrix}$$\n"
    "\\begin{bmatrix\n$$$$\n[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n"
)


async def test_hostile_text_is_answered_without_a_traceback(
    client: LanguageClient, tmp_path: Path
) -> None:
    uri = _open(client, str(tmp_path / "hostile.md"), HOSTILE.replace("\ud800", "\ufffd"))
    diags = await _published(client, uri, 1)
    for d in diags:
        assert "Traceback" not in d.message and "\x1b" not in d.message
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=3, character=5),
        )
    )
    assert hover is None or "\x1b" not in hover.contents.value  # type: ignore[union-attr]
    # an incremental edit past the end of a line and of the document is clamped, not an error
    version = _edit(client, uri, 99, 0, 5, "0.25 \x00")
    await _published(client, uri, version)
    _close(client, uri)


async def test_a_five_megabyte_paste_is_refused_and_the_server_stays_responsive(
    client: LanguageClient, tmp_path: Path
) -> None:
    line = "The weights are $[0.25, 0.50, 0.25]$ and \x1b[2J the sum is $1.00$.\n"
    big = line * (5 * 1024 * 1024 // len(line) + 1)  # 5 MiB: over the 5,000,000-byte cap
    uri = _open(client, str(tmp_path / "paste.md"), big)
    diags = await _published(client, uri, 1)
    assert len(diags) == 1 and "at most 5,000,000 bytes" in diags[0].message
    assert "Traceback" not in diags[0].message
    # the server answers while it holds the paste, and stays within memory
    small = _open(client, str(tmp_path / "small.md"), CODE_POST)
    assert await _published(client, small, 1) == []
    server = client._server  # the server's process (pytest-lsp)
    assert server is not None
    assert _rss_mb(server.pid) < 2000
    _close(client, uri)
    _close(client, small)


async def test_a_large_paste_within_the_cap_runs_out_of_its_budget_not_the_server(
    client: LanguageClient, tmp_path: Path
) -> None:
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"symtf": {"timeout": 3}})
    )
    line = "Row {k}: $v_{k} = [0.{k:03d}, 1.5, -2.25]$ and \x07 more text about it.\n"
    big = "".join(line.format(k=k % 1000) for k in range(72_000))
    assert 4_000_000 < len(big.encode()) < 5_000_000
    uri = _open(client, str(tmp_path / "large.md"), big)
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=0, character=0),
        )
    )
    assert hover is None  # answered while the worker reads the paste
    diags = await _published(client, uri, 1)
    assert all("Traceback" not in d.message for d in diags)
    if diags:
        assert "time budget" in diags[0].message or diags[0].source == "symtf"
    server = client._server
    assert server is not None and _rss_mb(server.pid) < 2500
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"symtf": {"timeout": 600}})
    )
    _close(client, uri)


# ----------------------------------------------------------------------------- the command's verdicts

#: The articles kept in the repository (27 slips and wrong numbers among them), and the
#: source article when it is beside the project.
FIXTURES = sorted(
    p
    for p in (ROOT / "tests" / "draft_sources").iterdir()
    if p.suffix in (".md", ".ipynb", ".txt", ".tex") and p.name != "SOURCES.md"
) + ([SEED] if SEED is not None else [])


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
async def test_diagnostics_equal_symtf_check_json_number_for_number(
    client: LanguageClient, path: Path
) -> None:
    """Every slip and wrong number ``symtf check --format json`` reports, and no other."""
    text = path.read_text(encoding="utf-8")
    language = {".md": "markdown", ".ipynb": "ipynb", ".txt": "plaintext", ".tex": "latex"}
    uri = _open(client, str(path), text, language[path.suffix])
    diags = await _published(client, uri, 1)
    cli = _cli_json(path)
    expected = sorted(
        (c["source_line"], c["claim"], json.dumps(c["index"]), c["printed"], c["verdict"])
        for c in cli["checks"]
        if c["verdict"] in ("slip", "wrong")
    )
    found = sorted(
        (
            d.range.start.line + 1,
            d.data["claim"],
            json.dumps(d.data["index"]),
            d.data["printed"],
            d.data["verdict"],
        )
        for d in diags
    )
    assert found == expected  # a notebook's lines are those of its .ipynb file, as in the report
    _close(client, uri)


async def test_the_server_listens_on_a_local_port_for_debugging(tmp_path: Path) -> None:
    """``symtf lsp --tcp PORT``: a client that connects to 127.0.0.1:PORT gets diagnostics."""
    import socket

    from pygls.lsp.client import LanguageClient as Client

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "symtf", "lsp", "--tcp", str(port)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stderr=subprocess.PIPE,
    )

    async def talk() -> list[types.Diagnostic]:
        client = Client("test", "1")
        got: asyncio.Queue[types.PublishDiagnosticsParams] = asyncio.Queue()

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(ls: Client, params: types.PublishDiagnosticsParams) -> None:
            got.put_nowait(params)

        for _ in range(600):  # until the server listens (it imports symtf first)
            try:
                await client.start_tcp("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.5)
        await client.initialize_async(
            types.InitializeParams(capabilities=types.ClientCapabilities())
        )
        client.initialized(types.InitializedParams())
        post = CODE_POST.replace("[2.0, 0.1, 0.7]", "[2.0, 0.105, 0.7]")  # see the score test
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=(tmp_path / "tcp.md").as_uri(), language_id="markdown", version=1, text=post
                )
            )
        )
        params = await asyncio.wait_for(got.get(), PATIENCE)
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
        return list(params.diagnostics)

    try:
        diags = await talk()
        assert server.wait(timeout=PATIENCE) == 0  # it ends when its client says exit
    finally:
        if server.poll() is None:
            server.kill()
    assert [d.severity for d in diags] == [types.DiagnosticSeverity.Warning]
    assert "0.105 is a slip (correctly rounded: 0.106)" in diags[0].message
