"""``python -m symtf``: the same as the ``symtf`` command."""

from symtf.cli import run

run()
