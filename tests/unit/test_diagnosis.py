"""Declared mistakes: their texts are required and checked, a learner's values are matched
to the mistake they behave like, hints show only where they fit, and the class report, the
gradebook and the evidence report keep the matched mistake.

No grading child runs here: the runs are fabricated `CellReport`s, the lesson is state-02's
own lesson.md (or a copy with one change), and the attempts are built by hand.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from test_class_report import _attempt, _grade

from lessonkit.course.class_report import class_report, render_class_report
from lessonkit.course.gradebook import Gradebook, attempt_of
from lessonkit.errors import LessonError
from lessonkit.evidence.observe import Finding
from lessonkit.grade.channel import reported as r
from lessonkit.grade.channel.child_report import ChildReport
from lessonkit.grade.channel.protocol import CellReport, ErrorInfo, RuleOutcome
from lessonkit.grade.judging.checks import Runs, TaskFacts
from lessonkit.grade.judging.diagnosis import graded_scenarios, matched_mistake
from lessonkit.grade.judging.hints import hint_applies
from lessonkit.grade.judging.mistake_text import check_message, diagnosed
from lessonkit.grade.judging.report import Scoring
from lessonkit.grade.judging.results import ERROR, FAILED, PASSED, GradeReport, TaskResult
from lessonkit.grade.preparation.inputs import InputSet, LessonInputs
from lessonkit.grade.preparation.mistakes import MistakeRun, declared_mistakes
from lessonkit.grade.preparation.prepared import prepare_lesson
from lessonkit.grade.preparation.probes import ProbeRun
from lessonkit.grade.preparation.rubric import TaskRubric
from lessonkit.grade.submission.plan import Plan, PlannedCell
from lessonkit.grading_child.transforms import apply
from lessonkit.lesson.load import load_lesson, parse_lesson
from lessonkit.lesson.model import DeclaredAttempt, Probe, Show, Task
from lessonkit.lesson.rules.jit import JitRule
from lessonkit.lesson.syntax import read_cells

from conftest import FIXTURE_MD, lesson_changed

TASK = "nested-model"
SCENARIOS = ("lesson", "run-1", "probe-1")


def _task(hint_for: tuple[str, ...] = ()) -> Task:
    return Task(TASK, "practice", "Nested", "", (), (), "", "", "", "a hint", "", 1, hint_for)


def _mistake(name: str, why: str = "why", instead: str = "instead") -> DeclaredAttempt:
    return DeclaredAttempt(TASK, name, "code", "failed", "", 1, why, instead)


def _plan() -> Plan:
    return Plan(
        "f.py", False, (PlannedCell(0, "# TASK nested-model", 1, 0, "task", TASK, None),), None
    )


def _report(scenario: str, values: dict[str, float], error: str | None = None) -> CellReport:
    info = ErrorInfo("exception", error, "builtins", "", ()) if error else None
    encoded = {name: r.Number("float", value) for name, value in values.items()}
    return CellReport("x", scenario, 0, "error" if error else "ok", "", info, encoded, None)


def _record(*per_scenario: dict[str, float] | tuple[dict[str, float], str]) -> ChildReport:
    runs = {}
    for scenario, given in zip(SCENARIOS, per_scenario, strict=True):
        values, error = given if isinstance(given, tuple) else (given, None)
        runs[(scenario, 0)] = _report(scenario, values, error)
    return ChildReport(runs, None, None, ())


RUBRIC = TaskRubric(_task(), ("g", "same"), ())
REFERENCE = _record({"g": 1.0, "same": 1.0}, {"g": 2.0, "same": 1.0}, {"g": 3.0, "same": 0.0})
LEAF_COUNT = _record({"g": 1.0, "same": 1.0}, {"g": 2.0, "same": 1.0}, {"g": 3.0, "same": 1.0})
SET_TRUE = _record({"g": 5.0, "same": 1.0}, {"g": 5.0, "same": 1.0}, {"g": 5.0, "same": 1.0})


def _runs(*records: tuple[str, ChildReport]) -> tuple[MistakeRun, ...]:
    return tuple(MistakeRun(_mistake(name), _plan(), record) for name, record in records)


MISTAKES = _runs(("set true", SET_TRUE), ("leaf count", LEAF_COUNT))


INPUTS = LessonInputs((), 0, (InputSet("run-1", {}),))  # the drawn set of `run-1`


def _facts(
    learner: ChildReport, reference: ChildReport = REFERENCE, rubric: TaskRubric = RUBRIC
) -> TaskFacts:
    """The task's facts as its checks read them: the learner's run and the reference's."""
    return TaskFacts(rubric, INPUTS, (), Runs(_plan(), learner, _plan(), reference, 1.0))


def _match(learner: ChildReport, mistakes=MISTAKES) -> str | None:
    found = matched_mistake(_facts(learner), mistakes)
    return None if found is None else found.name


def test_a_learner_whose_values_agree_with_a_mistake_everywhere_is_matched_to_it():
    assert _match(LEAF_COUNT) == "leaf count"
    assert _match(SET_TRUE) == "set true"


def test_a_right_answer_is_never_matched_even_where_a_mistake_agrees_on_some_scenarios():
    assert _match(REFERENCE) is None


def test_one_scenario_that_differs_from_the_mistake_rules_it_out():
    learner = _record({"g": 1.0, "same": 1.0}, {"g": 2.5, "same": 1.0}, {"g": 3.0, "same": 1.0})
    assert _match(learner) is None


def test_a_name_the_learners_own_failing_assert_kept_out_still_matches():
    """The learner's `assert same` stops the cell before `g` in one scenario; the mistake,
    without that assert, reaches it."""
    stopped = ({"same": 1.0}, "AssertionError")
    learner = _record({"g": 1.0, "same": 1.0}, {"g": 2.0, "same": 1.0}, stopped)
    assert _match(learner) == "leaf count"
    crashed = ({"same": 1.0}, "KeyError")  # another error is not the learner's own check
    assert _match(_record({"g": 1.0, "same": 1.0}, {"g": 2.0, "same": 1.0}, crashed)) is None


def _stopped_in_probe(values: dict[str, float], error: str, trees=()) -> ChildReport:
    """LEAF_COUNT's values, except in `probe-1`: the cell reached only `values` there and
    stopped with `error` (a pytree mismatch between `trees`, if any)."""
    report = _report("probe-1", values, error)
    report = dataclasses.replace(report, error=dataclasses.replace(report.error, trees=trees))
    return dataclasses.replace(LEAF_COUNT, runs={**LEAF_COUNT.runs, ("probe-1", 0): report})


def test_a_mistake_that_raises_under_a_probe_matches_the_same_error_raised_later():
    """The mistake stops before any graded name under the probe; the learner's rewrite
    stops with the same error one statement later, `g` assigned: one failure, written in
    another order (on the parent: not matched)."""
    mistakes = _runs(("reads a dropped key", _stopped_in_probe({}, "KeyError")))
    assert _match(_stopped_in_probe({"g": 3.0}, "KeyError"), mistakes) == "reads a dropped key"
    assert _match(_stopped_in_probe({"g": 3.0}, "TypeError"), mistakes) is None


def test_a_learner_who_stops_otherwise_than_the_mistake_is_never_matched():
    """The same names reached, but another error class (on the parent: matched)."""
    mistakes = _runs(("stops", _stopped_in_probe({"g": 3.0}, "ValueError")))
    assert _match(_stopped_in_probe({"g": 3.0}, "ValueError"), mistakes) == "stops"
    assert _match(_stopped_in_probe({"g": 3.0}, "KeyError"), mistakes) is None


def test_a_tree_mismatch_matches_only_between_the_same_trees():
    """The alias mistake's update pairs `params` with `grads`, which lost `bias`; a learner
    who pairs it with their own `partial` raises the same ValueError about another tree
    (on the parent: matched)."""
    full = r.Mapping((("bias", r.Number("float", 1.0)), ("weight", r.Number("float", 2.0))))
    short = r.Mapping((("weight", r.Number("float", 2.0)),))

    def update(partner: str) -> ChildReport:
        return _stopped_in_probe({"g": 3.0}, "ValueError", (("params", full), (partner, short)))

    mistakes = _runs(("alias", update("grads")))
    assert _match(update("grads"), mistakes) == "alias"
    assert _match(update("partial"), mistakes) is None


def test_an_error_inside_the_learners_own_assert_statement_is_their_own_check():
    """`assert jnp.allclose(g["scale"], ...)` raises KeyError under a probe that renames the
    key: the learner's check could not run, which an attempt may leave out (the mistake has
    no such check); the same KeyError in another statement rules the mistake out."""
    source = 'g = grad(loss)(tree)\nsame = count(g) == count(tree)\nassert close(g["scale"], by)\n'
    plan = Plan("f.py", False, (PlannedCell(0, source, 1, 0, "task", TASK, None),), None)

    def stopped_at(line: int) -> ChildReport:
        error = ErrorInfo("exception", "KeyError", "builtins", "'scale'", ((0, line, 1),))
        reached = _report("probe-1", {"g": 3.0, "same": 1.0}, "KeyError")
        report = dataclasses.replace(reached, error=error)
        return dataclasses.replace(LEAF_COUNT, runs={**LEAF_COUNT.runs, ("probe-1", 0): report})

    def match(learner: ChildReport) -> str | None:
        runs = Runs(plan, learner, _plan(), REFERENCE, 1.0)
        found = matched_mistake(TaskFacts(RUBRIC, INPUTS, (), runs), MISTAKES)
        return None if found is None else found.name

    assert match(stopped_at(3)) == "leaf count"
    assert match(stopped_at(2)) is None


def test_a_mistake_that_reaches_no_graded_name_is_never_matched():
    empty = _record({}, {}, {})
    assert _match(empty, _runs(("nothing", empty))) is None


def test_the_feedback_names_the_mistake_first_then_what_the_check_found():
    mistake = _mistake("leaf count", "Counting leaves misses keys.", "Compare structures.")
    result = TaskResult(TASK, "Nested", FAILED, "`same` is True; expected False.", "h", False)
    task = dataclasses.replace(_task(), hint_for=("leaf count",))
    out = diagnosed(dataclasses.replace(result, check="probes"), task, mistake)
    assert out.mistake == "leaf count"
    assert out.message.startswith('This is a known mistake, "leaf count". Counting leaves')
    assert out.message.index("Compare structures.") < out.message.index("`same` is True")
    assert out.hint == "a hint"
    assert check_message(out, [mistake]) == result.message


def test_a_named_mistake_replaces_the_checks_own_guess_at_a_cause():
    """ "It looks hard-coded" would contradict a mistake that explains the answer otherwise."""
    guess = "It looks hard-coded: compute it from the inputs."
    found = "`g` is right on the lesson's inputs but not on other inputs: got 5.0, expected 2.0."
    result = TaskResult(
        TASK, "Nested", FAILED, f"{found} {guess}", "h", False, "other inputs", suspicion=guess
    )
    mistake = _mistake("starts from the bound", "It starts from a bound.", "Start from xs[0].")
    out = diagnosed(result, _task(), mistake)
    assert guess not in out.message and found in out.message
    assert check_message(out, [mistake]) == found
    assert diagnosed(result, _task(), None).message == f"{found} {guess}"  # nothing named


def test_two_tasks_may_declare_mistakes_of_the_same_title():
    """Each task's "typed-in answer" explains itself: the feedback is read back by task."""
    ours = _mistake("typed-in answer", "Ours is typed in.", "Compute ours.")
    theirs = dataclasses.replace(ours, task="other", why="Theirs is typed in.")
    result = TaskResult(TASK, "Nested", FAILED, "`g` is 5.0; expected 1.0.", "h", False)
    out = diagnosed(result, _task(), ours)
    assert check_message(out, [theirs, ours]) == result.message


def _jit_record(error_type: str | None) -> ChildReport:
    """The reference's values in every scenario, with `fit` failing under jax.jit (or not)."""
    runs = {}
    for key, run in REFERENCE.runs.items():
        info = ErrorInfo("exception", error_type or "", "jax.errors", "under jit", ())
        jit = (RuleOutcome("fit", "error", info),) if error_type else (RuleOutcome("fit", "ok"),)
        runs[key] = dataclasses.replace(run, rules=(("jit", jit),))
    return ChildReport(runs, None, None, ())


def test_a_mistake_that_fails_only_under_jit_is_matched_by_the_same_failure():
    """Its values are the reference's: the match is on the check it fails, and how."""
    jit_if = _runs(("an if on a traced value", _jit_record("TracerBoolConversionError")))
    rubric = dataclasses.replace(RUBRIC, rules=(("jit", JitRule(("fit",))),))

    def match(learner: ChildReport, check: str | None) -> str | None:
        found = matched_mistake(_facts(learner, rubric=rubric), jit_if, None, check)
        return None if found is None else found.name

    assert match(_jit_record("TracerBoolConversionError"), "jit") == "an if on a traced value"
    assert match(_jit_record("ConcretizationTypeError"), "jit") is None
    assert match(_jit_record(None), None) is None  # a right answer
    assert match(REFERENCE, "lesson inputs") is None


def _printing(output: str) -> ChildReport:
    """The reference's values in every scenario, with the cell printing `output`."""
    runs = {key: dataclasses.replace(run, output=output) for key, run in REFERENCE.runs.items()}
    return ChildReport(runs, None, None, ())


def test_a_mistake_that_only_prints_otherwise_is_matched_by_its_printed_lines():
    printed = _runs(("prints the count only", _printing("Count: 4\n")))

    def match(learner: ChildReport) -> str | None:
        reference = _printing("Count: 4, flag: False\n")
        found = matched_mistake(_facts(learner, reference), printed, None, "probes")
        return None if found is None else found.name

    assert match(_printing("Count: 4\n")) == "prints the count only"
    assert match(_printing("Count 4\n")) is None
    assert match(_printing("Count: 4, flag: False\n")) is None  # prints as the reference


MOVED = ProbeRun(  # scenario `probe-1` moves every derivative JAX takes
    "probe-1",
    Probe("moved", TASK, "gradients", "gradients", "shift_key", "g", 1.0, (), 1),
    None,
    (),
)


def _moved(record: ChildReport) -> ChildReport:
    """`record` with the derivative probe's change having reached its run of the cell."""
    run = record.runs[("probe-1", 0)]
    return dataclasses.replace(
        record, runs={**record.runs, ("probe-1", 0): dataclasses.replace(run, reached=True)}
    )


@pytest.mark.parametrize("mistake_took_a_derivative", [False, True])
def test_a_derivative_probe_that_moved_nothing_of_a_run_is_no_evidence_about_it(
    mistake_took_a_derivative,
):
    """The learner's own rule hands back the mistake's values, as a derivative: the probe
    moves them where it moves the reference's. The mistake's cell took no derivative, so the
    probe left its values as they were: that scenario says nothing about it, and the two
    are compared on the others. A mistake the probe did move is compared there too."""
    reference = _moved(
        _record({"g": 1.0, "same": 1.0}, {"g": 2.0, "same": 1.0}, {"g": 9.0, "same": 1.0})
    )
    learner = _moved(
        _record({"g": 5.0, "same": 1.0}, {"g": 6.0, "same": 1.0}, {"g": 9.0, "same": 1.0})
    )
    mistake = _record({"g": 5.0, "same": 1.0}, {"g": 6.0, "same": 1.0}, {"g": 5.0, "same": 1.0})
    if mistake_took_a_derivative:
        mistake = _moved(mistake)
    facts = TaskFacts(RUBRIC, INPUTS, (MOVED,), Runs(_plan(), learner, _plan(), reference, 1.0))
    found = matched_mistake(facts, _runs(("from grads", mistake)))
    assert (found is None) is mistake_took_a_derivative


def test_a_learner_the_probe_could_not_move_is_not_set_apart_by_it():
    """A gradient by hand that is right wherever the probe of derivatives says something
    is the reference's answer: no mistake is named for the moved scenario alone."""
    reference = _moved(
        _record({"g": 1.0, "same": 1.0}, {"g": 2.0, "same": 1.0}, {"g": 9.0, "same": 1.0})
    )
    by_hand = _record({"g": 1.0, "same": 1.0}, {"g": 2.0, "same": 1.0}, {"g": 1.0, "same": 1.0})
    unmoved = _record({"g": 1.0, "same": 1.0}, {"g": 2.0, "same": 1.0}, {"g": 1.0, "same": 1.0})
    facts = TaskFacts(RUBRIC, INPUTS, (MOVED,), Runs(_plan(), by_hand, _plan(), reference, 1.0))
    assert matched_mistake(facts, _runs(("flat gradient again", _moved(unmoved)))) is None


STEP = "def loss(p):\n    return p * 2.0\n"
SOLUTION = "g = 1.0\nsame = 1.0\n"
FROM_LOSS = "g = loss(0.5)\nsame = 1.0\n"  # the mistake reads `loss`, which the step defines


def _cells(task_source: str, other: str) -> Plan:
    return Plan(
        "f.py",
        False,
        (
            PlannedCell(0, task_source, 1, 0, "task", TASK, None),
            PlannedCell(1, other, 9, 0, "setup", None, None),
        ),
        None,
    )


@pytest.mark.parametrize(
    ("learner_cell", "helper", "named"),
    [
        ("g = 1.0\nsame = 1.0\n", STEP, False),  # alike in values, never reads `loss`
        (FROM_LOSS, STEP, True),
        ("g = via(0.5)\nsame = 1.0\n", STEP + "def via(v):\n    return loss(v)\n", True),
        ("g = = 1.0\n", STEP, True),  # does not parse: the values alone decide
    ],
)
def test_a_mistake_about_the_lessons_state_is_named_only_for_a_cell_that_reads_it(
    learner_cell, helper, named
):
    """The learner behaves like the mistake everywhere, but the mistake reads the lesson's
    `loss`, which the reference's answer never reads: a cell that does not read it (itself or
    through a helper of another cell) does not make that mistake (issue 60: a g by jet read
    out of another derivative was named as the flat model's gradient taken again)."""
    rubric = TaskRubric(dataclasses.replace(_task(), solution=SOLUTION), ("g", "same"), ())
    attempt = dataclasses.replace(_mistake("flat gradient again"), code=FROM_LOSS)
    runs = Runs(_cells(learner_cell, helper), SET_TRUE, _cells(SOLUTION, STEP), REFERENCE, 1.0)
    code = read_cells((STEP, SOLUTION, FROM_LOSS))
    mistakes = (MistakeRun(attempt, _cells(FROM_LOSS, STEP), SET_TRUE),)
    found = matched_mistake(TaskFacts(rubric, INPUTS, (), runs), mistakes, None, None, code)
    assert (found is not None) is named
    assert matched_mistake(TaskFacts(rubric, INPUTS, (), runs), mistakes) is not None


def test_only_the_scenarios_that_grade_the_task_must_agree():
    """Another task's probe (here `probe-1`) says nothing about this one."""
    learner = _record({"g": 1.0, "same": 1.0}, {"g": 2.0, "same": 1.0}, {"g": 9.0, "same": 1.0})
    learner = dataclasses.replace(
        learner, runs={**learner.runs, ("lesson", 0): _report("lesson", {"g": 1.0, "same": 0.0})}
    )
    leaf_count = dataclasses.replace(
        LEAF_COUNT,
        runs={**LEAF_COUNT.runs, ("lesson", 0): _report("lesson", {"g": 1.0, "same": 0.0})},
    )
    mistakes = _runs(("leaf count", leaf_count))
    assert matched_mistake(_facts(learner), mistakes) is None
    own = frozenset({"lesson", "run-1"})
    found = matched_mistake(_facts(learner), mistakes, own)
    assert found is not None and found.name == "leaf count"


def test_each_task_is_matched_on_its_own_probes_and_the_shared_inputs(lesson):
    grading = prepare_lesson(lesson, 5)
    scenarios = graded_scenarios(grading)
    drawn = {s.name for s in grading.inputs.others}
    for rubric in grading.rubrics:
        own = {p.name for p in grading.probes if p.probe.task == rubric.task.id}
        assert scenarios[rubric.task.id] == {"lesson", *drawn, *own}
    assert scenarios["make-it-yours"].isdisjoint(
        p.name for p in grading.probes if p.probe.task == "nested-model"
    )


@pytest.mark.parametrize(
    ("hint_for", "status", "check", "mistake", "shown"),
    [
        ((), FAILED, "lesson inputs", None, True),
        ((), ERROR, "lesson inputs", None, False),  # a syntax or runtime error speaks for itself
        ((), ERROR, "lesson inputs", "alias", True),  # unless a declared mistake explains it
        ((), "not attempted", "attempted", None, False),
        (("lesson inputs",), FAILED, "probes", None, False),  # a value it does not explain
        (("lesson inputs",), FAILED, "lesson inputs", None, True),
        (("alias",), ERROR, "lesson inputs", "alias", True),
        (("alias",), FAILED, "lesson inputs", "other", False),
    ],
)
def test_a_hint_is_shown_only_where_it_fits(hint_for, status, check, mistake, shown):
    assert hint_applies(_task(hint_for), status, check, mistake) is shown


def test_state_02_explains_every_wrong_attempt(lesson):
    wrong = [a for a in lesson.grading.attempts if a.expect == "failed"]
    assert wrong and all(a.is_mistake for a in wrong)
    titles = {a.name for a in declared_mistakes(lesson)}
    for needed in (
        "a structure check by leaf count",
        "forgetting to square",
        "deleting from grads through an alias",
        "plain gradient descent",
        "a print in place of the error",
    ):
        assert needed in titles


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        (
            ":instead: Square every leaf before you add it up, in `norm_squared` and in "
            "`manual` alike.\n",
            "",
            "wrong attempt 'forgetting to square' has no ':instead:'",
        ),
        (
            "Square every leaf before you add it up, in `norm_squared`",
            "Square every leaf before you add it up, in `norm_sqared`",
            "quotes `norm_sqared`, a name the lesson's code never uses",
        ),
        (
            "  - forgetting to square\n",
            "  - forgetting to cube\n",
            "':for:' names 'forgetting to cube', neither a check nor a declared mistake",
        ),
    ],
)
def test_verify_refuses_a_mistake_without_its_texts_or_with_unknown_names(
    lesson, tmp_path, old, new, said
):
    with pytest.raises(LessonError, match=said.replace("(", r"\(").replace(")", r"\)")):
        lesson_changed(lesson, tmp_path, old, new)


@pytest.mark.parametrize(
    "quoted",
    [
        "`for`",  # a keyword
        "`match`",  # a soft keyword
        "`init`",  # a library method the lesson calls: optimizer.init(params)
        "`optax`",  # a module it imports
        "`sum`",  # a builtin it calls
    ],
)
def test_a_mistake_may_quote_keywords_and_library_names_the_lesson_uses(lesson, tmp_path, quoted):
    """Issue 52: `:why:` refused `for`, and `:instead:` a library method (`init`), as "a name
    the lesson never binds"."""
    old = "Square every leaf before you add it up, in `norm_squared`"
    changed = lesson_changed(lesson, tmp_path, old, f"{old} (with {quoted})")
    assert any(quoted in a.instead for a in changed.grading.attempts)


def test_verify_refuses_a_lesson_whose_wrong_attempts_explain_nothing(tmp_path):
    """Not even a lesson that explains none of its mistakes is let off: the learner who
    makes one must read why and what to do instead."""
    source = FIXTURE_MD.read_text(encoding="utf-8")
    kept = [
        line for line in source.split("\n") if not line.startswith(("    why:", "    instead:"))
    ]
    assert len(kept) < len(source.split("\n"))
    path = tmp_path / "lesson.md"
    path.write_text("\n".join(kept), encoding="utf-8")
    phase = load_lesson(FIXTURE_MD).meta.phase
    with pytest.raises(LessonError, match="wrong attempt 'advanced once' has no ':why:'"):
        parse_lesson(path.read_text(encoding="utf-8"), path, phase)


def test_rename_key_keeps_the_number_of_leaves_and_changes_the_keys():
    tree = {"layer": {"w": 1}, "scale": 2}
    renamed = apply("rename_key", tree, "scale", None, lambda v: v, lambda t, v: t)
    assert renamed == {"layer": {"w": 1}, "scale_renamed": 2}
    assert apply("rename_key", tree, "missing", None, lambda v: v, lambda t, v: t) is tree


def test_the_class_report_counts_each_mistake_by_the_counting_attempts():
    """Hand-counted: ann and bob's counting (latest) attempts make "leaf count", cy's makes
    "set true"; ann's first attempt ("set true") does not count; dee passed."""

    def wrong(mistake: str):
        return dataclasses.replace(_grade("a", FAILED, "probes"), mistake=mistake)

    attempts = [
        _attempt("ann", wrong("set true")),
        _attempt("ann", wrong("leaf count")),
        _attempt("bob", wrong("leaf count")),
        _attempt("cy", wrong("set true")),
        _attempt("dee", _grade("a", PASSED)),
    ]
    report = class_report(attempts, "demo-01", "latest")
    assert report.tasks[0].mistakes == (("leaf count", 2), ("set true", 1))
    page = render_class_report(report)
    assert "Declared mistakes made" in page and "A: leaf count" in page
    assert '<td>leaf count</td><td class="number" data-label="Students">2 of 4</td>' in page


def test_the_gradebook_and_the_json_keep_the_matched_mistake(lesson, tmp_path):
    tasks = tuple(
        TaskResult(t.id, t.title, FAILED, "m", None, t.optional, "probes", None, f"mistake {t.id}")
        for t in lesson.tasks
    )
    report = GradeReport(lesson.meta.id, "x.py", tasks, (), 1.0, 7)
    assert GradeReport.from_json(report.to_json()) == report
    graded = attempt_of(
        report,
        Scoring.of(lesson),
        student="ann",
        lesson_title=lesson.meta.title,
        revision=lesson.meta.revision,
        toolkit="0.1.0",
        file="ann.py",
        data=b"# ann\n",
        submitted=0.0,
        graded_utc="2026-12-04T00:00:00Z",
        fingerprint="fp",
    )
    with Gradebook(Path(tmp_path) / "course.sqlite") as book:
        book.add_attempts([graded])
        (kept,) = book.attempts(lesson=lesson.meta.id)
    assert [t.mistake for t in kept.tasks] == [f"mistake {t.id}" for t in lesson.tasks]


def test_a_value_of_a_failed_task_never_agrees_with_its_hand_derivation():
    show = Show("value", "scale_by_hand", "scale_derivative", 1)
    assert Finding(show, value=-4.0, hand=-4.0).agrees
    assert not Finding(show, value=-4.0, hand=-4.0, task_passed=False).agrees
