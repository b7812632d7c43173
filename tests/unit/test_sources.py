"""Reading a submission: any file gets a clear message, in bounded time and memory."""

from __future__ import annotations

import json
import os
import time

import pytest

from lessonkit.grade.plan import match_cells
from lessonkit.grade.sources import MAX_BYTES, SubmissionError, read_submission


def _notebook(cells: list) -> str:
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "attempt.py"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(SubmissionError, match="not a regular file"):
        read_submission(fifo)
    assert time.monotonic() - started < 5


def test_a_link_to_an_endless_device_is_refused(tmp_path):
    link = tmp_path / "attempt.py"
    link.symlink_to("/dev/zero")
    with pytest.raises(SubmissionError, match="not a regular file"):
        read_submission(link)


def test_a_symlink_loop_gets_a_message(tmp_path):
    loop = tmp_path / "attempt.py"
    loop.symlink_to(loop)
    with pytest.raises(SubmissionError, match="cannot be opened"):
        read_submission(loop)


def test_a_huge_file_is_refused_after_reading_its_limit_only(tmp_path):
    big = tmp_path / "attempt.py"
    big.write_bytes(b"#" * (MAX_BYTES + 10))
    with pytest.raises(SubmissionError, match="far smaller"):
        read_submission(big)


@pytest.mark.parametrize(
    ("content", "pattern"),
    [
        (
            _notebook([{"cell_type": "code", "source": [1, 2]}]),
            r"code cell \[1\]'s source is not text",
        ),
        (
            _notebook([{"cell_type": "code", "source": None}]),
            r"code cell \[1\]'s source is not text",
        ),
        ('{"cells": ' * 100_000 + "[]" + "}" * 100_000, "nests too deeply|not a notebook"),
        ('{"cells": [], "n": ' + "9" * 5000 + "}", "enormous number"),
    ],
)
def test_malformed_notebooks_get_a_message(tmp_path, content, pattern):
    path = tmp_path / "attempt.ipynb"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(SubmissionError, match=pattern):
        read_submission(path)


def test_cells_split_where_python_ends_lines(tmp_path):
    """U+2028 is no line end for Python, so it cannot start a `# %%` cell either."""
    path = tmp_path / "attempt.py"
    path.write_text("# %%\nx = 1  # note\u2028# %%\ny = 2\n", encoding="utf-8")
    cells = read_submission(path).cells
    assert len(cells) == 1 and cells[0].source.endswith("y = 2")


def test_matching_many_shuffled_cells_does_bounded_work(monkeypatch):
    from lessonkit.grade import plan

    calls = []
    real = plan._similarity
    monkeypatch.setattr(plan, "_similarity", lambda a, b: calls.append(1) or real(a, b))
    lesson = [f"value_{i} = {i} * {i}\nprint(value_{i})" for i in range(30)]
    learner = [f"other_{i} = {i} + 1\nprint(other_{i} * {i % 7})" for i in range(1750)]
    match_cells(learner, lesson)
    assert 0 < len(calls) <= plan.MAX_COMPARISONS
