"""Writing files so that a reader never finds a half-written one."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_text_atomically(path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename: the
    file is either the old one or the complete new one, never a partial write."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", newline="") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path
