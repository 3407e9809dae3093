"""mkdocs hook: README sections the site includes link their images from the docs folder.

The README sits at the repository's root and links its pictures as ``docs/NAME.png``;
a page of the site that includes one of its sections (``--8<-- "README.md:teachers"``)
sits inside ``docs/``, where the same picture is ``NAME.png``. This hook adds a
Markdown preprocessor that runs right after the snippets are pasted in (their
preprocessor has priority 32) and drops the leading ``docs/`` from link targets, so
one README serves both and ``mkdocs build --strict`` still checks every link.
"""

from __future__ import annotations

import re
from typing import Any

from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor

# A Markdown link or image target that starts with docs/: "](docs/x.png" -> "](x.png".
_README_TARGET = re.compile(r"(\]\()docs/")


class _ReadmeTargets(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        return [_README_TARGET.sub(r"\1", line) for line in lines]


class ReadmeTargets(Extension):
    """Rewrite README-relative ``docs/`` link targets to docs-relative ones."""

    def extendMarkdown(self, md: Markdown) -> None:
        md.preprocessors.register(_ReadmeTargets(md), "symtf-readme-targets", 31)


def on_config(config: Any) -> Any:
    """Add the rewrite to the site's Markdown extensions."""
    config.markdown_extensions.append(ReadmeTargets())
    return config
