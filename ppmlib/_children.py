"""Child processes that die with their parent, and the descendants of this process.

A Stan fit, or the report's kernel, starts processes of its own: httpstan's worker pool, CmdStan's
chains, a Jupyter kernel. When the process that started them is killed (SIGKILL cannot be caught),
nothing stops them; they keep running, holding memory and the caller's stdout. On Linux a process
can ask the kernel to send it a signal when its parent dies (``prctl(PR_SET_PDEATHSIG)``):
:func:`die_with_parent` asks for SIGKILL, and is called in every child ppmlib starts. The request
is tied to the *thread* that started the child, so children are started from long-lived threads
(the PyStan worker thread, the main thread). Elsewhere (macOS, Windows) it does nothing.

:func:`descendants` and :func:`kill_descendants` find and stop every process below this one (by
walking ``/proc``): the command calls the latter when a signal stops it, before it exits.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys
from pathlib import Path

_PR_SET_PDEATHSIG = 1
_PROC = Path("/proc")


def die_with_parent(parent: int | None = None) -> bool:
    """Ask the kernel to SIGKILL this process when its parent dies (Linux); True when asked.

    Call it first thing in a child (a ``preexec_fn``, a pool's initializer). ``parent`` is the pid
    the child expects as its parent: if that one died before the request was made (the child was
    already re-parented), the child exits at once.

    Parameters
    ----------
    parent : int, optional
        The expected parent's pid.

    Returns
    -------
    bool
        False where ``prctl`` is not available (not Linux).
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    if parent is not None and os.getppid() != parent:
        os._exit(1)
    return True


def _parent_of(pid: int) -> int | None:
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # the command name (field 2) is in parentheses and may hold spaces: split after the last ')'
    return int(stat.rsplit(")", 1)[1].split()[1])


def descendants(pid: int | None = None) -> list[int]:
    """Every process below ``pid`` (children, their children, ...), from ``/proc``; [] without it.

    Parameters
    ----------
    pid : int, optional
        Default: this process.

    Returns
    -------
    list of int
        The pids, parents before their children.
    """
    pid = os.getpid() if pid is None else pid
    if not _PROC.is_dir():
        return []
    children: dict[int, list[int]] = {}
    for entry in _PROC.iterdir():
        if entry.name.isdigit():
            parent = _parent_of(int(entry.name))
            if parent is not None:
                children.setdefault(parent, []).append(int(entry.name))
    found, queue = [], [pid]
    while queue:
        for child in children.get(queue.pop(0), []):
            found.append(child)
            queue.append(child)
    return found


def kill_descendants(pid: int | None = None) -> int:
    """SIGKILL every process below ``pid`` (default: this one); returns how many were signalled."""
    killed = 0
    for child in reversed(descendants(pid)):
        try:
            os.kill(child, signal.SIGKILL)
            killed += 1
        except (ProcessLookupError, PermissionError):
            pass
    return killed
