"""What drafting an article costs, as a ratio to checking its hand derivation in the same run.

Run:  python benchmarks/bench_draft.py [--repeat N] [--article PATH] [--against DERIVATION]

By default the source article of ``derivations/i_love_ai.toml`` (looked up beside
the project as ``shared/articles/000_…txt``; name another with ``--article``) is
drafted — read, every printed matrix searched for its step and certified, the
derivation written — and, in the same run, the hand derivation is checked. The
ratio of the CPU times (best of ``--repeat`` runs each, alternating, so load falls
on both) is what the drafting adds; the target is at most 3×. Also reported:
drafting and checking the article in one go (``symtf check ARTICLE``) against
the same check.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from symtf import spec  # noqa: E402
from symtf.checking.compare import check  # noqa: E402
from symtf.commands.draft import check_article  # noqa: E402
from symtf.draft import draft_file  # noqa: E402

SEED = "000_b60c289f27ab6d88.txt"


def _find_article(name: str) -> Path | None:
    for base in (ROOT.parent, ROOT.parent.parent, ROOT.parent.parent.parent):
        p = base / "shared" / "articles" / name
        if p.exists():
            return p
    return None


def _cpu(fn: Callable[[], object]) -> float:
    t = time.process_time()
    fn()
    return time.process_time() - t


def main(argv: list[str] | None = None) -> int:
    """Print the ratios; returns 0, or 1 when drafting takes more than 3× the check."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--article", type=Path, default=None)
    ap.add_argument("--against", type=Path, default=ROOT / "derivations" / "i_love_ai.toml")
    args = ap.parse_args(argv)
    article = args.article or _find_article(SEED)
    if article is None or not article.exists():
        print(
            f"no article: pass --article (the seed {SEED} is not beside the project)",
            file=sys.stderr,
        )
        return 2
    hand = spec.load(args.against)
    draft_file(article)  # warm caches and imports on both sides
    check(hand)
    drafting, checking, both = [], [], []
    for _ in range(args.repeat):
        drafting.append(_cpu(lambda: draft_file(article)))
        checking.append(_cpu(lambda: check(hand)))
        both.append(_cpu(lambda: check_article(article)))
    d, c, b = min(drafting), min(checking), min(both)
    print(f"article      {article.name}")
    print(f"draft        {d * 1000:8.1f} ms CPU (best of {args.repeat})")
    print(f"hand check   {c * 1000:8.1f} ms CPU ({args.against.name})")
    print(f"draft+check  {b * 1000:8.1f} ms CPU (symtf check on the article)")
    print(f"ratio draft / hand check        = {d / c:5.2f}  (target <= 3)")
    print(f"ratio draft+check / hand check  = {b / c:5.2f}")
    return 0 if d / c <= 3 else 1


if __name__ == "__main__":
    sys.exit(main())
