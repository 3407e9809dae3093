"""``python -m symtf``: the same as the ``symtf`` command."""

import sys

from symtf.cli import main

sys.exit(main())
