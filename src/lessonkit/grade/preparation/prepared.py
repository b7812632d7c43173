"""A lesson prepared for grading, worked out once, and the requests its children are sent.

`prepare_lesson` is the one way a lesson is prepared. It gives one frozen `PreparedLesson`
holding everything grading a file of the lesson needs and no file changes: the practice
file's layout, the rubrics, the input sets and probes drawn from the grader's seed, the
reference's plan, the scenarios every child runs, and the reference request with where the
reference store keeps its report. A file's plan (`plan_cells` on `layout`) and its request
(`learner_request`) are small steps taken per file.

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

from lessonkit.grade.channel.child_report import ChildReport
from lessonkit.grade.channel.protocol import CellSpec, ChangedCall, Request, ScenarioSpec
from lessonkit.grade.channel.reference_store import ReferenceStore, reference_key
from lessonkit.grade.preparation.inputs import LessonInputs, draw_inputs, grading_of
from lessonkit.grade.preparation.probes import ProbeRun, probe_runs
from lessonkit.grade.preparation.rubric import TaskRubric, rubric_for
from lessonkit.grade.submission.known_answers import Varied, varied_of
from lessonkit.grade.submission.plan import (
    Plan,
    PracticeLayout,
    imported_modules,
    plan_cells,
    practice_layout,
    reference_plan,
    step_names,
)
from lessonkit.grade.submission.sources import Submission, read_submission
from lessonkit.grading_child.transforms import UNCHANGED
from lessonkit.lesson.model import Grading, Lesson
from lessonkit.lesson.rules import RULES
from lessonkit.lesson.scripts import render_exercise_script
from lessonkit.run.limits import cpu_allowance

LESSON = "lesson"  # the scenario that runs the learner's file as written


@dataclass(frozen=True)
class ReferenceRun:
    """A reference request: what the child is sent, the names it sees the scenarios by, and
    where the reference store keeps its report (None: no store)."""

    request: Request
    names: dict[str, str]
    store: ReferenceStore | None
    stored_as: tuple[str, str]  # the store's (lesson id, key): the request, hashed once


@dataclass(frozen=True)
class PreparedLesson:
    """Everything grading a lesson's files needs that no file changes."""

    lesson: Lesson
    grading: Grading  # as declared in lesson.md
    rubrics: tuple[TaskRubric, ...]
    inputs: LessonInputs
    probes: tuple[ProbeRun, ...]
    reference: Plan  # the reference's own plan: the lesson's steps and solutions
    layout: PracticeLayout  # what each learner's file is matched to
    step_names: tuple[str, ...]
    preload: tuple[str, ...]
    varied: Varied  # the calls the lesson's probes vary, for the review marks
    reference_run: ReferenceRun
    child_report: ChildReport | None = None  # the reference run's report, once known

    def with_child_report(self, child_report: ChildReport | None) -> PreparedLesson:
        return replace(self, child_report=child_report)

    @property
    def scenarios(self) -> tuple[ScenarioSpec, ...]:
        """What every child runs: the lesson's inputs, the drawn input sets, the probes."""
        return _scenarios(self.inputs, self.probes)

    def probes_of(self, task_id: str) -> tuple[ProbeRun, ...]:
        """The probe runs that test task `task_id`."""
        return tuple(p for p in self.probes if p.probe.task == task_id)


def prepare_lesson(
    lesson: Lesson,
    seed: int,
    store: ReferenceStore | None = None,
    request_id: str = "reference",
) -> PreparedLesson:
    """`lesson` prepared for grading under `seed`, with its reference request, its scenarios
    named once for the child and the store's key alike. Needs no child: the reference
    report is added once known (`with_child_report`)."""
    grading = grading_of(lesson)
    layout = practice_layout(lesson)
    inputs, probes = draw_inputs(grading, seed), probe_runs(grading, seed)
    rubrics = rubric_for(lesson, grading, layout.code)
    reference = reference_plan(lesson)
    scenarios = _scenarios(inputs, probes)
    steps = step_names(lesson, layout.code)
    preload = imported_modules(layout, lesson)
    names = _wire_names(scenarios)
    request = _request(request_id, reference, rubrics, scenarios, preload, steps, None, names)
    return PreparedLesson(
        lesson=lesson,
        grading=grading,
        rubrics=rubrics,
        inputs=inputs,
        probes=probes,
        reference=reference,
        layout=layout,
        step_names=steps,
        preload=preload,
        varied=varied_of(grading.probes),
        reference_run=ReferenceRun(
            request, names, store, stored_under(lesson, seed, store, request, names)
        ),
    )


def stored_under(
    lesson: Lesson, seed: int, store: ReferenceStore | None, request: Request, names: dict[str, str]
) -> tuple[str, str]:
    """Where the reference store keeps the report of `request` sent to the trusted child:
    (lesson id, key), the key empty where there is no store."""
    meta = lesson.meta
    key = reference_key(meta.id, meta.revision, seed, request, names) if store else ""
    return meta.id, key


def _scenarios(inputs: LessonInputs, probes: tuple[ProbeRun, ...]) -> tuple[ScenarioSpec, ...]:
    """The lesson's inputs, the drawn input sets, then `probes.COPIES` scenarios per probe.

    Every scenario but the lesson's runs the same way in the child (values for names the
    steps assign, library calls changed), so nothing there says which one is a probe.
    """
    out = [ScenarioSpec(LESSON, None, lesson_only_cells=True)]
    out += [ScenarioSpec(s.name, s.values) for s in inputs.others]
    out += [ScenarioSpec(p.name, p.inputs, p.sources) for p in probes]
    return tuple(out)


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


def wire_names(prepared: PreparedLesson, order: random.Random | None = None) -> dict[str, str]:
    """Names the child sees for each scenario (`run-1`, `run-2`...) -> the parent's own.

    The child runs its scenarios in the order of these names. With `order` (a grader draws
    one per request) the names go to the scenarios in a shuffled order, so neither a
    scenario's name nor its place in the run says which it is, and a probe's copies land at
    places of their own.
    """
    return _wire_names(prepared.scenarios, order)


def _wire_names(
    scenarios: tuple[ScenarioSpec, ...], order: random.Random | None = None
) -> dict[str, str]:
    names = [s.name for s in scenarios[1:]]
    if order is not None:
        order.shuffle(names)
    return {LESSON: LESSON, **{f"run-{n}": name for n, name in enumerate(names, 1)}}


def learner_request(
    prepared: PreparedLesson,
    plan: Plan,
    submission: Submission,
    request_id: str,
    budget: float,
    replay: int | None = None,
) -> tuple[Request, dict[str, str]]:
    """A learner child's request for `plan` (of `submission`), its scenarios named in the
    order `scenario_order` draws for that file, and those names."""
    order = scenario_order(prepared.inputs.seed, submission, replay)
    names = wire_names(prepared, order)
    return build_request(request_id, plan, prepared, budget, names), names


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


def _bound_and_varied(rubric: TaskRubric | None) -> tuple[str, ...]:
    """The names a probe of the task changes where its cell binds them (`Probe.bound`), in
    every scenario alike (the change is nothing where none is made)."""
    probes = rubric.probes if rubric is not None else ()
    return tuple(dict.fromkeys(p.bound for p in probes if p.bound))


def build_request(
    request_id: str,
    plan: Plan,
    prepared: PreparedLesson,
    budget: float | None,
    names: dict[str, str] | None = None,
) -> Request:
    """The request for one child; `names` (from `wire_names`) gives the scenarios' names and
    order in the child, declaration order by default."""
    names = wire_names(prepared) if names is None else names
    return _request(
        request_id,
        plan,
        prepared.rubrics,
        prepared.scenarios,
        prepared.preload,
        prepared.step_names,
        budget,
        names,
    )


def _request(
    request_id: str,
    plan: Plan,
    rubrics: tuple[TaskRubric, ...],
    scenarios: tuple[ScenarioSpec, ...],
    preload: tuple[str, ...],
    step_names: tuple[str, ...],
    budget: float | None,
    names: dict[str, str],
) -> Request:
    by_task = {r.task.id: r for r in rubrics}
    cells = tuple(
        CellSpec(
            index=c.index,
            source=c.source,
            offset=c.offset,
            role=c.role,
            report=by_task[c.task].names if c.task in by_task else (),
            asks=_asked(by_task.get(c.task) if c.task else None),
            varies=_bound_and_varied(by_task.get(c.task) if c.task else None),
        )
        for c in plan.cells
    )
    by_name = {spec.name: spec for spec in scenarios}
    sent = [replace(by_name[name], name=wire) for wire, name in names.items()]
    return Request(
        id=request_id,
        preload=preload,
        budget=budget,
        cells=cells,
        checkpoint=plan.checkpoint,
        checkpoint_names=step_names,
        scenarios=tuple(_same_calls(sent)),
        cpu_seconds=None if budget is None else cpu_allowance(budget),
    )


def warm_up_request(prepared: PreparedLesson, budget: float) -> Request:
    """What a learner child may run before its learner's file: the lesson's practice file
    exactly as a learner receives it (no task solved), on the lesson's own inputs only."""
    given = render_exercise_script(prepared.lesson).encode()
    plan = plan_cells(read_submission(Path("practice.py"), given), prepared.layout)
    lesson_only = tuple(s for s in prepared.scenarios if s.name == LESSON)
    return replace(build_request("warm-up", plan, prepared, budget), scenarios=lesson_only)
