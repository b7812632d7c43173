"""What a grader sends a child: a lesson's grading (inputs, probes, the reference's plan),
its scenarios, the names and order the child sees them in, and the requests built from them.

A learner request's scenario order is drawn per request (`scenario_order`) from the
command's seed and the file's content, and every scenario wraps the same library calls
(`_same_calls`), so neither a scenario's name, its place nor its wrappers say which one is a
probe, and one seed replays every draw of a grading.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, replace
from pathlib import Path

from lessonkit.grade.channel.protocol import CellSpec, ChangedCall, Request, ScenarioSpec
from lessonkit.grade.preparation.inputs import LessonInputs, draw_inputs, grading_of
from lessonkit.grade.preparation.probes import ProbeRun, probe_runs
from lessonkit.grade.preparation.rubric import TaskRubric, rubric_for
from lessonkit.grade.submission.plan import (
    Plan,
    PracticeLayout,
    bound_names,
    imported_modules,
    plan_cells,
    practice_layout,
    reference_plan,
)
from lessonkit.grade.submission.sources import Submission, read_submission
from lessonkit.grading_child.transforms import UNCHANGED
from lessonkit.lesson.model import Grading, Lesson
from lessonkit.lesson.rules import RULES
from lessonkit.lesson.scripts import render_exercise_script
from lessonkit.run.limits import cpu_allowance

LESSON = "lesson"  # the scenario that runs the learner's file as written


def scenario_order(seed: int, submission: Submission, replay: int | None = None) -> random.Random:
    """What shuffles a learner request's scenarios: a stream of its own, seeded by the
    command's input seed and the sha256 of the file's cells, so `--seed N` replays the order
    (a resumed batch, a shard and a second check give the same report) while a fresh seed,
    drawn secretly per command, leaves it unforeseeable. A `replay` number gives every file
    one order (`LESSONKIT_SCENARIO_ORDER`, `GradingSettings.scenario_order`: the hostile suite
    sets it)."""
    if replay is not None:
        return random.Random(replay)
    cells = [[cell.source, cell.line, cell.task] for cell in submission.cells]
    digest = hashlib.sha256(json.dumps(cells, ensure_ascii=True).encode()).hexdigest()
    return random.Random(f"{seed}/order/{digest}")


@dataclass(frozen=True)
class LessonGrading:
    """Everything about grading a lesson that does not depend on the learner's file."""

    lesson: Lesson
    grading: Grading
    rubrics: tuple[TaskRubric, ...]
    inputs: LessonInputs
    probes: tuple[ProbeRun, ...]
    reference: Plan
    step_names: tuple[str, ...]
    preload: tuple[str, ...]
    layout: PracticeLayout  # what each learner's file is matched to


def lesson_grading(lesson: Lesson, seed: int) -> LessonGrading:
    """The part of a lesson's preparation that needs no child and no store, drawn from
    `seed`; `grade.preparation.prepared.prepare_lesson` adds the reference run to it."""
    grading = grading_of(lesson)
    layout = practice_layout(lesson)
    return LessonGrading(
        lesson=lesson,
        grading=grading,
        rubrics=rubric_for(lesson, grading),
        inputs=draw_inputs(grading, seed),
        probes=probe_runs(grading, seed),
        reference=reference_plan(lesson),
        step_names=tuple(n for s in lesson.steps for n in bound_names(s.code)),
        preload=imported_modules(layout, lesson.tasks),
        layout=layout,
    )


def scenarios(grading: LessonGrading) -> tuple[ScenarioSpec, ...]:
    """The lesson's inputs, the drawn input sets, then `probes.COPIES` scenarios per probe.

    Every scenario but the lesson's runs the same way in the child (values for names the
    steps assign, library calls changed), so nothing there says which one is a probe.
    """
    out = [ScenarioSpec(LESSON, None, lesson_only_cells=True)]
    out += [ScenarioSpec(s.name, s.values) for s in grading.inputs.others]
    out += [ScenarioSpec(p.name, p.inputs, p.sources) for p in grading.probes]
    return tuple(out)


def wire_names(grading: LessonGrading, order: random.Random | None = None) -> dict[str, str]:
    """Names the child sees for each scenario (`run-1`, `run-2`...) -> the parent's own.

    The child runs its scenarios in the order of these names. With `order` (a grader draws
    one per request) the names go to the scenarios in a shuffled order, so neither a
    scenario's name nor its place in the run says which it is, and a probe's copies land at
    places of their own.
    """
    names = [s.name for s in scenarios(grading)[1:]]
    if order is not None:
        order.shuffle(names)
    return {LESSON: LESSON, **{f"run-{n}": name for n, name in enumerate(names, 1)}}


def _same_calls(specs: list[ScenarioSpec]) -> list[ScenarioSpec]:
    """Every scenario changes the same library calls, by nothing where it varies none of them.

    So the calls a probe wraps are wrapped alike in every scenario, and whether `jax.grad` is
    wrapped says nothing about which scenario is running."""
    calls = sorted({source.call for spec in specs for source in spec.sources})
    return [
        replace(
            spec,
            sources=tuple(
                next(
                    (s for s in spec.sources if s.call == call),
                    ChangedCall(call, UNCHANGED.name, "", None),
                )
                for call in calls
            ),
        )
        for spec in specs
    ]


def _asked(rubric: TaskRubric | None) -> dict[str, tuple[str, ...]]:
    """What the child is asked for a task's cell by each rule it runs (`ChildHooks.ask`), by the
    rule's wire key; nothing for a cell of no task or a rule the task is not given."""
    asked = {}
    for kind in RULES:
        rule = rubric.rule(kind) if rubric is not None else None
        if kind.child is not None and rule is not None:
            asked[kind.key] = kind.child.ask(rule)
    return asked


def build_request(
    request_id: str,
    plan: Plan,
    grading: LessonGrading,
    budget: float | None,
    names: dict[str, str] | None = None,
) -> Request:
    """The request for one child; `names` (from `wire_names`) gives the scenarios' names and
    order in the child, declaration order by default."""
    names = wire_names(grading) if names is None else names
    rubric_names = {r.task.id: r.names for r in grading.rubrics}
    rubrics = {r.task.id: r for r in grading.rubrics}
    cells = tuple(
        CellSpec(
            index=c.index,
            source=c.source,
            offset=c.offset,
            role=c.role,
            report=rubric_names.get(c.task, ()) if c.task else (),
            asks=_asked(rubrics.get(c.task) if c.task else None),
        )
        for c in plan.cells
    )
    by_name = {spec.name: spec for spec in scenarios(grading)}
    sent = [replace(by_name[name], name=wire) for wire, name in names.items()]
    return Request(
        id=request_id,
        preload=grading.preload,
        budget=budget,
        cells=cells,
        checkpoint=plan.checkpoint,
        checkpoint_names=grading.step_names,
        scenarios=tuple(_same_calls(sent)),
        cpu_seconds=None if budget is None else cpu_allowance(budget),
    )


def warm_up_request(lesson: Lesson, grading: LessonGrading, budget: float) -> Request:
    """What a learner child may run before its learner's file: the lesson's practice file
    exactly as a learner receives it (no task solved), on the lesson's own inputs only."""
    given = render_exercise_script(lesson).encode()
    plan = plan_cells(read_submission(Path("practice.py"), given), grading.layout)
    lesson_only = tuple(s for s in scenarios(grading) if s.name == LESSON)
    return replace(build_request("warm-up", plan, grading, budget), scenarios=lesson_only)
