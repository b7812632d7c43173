"""Reading a submission: any file gets a clear message, in bounded time and memory."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from lessonkit.grade.submission.plan import match_cells
from lessonkit.grade.submission.sources import MAX_BYTES, SubmissionError, read_submission


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
    from lessonkit.grade.submission import plan

    calls = []
    real = plan._similarity
    monkeypatch.setattr(plan, "_similarity", lambda a, b: calls.append(1) or real(a, b))
    lesson = [f"value_{i} = {i} * {i}\nprint(value_{i})" for i in range(30)]
    learner = [f"other_{i} = {i} + 1\nprint(other_{i} * {i % 7})" for i in range(1750)]
    match_cells(learner, lesson)
    assert 0 < len(calls) <= plan.MAX_COMPARISONS


MAGIC_CELLS = [
    ("%time x = f()", "x = f()"),
    ("y = %time f() + 1  # timed", "y = (f() + 1)"),
    ("for i in r:\n    %timeit -n1 -r 3 -q f(i)\nz = 1", "for i in r:\n    f(i)\nz = 1"),
    ("%%time\nx = 1\n%time y = 2", "# %%time\nx = 1\ny = 2"),
    ("%%timeit -n 10 a = setup()\nrun(a)", "a = setup()\nrun(a)"),
    ("%matplotlib inline\nimport numpy", "pass\nimport numpy"),
    ("s = '''\n%time\n'''\n%time t = 2", "s = '''\n%time\n'''\nt = 2"),  # not in a string
    ("   \n%time x = 1\n  ", "   \nx = 1\n  "),
    # Left as written, for the child to report at its line: magics it cannot run.
    ("%env A=1\n%time x = 1", "%env A=1\nx = 1"),
    ("y = %timeit f()", "y = %timeit f()"),  # None in Jupyter, so never f()'s value
    ("!pip install optax\nx = 1", "!pip install optax\nx = 1"),
    ("%%bash\nls", "%%bash\nls"),
    ("x = 1\ny = 2", "x = 1\ny = 2"),
]


@pytest.mark.parametrize(("cell", "python"), MAGIC_CELLS)
def test_a_notebook_cell_s_magics_are_read_as_jupyter_runs_them(cell, python):
    pytest.importorskip("IPython")
    from lessonkit.grade.submission.magics import python_of_cell

    assert python_of_cell(cell) == python
    assert python.count("\n") == cell.count("\n")  # every line keeps its number


def test_notebook_cells_are_read_through_the_magics(tmp_path):
    pytest.importorskip("IPython")
    path = tmp_path / "attempt.ipynb"
    cells = [{"cell_type": "code", "source": ["# TASK t\n", "%time x = 1\n"]}]
    path.write_text(_notebook(cells), encoding="utf-8")
    assert read_submission(path).cells[0].source == "# TASK t\nx = 1"
    script = tmp_path / "attempt.py"
    script.write_text("# %%\n%time x = 1\n", encoding="utf-8")
    assert read_submission(script).cells[0].source == "%time x = 1"  # a script is Python


def test_without_ipython_a_cell_is_left_as_written(monkeypatch):
    import builtins

    from lessonkit.grade.submission.magics import magic_in, python_of_cell

    real_import = builtins.__import__

    def no_ipython(name, *args, **kwargs):
        if name.startswith("IPython"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ipython)
    assert python_of_cell("%time x = 1") == "%time x = 1"
    assert [magic_in(line) for line in ("%time x", "y = !ls", "%%bash", "x % 2")] == [
        "%time",
        "!ls",
        "%%bash",
        None,
    ]


def test_a_notebook_of_many_magics_is_read_in_bounded_work(monkeypatch):
    """IPython's transformer reads a cell again per magic: the work it is given is capped."""
    pytest.importorskip("IPython")
    from lessonkit.grade.submission import magics

    given = []
    real = magics.python_of_cell
    monkeypatch.setattr(magics, "python_of_cell", lambda s: given.append(len(s)) or real(s))
    small = "\n".join(["%time x = 1"] * 20)
    huge = "\n".join(["%time x = 1"] * 40_000)
    out = magics.python_of_cells([small, huge, *[small] * 2_000])
    assert out[0] == "\n".join(["x = 1"] * 20) and out[1] == huge  # past the cap: as written
    assert sum(size * 21 for size in given) <= magics.MAX_WORK


# --------------------------------------------------------------------------- as Jupyter saves


def _code_cell(source: str, outputs: list | None = None) -> dict:
    return {"cell_type": "code", "source": source, "metadata": {}, "outputs": outputs or []}


def test_saved_outputs_do_not_count_towards_the_code_cap(tmp_path):
    image = "iVBORw0KGgo" * 300_000  # 3.3 MB of base64, as a saved figure is
    output = {"output_type": "display_data", "metadata": {}, "data": {"image/png": image}}
    path = tmp_path / "attempt.ipynb"
    path.write_text(_notebook([_code_cell("# TASK t\nx = 1", [output])]), encoding="utf-8")
    assert path.stat().st_size > MAX_BYTES
    assert [c.source for c in read_submission(path).cells] == ["# TASK t\nx = 1"]


def test_a_notebooks_code_is_capped(tmp_path):
    path = tmp_path / "attempt.ipynb"
    cells = [_code_cell("x = 1  # " + "#" * 100_000) for _ in range(21)]
    path.write_text(_notebook(cells), encoding="utf-8")
    with pytest.raises(SubmissionError, match=r"over 2,000,000 characters of code"):
        read_submission(path)


def test_a_notebook_of_many_json_items_is_refused_before_parsing(tmp_path):
    path = tmp_path / "attempt.ipynb"
    many = {"output_type": "stream", "name": "stdout", "text": [[0] * 1_100_000]}
    path.write_text(_notebook([_code_cell("x = 1", [many])]), encoding="utf-8")
    with pytest.raises(SubmissionError, match=r"holds [\d,]+ JSON items") as refused:
        read_submission(path)
    assert "Clear Outputs" in refused.value.fix


def test_a_notebook_over_its_file_cap_is_refused_after_reading_its_limit_only(tmp_path):
    from lessonkit.grade.submission.sources import MAX_NOTEBOOK_BYTES

    path = tmp_path / "attempt.ipynb"
    with path.open("wb") as file:
        file.truncate(MAX_NOTEBOOK_BYTES + 10)  # sparse: no 64 MiB written
    with pytest.raises(SubmissionError, match=r"over 64 MiB with its saved outputs"):
        read_submission(path)


KERNEL_CELLS = [
    ('get_ipython().run_line_magic("matplotlib", "inline")\nx = 1', "pass\nx = 1"),
    ("x = 1\nget_ipython().run_line_magic('time', 'y = x + 1')", "x = 1\ny = x + 1"),
    ("if True:\n    get_ipython().run_line_magic('timeit', '-n1 f()')", "if True:\n    f()"),
    # Left as written, for the child to fail at its line: calls it cannot make Python.
    ("get_ipython().run_line_magic('env', 'A=1')", "get_ipython().run_line_magic('env', 'A=1')"),
    ("get_ipython().system('ls')\nx = 1", "get_ipython().system('ls')\nx = 1"),
]


@pytest.mark.parametrize(("cell", "python"), KERNEL_CELLS)
def test_kernel_calls_of_the_magics_it_runs_are_made_python(cell, python):
    from lessonkit.grade.submission.magics import python_of_cell

    assert python_of_cell(cell) == python


@pytest.mark.parametrize(
    ("line", "named"),
    [
        ("get_ipython().run_line_magic('env', 'A=1')", "%env"),
        ('x = get_ipython().run_cell_magic("bash", "", "ls")', "%%bash"),
        ("get_ipython().system('pip install optax')", "get_ipython().system"),
        ("get_ipython ( ) . getoutput('ls')", None),  # not IPython's spelling: not a call
        ("shell = get_ipython()", "get_ipython()"),
        ("x = 1", None),
    ],
)
def test_a_kernel_call_is_named_as_it_asks(line, named):
    from lessonkit.grade.submission.magics import kernel_call_in

    assert kernel_call_in(line) == named


def test_a_kernel_call_that_cannot_run_is_explained_in_its_own_cell(lesson):
    from lessonkit.grade.channel.protocol import ErrorInfo
    from lessonkit.grade.judging.explain import explain_error
    from lessonkit.grade.submission.plan import plan_submission
    from lessonkit.grade.submission.sources import CodeCell, Submission

    cells = (CodeCell("x = 1", 1, None), CodeCell("get_ipython().system('ls')", 2, None))
    plan = plan_submission(Submission(Path("attempt.ipynb"), cells), lesson)
    error = ErrorInfo(
        "exception", "NameError", "builtins", "name 'get_ipython' is not defined", ((1, 1, 1),)
    )
    assert explain_error(error, plan, 10.0) == (
        "NameError at cell [2], line 1: uses a Jupyter shell command: get_ipython().system, "
        "which the grader cannot run: it runs each cell as plain Python, with only %time, "
        "%timeit and %matplotlib made Python; remove it, or write the line in Python\n"
        "  cell [2], line 1: get_ipython().system('ls')"
    )


@pytest.mark.parametrize("suffix", [".py", ".ipynb"])
def test_a_file_of_more_code_cells_than_a_practice_file_could_hold_is_refused(tmp_path, suffix):
    """Issue 43, item 4: every code cell runs in every scenario, so a file of junk cells (the
    hostile suite's 1,750) is refused by its count, before any child starts."""
    from lessonkit.grade.submission.sources import MAX_CODE_CELLS

    for count, refused in ((MAX_CODE_CELLS, False), (MAX_CODE_CELLS + 1, True)):
        path = tmp_path / f"attempt-{count}{suffix}"
        if suffix == ".py":
            path.write_text("".join(f"# %%\nx = {n}\n" for n in range(count)), encoding="utf-8")
        else:
            cells = [{"cell_type": "code", "source": f"x = {n}"} for n in range(count)]
            path.write_text(_notebook(cells), encoding="utf-8")
        if refused:
            with pytest.raises(SubmissionError, match=f"has {count:,} code cells; a practice"):
                read_submission(path)
        else:
            assert len(read_submission(path).cells) == count
