"""``symtf lsp``: a language server that checks an article's numbers as the author types.

- :mod:`symtf.lsp.server`: the server (pygls) and its documents; :mod:`symtf.lsp.handlers`
  answers the protocol's messages.
- :mod:`symtf.lsp.checker` and :mod:`symtf.lsp.worker`: every check runs in a warm worker
  process, off the server's message loop, cancelled when its document moves on.
- :mod:`symtf.lsp.incremental`: what the worker keeps between edits.
- :mod:`symtf.lsp.features` and :mod:`symtf.lsp.publish`: places, diagnostics, hovers.
- :mod:`symtf.lsp.text` and :mod:`symtf.lsp.notebook`: positions the client's way, and
  notebook cells written as the ``.ipynb`` text symtf reads.
- :mod:`symtf.lsp.config`: ``[tool.symtf]`` and the client's settings.

The server needs the ``lsp`` extra (``pip install 'symtf[lsp]'``: pygls and lsprotocol).
"""
