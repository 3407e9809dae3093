"""The language server against a cold ``symtf check`` of the same article, in one run.

Run:  python benchmarks/bench_lsp.py [--article PATH] [--edits 20] [--repeat 3]

1. A cold ``symtf check ARTICLE --format json`` in a fresh interpreter (imports
   included), the best of ``--repeat`` runs: wall-clock and CPU seconds.
2. ``symtf lsp`` started over stdio as an editor starts it: the time from
   ``didOpen`` to the first ``publishDiagnostics`` (the server and its worker start
   when the client starts them, as they do in an editor).
3. ``--edits`` single-number edits spread over the article (the last digit of a
   printed number changed; each edit undone before the next, the undo not timed):
   the time from ``didChange`` to the ``publishDiagnostics`` of that version. The
   server's log says how much CPU each check took in the worker and what it reused.

Everything is reported as a ratio to the cold check of the same run, since the
machine's load moves every absolute time (the load average is printed).
Defaults to the source article when ``../shared/articles`` is beside the project,
else to a bundled fixture.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _default_article() -> Path:
    for base in (ROOT.parent, ROOT.parent.parent):
        p = base / "shared" / "articles" / "000_b60c289f27ab6d88.txt"
        if p.exists():
            return p
    return ROOT / "tests" / "draft_sources" / "toyai_example3_worksheet.md"


def cold_check(article: Path, repeat: int) -> tuple[float, float]:
    """Best wall-clock and CPU seconds of a cold ``symtf check`` (fresh interpreter)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    best_wall, best_cpu = float("inf"), float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "symtf", "check", str(article), "--format", "json"],
            capture_output=True,
            env=env,
            check=False,
        )
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best_wall, best_cpu = min(best_wall, wall), min(best_cpu, cpu)
    return best_wall, best_cpu


def edit_sites(text: str, n: int) -> list[tuple[int, int, str, str]]:
    """``n`` printed numbers spread evenly over the article: (line, column, old, new)."""
    found = []
    for k, row in enumerate(text.split("\n")):
        for m in re.finditer(r"(?<![\w.])-?\d+\.\d+(?![\d.])", row):
            old = m.group()
            new = old[:-1] + str((int(old[-1]) + 1) % 10)
            found.append((k, m.start(), old, new))
    if len(found) <= n:
        return found
    step = len(found) / n
    return [found[int(i * step + step / 2)] for i in range(n)]


async def serve(article: Path, edits: int) -> dict[str, object]:
    """Open the article in the server, then edit it: the latencies, in seconds."""
    from lsprotocol import types
    from pygls.lsp.client import LanguageClient

    text = article.read_text(encoding="utf-8")
    language = {".md": "markdown", ".tex": "latex", ".ipynb": "ipynb"}.get(
        article.suffix, "plaintext"
    )
    client = LanguageClient("bench", "1")
    published: dict[int, float] = {}
    logs: list[str] = []
    arrived = asyncio.Event()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_publish(ls: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        if params.version is not None:
            published.setdefault(params.version, time.perf_counter())
            arrived.set()

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def on_log(ls: LanguageClient, params: types.LogMessageParams) -> None:
        logs.append(params.message)

    async def until(version: int) -> float:
        while version not in published:
            arrived.clear()
            await asyncio.wait_for(arrived.wait(), 900)
        return published[version]

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    await client.start_io(sys.executable, "-m", "symtf", "lsp", env=env)
    await client.initialize_async(
        types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=None)
    )
    client.initialized(types.InitializedParams())
    uri = article.resolve().as_uri()
    start = time.perf_counter()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id=language, version=1, text=text
            )
        )
    )
    first = await until(1) - start
    version = 1
    latencies, cpus, reused = [], [], []

    def change(line: int, col: int, old: str, new: str) -> None:
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(
                            start=types.Position(line=line, character=col),
                            end=types.Position(line=line, character=col + len(old)),
                        ),
                        text=new,
                    )
                ],
            )
        )

    timed: list[tuple[int, int]] = []  # (version, article line) of each timed edit
    for line, col, old, new in edit_sites(text, edits):
        version += 1
        start = time.perf_counter()
        change(line, col, old, new)
        latencies.append(await until(version) - start)
        timed.append((version, line + 1))
        version += 1  # undo, not timed
        change(line, col, new, old)
        await until(version)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()  # type: ignore[no-untyped-call]
    for v, line in timed:  # the server's log line of each timed version (it follows the publish)
        pattern = rf"version {v}: .* in ([0-9.]+) s of CPU(?:; reused (.*))?"
        m = next((m for m in (re.search(pattern, x) for x in logs) if m), None)
        if m:
            cpus.append(float(m.group(1)))
            reused.append((line, m.group(2) or ""))
    return {"first": first, "edits": latencies, "cpus": cpus, "reused": reused}


def main() -> None:
    """Run the benchmark and print its table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--article", type=Path, default=_default_article())
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"article: {args.article} ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})")
    wall, cpu = cold_check(args.article, args.repeat)
    got = asyncio.run(serve(args.article, args.edits))
    edits = got["edits"]
    assert isinstance(edits, list)
    first = float(got["first"])  # type: ignore[arg-type]
    median, worst = statistics.median(edits), max(edits)
    print()
    print(f"cold symtf check (best of {args.repeat})   {wall:7.3f} s wall   {cpu:7.3f} s CPU")
    print(f"server: didOpen -> first diagnostics {first:7.3f} s        ratio {first / wall:5.2f} x")
    print(f"server: {len(edits)} edits, didChange -> diagnostics")
    print(
        f"  median                            {median:7.3f} s        ratio {median / wall:5.2f} x"
    )
    print(f"  max                               {worst:7.3f} s        ratio {worst / wall:5.2f} x")
    cpus = got["cpus"]
    assert isinstance(cpus, list)
    if cpus:
        print(
            f"  worker CPU per edit: median {statistics.median(cpus):.3f} s, "
            f"max {max(cpus):.3f} s   (cold check CPU {cpu:.3f} s)"
        )
    print()
    print("per edit (article line: seconds, what the worker reused)")
    reused = got["reused"]
    assert isinstance(reused, list)
    for (line, what), seconds in zip(reused, edits, strict=False):
        print(f"  line {line:4d}: {seconds:6.3f} s   {what}")


if __name__ == "__main__":
    main()
