"""`lessonkit.atomic`: a file is whole or unchanged, no temporary file is left, a named path
is written where it leads (links, FIFOs, devices), and modes follow the umask except where a
file is private."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lessonkit import atomic
from lessonkit.atomic import create_private, destination, write_atomically, write_named


@contextlib.contextmanager
def umask(value: int):
    old = os.umask(value)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_text_is_written_as_utf8_and_bytes_as_they_are(tmp_path):
    write_atomically(tmp_path / "deep" / "a.md", "ü\n")
    write_atomically(tmp_path / "b.bin", b"\x00\xff")
    assert (tmp_path / "deep" / "a.md").read_bytes() == "ü\n".encode()
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\xff"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.bin", "deep"]


@pytest.mark.parametrize("write", [write_atomically, write_named])
def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch, write):
    target = tmp_path / "out.csv"
    target.write_text("old", encoding="utf-8")

    def full_disk(source, destination):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "replace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        write(target, "new")
    assert target.read_text(encoding="utf-8") == "old"
    assert os.listdir(tmp_path) == ["out.csv"]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 0o777))
def test_a_new_file_gets_the_umasks_mode_and_a_private_one_0600(mask):
    with tempfile.TemporaryDirectory() as folder, umask(mask):
        shared, private = Path(folder) / "report.html", Path(folder) / "journal.jsonl"
        write_atomically(shared, "<p>")
        write_atomically(private, "{}", private=True)
        named = Path(folder) / "grades.csv"
        write_named(named, "a,b\n")
        assert mode(shared) == mode(named) == 0o666 & ~mask
        assert mode(private) == 0o600


def test_under_umask_022_outputs_are_0644(tmp_path):
    with umask(0o022):
        write_named(tmp_path / "grades.csv", "a\n")
    assert mode(tmp_path / "grades.csv") == 0o644


def test_a_private_file_replaces_a_readable_one_as_0600(tmp_path):
    target = tmp_path / "journal.jsonl"
    target.write_text("old")
    target.chmod(0o666)
    write_atomically(target, "new", private=True)
    assert (mode(target), target.read_text()) == (0o600, "new")


def test_a_named_regular_file_keeps_its_mode_an_owned_one_gets_the_umasks(tmp_path):
    named, owned = tmp_path / "grades.csv", tmp_path / "feedback.md"
    for path in (named, owned):
        path.write_text("old")
        path.chmod(0o640)
    with umask(0o022):
        write_named(named, "new")
        write_atomically(owned, "new")
    assert (mode(named), named.read_text()) == (0o640, "new")
    assert (mode(owned), owned.read_text()) == (0o644, "new")


def test_a_named_link_is_written_through_and_stays_a_link(tmp_path):
    (tmp_path / "shared").mkdir()
    real = tmp_path / "shared" / "grades.csv"
    real.write_text("old")
    link = tmp_path / "grades.csv"
    link.symlink_to(real)
    write_named(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new"
    assert sorted(os.listdir(tmp_path / "shared")) == ["grades.csv"]  # no temporary left


def test_a_link_to_nothing_makes_its_target(tmp_path):
    link = tmp_path / "report.html"
    link.symlink_to("made.html")
    write_named(link, "<p>")
    assert link.is_symlink() and (tmp_path / "made.html").read_text() == "<p>"


def test_an_owned_file_replaces_a_link_instead_of_following_it(tmp_path):
    """A batch's output folder may be writable by others: a link planted there must not
    send the write elsewhere."""
    elsewhere = tmp_path / "bashrc"
    elsewhere.write_text("mine")
    planted = tmp_path / "out" / "alice.py.md"
    planted.parent.mkdir()
    planted.symlink_to(elsewhere)
    write_atomically(planted, "feedback")
    assert not planted.is_symlink() and planted.read_text() == "feedback"
    assert elsewhere.read_text() == "mine"


@pytest.mark.parametrize("through_link", [False, True], ids=["fifo", "link-to-fifo"])
def test_a_fifo_is_written_in_place_and_stays_a_fifo(tmp_path, through_link):
    """As `--output /dev/stdout` into a pipe is: the pipe gets the bytes, nothing is replaced."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    named = fifo
    if through_link:
        named = tmp_path / "stdout"
        named.symlink_to(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, so opening to write won't wait
    try:
        write_named(named, "a,b\n")
        got = os.read(reader, 100)
    finally:
        os.close(reader)
    assert got == b"a,b\n"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert named.is_symlink() == through_link
    assert sorted(os.listdir(tmp_path)) == sorted({"pipe", named.name})


def test_a_link_to_a_device_is_written_through_and_stays(tmp_path):
    link = tmp_path / "null"
    link.symlink_to(os.devnull)
    write_named(link, b"\x00" * 10)
    assert link.is_symlink() and os.readlink(link) == os.devnull
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    assert os.listdir(tmp_path) == ["null"]


def test_where_each_kind_of_path_is_written(tmp_path):
    regular, fifo, link = tmp_path / "a.csv", tmp_path / "fifo", tmp_path / "link"
    regular.write_text("x")
    os.mkfifo(fifo)
    link.symlink_to(regular)
    (tmp_path / "folder-link").symlink_to(tmp_path)
    real = Path(os.path.realpath(tmp_path))
    assert destination(regular) == atomic.Destination(real / "a.csv", "replace")
    assert destination(tmp_path / "new.csv") == atomic.Destination(real / "new.csv", "replace")
    assert destination(link) == atomic.Destination(real / "a.csv", "replace")
    assert destination(tmp_path / "folder-link" / "a.csv").path == real / "a.csv"
    assert destination(fifo) == atomic.Destination(fifo, "in_place")
    assert destination(Path(os.devnull)) == atomic.Destination(Path(os.devnull), "in_place")
    with pytest.raises(IsADirectoryError):
        destination(tmp_path)


def test_create_private_makes_an_empty_0600_file_once(tmp_path):
    with umask(0):
        assert create_private(tmp_path / "course.sqlite")
    assert mode(tmp_path / "course.sqlite") == 0o600
    (tmp_path / "course.sqlite").write_bytes(b"kept")
    assert not create_private(tmp_path / "course.sqlite")
    assert (tmp_path / "course.sqlite").read_bytes() == b"kept"
