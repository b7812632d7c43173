"""`grade.batch_folder` items: the grader takes bytes, and a file that cannot be read is a row."""

from __future__ import annotations

from pathlib import Path

import pytest

from lessonkit.grade.batch_folder import BatchItem, read_item, read_items


def test_an_item_holds_its_bytes_or_why_it_has_none():
    assert BatchItem(Path("7/alice.py"), b"x = 1\n").problem is None
    assert BatchItem(Path("a.py"), problem="unreadable").data is None
    with pytest.raises(ValueError):
        BatchItem(Path("a.py"))
    with pytest.raises(ValueError):
        BatchItem(Path("a.py"), b"", problem="both")


def test_items_are_read_below_their_folder_without_links(tmp_path):
    folder = tmp_path / "class"
    (folder / "bob").mkdir(parents=True)
    (folder / "bob" / "b.py").write_bytes(b"b = 2\n")
    (tmp_path / "secret.py").write_bytes(b"token = 1\n")
    (folder / "eve.py").symlink_to(tmp_path / "secret.py")
    bob, eve = read_items([folder / "bob" / "b.py", folder / "eve.py"], folder)
    assert (bob.path, bob.data, bob.problem) == (folder / "bob" / "b.py", b"b = 2\n", None)
    assert eve.data is None and "symbolic link" in (eve.problem or "")
    outside = read_item(tmp_path / "secret.py", folder)
    assert outside.data is None and "outside the batch folder" in (outside.problem or "")
    assert read_item(tmp_path / "secret.py").data == b"token = 1\n"  # no folder: read as given
