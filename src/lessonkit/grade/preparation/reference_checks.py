"""The lesson's own reference run must be sound before any file is graded against it.

The reference child runs the lesson's steps and solutions in every scenario; these checks
refuse a lesson whose own code fails, whose solution fails a rule its child runs (`jit:`),
whose graded name has no comparable value, or whose probe names a value the solution never
reaches or changes a name where the solution never binds it alone, each with one message at
its lesson.md line. A report the reference store kept is reused only while it still passes
them (`kept_report`).
"""

from __future__ import annotations

from lessonkit.grade.channel.child_handle import GradingError
from lessonkit.grade.channel.child_report import ChildReport
from lessonkit.grade.channel.values import layout, opaque_type
from lessonkit.grade.preparation.prepared import LESSON, PreparedLesson
from lessonkit.grade.preparation.probes import ProbeRun
from lessonkit.lesson.rules import RULES


def kept_report(prepared: PreparedLesson) -> ChildReport | None:
    """The stored report of this very reference run, if one is kept and still checks out."""
    run = prepared.reference_run
    child_report = None if run.store is None else run.store.load(*run.stored_as)
    if child_report is None:
        return None
    try:
        check_reference(child_report, prepared, "")
    except GradingError:
        return None  # kept by another version of the checks: run the reference again
    return child_report


def check_reference(child_report: ChildReport, prepared: PreparedLesson, diagnostics: str) -> None:
    """The lesson's own code must run cleanly, or grading against it means nothing."""
    if child_report.stop_reason:
        raise GradingError(
            "the grading process could not run the lesson's reference code: "
            f"{child_report.stop_reason}",
            fix="check that JAX imports in this environment: python -c 'import jax'"
            + (f"\n{diagnostics.strip()}" if diagnostics.strip() else ""),
        )
    names = {r.task.id: r.names for r in prepared.rubrics}
    drawn = {s.name for s in prepared.inputs.others}
    for (scenario, index), run in child_report.runs.items():
        cell = prepared.reference.cell(index)
        if run.error is None or scenario not in (LESSON, *drawn):
            continue  # a probe may make the lesson's own code fail anywhere, by design
        is_assert = run.error.type == "AssertionError"
        reached = all(n in run.values for n in names.get(cell.task or "", ()))
        if scenario != LESSON and is_assert and reached:
            continue  # the lesson's own checks of typed-in numbers hold on its inputs only
        line = (run.error.frames or ((index, cell.line, 1),))[-1][1]
        seed = f" (input seed {prepared.inputs.seed})" if scenario in drawn else ""
        raise GradingError(
            f"the lesson's reference code fails in scenario {scenario!r}{seed}: "
            f"{run.error.type}: {run.error.message[:200]}",
            where=f"{prepared.lesson.path}:{line}",
            fix="fix lesson.md so that its steps and solutions run"
            + (" on every input its {grading} generators draw" if seed else ""),
        )
    _check_reference_rules(child_report, prepared, (LESSON, *drawn))
    _check_graded_values(child_report, prepared)
    for run in prepared.probes:
        _check_probe(child_report, prepared, run)


def _check_reference_rules(
    child_report: ChildReport, prepared: PreparedLesson, scenarios: tuple[str, ...]
) -> None:
    """A solution whose run breaks its own rule (one the child runs, such as `jit:`) would
    fail every learner who copies it."""
    rubrics = {r.task.id: r for r in prepared.rubrics}
    for (scenario, index), run in child_report.runs.items():
        rubric = rubrics.get(prepared.reference.cell(index).task or "")
        if rubric is None or scenario not in scenarios or run.error is not None:
            continue
        for kind in RULES:
            rule = rubric.rule(kind)
            child = kind.child
            gap = child.run_gap(run) if child is not None and rule is not None else None
            if child is None or gap is None:
                continue
            raise GradingError(
                f"the solution of {rubric.task.id!r} fails its own {kind.key!r} rule in scenario "
                f"{scenario!r}: {gap}",
                where=f"{prepared.lesson.path}:{rule.line or prepared.grading.line}",
                fix=child.run_fix,
            )


def _check_graded_values(child_report: ChildReport, prepared: PreparedLesson) -> None:
    """A graded name whose value has no comparable meaning (a function, an optimizer's
    `GradientTransformation`, a jitted function, an object) would pass any answer of its
    type: the lesson must grade what it returns instead."""
    for rubric in prepared.rubrics:
        cell = prepared.reference.task_cell(rubric.task.id)
        report = child_report.get(LESSON, cell.index) if cell is not None else None
        values = report.values if report is not None else {}
        for name in rubric.names:
            value = values.get(name)
            opaque = opaque_type(value) if value is not None else None
            if value is not None and opaque is not None:
                what = opaque if opaque == layout(value) else f"{layout(value)} holding a {opaque}"
                raise GradingError(
                    f"task {rubric.task.id!r} grades `{name}`, a {what}: it has no value to "
                    "compare, so any answer of that type would pass",
                    where=f"{prepared.lesson.path}:{rubric.task.line}",
                    fix=f"grade what `{name}` returns or holds instead (an optimizer's state or "
                    "updates, a function's result): have the scaffold leave that as todo(...)",
                )


def _check_probe(child_report: ChildReport, prepared: PreparedLesson, run: ProbeRun) -> None:
    """A probe whose messages name values the lesson's own solution never reaches is broken."""
    probe = run.probe
    cell = prepared.reference.task_cell(probe.task)
    report = child_report.get(run.name, cell.index) if cell is not None else None
    values = report.values if report is not None else {}
    if probe.source == "binding" and report is not None and not report.reached:
        raise GradingError(
            f"probe {probe.name!r}: the lesson's own solution binds `{probe.target}` only "
            "beside another graded name, so the probe never changes it there",
            where=f"{prepared.lesson.path}:{probe.line}",
            fix=f"bind `{probe.target}` in a statement of its own in the solution",
        )
    for name, _ in probe.messages:
        if name not in values:
            raise GradingError(
                f"probe {probe.name!r}: the lesson's own solution does not assign `{name}` "
                "when the probe runs, so its message can never be shown",
                where=f"{prepared.lesson.path}:{probe.line}",
                fix="name only values the solution assigns before anything the probe makes "
                "fail, or vary another source",
            )
