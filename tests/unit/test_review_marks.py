"""Marks for review (issue 34, item 1): code that reaches into the grader, read from syntax."""

from __future__ import annotations

from pathlib import Path

import pytest

from lessonkit.grade.judging.report import summary_csv
from lessonkit.grade.judging.results import GradeReport
from lessonkit.grade.submission.plan import plan_submission
from lessonkit.grade.submission.review import cell_marks, review_marks
from lessonkit.grade.submission.sources import Submission, _percent_cells

from conftest import make_attempt

HOSTILE = Path(__file__).resolve().parents[1] / "hostile"


def marks_of(lesson, bodies: dict[str, str]) -> tuple[str, ...]:
    script = make_attempt(lesson, bodies)
    submission = Submission(Path("attempt.py"), _percent_cells(script))
    return review_marks(plan_submission(submission, lesson))


def test_a_solved_file_of_every_lesson_has_no_mark(any_lesson):
    assert marks_of(any_lesson, {}) == ()


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("import sys\nframe = sys._getframe()", "reads `_getframe`"),
        ("frame = f.f_back.f_locals", "reads `f_back`"),
        ("import inspect", "imports `inspect`"),
        ("from gc import get_objects", "imports `gc`"),
        ("m = __import__('ctypes')", "imports `ctypes`"),
        ("g = getattr(jax.grad, '__wrapped__', jax.grad)", 'names "__wrapped__"'),
        ("cells = jax.grad.__closure__", "reads `__closure__`"),
        ("consts = f.__code__.co_consts", "reads `__code__`"),
        ("import sys\nsys.count = 1", "keeps state in a module (`sys.count = ...`)"),
        ("import builtins as b\nb.seen += 1", "keeps state in a module (`b.seen = ...`)"),
    ],
)
def test_each_reach_into_the_grader_is_marked(code, said):
    assert said in [what for _, what in cell_marks(code)]


@pytest.mark.parametrize(
    "code",
    [
        "import jax\nimport jax.numpy as jnp\ng = jax.grad(f)(params)",
        "params = dict(params)\nparams.weight = 1",  # an attribute of a value, not a module
        "import optax\nopt = optax.adam(0.1)",
        "import sys\nprint(sys.version)",
        "def f(x):\n    return x.T",
        "this is not python",
    ],
)
def test_ordinary_code_is_not_marked(code):
    assert cell_marks(code) == []


@pytest.mark.parametrize(
    ("attack", "said", "fragment"),
    [
        (
            "f1-count-scenarios-apply-probe",
            "keeps state in a module (`sys.f1_count = ...`)",
            "sys.f1_count =",
        ),
        ("f2-undo-probe-from-frame", "reads `_getframe`", "sys._getframe()"),
        ("f3-unwrapped-original", 'names "__wrapped__"', '"__wrapped__"'),
        ("b3-set-probe-state-from-frame", "reads `f_back`", ".f_back"),
    ],
)
def test_the_hostile_evaders_are_marked_at_their_line(lesson, attack, said, fragment):
    from hostile.cases import patched_script

    found = next(HOSTILE.glob(f"*/{attack}.py"))
    script = patched_script(lesson, found.read_text(encoding="utf-8"))
    plan = plan_submission(Submission(Path("a.py"), _percent_cells(script)), lesson)
    line = next(n for n, text in enumerate(script.splitlines(), 1) if fragment in text)
    assert f"{said} at line {line}" in review_marks(plan)


def test_marks_reach_the_json_and_the_csv(lesson):
    from lessonkit.grade.batches.kind import BatchEntry
    from lessonkit.grade.judging.report import Scoring

    report = GradeReport("state-02", "a.py", (), (), 1.0, 5, ("reads `f_back` at line 3",))
    assert report.to_json()["review"] == ["reads `f_back` at line 3"]
    assert GradeReport.from_json(report.to_json()) == report
    csv_text = summary_csv([BatchEntry(Path("a.py"), report)], Scoring.of(lesson))
    header, row = csv_text.splitlines()
    assert header.endswith(",review") and row.endswith(",reads `f_back` at line 3")


def _varied_marks(lesson, task: str, body: str) -> tuple[str, ...]:
    from lessonkit.grade.preparation.prepared import prepare_lesson
    from lessonkit.grade.submission.known_answers import varied_of

    script = make_attempt(lesson, {task: body})
    plan = plan_submission(Submission(Path("a.py"), _percent_cells(script)), lesson)
    return review_marks(plan, varied_of(prepare_lesson(lesson, 5).grading.probes))


@pytest.mark.parametrize(
    ("attack", "said", "fragment"),
    [
        (
            "k1-undo-scale-gradient-by-known-answer",
            "differentiates a function of its own making (`grad`)",
            "lambda p: 0.0",
        ),
        (
            "k2-undo-optax-step-by-known-answer",
            "calls `update` on values of its own making",
            "adam.update(zero,",
        ),
    ],
)
def test_a_call_on_a_known_answer_is_marked_at_its_line(lesson, attack, said, fragment):
    """Issue 43, item 3: round 4's known-answer undos are marked as well as failed."""
    from lessonkit.grade.preparation.prepared import prepare_lesson
    from lessonkit.grade.submission.known_answers import varied_of

    from hostile.cases import patched_script

    found = next(HOSTILE.glob(f"*/{attack}.py"))
    script = patched_script(lesson, found.read_text(encoding="utf-8"))
    plan = plan_submission(Submission(Path("a.py"), _percent_cells(script)), lesson)
    line = next(n for n, text in enumerate(script.splitlines(), 1) if fragment in text)
    varied = varied_of(prepare_lesson(lesson, 5).grading.probes)
    assert f"{said} at line {line}" in review_marks(plan, varied)


@pytest.mark.parametrize(
    ("task", "body", "marked"),
    [
        # the known answer solved for point by point: a constant the cell picks each time
        (
            "nested-model",
            "for c in (0.0, 1.0):\n    m = jax.grad(lambda p: c * p['scale'])(nested)",
            True,
        ),
        (
            "adam-by-hand",
            "import optax\nz = {'weight': 0.}\nt = optax.adam(0.1)\nm = t.update(z, t.init(z))",
            True,
        ),
        # the task's own function and values, however they are written
        ("nested-model", "g = jax.grad(nested_loss)(nested)", False),
        ("nested-model", "g = jax.grad(lambda p: nested_loss(p))(nested)", False),
        ("nested-model", "def f(p):\n    return nested_loss(p)\ng = jax.grad(f)(nested)", False),
        ("adam-by-hand", "import optax\nt = optax.adam(0.1)\nm = t.update(grads, state)", False),
    ],
)
def test_known_answer_marks_read_only_calls_of_the_cells_making(lesson, task, body, marked):
    """A lesson's own pure functions (state-04's `safe_log1p`, in a task no probe varies a
    call for) stay unmarked: `test_a_solved_file_of_every_lesson_has_no_mark`."""
    marks = _varied_marks(lesson, task, body)
    assert bool([m for m in marks if "of its own making" in m]) is marked, marks
