"""``symtf lsp``: the language server (pygls), wired to the worker that checks.

The message loop only keeps documents, sends jobs and turns results into what
the client shows; every check runs in the worker process
(:mod:`symtf.lsp.checker`). A result is shown only for the version of the
document it was computed from, and diagnostics are published with that version.

Documents: ``markdown``, ``latex``/``tex``, ``plaintext`` (and any text document
whose file name ends in an article suffix, a raw ``.ipynb`` among them), Jupyter
notebooks through LSP 3.17's ``notebookDocument/*`` (cells only: the protocol
sends no outputs), and derivation files (``toml``), checked as ``symtf check``
checks them.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from symtf.lsp import config, features
from symtf.lsp.checker import Checker
from symtf.lsp.notebook import Cell, Layout, write
from symtf.lsp.text import Text

__all__ = ["SymtfServer"]

logger = logging.getLogger("symtf.lsp")

#: Document languages the server checks, and the kind of article each is.
LANGUAGES = {
    "markdown": "md",
    "latex": "tex",
    "tex": "tex",
    "plaintext": "txt",
    "text": "txt",
    "ipynb": "ipynb",
    "toml": "toml",
}
#: Commands the server runs.
SHOW_DERIVATION = "symtf.showDerivation"
FIX_ALL = "symtf.fixAll"
#: Code action kinds the server offers.
KIND_FIX_ALL = "source.fixAll.symtf"
KIND_DERIVATION = "source.symtf.showDerivation"


class _Protocol(LanguageServerProtocol):
    """pygls' protocol, except that the server keeps documents itself.

    pygls' own copies split lines with ``str.splitlines`` (U+2028, form feeds …), which
    puts an incremental change from a client at another place than the client meant
    in a document holding such characters: the server applies changes itself
    (:mod:`symtf.lsp.text`).
    """

    def _user(self, method: str, params: Any) -> Iterator[Any]:
        handler = self.fm.features.get(method)
        if handler is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: Any) -> Iterator[Any]:
        yield from self._user(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: Any) -> Iterator[Any]:
        yield from self._user(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: Any) -> Iterator[Any]:
        yield from self._user(types.TEXT_DOCUMENT_DID_CLOSE, params)

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def lsp_notebook_document__did_open(self, params: Any) -> Iterator[Any]:
        yield from self._user(types.NOTEBOOK_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def lsp_notebook_document__did_change(self, params: Any) -> Iterator[Any]:
        yield from self._user(types.NOTEBOOK_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def lsp_notebook_document__did_close(self, params: Any) -> Iterator[Any]:
        yield from self._user(types.NOTEBOOK_DOCUMENT_DID_CLOSE, params)


@dataclass
class _CellDoc:
    uri: str
    kind: int
    version: int
    text: Text


@dataclass
class _Doc:
    """An open document: a text, or a notebook of cells."""

    uri: str
    kind: str
    version: int
    text: Text
    cells: list[_CellDoc] = field(default_factory=list)
    layout: Layout | None = None
    notebook: bool = False


@dataclass
class _Shown:
    """A result and the document state it belongs to."""

    result: dict[str, Any]
    doc: features.Doc
    located: list[features.Located]
    cell_versions: dict[str, int]
    published: set[str] = field(default_factory=set)


class SymtfServer(LanguageServer):
    """The server's state: open documents, the last result of each, settings, the worker."""

    def __init__(self) -> None:
        from symtf import __version__

        super().__init__(
            "symtf",
            __version__,
            protocol_cls=_Protocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[
                    types.NotebookDocumentFilterWithCells(
                        cells=[
                            types.NotebookCellLanguage(language="markdown"),
                            types.NotebookCellLanguage(language="python"),
                        ],
                        notebook="jupyter-notebook",
                    )
                ]
            ),
        )
        self.docs: dict[str, _Doc] = {}
        self.cell_owner: dict[str, str] = {}
        self.shown: dict[str, _Shown] = {}
        self.settings = config.Settings()
        self.client_settings: Any = None
        self.root: Path | None = None
        self.ids = itertools.count(1)
        self.loop: Any = None
        self.checker = Checker(self._deliver_threadsafe, self._log)

    # -- plumbing --

    def report_server_error(self, error: Exception, source: Any) -> None:
        """An error in the server is logged, never shown to the user as a traceback."""
        logger.error("symtf: %s: %s", type(error).__name__, error)

    def _log(self, line: str) -> None:
        from symtf import files

        files.say(line)  # control characters spelled out, as every message symtf writes

    def _deliver_threadsafe(self, result: dict[str, Any]) -> None:
        loop = self.loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._deliver, result)

    @property
    def encoding(self) -> str:
        """The unit of a column in the client's positions."""
        try:
            enc = self.workspace.position_encoding
        except RuntimeError:
            return "utf-16"
        return str(getattr(enc, "value", enc) or "utf-16")

    # -- documents --

    def open_text(self, uri: str, language: str, version: int, text: str) -> None:
        """A text document was opened: check it if it is an article."""
        kind = _kind(language, uri)
        if kind is None or (kind == "toml" and not _holds_claims(text)):
            return  # not an article, or a TOML file that is no derivation (pyproject.toml)
        self.docs[uri] = _Doc(uri, kind, version, Text(text, self.encoding))
        self.submit(uri)

    def change_text(self, uri: str, version: int, changes: list[Any]) -> None:
        """Apply the client's changes to a text document (or a notebook's cell), then check."""
        owner = self.cell_owner.get(uri)
        if owner is not None:
            nb = self.docs.get(owner)
            if nb is None:
                return
            for cell in nb.cells:
                if cell.uri == uri:
                    cell.text = _applied(cell.text, changes)
                    cell.version = version
            self._relayout(nb)
            self.submit(owner)
            return
        doc = self.docs.get(uri)
        if doc is None:
            return
        doc.text = _applied(doc.text, changes)
        doc.version = version
        self.submit(uri)

    def close(self, uri: str) -> None:
        """Forget a document and clear its diagnostics."""
        doc = self.docs.pop(uri, None)
        self.checker.drop(uri)
        shown = self.shown.pop(uri, None)
        targets = {uri} if doc is None or not doc.notebook else {c.uri for c in doc.cells}
        if shown is not None:
            targets |= shown.published
        for target in targets:
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=target, diagnostics=[])
            )
        if doc is not None:
            for cell in doc.cells:
                self.cell_owner.pop(cell.uri, None)

    def open_notebook(self, params: types.DidOpenNotebookDocumentParams) -> None:
        """A notebook was opened: its cells are written as an ``.ipynb`` text and checked."""
        nb = params.notebook_document
        texts = {d.uri: d for d in params.cell_text_documents}
        cells = []
        for c in nb.cells:
            d = texts.get(c.document)
            text = d.text if d is not None else ""
            version = d.version if d is not None else 0
            cells.append(_CellDoc(c.document, int(c.kind), version, Text(text, self.encoding)))
            self.cell_owner[c.document] = nb.uri
        doc = _Doc(nb.uri, "ipynb", nb.version, Text("", self.encoding), cells, notebook=True)
        self.docs[nb.uri] = doc
        self._relayout(doc)
        self.submit(nb.uri)

    def change_notebook(self, params: types.DidChangeNotebookDocumentParams) -> None:
        """Cells added, removed or edited: the notebook is written and checked again."""
        doc = self.docs.get(params.notebook_document.uri)
        if doc is None:
            return
        doc.version = params.notebook_document.version
        cells = params.change.cells
        if cells is not None and cells.structure is not None:
            s = cells.structure
            opened = {d.uri: d for d in s.did_open or []}
            new = []
            for c in s.array.cells or []:
                d = opened.get(c.document)
                new.append(
                    _CellDoc(
                        c.document,
                        int(c.kind),
                        d.version if d is not None else 0,
                        Text(d.text if d is not None else "", self.encoding),
                    )
                )
                self.cell_owner[c.document] = doc.uri
            start, count = s.array.start, s.array.delete_count
            for gone in doc.cells[start : start + count]:
                self.cell_owner.pop(gone.uri, None)
            doc.cells[start : start + count] = new
        if cells is not None and cells.data is not None:
            kinds = {c.document: int(c.kind) for c in cells.data}
            for cell in doc.cells:
                cell.kind = kinds.get(cell.uri, cell.kind)
        if cells is not None and cells.text_content is not None:
            for change in cells.text_content:
                for cell in doc.cells:
                    if cell.uri == change.document.uri:
                        cell.text = _applied(cell.text, list(change.changes))
                        cell.version = change.document.version
        self._relayout(doc)
        self.submit(doc.uri)

    def _relayout(self, doc: _Doc) -> None:
        layout = write([Cell(c.uri, c.kind, c.text.text) for c in doc.cells])
        doc.layout = layout
        doc.text = Text(layout.text, self.encoding)

    # -- checking --

    def submit(self, key: str) -> None:
        """Send a document's current version to the worker."""
        doc = self.docs.get(key)
        if doc is None:
            return
        self.checker.submit(
            {
                "id": next(self.ids),
                "key": key,
                "version": doc.version,
                "text": doc.text.text,
                "kind": doc.kind,
                "name": _name(key, doc.kind),
                "timeout": self.settings.timeout,
            }
        )

    def _deliver(self, result: dict[str, Any]) -> None:
        """A result arrived (on the loop): shown if it is for the document's current version."""
        key = result.get("key", "")
        doc = self.docs.get(key)
        if (
            doc is None
            or result.get("status") == "cancelled"
            or result.get("version") != doc.version
        ):
            return  # closed, superseded, or stale: a newer job is on its way
        view = features.Doc(
            key,
            doc.text,
            [(c.uri, c.text) for c in doc.cells] if doc.notebook else (),
            doc.layout if doc.notebook else None,
            derivation=doc.kind == "toml",
        )
        checks = (result.get("derivation") or {}).get("checks", [])
        shown = _Shown(
            result,
            view,
            features.locate(view, checks),
            {c.uri: c.version for c in doc.cells},
        )
        previous = self.shown.get(key)
        self.shown[key] = shown
        self.publish(key, previous)
        cpu = result.get("cpu")
        self.window_log_message(
            types.LogMessageParams(
                type=types.MessageType.Log,
                message=f"symtf: {_name(key, doc.kind)} version {doc.version}: "
                f"{len(checks)} numbers judged"
                + (f" in {cpu:.3f} s of CPU" if isinstance(cpu, (int, float)) else "")
                + (f"; reused {result['reused']}" if result.get("reused") else ""),
            )
        )

    def publish(self, key: str, previous: _Shown | None = None) -> None:
        """Publish a document's diagnostics (each cell's, for a notebook) with their version."""
        shown = self.shown.get(key)
        doc = self.docs.get(key)
        if shown is None or doc is None:
            return
        from symtf.lsp import publish

        by_uri = publish.diagnostics(shown.result, shown.located, shown.doc, self.settings)
        targets = [key] if not doc.notebook else [c.uri for c in doc.cells]
        stale = previous.published if previous is not None else set()
        for uri in dict.fromkeys([*targets, *stale]):
            version = doc.version if not doc.notebook else shown.cell_versions.get(uri)
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(
                    uri=uri, diagnostics=by_uri.get(uri, []), version=version
                )
            )
        shown.published = set(targets)

    def current(self, uri: str) -> tuple[_Shown, str] | None:
        """The shown result for a document or cell, if it is for its current version."""
        key = self.cell_owner.get(uri, uri)
        shown = self.shown.get(key)
        doc = self.docs.get(key)
        if shown is None or doc is None or shown.result.get("version") != doc.version:
            return None
        return shown, key


def _applied(text: Text, changes: list[Any]) -> Text:
    """The text after the client's changes (each a whole text, or a range and its new text)."""
    for change in changes:
        rng = getattr(change, "range", None)
        if rng is None:
            text = Text(change.text, text.encoding)
            continue
        start = text.offset(rng.start.line, rng.start.character)
        end = text.offset(rng.end.line, rng.end.character)
        text = text.replaced(start, max(start, end), change.text)
    return text


def _kind(language: str, uri: str) -> str | None:
    """The kind of article a document is, or ``None`` for one the server does not check."""
    kind = LANGUAGES.get(language.lower())
    if kind is not None:
        return kind
    suffix = Path(urlparse(uri).path).suffix.lower()
    return {
        ".md": "md",
        ".markdown": "md",
        ".tex": "tex",
        ".txt": "txt",
        ".ipynb": "ipynb",
        ".toml": "toml",
    }.get(suffix)


def _holds_claims(text: str) -> bool:
    """Whether a TOML text holds claims (``[[claims]]`` or ``claims =``), as a folder search asks."""
    from symtf.spec.toml_lines import locate

    lines = locate(text)
    return "claims[0]" in lines or "claims" in lines


def _name(uri: str, kind: str) -> str:
    """The file a document is, for messages (its path for a ``file:`` URI)."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return unquote(parsed.path)
    return uri
