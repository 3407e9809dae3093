"""Every file symtf reads or writes goes through this module.

**Reading.** :func:`read_bytes`, :func:`read_text` and :func:`open_binary` are
the one reader. A file is inspected before it is opened and again on the open
descriptor: only a regular file is read (a FIFO, a device such as a link to
``/dev/zero``, a socket or a folder is refused unopened), its size is checked
against a cap before any byte is read, and at most the cap is ever read. Error
messages name the file as the user or the derivation wrote it and state the
cap with its unit; they never quote the file's bytes.

**Where a derivation may read.** A file named inside a derivation (its
``weights``) or inside an exercise key (its ``derivation``) is resolved with
:func:`within`: relative to the naming file's folder, with ``..`` and symbolic
links resolved, and refused unless the result lies inside that folder or a
folder the user allowed (``--allow-path DIR``, :func:`allow_paths`). An
absolute path is refused the same way. After the file is opened, the path the
descriptor really names is checked again, so a link swapped in between is
caught.

**Writing.** :func:`write_bytes` and :func:`write_text` are the one writer: a
temporary file in the target's folder, flushed to disk, then ``os.replace``:
a reader sees the old file or the new one, never half of it, and a failed
write (a full disk, a read-only folder) leaves nothing behind. A target that
is a stream (``/dev/null``, ``/dev/stdout``, a FIFO) is written in place. An
:class:`OutputFolder` writes a set of files that appear together or not at
all. Every write error is an :class:`OutputError` naming the path and the
operating system's reason (exit code 2). :func:`write_stdout` does the same for
standard output.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import shutil
import signal
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import IO

from symtf import visible
from symtf.errors import SpecError, SymtfError

#: Articles: files ``symtf check`` drafts before checking (by suffix; ``symtf.draft`` reads them).
ARTICLE_SUFFIXES = (".md", ".markdown", ".ipynb", ".tex", ".txt")

#: Programs drafted as articles when named on the command line (never found by a folder
#: search nor collected by the pytest plugin: most programs are not worked examples):
#: a Python file (a marimo notebook or a script), and C-family files, whose comments are read.
PYTHON_SUFFIXES = (".py",)
C_SUFFIXES = (
    ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".cu", ".cuh",
    ".rs", ".go", ".java", ".js", ".ts", ".swift", ".kt", ".scala",
)  # fmt: skip
PROGRAM_SUFFIXES = PYTHON_SUFFIXES + C_SUFFIXES

#: Folders the user allowed derivations to read from besides their own (``--allow-path``).
_ALLOWED: ContextVar[tuple[str, ...]] = ContextVar("symtf_allowed_paths", default=())


class OutputError(SymtfError):
    """A file could not be written (a full disk, a read-only folder, a folder in the way)."""


# ----------------------------------------------------------------------------- sizes


def size_text(n: int) -> str:
    """A byte count for messages: ``2,000,000 bytes (2 MB)``."""
    for unit, k in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= k:
            return f"{n:,} bytes ({n / k:.4g} {unit})"
    return f"{n:,} bytes"


# ----------------------------------------------------------------------------- where to read


@contextlib.contextmanager
def allow_paths(folders: Iterable[str | Path]) -> Iterator[tuple[str, ...]]:
    """Let derivations read files inside these folders too, for the duration of the block.

    Raises:
        SpecError: When a folder is named by an empty or blank string, does not exist or
            is not a folder.
    """
    resolved = []
    for f in folders:
        if not str(f).strip():  # "" would resolve to the working folder: it names none
            raise SpecError(f"--allow-path {f!r}: expected a folder, found an empty name")
        real = os.path.realpath(f)
        if not os.path.isdir(real):
            raise SpecError(f"--allow-path {f}: expected a folder, found {_kind_at(real)}")
        resolved.append(real)
    token = _ALLOWED.set(tuple(resolved))
    try:
        yield tuple(resolved)
    finally:
        _ALLOWED.reset(token)


def allowed() -> tuple[str, ...]:
    """The folders ``--allow-path`` added (resolved)."""
    return _ALLOWED.get()


def _kind_at(path: str) -> str:
    try:
        return _kind(os.stat(path).st_mode)
    except OSError:
        return "nothing"


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def folder_of(name: str | Path) -> Path:
    """The folder a file named ``name`` lives in (resolved); the working folder for ``<string>``."""
    text = str(name)
    if not text or text.startswith("<"):
        return Path(os.path.realpath("."))
    return Path(os.path.realpath(os.path.dirname(os.path.abspath(text))))


def within(
    ref: str, folder: str | Path, key: str, *, place: str | None = None
) -> tuple[Path, tuple[str, ...]]:
    """Resolve a file name written in a file whose folder is ``folder``.

    Args:
        ref: The name as written (``model.npz``, ``sub/w.npy``).
        folder: The naming file's folder (see :func:`folder_of`).
        key: Where the name is written, for messages (``weights``).
        place: What the folder is, for messages (default: the folder of the file that
            names it).

    Returns:
        The resolved path, and the folders it may lie in (for :func:`open_binary`).

    Raises:
        SpecError: For an empty name, a NUL byte, an absolute path, or a path that
            resolves outside the folder (through ``..`` or a symbolic link), unless an
            ``--allow-path`` folder holds it.
    """
    if not ref or "\x00" in ref or len(ref) > 4096:
        raise SpecError(f"{key}: expected a file name, found {_quote(ref)}")
    base = os.path.realpath(folder)
    place = place or f"the folder of the file that names it ({base})"
    roots = (base, *allowed())
    real = os.path.realpath(os.path.join(base, ref))
    # An absolute path is portable nowhere: only a folder the user allowed may hold one.
    if any(_inside(real, r) for r in (roots[1:] if os.path.isabs(ref) else roots)):
        return Path(real), roots
    if os.path.isabs(ref):
        raise SpecError(
            f"{key}: {_quote(ref)} is an absolute path; name the file relative to {place}, "
            "or allow its folder with --allow-path DIR"
        )
    how = "a path through '..'" if ".." in Path(ref).parts else "a symbolic link"
    raise SpecError(
        f"{key}: {_quote(ref)} is {how} that leads outside {place}; symtf reads only files "
        "inside it (allow another folder with --allow-path DIR)"
    )


def _quote(s: str) -> str:
    return repr(s[:200])  # repr spells out control and reordering characters


# ----------------------------------------------------------------------------- reading


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _judge(st: os.stat_result, cap: int, name: str, what: str) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise SpecError(f"{name}: expected {what} (a regular file), found {_kind(st.st_mode)}")
    if st.st_size > cap:
        raise SpecError(
            f"{name}: expected {what} of at most {size_text(cap)}, found {size_text(st.st_size)}"
        )


def _cannot_read(name: str, e: OSError) -> SpecError:
    return SpecError(f"{name}: cannot read the file ({e.strerror or type(e).__name__})")


class _Capped(io.RawIOBase):
    """A read-only view of a descriptor that never reads past ``cap`` bytes."""

    def __init__(self, fd: int, cap: int, name: str, what: str) -> None:
        super().__init__()
        self._fd, self._cap, self._name, self._what = fd, cap, name, what

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, b: memoryview) -> int:  # type: ignore[override]
        pos = os.lseek(self._fd, 0, os.SEEK_CUR)
        room = self._cap + 1 - pos
        if room <= 0:
            raise SpecError(
                f"{self._name}: expected {self._what} of at most {size_text(self._cap)}, "
                "found more (it grew while it was read)"
            )
        view = memoryview(b)[: min(len(b), room)]
        n = os.readv(self._fd, [view])
        if pos + n > self._cap:
            raise SpecError(
                f"{self._name}: expected {self._what} of at most {size_text(self._cap)}, "
                "found more (it grew while it was read)"
            )
        return n

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return os.lseek(self._fd, offset, whence)

    def tell(self) -> int:
        return os.lseek(self._fd, 0, os.SEEK_CUR)

    def fileno(self) -> int:
        return self._fd

    def close(self) -> None:
        if not self.closed:
            with contextlib.suppress(OSError):
                os.close(self._fd)
        super().close()


def _real_path_of(fd: int) -> str | None:
    """The path an open descriptor names (Linux ``/proc``), or ``None`` where unknown."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


@contextlib.contextmanager
def open_binary(
    path: str | Path,
    cap: int,
    *,
    name: str | None = None,
    what: str = "a file",
    roots: tuple[str, ...] | None = None,
) -> Iterator[IO[bytes]]:
    """Open a regular file of at most ``cap`` bytes for reading (buffered, seekable).

    Args:
        path: The file (symbolic links are followed, then judged by what they name).
        cap: The largest size accepted, in bytes; never more is read.
        name: How messages name the file (default: ``path`` as given).
        what: What the file should be, for messages (``a derivation``).
        roots: Folders the file must lie in (from :func:`within`), checked again on the
            open descriptor; ``None`` for a file the user named.

    Raises:
        SpecError: Naming the file, when it is missing, unreadable, not a regular
            file, larger than ``cap``, or (with ``roots``) not inside them once opened.
    """
    name = str(path) if name is None else name
    try:
        _judge(os.stat(path), cap, name, what)
    except OSError as e:
        raise _cannot_read(name, e) from None
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise _cannot_read(name, e) from None
    raw = _Capped(fd, cap, name, what)
    try:
        _judge(os.fstat(fd), cap, name, what)  # what was opened, not what was looked at
        if roots is not None:
            real = _real_path_of(fd)
            if real is not None and not any(_inside(real, r) for r in roots):
                raise SpecError(
                    f"{name}: the file changed while it was opened and now lies outside "
                    "the folder of the file that names it"
                )
        with io.BufferedReader(raw, buffer_size=1 << 16) as f:
            yield f
    except OSError as e:
        raise _cannot_read(name, e) from None
    finally:
        raw.close()


def read_bytes(
    path: str | Path,
    cap: int,
    *,
    name: str | None = None,
    what: str = "a file",
    roots: tuple[str, ...] | None = None,
) -> bytes:
    """The bytes of a regular file of at most ``cap`` bytes (see :func:`open_binary`)."""
    with open_binary(path, cap, name=name, what=what, roots=roots) as f:
        return f.read(cap + 1)


def read_text(
    path: str | Path,
    cap: int,
    *,
    name: str | None = None,
    what: str = "a file",
    roots: tuple[str, ...] | None = None,
) -> str:
    """A UTF-8 text file of at most ``cap`` bytes (see :func:`open_binary`).

    Raises:
        SpecError: As :func:`open_binary`, and for bytes that are not UTF-8 (by offset).
    """
    name = str(path) if name is None else name
    raw = read_bytes(path, cap, name=name, what=what, roots=roots)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SpecError(
            f"{name}: expected UTF-8 text, found an undecodable byte at offset {e.start}"
        ) from None


# ----------------------------------------------------------------------------- writing


def _cannot_write(shown: str, e: OSError) -> OutputError:
    reason = e.strerror or type(e).__name__
    if isinstance(e, IsADirectoryError):
        reason = "it is a folder; name a file"
    elif isinstance(e, (NotADirectoryError, FileExistsError)) or e.errno == errno.ENOTDIR:
        reason = f"{e.strerror or 'not a folder'}: a part of the path is a file, not a folder"
    return OutputError(f"{shown}: cannot write the file ({reason})")


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _make_folder(folder: Path, shown: str) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise _cannot_write(shown, e) from None
    if not folder.is_dir():
        raise OutputError(f"{shown}: cannot write the file ({folder} is not a folder)")


def _stream(path: Path) -> bool:
    """Whether ``path`` names a stream to write in place (a device, a FIFO, a socket)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def write_bytes(path: str | Path, data: bytes, *, name: str | None = None) -> Path:
    """Write ``data`` to ``path`` atomically (see the module docstring).

    The folder is created if needed. An existing file keeps its permissions; a new
    one gets the usual ``0o666`` less the umask. A symbolic link at ``path`` is
    replaced by the file, never written through.

    Raises:
        OutputError: Naming the path and the reason (no room, read-only, a folder in the way).
    """
    p = Path(path)
    shown = str(path) if name is None else name
    if _stream(p):
        return _write_stream(p, data, shown)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise _cannot_write(shown, e) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{shown}: cannot write the file (it is a folder; name a file)")
    _make_folder(p.parent, shown)
    mode = (
        stat.S_IMODE(st.st_mode)
        if st is not None and stat.S_ISREG(st.st_mode)
        else 0o666 & ~_umask()
    )
    try:
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".symtf-", suffix=".tmp")
    except OSError as e:
        raise _cannot_write(shown, e) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, p)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise _cannot_write(shown, e) from None
        raise
    return p


def write_text(path: str | Path, text: str, *, name: str | None = None) -> Path:
    """Write UTF-8 text to ``path`` atomically (see :func:`write_bytes`)."""
    return write_bytes(path, text.encode("utf-8", "surrogateescape"), name=name)


def _write_stream(p: Path, data: bytes, shown: str) -> Path:
    flags = os.O_WRONLY | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(p, flags)
    except OSError as e:
        raise _cannot_write(shown, e) from None
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
    except OSError as e:
        raise _cannot_write(shown, e) from None
    finally:
        os.close(fd)
    return p


def write_stdout(text: str) -> None:
    """Write ``text`` to standard output and flush it.

    Every command's output passes here, so a control character a renderer let through
    (it should not) is spelled out before it reaches a terminal (:mod:`symtf.visible`;
    newlines and tabs are kept).

    Raises:
        OutputError: When standard output cannot take it (``> /dev/full``); a closed
            pipe (``| head``) is left to the caller as :class:`BrokenPipeError`.
    """
    try:
        sys.stdout.write(visible.block(text, tabs=True))
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as e:
        discard_stdout()
        raise OutputError(f"standard output: cannot write ({e.strerror or e})") from None


def progress(message: str) -> None:
    """A note for the user on standard error (``wrote out.html``); a closed stderr is ignored.

    Control and reordering characters (a file named with an escape sequence) are spelled
    out as Python writes them (:func:`symtf.visible.block`: newlines are kept).
    """
    say(message)


def say(message: str) -> None:
    """A line on standard error with every control character spelled out (a message, a
    warning, an error: all of symtf's own writes to stderr pass here); a closed stderr is
    ignored (nothing more can be done)."""
    with contextlib.suppress(OSError, ValueError):
        print(visible.block(message), file=sys.stderr, flush=True)


def discard_stdout() -> None:
    """Point standard output at ``/dev/null``, so that what is still buffered cannot fail at exit."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


# ----------------------------------------------------------------------------- sets of files

_COMMIT_SIGNALS = {signal.SIGINT, signal.SIGTERM} | (
    {signal.SIGHUP, signal.SIGALRM} if hasattr(signal, "SIGHUP") else set()
)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold the interrupting signals for a short block (they are delivered after it)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _COMMIT_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class OutputFolder:
    """Files written into one folder together: after the block, all of them are there or none.

    Each file is first written into a hidden staging folder inside the target
    folder; when the block ends without an error, every file is moved into place
    with ``os.replace`` while SIGINT and SIGTERM are held back, then the staging
    folder is removed. On any error, interrupt or signal, the staging folder is
    removed and the folder is as it was (a folder the block created is removed
    again if it is empty).

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp()) / "out"
        >>> with OutputFolder(d) as out:
        ...     _ = out.write_text("a.txt", "a")
        >>> sorted(p.name for p in d.iterdir())
        ['a.txt']
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.names: list[str] = []
        self._staging: Path | None = None
        self._created = False

    def __enter__(self) -> OutputFolder:
        shown = str(self.folder)
        if self.folder.exists() and not self.folder.is_dir():
            raise OutputError(f"{shown}: cannot write into it (expected a folder, found a file)")
        self._created = not self.folder.exists()
        _make_folder(self.folder, shown)
        try:
            self._staging = Path(tempfile.mkdtemp(dir=self.folder, prefix=".symtf-"))
        except OSError as e:
            self._undo()
            raise _cannot_write(shown, e) from None
        return self

    def path(self, name: str) -> Path:
        """Where a file of the set is staged (for a tool that writes it itself)."""
        assert self._staging is not None
        if name not in self.names:
            self.names.append(name)
        return self._staging / name

    def final(self, name: str) -> Path:
        """Where a file of the set will be once the set is written."""
        return self.folder / name

    def write_bytes(self, name: str, data: bytes) -> Path:
        """Stage one file of the set."""
        staged = self.path(name)
        try:
            with open(staged, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        except OSError as e:
            raise _cannot_write(str(self.final(name)), e) from None
        return self.final(name)

    def write_text(self, name: str, text: str) -> Path:
        """Stage one text file of the set (UTF-8)."""
        return self.write_bytes(name, text.encode("utf-8", "surrogateescape"))

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        try:
            if kind is None:
                self._commit()
        finally:
            self._undo()

    def _commit(self) -> None:
        assert self._staging is not None
        for name in self.names:
            if (self.folder / name).is_dir() and not (self.folder / name).is_symlink():
                raise OutputError(f"{self.folder / name}: cannot write the file (it is a folder)")
        mask = _umask()
        with signals_held():
            for name in self.names:
                staged = self._staging / name
                if not staged.exists():
                    continue
                try:
                    os.chmod(staged, 0o666 & ~mask)
                    os.replace(staged, self.folder / name)
                except OSError as e:
                    raise _cannot_write(str(self.folder / name), e) from None

    def _undo(self) -> None:
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)
            self._staging = None
        if self._created:
            with contextlib.suppress(OSError):
                self.folder.rmdir()  # only if it is still empty


__all__ = [
    "OutputError",
    "OutputFolder",
    "allow_paths",
    "allowed",
    "discard_stdout",
    "folder_of",
    "open_binary",
    "progress",
    "read_bytes",
    "read_text",
    "size_text",
    "within",
    "write_bytes",
    "write_stdout",
    "write_text",
]
