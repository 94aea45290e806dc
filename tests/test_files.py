"""Atomic writes: a failed write leaves the old file and no temporary file behind."""
import os

import pytest

from ppmlib._files import write_text_atomically


def test_write_replaces_the_file_whole(tmp_path):
    target = tmp_path / "sub" / "data.csv"
    write_text_atomically(target, "a,b\n1,2\n")
    write_text_atomically(target, "a,b\n3,4\n")
    assert target.read_text() == "a,b\n3,4\n" and sorted(p.name for p in target.parent.iterdir()) == ["data.csv"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "data.csv"
    target.write_text("old\n")

    def refuse(src, dst):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        write_text_atomically(target, "new\n")
    assert target.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["data.csv"]
