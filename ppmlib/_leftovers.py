"""What a killed run leaves on disk, recorded so that the next run (or ``make clean-cache``) removes it.

A process that writes something temporary and possibly confidential (the command's staging
folder, httpstan's stored fits, a CmdStan data file, the chains' socket folder) records its path
here first, in a small file of its own under ``<cache>/running/`` named by its pid and start
time, and forgets it once the path is gone. A normal exit, an error, Ctrl-C, SIGTERM or SIGHUP
remove the paths as they go; only SIGKILL (or a power cut) leaves them, and then the record says
what to remove. :func:`sweep` removes every path recorded by a process that no longer runs and
returns them, so that the caller can say what it removed.

Only paths of the kinds ppmlib writes are ever removed (their names carry ``ppm``, or they are
httpstan fit files), whatever a record file says.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
from pathlib import Path

#: name parts of what ppmlib may remove: staging folders, lock files, temporary folders
_OURS = re.compile(r"(\.ppm-staging-|\.ppm-lock$|^ppmlib-)")


def cache_dir() -> Path:
    """``$PPMLIB_CACHE``, else ``~/.cache/ppmlib`` (read at each call)."""
    return Path(os.environ.get("PPMLIB_CACHE", Path.home() / ".cache" / "ppmlib"))


def _records() -> Path:
    return cache_dir() / "running"


def _start_time(pid: int) -> str | None:
    """The process's start time (clock ticks since boot) from /proc, or None when it does not run.

    A pid alone can be reused by a new process; the pair (pid, start time) cannot.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    except OSError:
        return "?"
    return stat.rsplit(")", 1)[1].split()[19]


def _alive(pid: int, started: str) -> bool:
    if not Path("/proc").is_dir():      # no /proc (macOS): a signal 0 says whether the pid exists
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    now = _start_time(pid)
    return now is not None and (now == started or now == "?")


def _own_record() -> Path:
    pid = os.getpid()
    return _records() / f"{pid}-{_start_time(pid) or 0}.paths"


def register(path) -> None:
    """Record ``path`` (a file or folder this process is about to write) as this process's.

    Parameters
    ----------
    path : str or PathLike
    """
    record = _own_record()
    record.parent.mkdir(parents=True, exist_ok=True)
    with open(record, "a", encoding="utf-8") as handle:
        handle.write(os.path.abspath(path) + "\n")


def unregister(path) -> None:
    """Forget ``path`` (it was removed, or published); the record file goes with its last path.

    Parameters
    ----------
    path : str or PathLike
    """
    record = _own_record()
    try:
        lines = record.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return
    keep = [line for line in lines if line and line != os.path.abspath(path)]
    if keep:
        record.write_text("".join(f"{line}\n" for line in keep), encoding="utf-8")
    else:
        record.unlink(missing_ok=True)


def _removable(path: Path) -> bool:
    """Only what ppmlib writes: a name with one of its markers, or a file of httpstan's fits folder."""
    return bool(_OURS.search(path.name)) or (path.parent.name == "fits" and "httpstan" in str(path))


def _remove_lock(path: Path) -> bool:
    """A lock file goes only when nobody holds it (a live run may have reopened the same file)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return False
    try:
        path.unlink(missing_ok=True)
    finally:
        os.close(fd)
    return True


def _remove(path: Path, own: bool = False) -> bool:
    if not (path.exists() or path.is_symlink()) or not _removable(path):
        return False
    if path.name.endswith(".ppm-lock") and not own:
        return _remove_lock(path)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
    return True


def sweep() -> list[Path]:
    """Remove what processes that no longer run recorded, and their records.

    Returns
    -------
    list of pathlib.Path
        The paths removed (for the caller to report), in the order they were recorded.
    """
    removed = []
    folder = _records()
    if not folder.is_dir():
        return removed
    for record in sorted(folder.glob("*.paths")):
        pid, _, started = record.stem.partition("-")
        if not pid.isdigit() or _alive(int(pid), started):
            continue
        with contextlib.suppress(OSError):
            for line in dict.fromkeys(record.read_text(encoding="utf-8").splitlines()):
                if line and _remove(Path(line)):
                    removed.append(Path(line))
        record.unlink(missing_ok=True)
    return removed


def remove_own() -> list[Path]:
    """Remove everything this process recorded and its record (a run stopped by a signal).

    Returns
    -------
    list of pathlib.Path
        The paths removed.
    """
    record = _own_record()
    try:
        lines = record.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    removed = [Path(line) for line in dict.fromkeys(lines) if line and _remove(Path(line), own=True)]
    record.unlink(missing_ok=True)
    return removed
