"""The Language Server Protocol's messages, answered from the server's state.

Notifications (documents opened, changed, closed; configuration) update the
state and send jobs to the worker; requests (hover, code actions, commands) are
answered from the last result shown for the document's current version, on the
message loop and without checking anything.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types

from symtf.lsp import config, features
from symtf.lsp.publish import lsp_range
from symtf.lsp.server import (
    FIX_ALL,
    KIND_DERIVATION,
    KIND_FIX_ALL,
    SHOW_DERIVATION,
    SymtfServer,
)

__all__ = ["register", "serve"]


def serve(tcp: int | None = None) -> None:
    """Run the server on standard input and output, or on ``127.0.0.1:tcp``."""
    server = SymtfServer()
    register(server)
    server.checker.start()
    try:
        if tcp is not None:
            server.start_tcp("127.0.0.1", tcp)
        else:
            server.start_io()
    finally:
        server.checker.close()


def register(server: SymtfServer) -> None:
    """Register every feature of the server."""

    @server.feature(types.INITIALIZE)
    def initialize(ls: SymtfServer, params: types.InitializeParams) -> None:
        ls.loop = asyncio.get_running_loop()
        ls.root = _root(params)
        ls.settings = config.from_pyproject(ls.root, ls._log)
        ls.client_settings = params.initialization_options
        ls.settings = config.from_client(ls.settings, ls.client_settings, ls._log)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(
        ls: SymtfServer, params: types.DidChangeConfigurationParams
    ) -> None:
        before = ls.settings
        ls.settings = config.from_client(
            config.from_pyproject(ls.root, ls._log), params.settings, ls._log
        )
        if ls.settings.timeout != before.timeout:
            for key in list(ls.docs):
                ls.submit(key)
        elif ls.settings != before:
            for key in list(ls.shown):
                ls.publish(key)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: SymtfServer, params: types.DidOpenTextDocumentParams) -> None:
        d = params.text_document
        if d.uri in ls.cell_owner:
            return  # a notebook's cell: the notebook is checked as a whole
        ls.open_text(d.uri, d.language_id, d.version, d.text)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: SymtfServer, params: types.DidChangeTextDocumentParams) -> None:
        d = params.text_document
        ls.change_text(d.uri, d.version, list(params.content_changes))

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: SymtfServer, params: types.DidCloseTextDocumentParams) -> None:
        if params.text_document.uri not in ls.cell_owner:
            ls.close(params.text_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(ls: SymtfServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.open_notebook(params)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(ls: SymtfServer, params: types.DidChangeNotebookDocumentParams) -> None:
        ls.change_notebook(params)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(ls: SymtfServer, params: types.DidCloseNotebookDocumentParams) -> None:
        ls.close(params.notebook_document.uri)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: SymtfServer, params: types.HoverParams) -> types.Hover | None:
        found = ls.current(params.text_document.uri)
        if found is None:
            return None
        shown, _ = found
        uri = params.text_document.uri
        text = _text_of(shown.doc, uri)
        if text is None:
            return None
        offset = text.offset(params.position.line, params.position.character)
        here = features.at(shown.located, uri, offset)
        if not here:
            return None
        md = features.hover_markdown([x.check for x in here], shown.result.get("steps", {}))
        first = here[0].where
        assert first is not None
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=md),
            range=lsp_range(first.text, first.span),
        )

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[
                types.CodeActionKind.QuickFix,
                KIND_FIX_ALL,
                KIND_DERIVATION,
            ]
        ),
    )
    def code_action(ls: SymtfServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return _code_actions(ls, params)

    @server.command(SHOW_DERIVATION)
    async def show_derivation(ls: SymtfServer, *args: Any) -> Any:
        return await _show_derivation(ls, _uri_argument(args))

    @server.command(FIX_ALL)
    async def fix_all(ls: SymtfServer, *args: Any) -> Any:
        uri = _uri_argument(args)
        found = ls.current(uri) if uri else None
        if found is None:
            return {"applied": False, "fixed": 0}
        edit, count = _fix_all_edit(ls, found[0], found[1])
        if count == 0:
            return {"applied": False, "fixed": 0}
        result = await ls.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(edit=edit, label="symtf: fix all slips")
        )
        return {"applied": bool(result.applied), "fixed": count}

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: SymtfServer, *args: Any) -> None:
        ls.checker.close()


# ----------------------------------------------------------------------------- helpers


def _root(params: types.InitializeParams) -> Path | None:
    uri = None
    if params.workspace_folders:
        uri = params.workspace_folders[0].uri
    elif params.root_uri:
        uri = params.root_uri
    if uri is None:
        return Path(params.root_path) if params.root_path else None
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


def _uri_argument(args: Any) -> str:
    """The document a command names: ``["uri"]``, ``[{"uri": …}]`` or ``[["uri"]]``."""
    while isinstance(args, (list, tuple)) and len(args) == 1:
        args = args[0]
    if isinstance(args, Mapping):
        args = args.get("uri")
    return args if isinstance(args, str) else ""


def _text_of(doc: features.Doc, uri: str) -> Any:
    if uri == doc.uri and not doc.cells:
        return doc.text
    for cell_uri, text in doc.cells:
        if cell_uri == uri:
            return text
    return None


def _fix_where(doc: features.Doc, fix: Mapping[str, Any]) -> features.Where | None:
    edit = fix.get("edit")
    if not isinstance(edit, Mapping):
        return None
    at = [edit.get("line"), edit.get("column"), edit.get("end_column")]
    if doc.layout is None:  # the edit is in the document's own lines and columns
        where = doc.where({"file_place": at})
    else:  # in the notebook's .ipynb text: through its layout, or the report's cell fields
        where = doc.where(
            {
                "source_line": at[0],
                "source_column": at[1],
                "source_end_column": at[2],
                **{k: v for k, v in (fix.get("place") or {}).items() if k.startswith("cell")},
            }
        )
    if where is None or not where.exact:
        return None
    if where.text.text[where.span.start : where.span.end] != edit.get("old"):
        return None  # never an edit at a place whose text is not the number's
    return where


def _workspace_edit(
    ls: SymtfServer, shown: Any, edits: list[tuple[features.Where, str]]
) -> types.WorkspaceEdit:
    by_uri: dict[str, list[types.TextEdit]] = {}
    for where, new in edits:
        by_uri.setdefault(where.uri, []).append(
            types.TextEdit(range=lsp_range(where.text, where.span), new_text=new)
        )
    caps = ls.client_capabilities.workspace
    versioned = bool(caps and caps.workspace_edit and caps.workspace_edit.document_changes)
    if not versioned:
        return types.WorkspaceEdit(changes=by_uri)
    changes = []
    for uri, text_edits in by_uri.items():
        version = shown.cell_versions.get(uri)
        if version is None:
            version = shown.result.get("version")
        changes.append(
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=uri, version=version
                ),
                edits=text_edits,
            )
        )
    return types.WorkspaceEdit(document_changes=changes)


def _fix_all_edit(ls: SymtfServer, shown: Any, key: str) -> tuple[types.WorkspaceEdit, int]:
    edits = []
    for f in shown.result.get("fixes", []):
        if f.get("applicability") != "safe":
            continue
        where = _fix_where(shown.doc, f)
        if where is not None:
            edits.append((where, str(f["edit"]["new"])))
    return _workspace_edit(ls, shown, edits), len(edits)


def _wanted(kind: str, only: list[str] | None) -> bool:
    if not only:
        return True
    return any(kind == k or kind.startswith(str(k) + ".") for k in only)


def _code_actions(ls: SymtfServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    found = ls.current(uri)
    only = [str(getattr(k, "value", k)) for k in (params.context.only or [])] or None
    out: list[types.CodeAction] = []
    if found is None:
        return out
    shown, key = found
    text = _text_of(shown.doc, uri)
    if text is None:
        return out
    lo = text.offset(params.range.start.line, params.range.start.character)
    hi = text.offset(params.range.end.line, params.range.end.character)
    diags = list(params.context.diagnostics or [])
    if _wanted(types.CodeActionKind.QuickFix.value, only):
        for f in shown.result.get("fixes", []):
            if f.get("applicability") not in ("safe", "unsafe"):
                continue
            where = _fix_where(shown.doc, f)
            if where is None or where.uri != uri:
                continue
            if where.span.end < lo or where.span.start > hi:
                continue
            new = str(f["edit"]["new"])
            safe = f.get("applicability") == "safe"
            title = f"Replace with {new}" + (
                "" if safe else " (inherited: its root is off too; fix that first)"
            )
            matching = [
                d
                for d in diags
                if isinstance(d.data, Mapping)
                and d.data.get("claim") == f.get("claim")
                and list(d.data.get("index") or []) == list(f.get("index") or [])
            ]
            out.append(
                types.CodeAction(
                    title=title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=matching or None,
                    is_preferred=safe,
                    edit=_workspace_edit(ls, shown, [(where, new)]),
                )
            )
    fix_all, count = _fix_all_edit(ls, shown, key)
    if count and _wanted(KIND_FIX_ALL, only):
        out.append(
            types.CodeAction(
                title=f"symtf: fix all slips in this file ({count} number(s))",
                kind=KIND_FIX_ALL,
                edit=fix_all,
            )
        )
    if _wanted(KIND_DERIVATION, only) and shown.result.get("toml"):
        out.append(
            types.CodeAction(
                title="symtf: show the derivation",
                kind=KIND_DERIVATION,
                command=types.Command(
                    title="symtf: show the derivation", command=SHOW_DERIVATION, arguments=[key]
                ),
            )
        )
    return out


async def _show_derivation(ls: SymtfServer, uri: str) -> Any:
    """Open the document's drafted derivation as an untitled TOML document.

    Returns ``{"uri": …, "toml": …, "opened": bool}``: a client that cannot open an
    untitled document from a server still gets the text.
    """
    key = ls.cell_owner.get(uri, uri)
    shown = ls.shown.get(key)
    if shown is None or not shown.result.get("toml"):
        return {"uri": None, "toml": None, "opened": False}
    toml = str(shown.result["toml"])
    stem = Path(urlparse(key).path).stem or "article"
    target = f"untitled:{stem}.derivation.toml"
    caps = ls.client_capabilities.workspace
    ops = caps.workspace_edit.resource_operations if caps and caps.workspace_edit else None
    can_create = bool(
        caps and caps.apply_edit and ops and types.ResourceOperationKind.Create in ops
    )
    opened = False
    if can_create:
        edit = types.WorkspaceEdit(
            document_changes=[
                types.CreateFile(uri=target, options=types.CreateFileOptions(overwrite=True)),
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=target, version=None
                    ),
                    edits=[
                        types.TextEdit(
                            range=types.Range(
                                start=types.Position(line=0, character=0),
                                end=types.Position(line=0, character=0),
                            ),
                            new_text=toml,
                        )
                    ],
                ),
            ]
        )
        try:
            result = await ls.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(edit=edit, label="symtf: the derivation")
            )
            opened = bool(result.applied)
            if opened:
                await ls.window_show_document_async(
                    types.ShowDocumentParams(uri=target, take_focus=True)
                )
        except Exception as e:  # a client that refuses: the text is still returned
            ls._log(f"symtf: could not open {target}: {e}")
    return {"uri": target, "toml": toml, "opened": opened}
