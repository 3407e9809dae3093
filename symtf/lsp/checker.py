"""The server's side of the worker process (:mod:`symtf.lsp.worker`).

One worker checks one job at a time. Each document has at most one job waiting
(a newer version replaces an older one that has not started), and a job being
checked is cancelled as soon as a newer version of its document arrives. Results
are handed to ``deliver`` from a reader thread; the server puts them on its own
loop. A worker that dies, or does not answer within the job's budget plus
:data:`GRACE` seconds, is killed if need be and replaced; the job gets an error
result saying so.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from symtf.lsp.worker import read_message, write_message

__all__ = ["Checker"]

#: Seconds past a job's time budget after which its worker is killed.
GRACE = 15.0


class Checker:
    """Send jobs to a warm worker process and hand back the results.

    Args:
        deliver: Called with each result (from another thread).
        log: Called with a line for the server's log.
    """

    def __init__(self, deliver: Callable[[dict[str, Any]], None], log: Callable[[str], None]):
        self.deliver = deliver
        self.log = log
        self.lock = threading.RLock()
        self.pending: dict[str, dict[str, Any]] = {}
        self.busy: dict[str, Any] | None = None
        self.deadline = 0.0
        self.proc: subprocess.Popen[bytes] | None = None
        self.pid: int | None = None
        self.closed = False
        self._watchdog = threading.Thread(target=self._watch, daemon=True)
        self._watchdog.start()

    # -- jobs --

    def start(self) -> None:
        """Start the worker now (it imports SymPy and symtf while the client gets ready)."""
        with self.lock:
            if self.proc is None and not self.closed:
                self._spawn()

    def submit(self, job: dict[str, Any]) -> None:
        """Check ``job`` (it replaces any job of the same document still waiting)."""
        with self.lock:
            self.pending[job["key"]] = job
            busy = self.busy
            if busy is not None and busy["key"] == job["key"] and busy["id"] != job["id"]:
                self._send({"cancel": busy["id"]})
            self._kick()

    def drop(self, key: str) -> None:
        """Forget a document's waiting job and cancel its running one (it was closed)."""
        with self.lock:
            self.pending.pop(key, None)
            if self.busy is not None and self.busy["key"] == key:
                self._send({"cancel": self.busy["id"]})
            self._send({"forget": key})

    def close(self) -> None:
        """Stop the worker."""
        with self.lock:
            self.closed = True
            proc, self.proc = self.proc, None
        if proc is not None:
            try:
                if proc.stdin is not None:
                    proc.stdin.close()
                proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()

    # -- the worker --

    def _spawn(self) -> None:
        env = dict(os.environ)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "symtf.lsp.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        threading.Thread(target=self._read, args=(self.proc,), daemon=True).start()

    def _send(self, message: dict[str, Any]) -> None:
        proc = self.proc
        if proc is None or proc.stdin is None:
            return
        with contextlib.suppress(OSError, ValueError):  # the reader sees the worker gone
            write_message(proc.stdin, message)

    def _kick(self) -> None:
        with self.lock:
            if self.busy is not None or not self.pending or self.closed:
                return
            if self.proc is None:
                self._spawn()
            key = next(iter(self.pending))
            job = self.pending.pop(key)
            self.busy = job
            budget = job.get("timeout") or 0
            self.deadline = time.monotonic() + budget + GRACE if budget else float("inf")
            self._send({"job": job})

    def _read(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        while True:
            try:
                message = read_message(proc.stdout)
            except (ValueError, OSError):
                message = None
            if message is None:
                self._gone(proc)
                return
            if message.get("ready"):
                self.pid = message.get("pid")
                continue
            with self.lock:
                if self.busy is not None and self.busy["id"] == message.get("id"):
                    self.busy = None
            self.deliver(message)
            self._kick()

    def _gone(self, proc: subprocess.Popen[bytes], why: str | None = None) -> None:
        """The worker ended (or was killed): its job gets an error, the next job a new worker."""
        with self.lock:
            if self.proc is proc:
                self.proc = None
            job, self.busy = self.busy, None
        try:
            code = proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        if job is not None and not self.closed:
            reason = why or f"the checking process ended (exit code {code})"
            self.log(f"symtf: {job['name']}: {reason}")
            self.deliver(
                {
                    "id": job["id"],
                    "key": job["key"],
                    "version": job["version"],
                    "status": "error",
                    "error": f"{job['name']}: not checked: {reason}",
                }
            )
        self._kick()

    def _watch(self) -> None:
        while not self.closed:
            time.sleep(0.5)
            with self.lock:
                proc = self.proc
                late = self.busy is not None and time.monotonic() > self.deadline
            if late and proc is not None:
                budget = (self.busy or {}).get("timeout") or 0
                proc.kill()
                self._gone(
                    proc,
                    f"no answer within the time budget of {budget:g} s and {GRACE:g} s more "
                    "(the checking process was stopped)",
                )
