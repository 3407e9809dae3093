"""A fork server for the fuzzer: runs ``symtf`` commands under resource limits, one child each.

It imports symtf once, then for every request (one JSON line on stdin) forks a
child that sets ``RLIMIT_CPU`` and ``RLIMIT_AS``, points its standard streams at
files, runs ``symtf.cli.main(argv)`` and exits with its code. The server waits
with ``os.wait4``, so each run's own CPU time and peak memory are measured
exactly, and answers with one JSON line::

    {"code": 2, "signal": null, "cpu": 0.21, "peak_mb": 96.5,
     "stdout": "...", "stderr": "...", "hung": false}

A child that blocks without using CPU (it would wait on a FIFO) is killed after
``wall`` seconds and reported as ``hung``: a safety net, not a measurement.

Run by ``tests/fuzzing.py`` as ``python tests/fuzz_server.py``; not a test module.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback

#: The child's exit code when symtf let an exception escape main() (never a user code).
ESCAPED = 99


def _child(req: dict, out_path: str, err_path: str) -> None:
    """In the forked child: limits, streams, then symtf's own main()."""
    try:
        cpu = int(req.get("cpu", 30))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 2))
        mem = int(req.get("mem_mb", 2500)) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        os.chdir(req["cwd"])
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        for fd, path in ((1, out_path), (2, err_path)):
            f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(f, fd)
            os.close(f)
        sys.stdout = open(1, "w", encoding="utf-8", errors="surrogateescape", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from symtf.cli import main

        try:
            code = main(req["argv"])
        except SystemExit as e:  # argparse's usage errors
            code = e.code if isinstance(e.code, int) else 2
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(int(code))
    except BaseException:
        try:
            sys.stderr.write("Traceback (escaped main):\n" + traceback.format_exc())
            sys.stderr.flush()
        finally:
            os._exit(ESCAPED)


def _tail(path: str, n: int = 4000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - n))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def run(req: dict, scratch: str) -> dict:
    """One request: fork, limit, run, measure."""
    out_path = os.path.join(scratch, "stdout")
    err_path = os.path.join(scratch, "stderr")
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _child(req, out_path, err_path)
    wall = float(req.get("wall", 300))
    deadline = time.monotonic() + wall
    hung = False
    while True:
        done, status, use = os.wait4(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            hung = True
            os.kill(pid, signal.SIGKILL)
            _, status, use = os.wait4(pid, 0)
            break
        time.sleep(0.01)
    code = os.waitstatus_to_exitcode(status)
    return {
        "code": code if code >= 0 else None,
        "signal": -code if code < 0 else None,
        "cpu": use.ru_utime + use.ru_stime,
        "peak_mb": use.ru_maxrss / 1024,
        "stdout": _tail(out_path),
        "stderr": _tail(err_path),
        "hung": hung,
    }


def serve() -> None:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import symtf.cli
    import symtf.commands.extract
    import symtf.teach.grade  # noqa: F401

    scratch = tempfile.mkdtemp(prefix="symtf-fuzz-server-")
    out = sys.stdout
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            reply = run(json.loads(line), scratch)
            out.write(json.dumps(reply) + "\n")
            out.flush()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    serve()
