"""Where the command writes: a checked ``--out``, a lock, a private staging folder, one atomic publication.

The rules, all checked before any work starts (:func:`check_out`):

* ``--out`` is absent, or an empty folder, or (with ``overwrite``) a previous release of the
  command, recognized by its manifest; nothing else is ever replaced or deleted;
* it is not a symbolic link, not the working directory or a folder above it, not the folder of
  an input file or a folder above it, and the folder that holds it exists and can be written.

:class:`Staging` then takes a lock beside ``--out`` (a second run into the same ``--out`` fails at
once, naming the first), makes a private (0700) staging folder beside it, where everything the run
writes goes (the release, the report, the report's inputs), and :meth:`Staging.publish` renames
the finished release into place in one step: ``--out`` holds the old release or the new one, never
a mix, never a half. The staging folder is removed on every way out (:meth:`Staging.close`);
after a SIGKILL, a watchdog process removes its confidential part at once (the report's inputs,
the report) and ``ppmlib._leftovers`` lets the next run remove the rest.
"""
from __future__ import annotations

__all__ = ["WRITTEN_BY", "RELEASE_FILES", "MANIFEST", "REPORT_MARK", "OutputRefused", "OutputBusy", "is_release",
           "is_report", "check_out", "check_report", "default_report", "signals_held", "Staging", "stop_now", "on_signals",
           "sweep"]

import errno
import fcntl
import json
import os
import shutil
import signal
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from ppmlib import _children, _leftovers
from ppmlib._files import exchange_paths
from ppmlib.errors import PPMError

#: the manifest key and value that mark a folder as this command's release
WRITTEN_BY = "ppm-synthesize"
#: the files a release folder holds: one CSV per dataset (synthetic_1.csv ...) or one synthetic.parquet,
#: and the manifest (:func:`ppmlib.release.tables.is_release_file`); synthetic.csv is the earlier layout
RELEASE_FILES = ("synthetic_<k>.csv", "synthetic.parquet", "synthetic.csv", "synthetic.json")
MANIFEST = "synthetic.json"
#: the mark the report carries in its <head>, so --overwrite can recognize a previous report
REPORT_MARK = '<meta name="generator" content="ppm-synthesize confidential report">'
STAGING_TAG = ".ppm-staging-"
LOCK_TAG = ".ppm-lock"


class OutputRefused(PPMError, ValueError):
    """``--out`` (or the report's path) names something the command must not write to."""


class OutputBusy(OutputRefused):
    """Another run holds the lock on the same ``--out``."""


# ---------------------------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------------------------

def is_release(folder: Path) -> bool:
    """True when ``folder`` holds a release of this command and nothing else.

    Parameters
    ----------
    folder : pathlib.Path

    Returns
    -------
    bool
        Its entries are regular files among :data:`RELEASE_FILES`, the manifest among them, and the
        manifest says ``"written_by": "ppm-synthesize"``.
    """
    try:
        entries = list(folder.iterdir())
    except OSError:
        return False
    if not entries or any(not _release_name(e.name) or e.is_symlink() or not e.is_file() for e in entries):
        return False
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and manifest.get("written_by") == WRITTEN_BY


def _release_name(name: str) -> bool:
    """A file name a release of this command holds (today's layout, or the earlier synthetic.csv)."""
    from ppmlib.release.tables import is_release_file
    return is_release_file(name) or name == "synthetic.csv"


def is_report(path: Path) -> bool:
    """True when ``path`` is a regular file written as the command's report (it carries :data:`REPORT_MARK`).

    Parameters
    ----------
    path : pathlib.Path

    Returns
    -------
    bool
    """
    if path.is_symlink() or not path.is_file():
        return False
    with open(path, "rb") as handle:
        return REPORT_MARK.encode() in handle.read(200_000)


def _path(value, what: str) -> Path:
    if not isinstance(value, (str, os.PathLike)) or not isinstance(os.fspath(value), str):
        raise TypeError(f"{what}= must be a folder path (str or PathLike), got {type(value).__name__}")
    text = os.fspath(value)
    if not text.strip():
        raise OutputRefused(f"{what}= is empty ({text!r}); name the folder to write")
    return Path(os.path.abspath(text))


def _is_within(inner: Path, outer: Path) -> bool:
    return inner == outer or outer in inner.parents


def _not_around(path: Path, what: str, inputs) -> None:
    """Refuse a path that is, or holds, the working directory or an input file."""
    real = path.resolve()
    if _is_within(Path.cwd().resolve(), real):
        raise OutputRefused(f"{what}={str(path)!r} is the working directory or a folder above it; "
                            "name a new folder for the release")
    for source in inputs:
        source = Path(source).resolve()
        if _is_within(source, real):
            raise OutputRefused(f"{what}={str(path)!r} holds the input file {str(source)!r}; name a new folder "
                                "for the release")


def _writable_parent(path: Path, what: str) -> None:
    parent = path.parent
    if not parent.is_dir():
        raise OutputRefused(f"the folder that would hold {what}={str(path)!r}, {str(parent)!r}, does not exist; "
                            "create it first")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputRefused(f"{what}={str(path)!r} cannot be written: its folder {str(parent)!r} is not writable")


def check_out(out, *, inputs=(), overwrite: bool = False, what: str = "out") -> Path:
    """``out`` as an absolute path, once it is safe to publish a release there (module docstring).

    Parameters
    ----------
    out : str or PathLike
        The release folder.
    inputs : sequence of path
        The input files: ``out`` may not be their folder or a folder above it.
    overwrite : bool
        Allow ``out`` to be a previous release of this command (and only that).
    what : str
        How messages name ``out``.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    OutputRefused
        Any rule of the module docstring is broken (the message says which).
    TypeError
        ``out`` is not a path.
    """
    path = _path(out, what)
    if path.is_symlink():
        raise OutputRefused(f"{what}={str(path)!r} is a symbolic link; name a real folder")
    _not_around(path, what, inputs)
    if path.exists():
        if not path.is_dir():
            raise OutputRefused(f"{what}={str(path)!r} is a file, not a folder")
        if any(path.iterdir()):
            if not overwrite:
                raise OutputRefused(f"{what}={str(path)!r} exists and is not empty; choose another folder or pass "
                                    "overwrite=True (which replaces only a previous release of ppm-synthesize)")
            if not is_release(path):
                raise OutputRefused(f"{what}={str(path)!r} holds files ppm-synthesize did not write; overwrite=True "
                                    "replaces only a previous release of ppm-synthesize (its synthetic_<k>.csv or "
                                    "synthetic.parquet and its manifest synthetic.json), never other files")
        if not os.access(path, os.W_OK | os.X_OK):
            raise OutputRefused(f"{what}={str(path)!r} is not writable")
    _writable_parent(path, what)
    return path


def check_report(report, *, out: Path, inputs=(), overwrite: bool = False) -> Path:
    """The report's path, once it is safe to write it: not inside ``out``, not a link, not an
    existing file unless (with ``overwrite``) a previous report of the command.

    Parameters
    ----------
    report : str or PathLike
        Where the report goes.
    out : pathlib.Path
        The release folder (checked by :func:`check_out`).
    inputs : sequence of path
        The input files (never overwritten).
    overwrite : bool
        Allow replacing a previous report of the command.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    OutputRefused
    """
    path = _path(report, "report")
    if _is_within(path.resolve(), out.resolve()):
        raise OutputRefused(f"report={str(path)!r} is inside out=: the report shows summaries of the confidential "
                            "data and must not sit with the files meant for publication")
    if path.is_symlink():
        raise OutputRefused(f"report={str(path)!r} is a symbolic link; name a new file")
    if any(path.resolve() == Path(source).resolve() for source in inputs):
        raise OutputRefused(f"report={str(path)!r} is the input file")
    if path.exists():
        if path.is_dir():
            raise OutputRefused(f"report={str(path)!r} is a folder; name a file, e.g. {str(path / 'report.html')!r}")
        if not overwrite:
            raise OutputRefused(f"report={str(path)!r} exists; choose another name or pass overwrite=True (which "
                                "replaces only a previous report of ppm-synthesize)")
        if not is_report(path):
            raise OutputRefused(f"report={str(path)!r} is not a report of ppm-synthesize; overwrite=True never "
                                "replaces other files")
    _writable_parent(path, "report")
    return path


def default_report(out: Path) -> Path:
    """The report's default path: beside ``out``, named as not for publication.

    Parameters
    ----------
    out : pathlib.Path

    Returns
    -------
    pathlib.Path
        ``<out>.report-confidential.html``.
    """
    return out.with_name(out.name + ".report-confidential.html")


# ---------------------------------------------------------------------------------------------
# the lock, the staging folder and the publication
# ---------------------------------------------------------------------------------------------

def _lock(path: Path) -> int:
    """An exclusive lock on ``path`` (created 0600), as an open descriptor; OutputBusy when held."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise OutputBusy(f"another run (process {holder}) is writing to the same out= folder; wait for it to finish "
                             "or choose another folder") from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:   # not a file that its previous holder removed after we opened it
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode())
            return fd
        os.close(fd)




@contextmanager
def signals_held():
    """Hold SIGINT, SIGTERM and SIGHUP while the block runs (they are delivered after it).

    Yields
    ------
    None
        Inside the block the signals wait; outside the main thread nothing is held.
    """
    held = {getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)}
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    except (ValueError, OSError, AttributeError):   # not the main thread, or no such call
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


# A process that outlives a SIGKILLed run: it blocks on a pipe only the run holds open, and when the
# run dies (EOF) it removes the confidential files in staging (the report's inputs, the report).
# The rest of the staging folder is the next run's to sweep (ppmlib._leftovers).
_WATCH = ("import os, shutil, sys\n"
          "while os.read(0, 1):\n    pass\n"
          "for p in sys.argv[1:]:\n"
          "    shutil.rmtree(p, ignore_errors=True) if os.path.isdir(p) else os.path.exists(p) and os.unlink(p)\n")


def _watchdog(*paths: Path):
    """Start the watchdog over ``paths`` (None where it cannot start: the run's own cleanup still holds)."""
    import subprocess
    import sys
    try:
        return subprocess.Popen([sys.executable, "-S", "-c", _WATCH, *map(str, paths)], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        return None


def _release_watchdog(watch) -> None:
    """Close the watchdog's pipe (it removes what is left of its paths, here nothing, and exits)."""
    if watch is None:
        return
    import subprocess
    watch.stdin.close()
    try:
        watch.wait(timeout=5)
    except subprocess.TimeoutExpired:
        watch.kill()


class Staging:
    """The lock on ``out`` and a private staging folder beside it, until :meth:`close`.

    ``release`` (a folder) receives the release and ``private`` (a folder) everything else the
    run writes; ``report`` is the report's file in staging. Use as a context manager.

    Parameters
    ----------
    out : pathlib.Path
        The checked release folder (:func:`check_out`).
    report : pathlib.Path or None
        The checked report path (:func:`check_report`), or None for no report.
    overwrite : bool
        Whether a previous release (and report) may be replaced.
    """

    def __init__(self, out: Path, report: Path | None = None, *, overwrite: bool = False, inputs=()):
        self.out, self.report_target, self.overwrite, self.inputs = out, report, overwrite, tuple(inputs)
        self.published = False
        lock_path = out.with_name(f".{out.name}{LOCK_TAG}")
        _leftovers.register(lock_path)
        self._lock_path, self._lock = lock_path, _lock(lock_path)
        try:
            # checked again under the lock: another run may have published here since the first check
            check_out(out, inputs=self.inputs, overwrite=overwrite)
            self.folder = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}{STAGING_TAG}{os.getpid()}-"))
            _leftovers.register(self.folder)
        except BaseException:
            self._unlock()
            raise
        self.release = self.folder / "release"
        self.release.mkdir()
        self.private = self.folder / "private"
        self.private.mkdir(mode=0o700)
        self.report = self.folder / "report.html"
        self._watch = _watchdog(self.private, self.report)

    def __enter__(self) -> "Staging":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _unlock(self) -> None:
        if self._lock is None:
            return
        self._lock_path.unlink(missing_ok=True)   # still holding it: no other run can have it
        os.close(self._lock)
        self._lock = None
        _leftovers.unregister(self._lock_path)

    def close(self) -> None:
        """Remove the staging folder and release the lock (every way out of a run goes through here)."""
        with signals_held():
            if getattr(self, "folder", None) is not None:
                shutil.rmtree(self.folder, ignore_errors=True)
                _leftovers.unregister(self.folder)
                self.folder = None
            self._unlock()
            _release_watchdog(getattr(self, "_watch", None))
            self._watch = None

    def publish(self) -> None:
        """Put the report and then the release in place, each by one rename (module docstring).

        Raises
        ------
        OutputRefused
            ``out`` (or the report's path) changed during the run so that it may no longer be
            replaced; nothing was published.
        """
        with signals_held():
            check_out(self.out, inputs=self.inputs, overwrite=self.overwrite)
            if self.report_target is not None:
                check_report(self.report_target, out=self.out, inputs=self.inputs, overwrite=self.overwrite)
                self._publish_report()
            try:
                self._publish_release()
            except BaseException:
                if self.report_target is not None:
                    self.report_target.unlink(missing_ok=True)   # ours: published a moment ago
                raise
            self.published = True

    def _publish_report(self) -> None:
        target = self.report_target
        if target.parent.resolve() == self.folder.parent.resolve():
            os.replace(self.report, target)
            return
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}{STAGING_TAG}{os.getpid()}-")
        _leftovers.register(tmp)
        try:
            with os.fdopen(fd, "wb") as handle, open(self.report, "rb") as source:
                shutil.copyfileobj(source, handle)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, target)
        finally:
            Path(tmp).unlink(missing_ok=True)
            _leftovers.unregister(tmp)

    def _publish_release(self) -> None:
        out = self.out
        if out.exists() and any(out.iterdir()):
            # a previous release (check_out allowed it): swap it with the new one in one step
            if exchange_paths(self.release, out):
                if not is_release(self.release):      # a file appeared in --out since the check: put it back
                    exchange_paths(self.release, out)
                    raise OutputRefused(f"out={str(out)!r} changed during the run; nothing was replaced")
                return
            old = self.folder / "previous"
            os.rename(out, old)
            os.rename(self.release, out)
            return
        try:
            os.rename(self.release, out)   # onto an absent or empty folder: one step
        except OSError as err:
            if err.errno in (errno.ENOTEMPTY, errno.EEXIST):
                raise OutputRefused(f"out={str(out)!r} received files during the run; they were kept and nothing "
                                    "was published") from None
            raise


# ---------------------------------------------------------------------------------------------
# a run stopped by a signal, and what killed runs left
# ---------------------------------------------------------------------------------------------

def stop_now(signum, frame) -> None:
    """Stop the run at once on SIGINT, SIGTERM or SIGHUP: remove everything this process wrote that is
    still temporary (the staging folder, stored fits, sockets), stop its child processes, exit.

    Done here, in the handler, rather than by unwinding: a fit or a report kernel can hold the
    main thread in third-party code that waits on them, and every second counts when a session
    is closing.

    Parameters
    ----------
    signum : int
        The signal received.
    frame : frame
        The interrupted frame (unused).
    """
    name = signal.Signals(signum).name
    stopped = _children.kill_descendants()
    removed = _leftovers.remove_own()
    # exit handlers do not run after os._exit: cmdstanpy's removes the (empty) folder it makes on import
    cmdstanpy = sys.modules.get("cmdstanpy")
    if getattr(cmdstanpy, "_TMPDIR", None):
        import shutil
        shutil.rmtree(cmdstanpy._TMPDIR, ignore_errors=True)
    print(f"error: stopped by {name}; nothing was written (removed {len(removed)} temporary paths, stopped "
          f"{stopped} child processes)", file=sys.stderr, flush=True)
    os._exit(128 + signum)


def on_signals() -> dict:
    """Install :func:`stop_now` for SIGINT, SIGTERM and SIGHUP.

    Returns
    -------
    dict
        Signal name -> the handler it replaced (to restore when the run ends).
    """
    previous = {}
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            previous[name] = signal.signal(getattr(signal, name), stop_now)
    return previous


def sweep() -> None:
    """Remove what killed runs left (staging folders, stored fits, sockets) and say so."""
    for path in _leftovers.sweep():
        print(f"removed {path}, left by a killed run", file=sys.stderr)
