"""Symbolic weights: ``check``, ``latex``, ``html``, ``explain`` and ``whatif`` with symbols,
as ratios to the numeric check in the same run.

Run:  python benchmarks/bench_symbols.py [--repeat N] [--only check]

Baseline: ``symtf.checking.compare.check`` of each article as bundled. Measured
against it, in one process, the same article with

(a) one symbolic entry (``i_love_ai``: head 1's ``W_Q[0, 0] = a``; ``birds_build_nests``:
    ``W_Q[0, 2] = a``), every value depending on ``a`` searched for its certified
    correct-rounding set;
(b) a whole symbolic ``W_Q`` (head 1: twelve symbols, so expressions only, no sets);
(c) ``scale = "t"`` (every head's divisor a symbol; its pole at t = 0 lies in the range).

``latex``, ``html`` and ``explain`` (one downstream claim) run on the symbolic file
of each case, through the command line in this process (standard output to
``/dev/null``); ``whatif`` runs on the numeric file with the matching ``--symbol``
(``l0.h0.W_Q[0,0]=a`` / ``[0,2]``, ``l0.h0.W_Q=w``, ``scale=t``), its default claims
and range, and ``-o`` (plots included). Each line gives the seconds, the ratio to the
numeric check and the ratio to the same command on the numeric file. The goal: each
under 30 s on 2 cores.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _timing import best_of  # noqa: E402

from symtf import cli, spec  # noqa: E402
from symtf.checking import compare  # noqa: E402

#: A claim downstream of head 0 for ``explain``, per article.
EXPLAIN = {"i_love_ai": "logit I", "birds_build_nests": "pattern Birds row"}
#: ``whatif``'s ``--symbol`` for cases (a), (b), (c), per article.
WHATIF = {
    "i_love_ai": ("l0.h0.W_Q[0,0]=a", "l0.h0.W_Q=w", "scale=t"),
    "birds_build_nests": ("l0.h0.W_Q[0,2]=a", "l0.h0.W_Q=w", "scale=t"),
}
COMMANDS = ("check", "latex", "html", "explain", "whatif")

NAMES = "bcdfghkmnpqr"


def _whole(rows: list[str]) -> str:
    it = iter(NAMES)
    return "\n".join(" ".join(next(it) for _ in r.split()) for r in rows)


def variants(name: str, text: str) -> dict[str, str]:
    """The three symbolic variants of an article's text."""
    if name == "i_love_ai":
        one_old, one_new = 'W_Q = """\n1 0\n0 1\n', 'W_Q = """\na 0\n0 1\n'
        rows = ["1 0", "0 1", "0 0", "0 0", "0 0", "0 0"]
        anchor = 'mask = "causal"'
    else:
        one_old, one_new = 'W_Q = """\n0 0 1\n', 'W_Q = """\n0 0 a\n'
        rows = ["0 0 1", "0 1 1", "1 0 0", "1 1 0"]
        anchor = 'mask = "none"'
    whole_old = 'W_Q = """\n' + "\n".join(rows) + "\n"
    out = {
        "(a) one entry a": text.replace(one_old, one_new, 1),
        "(b) whole W_Q": text.replace(whole_old, 'W_Q = """\n' + _whole(rows) + "\n", 1),
        "(c) scale = t": text.replace(anchor, anchor + '\nscale = "t"', 1),
    }
    for k, v in out.items():
        assert v != text, (name, k)
    return out


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Standard output and error to /dev/null at the descriptor level (the CLI writes bytes)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


def _cli(argv: list[str]) -> int:
    with _quiet():
        code = cli.main([*argv, "--timeout", "600"])
    if code not in (0, 1):  # 1: the article's own slips, as for check
        raise SystemExit(f"symtf {' '.join(argv)}: exit {code}")
    return code


def _job(command: str, name: str, path: Path, case: int | None, tmp: Path) -> Callable[[], object]:
    """One command on one file (``case``: 0, 1, 2 for (a), (b), (c); ``None``: numeric)."""
    if command == "check":
        return lambda: compare.check(spec.load(path))
    if command == "latex":
        return lambda: _cli(["latex", str(path), "-o", str(tmp / "out.tex")])
    if command == "html":
        return lambda: _cli(["html", str(path), "-o", str(tmp / "out.html")])
    if command == "explain":
        return lambda: _cli(["explain", str(path), EXPLAIN[name]])
    symbol = WHATIF[name][case if case is not None else 0]
    out = tmp / f"whatif-{name}-{case}"
    return lambda: _cli(["whatif", str(path), "--symbol", symbol, "-o", str(out)])


def main() -> None:
    """Print each measurement in seconds and as ratios, one line per command and case."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--only", choices=COMMANDS, action="append", help="commands to time")
    args = ap.parse_args()
    commands = args.only or COMMANDS
    tmp = Path(tempfile.mkdtemp(prefix="symtf-bench-"))
    for name in ("i_love_ai", "birds_build_nests"):
        src = ROOT / "derivations" / f"{name}.toml"
        text = src.read_text(encoding="utf-8")
        base = best_of(lambda src=src: compare.check(spec.load(src)), args.repeat)
        print(f"{name}: numeric check = {base * 1000:.0f} ms (best of {args.repeat})")
        paths = []
        for label, variant in variants(name, text).items():
            path = tmp / f"{name}-{label[1]}.toml"
            path.write_text(variant, encoding="utf-8")
            paths.append((label, path))
        for command in commands:
            if command == "whatif":  # it needs a symbol: no numeric run to compare with
                numeric = None
                _job(command, name, src, 0, tmp)()  # warm-up: matplotlib's first import
                print("  whatif (on the numeric file, with the case's --symbol):")
            else:
                numeric = best_of(_job(command, name, src, None, tmp), args.repeat)
                print(f"  {command}: numeric file {numeric:6.2f} s")
            for case, (label, path) in enumerate(paths):
                # whatif makes the numeric file symbolic itself; the others read the variant
                target = src if command == "whatif" else path
                t = best_of(_job(command, name, target, case, tmp), args.repeat)
                own = f"  {t / numeric:6.1f} x numeric {command}" if numeric else ""
                print(f"    {label:<20} {t:7.2f} s  {t / base:8.1f} x numeric check{own}")


if __name__ == "__main__":
    main()
