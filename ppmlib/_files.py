"""Writing files so that a reader never finds a half-written one."""
from __future__ import annotations

import ctypes
import errno
import os
import secrets
import tempfile
from pathlib import Path


def _written_temp(path: Path, text: str) -> str:
    """``text`` in a new temporary file beside ``path``, flushed to disk; returns its name."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def _backup(path: Path) -> str:
    """A second name for the existing file ``path`` (a hard link; a copy where links are not
    supported), so that it can be put back if a later step fails."""
    backup = str(path.parent / f".{path.name}.{secrets.token_hex(6)}.bak")
    try:
        os.link(path, backup)
    except OSError:
        import shutil
        shutil.copy2(path, backup)
    return backup


def _fsync_folder(folder: Path) -> None:
    """Make a folder's renames durable (a rename is in the folder, not in the file)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_texts_atomically(contents: dict) -> None:
    """Write every (path, text) pair, renamed into place in the given order, or change nothing.

    The steps: each text to a temporary file beside its target, fsynced; a backup name for each
    target that exists; the renames, in order; the folders fsynced; the backups removed. If any
    step raises, every target is put back as it was (restored from its backup, or removed if it
    did not exist) and no temporary file is left. A crash of the process between two renames
    cannot be undone from here: a caller writing several files puts the check in the last one
    (a release's manifest names the hash of its CSV, so a reader can tell a torn pair).
    """
    paths = [Path(p) for p in contents]
    temps, backups, renamed = {}, {}, []
    try:
        for path, text in zip(paths, contents.values()):
            temps[path] = _written_temp(path, text)
        for path in paths:
            if path.exists():
                backups[path] = _backup(path)
        for path in paths:
            os.replace(temps[path], path)
            del temps[path]
            renamed.append(path)
        for folder in dict.fromkeys(p.parent for p in paths):
            _fsync_folder(folder)
    except BaseException:
        for path in reversed(renamed):  # put back what was there before
            if path in backups:
                os.replace(backups.pop(path), path)
            else:
                path.unlink(missing_ok=True)
        for leftover in [*temps.values(), *backups.values()]:
            Path(leftover).unlink(missing_ok=True)
        raise
    for backup in backups.values():
        os.unlink(backup)


def write_text_atomically(path, text: str) -> Path:
    """Write ``text`` to ``path`` (creating its folder): the file is either the old one or the
    complete new one, never a partial write."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_texts_atomically({path: text})
    return path


#: renameat2's flag that swaps the two paths
_RENAME_EXCHANGE = 2


def exchange_paths(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux renameat2 RENAME_EXCHANGE); False where not supported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_cwd = -100
    if renameat2(at_cwd, os.fsencode(a), at_cwd, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))
