"""The check, in a process of its own that stays warm between edits.

The server never checks on its message loop: it sends each job (a document's
text, kind, version and time budget) to this process and goes on answering the
client. The process imports SymPy, the op registry and the drafting code once and
keeps them, and keeps per document what the last check found
(:mod:`symtf.lsp.incremental` says what an edit lets it reuse).

**Protocol.** Messages both ways are JSON, each preceded by its length in bytes
on a line of its own. The server sends ``{"job": …}``, ``{"cancel": id}`` or
``{"forget": key}`` (a document was closed); the
worker answers each job with one result (:func:`analyse`). A cancel for the job
being checked interrupts it: the worker sends itself ``SIGUSR1``, whose handler
raises :class:`Cancelled` in the check (as the time budget's alarm raises its own
error), again every quarter second should anything swallow it. A cancel for any
other job is ignored. The server cancels a job when a newer version of its
document arrives.

**Limits.** Each check runs under its time budget (``symtf check --timeout``);
the process's address space is capped (:data:`MEMORY_MB`, or
``SYMTF_LSP_MEMORY_MB``), so that a hostile document ends in a ``MemoryError``
reported as such, not in a machine out of memory. The server kills and restarts a
worker that does not answer within the budget plus a grace period.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time
import traceback
from queue import Empty, Queue
from typing import IO, Any

__all__ = ["Cancelled", "analyse", "main", "read_message", "write_message"]

#: Address space a worker may use, in MB (a check of the source article needs about 300).
MEMORY_MB = 3000
#: Every this many checks, objects frozen out of the cycle collector are scanned again
#: (what a closed document's state left in cycles is freed then).
UNFREEZE_EVERY = 25
#: That scan of everything waits until no job has come for this many seconds (it takes
#: a good part of a second, which an edit typed meanwhile would wait for).
IDLE_SECONDS = 1.0
#: Documents larger than this are not checked (the limit of ``symtf check`` on an article).
MAX_BYTES = 5_000_000


class Cancelled(BaseException):
    """The job being checked was superseded by a newer version of its document."""


# ----------------------------------------------------------------------------- framing


def write_message(stream: IO[bytes], message: Any) -> None:
    """Write one message: its length on a line, then its JSON."""
    data = json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")
    stream.write(f"{len(data)}\n".encode("ascii") + data)
    stream.flush()


def read_message(stream: IO[bytes]) -> Any:
    """Read one message; ``None`` at the end of the stream.

    Raises:
        ValueError: For a stream that does not hold messages.
    """
    head = stream.readline()
    if not head:
        return None
    size = int(head.strip())
    data = stream.read(size)
    if len(data) != size:
        return None
    return json.loads(data.decode("utf-8", "surrogatepass"))


# ----------------------------------------------------------------------------- the check


def analyse(job: dict[str, Any], state: Any) -> dict[str, Any]:
    """Check one document; the result is plain data (JSON).

    ``job``: ``id``, ``key`` (the document), ``version``, ``text``, ``kind`` (``md``,
    ``tex``, ``txt`` or ``ipynb``), ``name`` (the file, for messages) and ``timeout``.

    The result has ``status`` (``ok``, ``error`` or ``cancelled``), and for ``ok``:
    ``derivation`` (what ``symtf check --format json`` reports for the text: ``checks``
    and ``unchecked``), ``fixes`` (:class:`symtf.fix.Fix` as data), ``toml`` (the draft)
    and ``steps`` (each step's expression by name); for ``error``: ``error``, the
    message. ``reused`` says what earlier work the check reused, ``cpu`` its CPU seconds.
    """
    from symtf.cli import time_budget
    from symtf.errors import SymtfError
    from symtf.files import size_text

    base = {"id": job["id"], "key": job["key"], "version": job["version"]}
    text, name = job["text"], job["name"]
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_BYTES:
        return {
            **base,
            "status": "error",
            "error": f"{name}: expected an article of at most {size_text(MAX_BYTES)}, "
            f"found {size_text(size)}: not checked",
        }
    cpu = time.process_time()
    try:
        with time_budget(job.get("timeout"), name):
            found, reused = state.check(job["key"], text, job["kind"], name)
    except SymtfError as e:
        return {**base, "status": "error", "error": str(e), "cpu": time.process_time() - cpu}
    except MemoryError:
        return {
            **base,
            "status": "error",
            "error": f"{name}: ran out of memory (the checker may use {_memory_mb()} MB)",
        }
    except RecursionError:
        return {**base, "status": "error", "error": f"{name}: input nested too deeply"}
    except Exception:  # a bug: said so, never shown as a traceback to the editor
        if os.environ.get("SYMTF_DEBUG"):
            traceback.print_exc(file=sys.stderr)
        return {
            **base,
            "status": "error",
            "error": f"{name}: internal error while checking (a bug in symtf; "
            "SYMTF_DEBUG=1 writes its traceback to the server's log)",
        }
    return {**base, **found, "status": "ok", "reused": reused, "cpu": time.process_time() - cpu}


def _memory_mb() -> int:
    try:
        return int(os.environ.get("SYMTF_LSP_MEMORY_MB", MEMORY_MB))
    except ValueError:
        return MEMORY_MB


# ----------------------------------------------------------------------------- the process


class _Current:
    """The job being checked (its id), and the one a cancel asked to stop.

    Plain attributes, read by the signal handler without a lock: the handler runs in
    the main thread, between two of its bytecodes, and must never wait.
    """

    def __init__(self) -> None:
        self.id: int | None = None
        self.cancelled: int | None = None


def _limit_memory() -> None:
    with contextlib.suppress(ImportError, ValueError, OSError):
        import resource

        limit = _memory_mb() * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def main() -> None:
    """The worker process: read jobs on standard input, write results on standard output."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed by the check goes to the log, not into the protocol
    sys.stdout = sys.stderr
    stdin = sys.stdin.buffer
    _limit_memory()
    import gc

    from symtf.limits import install_flint_hook
    from symtf.lsp.incremental import State

    install_flint_hook()
    # as the command does (symtf.cli.run): the imports' objects are frozen out of the cycle
    # collector's scans, and the youngest generation is collected every 100,000 allocations
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    current = _Current()
    jobs: Queue[dict[str, Any] | None] = Queue()

    def on_signal(signum: int, frame: object) -> None:
        if current.id is not None and current.id == current.cancelled:
            raise Cancelled()

    signal.signal(signal.SIGUSR1, on_signal)

    def interrupt(job_id: int) -> None:
        # again every quarter second, should anything in the check swallow the first
        while current.id == job_id:
            current.cancelled = job_id
            os.kill(os.getpid(), signal.SIGUSR1)
            time.sleep(0.25)

    def reader() -> None:
        while True:
            try:
                message = read_message(stdin)
            except (ValueError, OSError):
                message = None
            if message is None:
                jobs.put(None)
                return
            if "job" in message:
                jobs.put(message["job"])
            elif "forget" in message:  # a closed document: its state goes, in turn
                jobs.put({"forget": message["forget"]})
            elif "cancel" in message:
                threading.Thread(target=interrupt, args=(message["cancel"],), daemon=True).start()

    threading.Thread(target=reader, daemon=True).start()
    state = State()
    done = 0
    write_message(out, {"ready": True, "pid": os.getpid()})
    owed = False  # a scan of everything, frozen or not, is due once the worker is idle
    while True:
        try:
            job = jobs.get(timeout=IDLE_SECONDS) if owed else jobs.get()
        except Empty:
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            owed = False
            continue
        if job is None:
            break
        if "forget" in job:
            state.forget(str(job["forget"]))
            continue
        cancelled = {"id": job["id"], "key": job["key"], "version": job["version"]}
        cancelled["status"] = "cancelled"
        try:
            try:
                current.cancelled, current.id = None, job["id"]
                result = analyse(job, state)
                current.id = None
            except Cancelled:
                current.id = None
                result = cancelled
        except Cancelled:  # a second signal while the first was being handled
            current.id = None
            result = cancelled
        try:
            write_message(out, result)
        except OSError:
            break
        done += 1
        if done % UNFREEZE_EVERY == 0:  # now and then, what was frozen is looked at again
            if owed:  # not idle since the last time: now, rather than never
                gc.unfreeze()
            owed = not owed
        gc.collect()  # after the answer: what the check left in cycles, then the rest
        gc.freeze()  # is kept out of the next check's scans
    out.close()
    os._exit(0)


if __name__ == "__main__":
    main()
