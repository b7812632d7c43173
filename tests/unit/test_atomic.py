"""`write_atomically`: the file is whole or unchanged, and no temporary file is left."""

from __future__ import annotations

import os

import pytest

from lessonkit import atomic
from lessonkit.atomic import write_atomically


def test_text_is_written_as_utf8_and_bytes_as_they_are(tmp_path):
    write_atomically(tmp_path / "deep" / "a.md", "ü\n")
    write_atomically(tmp_path / "b.bin", b"\x00\xff")
    assert (tmp_path / "deep" / "a.md").read_bytes() == "ü\n".encode()
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\xff"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.bin", "deep"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "out.csv"
    target.write_text("old", encoding="utf-8")

    def full_disk(source, destination):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "replace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        write_atomically(target, "new")
    assert target.read_text(encoding="utf-8") == "old"
    assert os.listdir(tmp_path) == ["out.csv"]
