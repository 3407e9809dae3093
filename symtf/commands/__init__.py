"""Sub-commands beyond ``check`` and ``explain``: each module has ``configure(subparsers)``."""
