"""Writing files so that a reader never finds a half-written one."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_texts_atomically(contents: dict) -> None:
    """Write every (path, text) pair or none: temporary files in each target's folder, then renames.

    If anything fails, the temporary files are removed and the files already renamed are deleted
    again (for a release, half of it is worse than none).
    """
    temps, done = {}, []
    try:
        for path, text in contents.items():
            fd, tmp = tempfile.mkstemp(dir=Path(path).parent, prefix=f".{Path(path).name}.", suffix=".tmp")
            temps[Path(path)] = tmp
            with os.fdopen(fd, "w", newline="", encoding="utf-8") as handle:
                handle.write(text)
        for path, tmp in temps.items():
            os.replace(tmp, path)
            done.append(path)
    except BaseException:
        for tmp in temps.values():
            if os.path.exists(tmp):
                os.unlink(tmp)
        for path in done:
            path.unlink()
        raise


def write_text_atomically(path, text: str) -> Path:
    """Write ``text`` to ``path`` (creating its folder): the file is either the old one or the
    complete new one, never a partial write."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_texts_atomically({path: text})
    return path
