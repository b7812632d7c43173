"""The class report, from attempts built by hand: which submissions share a failure group,
who counts towards a pass rate, and how many submissions each student needed."""

from __future__ import annotations

import dataclasses
from html import unescape
from typing import get_args

import pytest

from lessonkit.course.class_report import (
    bin_of,
    class_report,
    render_class_report,
    total_bins,
)
from lessonkit.course.gradebook import Attempt, TaskGrade
from lessonkit.errors import UsageError
from lessonkit.grade.judging.results import (
    CHECK_WORDS,
    CHECKS,
    ERROR,
    FAILED,
    NOT_ATTEMPTED,
    PASSED,
    CheckName,
    GradeReport,
    TaskResult,
    error_cause,
)

_ids = iter(range(1, 10_000))


def _grade(task: str, status: str, check=None, path=None, message="", optional=False):
    points = 1.0 if status == PASSED else 0.0
    return TaskGrade(task, task.title(), status, points, 1.0, optional, message, check, path)


def _attempt(student: str, *tasks: TaskGrade) -> Attempt:
    """A submission of bytes of its own, submitted after every one made before it."""
    number = next(_ids)
    return Attempt(
        number,
        student,
        "demo-01",
        "A demo",
        f"{student}.py",
        f"{number:064d}",
        1,
        "2026-12-04T00:00:00Z",
        float(number),
        "0.1.0",
        "r1",
        sum(t.points for t in tasks),
        float(len(tasks)),
        None,
        tasks,
    )


def _ok(task: str = "a") -> TaskGrade:
    return _grade(task, PASSED)


def _wrong(path: str, check="lesson inputs", message="wrong") -> TaskGrade:
    return _grade("a", FAILED, check, path, message)


def test_failures_are_grouped_by_check_and_key_path_over_every_submission():
    attempts = [
        _attempt("ann", _wrong("params/w", message="first"), _ok("b")),
        _attempt("ann", _ok(), _ok("b")),
        _attempt("bo", _wrong("params/w", message="second"), _ok("b")),
        _attempt("bo", _wrong("params/b"), _ok("b")),
        _attempt("cy", _wrong("params/w", "other inputs"), _ok("b")),
    ]
    report = class_report(attempts, "demo-01", "latest")
    groups = {(g.check, g.path): g for g in report.tasks[0].failures}
    assert set(groups) == {
        ("lesson inputs", "params/w"),
        ("lesson inputs", "params/b"),
        ("other inputs", "params/w"),
    }
    shared = groups[("lesson inputs", "params/w")]
    assert (shared.attempts, shared.students, shared.example) == (2, 2, "second")
    assert report.tasks[0].failures[0] is shared  # the most frequent first
    assert report.tasks[1].failures == ()


def test_pass_rates_count_each_student_once_by_the_policy():
    attempts = [
        _attempt("ann", _ok(), _ok("b")),
        _attempt("ann", _wrong("x"), _ok("b")),  # a worse resubmission
        _attempt("bo", _wrong("x"), _grade("b", FAILED, "probes", "y")),
    ]
    latest = class_report(attempts, "demo-01", "latest")
    best = class_report(attempts, "demo-01", "best")
    assert [(t.passed, t.graded) for t in latest.tasks] == [(0, 2), (1, 2)]
    assert [(t.passed, t.graded) for t in best.tasks] == [(1, 2), (1, 2)]
    assert latest.totals == (1.0, 0.0) and best.totals == (2.0, 0.0)
    assert latest.tasks[0].median_attempts == 1  # ann passed it on her first submission


def test_submissions_until_every_task_passed_and_a_regrade_is_not_one():
    attempts = [
        _attempt("ann", _ok(), _ok("b")),  # read with its regrade (a fixed rubric): ann passes
        _attempt("bo", _wrong("x"), _ok("b")),
        _attempt("bo", _wrong("x"), _ok("b")),
        _attempt("bo", _ok(), _ok("b")),
        _attempt("cy", _ok(), _grade("b", NOT_ATTEMPTED, "attempted", optional=True)),
    ]
    report = class_report(attempts, "demo-01", "latest")
    assert dict(report.attempts_needed) == {"1": 2, "2": 0, "3": 1, "4 or more": 0, "not yet": 0}
    assert report.submissions == 5
    assert report.tasks[0].failures[0].attempts == 2  # bo's two; ann's was regraded away


def test_a_lesson_without_attempts_is_refused():
    with pytest.raises(UsageError, match="no attempt of demo-01"):
        class_report([], "demo-01", "latest")


def test_totals_fall_in_whole_point_bins_or_tenths():
    assert total_bins(3) == ((0, 0), (1, 1), (2, 2), (3, 3))
    assert [bin_of(t, total_bins(3)) for t in (0, 0.5, 2.9, 3)] == [0, 0, 2, 3]
    wide = total_bins(100)
    assert len(wide) == 10 and [bin_of(t, wide) for t in (0, 9.9, 10, 100)] == [0, 0, 1, 9]


def test_the_page_escapes_what_a_submission_put_in_a_message():
    hostile = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    attempts = [_attempt("ann", _wrong("p", message=hostile), _ok("b"))]
    html = render_class_report(class_report(attempts, "demo-01", "latest"))
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "script-src" not in html and "default-src 'none'" in html  # no script may run


def test_a_verdicts_check_and_key_path_survive_the_json_of_a_report():
    task = TaskResult("a", "A", FAILED, "m", "h", False, "probes", "grads/w")
    report = GradeReport("demo-01", "x.py", (task,), (), 1.0, 3)
    assert GradeReport.from_json(report.to_json()) == report
    old = report.to_json()
    for key in ("check", "path"):
        del old["tasks"][0][key]  # a schema 1 report (a journal from before) had neither
    assert GradeReport.from_json(old).tasks[0] == dataclasses.replace(task, check=None, path=None)
    old["tasks"][0]["check"] = "forged"
    with pytest.raises(TypeError):
        GradeReport.from_json(old)


def test_an_optional_task_left_out_is_not_passed_and_its_takers_are_counted():
    """4 of 30 attempted the optional task in the issue; here 1 of 3: 1 passed, not 3."""
    left_out = _grade("b", NOT_ATTEMPTED, "attempted", optional=True)
    attempts = [
        _attempt("ann", _ok(), _grade("b", PASSED, optional=True)),
        _attempt("bo", _ok(), left_out),
        _attempt("cy", _ok(), left_out),
    ]
    report = class_report(attempts, "demo-01", "latest")
    optional = report.tasks[1]
    assert (optional.passed, optional.attempted, optional.graded) == (1, 1, 3)
    assert optional.pass_rate == pytest.approx(1 / 3)
    (group,) = optional.failures  # not "No submission failed this task"
    assert (group.status, group.attempts, group.check_words) == (
        NOT_ATTEMPTED,
        2,
        "not attempted yet",
    )
    html = render_class_report(report)
    assert "33% (1 of 3)" in html and "1 of 3" in html
    assert html.count("Every submission passed this task") == 1  # task a's, not b's


def test_errors_are_grouped_by_their_cause_each_with_its_own_example():
    syntax = "SyntaxError at line 4: invalid syntax\n  line 4: x = = 1"
    loop = "The cell did not finish within the time limit of 60 s (it was running line 3)."
    crash = "This task's cell was not reached: the process was killed (it probably ran out "
    attempts = [
        _attempt("ann", _grade("a", ERROR, "lesson inputs", message=syntax), _ok("b")),
        _attempt("bo", _grade("a", ERROR, "lesson inputs", message=loop), _ok("b")),
        _attempt(
            "cy", _grade("a", ERROR, "lesson inputs", message=crash + "of memory)."), _ok("b")
        ),
    ]
    groups = {g.cause: g for g in class_report(attempts, "demo-01", "latest").tasks[0].failures}
    assert set(groups) == {"syntax error", "time limit", "memory"}
    assert groups["syntax error"].example == syntax and groups["time limit"].example == loop
    assert groups["syntax error"].check_words == (
        "wrong on the lesson's inputs (error, syntax error)"
    )
    assert [error_cause(m) for m in ("ValueError: no", "MemoryError: x")] == [
        "exception",
        "memory",
    ]


def test_every_check_has_words_and_a_report_of_each_renders():
    """state-04's `method` and `jit` failures raised KeyError: the words lacked them."""
    assert set(CHECK_WORDS) == set(CHECKS) == set(get_args(CheckName))
    attempts = [
        _attempt(f"s{i}", _grade("a", FAILED, check, "p", f"found by {check}"), _ok("b"))
        for i, check in enumerate(CHECKS)
    ]
    html = render_class_report(class_report(attempts, "demo-01", "latest"))
    for check in CHECKS:
        assert CHECK_WORDS[check] in unescape(html)


def test_totals_are_of_the_required_points_and_extra_is_counted_apart():
    extra = TaskGrade("b", "B", PASSED, 1.0, 1.0, True, "", None, None)
    left_out = dataclasses.replace(extra, status=NOT_ATTEMPTED, points=0.0)
    attempts = [_attempt("ann", _ok(), extra), _attempt("bo", _ok(), left_out)]
    attempts = [dataclasses.replace(a, max_points=1.0) for a in attempts]
    report = class_report(attempts, "demo-01", "latest")
    assert report.totals == (1.0, 1.0) and report.extra == (1.0, 0.0)
    html = render_class_report(report)
    assert "1 student earned extra points" in html


def test_the_task_checks_are_the_recorded_checks_but_run():
    """One list of names: a check the grader runs always has its words on the report."""
    from lessonkit.grade.judging.checks import TASK_CHECKS

    assert [name for name, _ in TASK_CHECKS] == [c for c in CHECKS if c != "run"]


def test_every_declared_mistake_is_shown_with_zeros_when_no_one_made_it():
    """Issue 52: the report dropped its mistakes section when no one made a declared
    mistake. Counted by hand: two students, ana's counting attempt makes "off by one" at
    task a, bob's passes; "sign flipped" is declared and made by no one."""
    made = dataclasses.replace(_wrong("total"), mistake="off by one")
    attempts = [_attempt("ana", made), _attempt("bob", _ok())]
    declared = {"a": ["sign flipped", "off by one"]}
    report = class_report(attempts, "demo-01", "latest", declared)
    assert report.tasks[0].mistakes == (("off by one", 1), ("sign flipped", 0))
    nobody = class_report(
        [_attempt("ana", _ok()), _attempt("bob", _ok())], "demo-01", "latest", declared
    )
    assert nobody.tasks[0].mistakes == (("off by one", 0), ("sign flipped", 0))
    page = unescape(render_class_report(nobody))
    assert "Declared mistakes made" in page
    assert "<td>sign flipped</td><td" in page
    assert page.count(">0 of 2</td>") == 4  # each mistake in the chart and in its table
