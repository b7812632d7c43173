"""`grade.batches.folder` items: the grader takes bytes, and a file that cannot be read is a row."""

from __future__ import annotations

from pathlib import Path

import pytest

from lessonkit.grade.batches.folder import BatchItem, read_item, read_items


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


def test_grade_each_keeps_item_order_and_tells_what_is_left():
    """The pool every batch grades through: results in item order, whatever order they
    finish in; `on_take` hears how many wait after each item taken, `on_done` each result."""
    import time

    from lessonkit.grade.batches.pool import grade_each

    left: list[int] = []
    done: list[int] = []

    def slow_first(n: int) -> int:
        time.sleep(0.05 if n == 0 else 0)
        return n * n

    results = grade_each([0, 1, 2, 3], slow_first, jobs=2, on_done=done.append, on_take=left.append)
    assert results == (0, 1, 4, 9)
    assert sorted(left) == [0, 1, 2, 3] and sorted(done) == [0, 1, 4, 9]


def test_grade_each_stops_at_an_exception_a_grade_one_raises():
    """The lesson cannot be graded (its reference fails): no more items are taken, and the
    exception is raised in the caller."""
    from lessonkit.grade.batches.pool import grade_each

    taken: list[int] = []

    def fails_on_one(n: int) -> int:
        taken.append(n)
        if n == 1:
            raise RuntimeError("the reference failed")
        return n

    with pytest.raises(RuntimeError, match="the reference failed"):
        grade_each(list(range(10)), fails_on_one, jobs=1)
    assert taken == [0, 1]


@pytest.mark.parametrize("given_stop", [False, True])
def test_a_result_that_ends_after_ctrl_c_is_never_kept(given_stop):
    """Ctrl-C counts what the journal keeps, and then says so: an item in flight that ends
    after it (its child killed, or its run just done) must not reach `on_done` behind the
    count's back (CI once said "1 of 6 kept" over a journal that kept 2)."""
    import signal
    import threading

    from lessonkit.grade.batches.pool import grade_each

    release = threading.Event()
    done: list[int] = []
    ended = threading.Event()

    def grade_one(n: int) -> int:
        if n == 1:
            # Ctrl-C while item 1 is in flight, to this very process's main thread
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
            release.wait(10)
            ended.set()
        return n

    stop = threading.Event() if given_stop else None
    if given_stop:
        threading.Timer(0.2, release.set).start()  # a grade-one that honours stop, ending
    with pytest.raises(KeyboardInterrupt):
        grade_each([0, 1, 2], grade_one, jobs=1, on_done=done.append, stop=stop)
    release.set()
    assert ended.wait(10)
    time_for_a_late_keep = threading.Event()
    time_for_a_late_keep.wait(0.2)
    assert done == [0]
