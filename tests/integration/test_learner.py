"""check() where the learner works: the kernel's history as a submission, the messages to
the grading server, the verdict's HTML and text, and whole notebooks and scripts that call it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lessonkit.grade.judging.results import FAILED, PASSED, GradeReport, TaskResult
from lessonkit.learner.history import KERNEL_FILE, history_submission
from lessonkit.learner.messages import (
    CheckReply,
    CheckRequest,
    ProtocolError,
    RunCell,
    decode_reply,
    decode_request,
    encode_reply,
    encode_request,
)
from lessonkit.learner.view import CheckResult
from lessonkit.lesson.cell import task_cell_source
from lessonkit.lesson.layout import lesson_cells
from lessonkit.lesson.model import Lesson

from conftest import make_attempt

INSTALL_SENTENCE = (
    "check() needs lessonkit: run `pip install -r requirements-cpu.txt` in the "
    "lesson repository, then restart the kernel."
)
# Squares forgotten in both: the scaffold's own `assert jnp.allclose(norm_squared, manual)` holds.
WRONG = 'norm_squared = sum(jnp.sum(g) for g in jax.tree.leaves(grads))\nmanual = jnp.sum(grads["weight"]) + grads["bias"]\nassert jnp.allclose(norm_squared, manual)'  # noqa: E501
PATCHED_WRONG = "norm_squared = 0.\nmanual = 1.\nassert jnp.allclose(norm_squared, manual)"


def _cells(*sources: str) -> tuple[RunCell, ...]:
    return tuple(RunCell(s, n) for n, s in enumerate(sources, start=1))


def test_history_keeps_each_input_once_and_each_task_as_last_run() -> None:
    history = _cells(
        "import jax",
        "# TASK one · first\nx = 1",
        "y = 2",
        "check('one')",
        "%time y\n",
        "get_ipython().run_line_magic('time', 'y')",
        "# TASK two\nz = 3",
        "# TASK one · first\nx = 10",
        "y = 2",
        "check()\ncheck('two')",
        "# %% tags=[]\nw = 4",
        "   \n",
        "get_ipython().system('pip list')",  # `!pip list`: needs the kernel, left out
        "# TASK two\nget_ipython().run_line_magic('time', 'z = 4')",  # as IPython stores it
    )
    submission = history_submission(history)
    assert submission.path.name == KERNEL_FILE
    assert [(c.source, c.line, c.task) for c in submission.cells] == [
        ("import jax", 1, None),
        ("# TASK one · first\nx = 10", 8, "one"),  # the latest run, where the task first ran
        ("y = 2", 3, None),
        ("%time y", 5, None),  # not Python: the grader reports its syntax error in its cell
        ("y", 6, None),  # a timing magic is the code it times (red team M1)
        ("# TASK two\nz = 4", 14, "two"),
        ("w = 4", 11, None),
    ]


def test_history_leaves_out_check_lines_but_not_the_code_around_them() -> None:
    submission = history_submission(
        _cells("# TASK one\nx = 1\ncheck(\n  'one'\n)\ny = 2", "if x:\n    check()")
    )
    assert [c.source for c in submission.cells] == [
        "# TASK one\nx = 1\ny = 2",
        "if x:\n    check()",
    ]


def test_messages_round_trip_and_anything_else_is_refused() -> None:
    request = CheckRequest("state-02", "make-it-yours", cells=_cells("a = 1", "# TASK b\nb"))
    assert decode_request(encode_request(request)) == request
    script = CheckRequest("state-02", None, file="/tmp/state-02.py")
    assert decode_request(encode_request(script)) == script
    report = GradeReport("state-02", KERNEL_FILE, (TaskResult("t", "T", PASSED, "ok"),), (), 0.5)
    reply = CheckReply(report, note="Not sandboxed")
    assert decode_reply(encode_reply(reply)) == reply
    for line in (
        b"not json",
        b'{"v": 1, "lesson": "state-02", "task": null, "cells": [], "file": null, "x": 1}',
        b'{"v": 2, "lesson": "state-02", "task": null, "cells": [], "file": null}',
        b'{"v": 1, "lesson": "state-02", "task": null, "cells": [["a", true]], "file": null}',
        b'{"v": 1, "lesson": "state-02", "task": 3, "cells": [], "file": null}',
    ):
        with pytest.raises(ProtocolError):
            decode_request(line)
    with pytest.raises(ProtocolError, match="either a report or an error"):
        decode_reply(b'{"v": 1, "report": null, "error": null, "note": null}')


def test_view_escapes_learner_text_and_gives_the_hint_only_after_a_failure() -> None:
    tasks = (
        TaskResult("a", "Task A", PASSED, "Right on every input.", "hint A"),
        TaskResult("b", "Task <B>", FAILED, "`x` is <script>1</script>.", "Use <tree>."),
    )
    report = GradeReport("state-02", KERNEL_FILE, tasks, (), 0.25, 7)
    html = CheckResult(report)._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html and "Task &lt;B&gt;" in html
    assert re.findall(r'data-task="(\w)" data-status="(\w+)"', html) == [
        ("a", "passed"),
        ("b", "failed"),
    ]
    assert "hint A" not in html and "Use &lt;tree&gt;." in html
    one = CheckResult(report, task="b")
    assert str(one).splitlines()[:3] == [
        "b · Task <B>: failed",
        "  `x` is <script>1</script>.",
        "  hint: Use <tree>.",
    ]
    assert "Task A" not in str(one) and not one.passed and CheckResult(report, "a").passed
    assert str(CheckResult(None, error="no server")) == "check(): no server"


def test_without_lessonkit_the_helper_cell_defines_a_check_that_says_what_to_install(
    lesson: Lesson, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    helper = next(c for c in lesson_cells(lesson) if c.id == "todo-helper")
    monkeypatch.setitem(sys.modules, "lessonkit.learner", None)  # import fails as if absent
    namespace: dict = {}
    exec(helper.source, namespace)
    namespace["check"]("make-it-yours")
    assert capsys.readouterr().out == INSTALL_SENTENCE + "\n"


# --- whole runs: a kernel, a script, an environment without lessonkit ----------------------


def _outputs(cell) -> tuple[str, str]:
    """The HTML and the plain text a cell displayed or printed."""
    html, text = [], []
    for output in cell.outputs:
        data = output.get("data", {})
        html.append(data.get("text/html", ""))
        text.append(data.get("text/plain", "") or output.get("text", ""))
    return "".join(html), "".join(text)


def _status(html: str, task: str) -> str:
    match = re.search(rf'data-task="{task}" data-status="([a-z ]+)"', html)
    assert match, html
    return match[1]


@pytest.fixture(scope="module")
def checked_notebook(lesson: Lesson, tmp_path_factory: pytest.TempPathFactory):
    """The practice notebook's non-task cells, then attempts at one task, each checked."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(
        lesson.directory / "exercises" / f"{lesson.meta.id}.ipynb", as_version=4
    )
    code = [
        c
        for c in notebook.cells
        if c.cell_type == "code" and "task" not in c.metadata.get("tags", [])
    ]
    task = lesson.task("make-it-yours")
    added = [
        task_cell_source(task, WRONG),
        'check("make-it-yours")',
        task_cell_source(task, task.solution),
        'check("make-it-yours")',
        "jnp.allclose = lambda *a, **k: True",
        task_cell_source(task, PATCHED_WRONG),
        'check("make-it-yours")',
        'check("no-such-task")',
        "check()",
    ]
    notebook.cells = code + [nbformat.v4.new_code_cell(s) for s in added]
    folder = tmp_path_factory.mktemp("kernel")
    client = NotebookClient(notebook, timeout=600, resources={"metadata": {"path": str(folder)}})
    client.execute()
    return notebook.cells[-len(added) :]


@pytest.mark.slow
def test_check_in_a_kernel_grades_the_latest_run_of_the_task(checked_notebook) -> None:
    _, wrong, _, right, _, _, _, unknown, every = checked_notebook
    html, text = _outputs(wrong)
    assert _status(html, "make-it-yours") == FAILED
    assert '<tr class="hint">' in html and "hint: " in text
    assert "Graded outside this kernel" in text
    html, text = _outputs(right)
    assert _status(html, "make-it-yours") == PASSED and '<tr class="hint">' not in html
    assert "nested-model" not in html  # one task asked, one task shown
    html, _ = _outputs(every)
    assert _status(html, "make-it-yours") == FAILED  # its latest run is the patched one
    assert _status(html, "nested-model") == "not attempted"
    _, text = _outputs(unknown)
    assert "has no task 'no-such-task'" in text and "make-it-yours" in text


@pytest.mark.slow
def test_a_patched_kernel_cannot_make_a_wrong_answer_pass(checked_notebook) -> None:
    patched = checked_notebook[6]
    html, _ = _outputs(patched)
    # In the kernel the task cell's own assert passed (allclose always says True); the
    # verdict comes from the grader's process, which compares the values itself.
    assert _status(html, "make-it-yours") == FAILED


@pytest.mark.slow
def test_a_script_run_as_a_whole_grades_itself(lesson: Lesson, tmp_path: Path) -> None:
    script = tmp_path / "state-02.py"
    script.write_text(make_attempt(lesson) + "\n# %%\ncheck()\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    for task in lesson.tasks:
        assert f"{task.id} · " in done.stdout
        assert re.search(rf"^{task.id} · .*: passed$", done.stdout, re.M), done.stdout
    assert "Graded this script as a whole" in done.stdout  # no kernel here
    assert "kernel" not in done.stdout


@pytest.mark.slow
def test_without_lessonkit_every_non_task_cell_runs(lesson: Lesson, tmp_path: Path) -> None:
    cells = [
        c.source
        for c in lesson_cells(lesson)
        if c.kind == "code" and not c.solution and "task" not in c.tags
    ]
    program = "import sys\nsys.modules['lessonkit'] = None\n\n" + "\n\n".join(cells)
    program += "\n\ncheck()\n"
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(INSTALL_SENTENCE + "\n")


def test_a_task_the_kernel_never_ran_is_not_attempted_rather_than_an_error() -> None:
    from lessonkit.learner.history import NOT_RUN, mark_unrun

    submission = history_submission(_cells("# TASK a\nx = 1"))
    tasks = (
        TaskResult("a", "A", FAILED, "wrong", "hint"),
        TaskResult("b", "B", "error", "No cell starting with `# TASK b` was found.", "hint"),
    )
    report = mark_unrun(GradeReport("l", KERNEL_FILE, tasks, (), 1.0), submission)
    assert report.tasks[0] == tasks[0]
    assert (report.tasks[1].status, report.tasks[1].message) == ("not attempted", NOT_RUN)


def test_checking_one_task_leaves_out_only_the_task_cells_after_it() -> None:
    from lessonkit.learner.history import up_to_task

    submission = history_submission(
        _cells("a = 1", "# TASK one\nb = a", "c = 2", "# TASK two\nd = b", "# TASK three\ne = d")
    )
    kept = up_to_task(submission, "two").cells
    assert [c.task or c.source for c in kept] == ["a = 1", "one", "c = 2", "two"]
    assert up_to_task(submission, "never-run") == submission


@pytest.mark.slow
def test_start_spare_starts_one_learner_child_ahead_and_no_more() -> None:
    from lessonkit.grade import Grader

    with Grader() as grader:
        started = grader.children  # the one started with the grader
        grader.start_spare()
        assert grader.children == started  # one is waiting already
        grader._take_child().close()
        grader.start_spare()
        grader.start_spare()
        assert grader.children == started + 1


def test_check_inside_a_grading_child_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    from lessonkit.learner import checker, client

    def no_server(request):
        raise AssertionError("a grading child must never start a grading server")

    monkeypatch.setattr(client, "ask", no_server)
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    from lessonkit.grading_child.wire import CHILD_MARK

    worker = types.ModuleType("__main__")
    setattr(worker, CHILD_MARK, True)
    monkeypatch.setitem(sys.modules, "__main__", worker)
    assert checker("state-02").result("make-it-yours") is None
    prompt = types.ModuleType("__main__")  # a plain `python` prompt: no file, no kernel
    monkeypatch.setitem(sys.modules, "__main__", prompt)
    result = checker("state-02").result()
    assert result is not None and "lessonkit check state-02 FILE" in str(result)
