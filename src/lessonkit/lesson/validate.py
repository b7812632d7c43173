"""Rules that need the whole lesson: unique ids, the five stages, and what blocks name."""

from __future__ import annotations

from typing import TypeVar

from lessonkit.errors import LessonError
from lessonkit.grading_child.names import bindings
from lessonkit.lesson.blocks import at_line
from lessonkit.lesson.mistakes import validate_mistakes
from lessonkit.lesson.model import (
    STAGES,
    EvidenceBlock,
    EvidenceItem,
    Experiment,
    Figure,
    Grading,
    Lesson,
    Plot,
    Quiz,
    Task,
)
from lessonkit.lesson.rules import rule_named
from lessonkit.lesson.syntax import parse_python

T = TypeVar("T")


def validate(lesson: Lesson) -> None:
    """Raise the first rule the whole lesson breaks, at its lesson.md line."""
    where = str(lesson.path)
    seen: dict[str, int] = {}
    for section in lesson.sections:
        if section.id in seen:
            raise LessonError(
                f"section id {section.id!r} is used twice (first at line {seen[section.id]})",
                where=at_line(where, section.line),
            )
        seen[section.id] = section.line
    titles = [p.title for p in lesson.parts if p.stage is not None]
    if titles != list(STAGES):
        raise LessonError(
            f"the stages must appear once each, in order: {', '.join(STAGES)}; "
            f"found {', '.join(titles)}",
            where=at_line(where, 1),
        )
    for kind, what in ((Figure, "{figure-data}"), (Plot, "{plot}")):
        if len(lesson.items(kind)) != 1:
            raise LessonError(f"the lesson needs exactly one {what} block", where=at_line(where, 1))
    if not lesson.steps:
        raise LessonError("the lesson needs at least one {step} block", where=at_line(where, 1))
    for kind, what in ((Task, "task"), (Quiz, "quiz")):
        seen_ids: dict[str, int] = {}
        for item in lesson.items(kind):
            if item.id in seen_ids:
                raise LessonError(
                    f"{what} id {item.id!r} is used twice (first at line {seen_ids[item.id]})",
                    where=at_line(where, item.line),
                )
            seen_ids[item.id] = item.line
    _validate_grading(lesson)
    _validate_evidence(lesson)


def _at_most_one(lesson: Lesson, kind: type[T], what: str) -> tuple[T, ...]:
    blocks = lesson.items(kind)
    if len(blocks) > 1:
        raise LessonError(
            f"the lesson has more than one {what} block",
            where=at_line(str(lesson.path), blocks[1].line),
        )
    return blocks


def _validate_evidence(lesson: Lesson) -> None:
    """At most one {evidence} block, naming only sections, tasks and numbers that exist."""
    _at_most_one(lesson, EvidenceBlock, "{evidence}")
    sections = {s.id: s for s in lesson.sections}
    tasks = {t.id for t in lesson.tasks}
    numbers = {n.name for n in lesson.numbers}
    for item in lesson.evidence:
        _validate_evidence_item(item, lesson, sections, tasks, numbers)


def _validate_evidence_item(
    item: EvidenceItem, lesson: Lesson, sections: dict, tasks: set[str], numbers: set[str]
) -> None:
    def fail(message: str, line: int = item.line) -> LessonError:
        where = at_line(str(lesson.path), line)
        return LessonError(f"{{evidence}} block: item {item.title!r}: {message}", where=where)

    section = sections.get(item.section)
    if section is None:
        raise fail(f"'section' names no section of this lesson: {item.section!r}")
    if not item.prompt and not any(isinstance(i, Experiment) for i in section.items):
        raise fail(f"give a 'prompt': section {item.section!r} has no experiment to take it from")
    if item.task and item.task not in tasks:
        raise fail(f"'task' names no task of this lesson: {item.task!r}")
    for show in item.show:
        if show.number and show.number not in numbers:
            raise fail(f"'number' names no entry of the {{numbers}} block: {show.number!r}")
        if show.kind == "numbers" and not numbers:
            raise fail("'numbers: all' needs a {numbers} block")


def _validate_grading(lesson: Lesson) -> None:
    """At most one {grading} block, naming only tasks the lesson has."""
    where = str(lesson.path)
    blocks = _at_most_one(lesson, Grading, "{grading}")
    if not blocks:
        return
    grading, task_ids = blocks[0], {t.id for t in lesson.tasks}
    for task_id, _ in grading.points:
        if task_id not in task_ids:
            raise LessonError(
                f"{{grading}} block: 'points' names no task of this lesson: {task_id!r}",
                where=at_line(where, grading.line),
            )
    tasks = {t.id: t for t in lesson.tasks}
    for name, task_id, rule in grading.rules:
        at = at_line(where, rule.line or grading.line)
        if task_id not in task_ids:
            raise LessonError(
                f"{{grading}} block: '{name}' names no task of this lesson: {task_id!r}", where=at
            )
        parent, steps = rule_named(name).parent, tuple(step.code for step in lesson.steps)
        gap = parent.gap(rule, tasks[task_id].solution, steps) if parent is not None else None
        if parent is not None and gap is not None:
            raise LessonError(
                f"{{grading}} block: the solution of {task_id!r} {gap}", where=at, fix=parent.fix
            )
    entries = [("attempt", a) for a in grading.attempts] + [("probe", p) for p in grading.probes]
    for kind, entry in entries:
        if entry.task not in task_ids:
            raise LessonError(
                f"{{grading}} block: {kind} {entry.name!r} names no task of this lesson: "
                f"{entry.task!r}",
                where=at_line(where, entry.line),
            )
    validate_mistakes(lesson, grading)
    step_names = {n for step in lesson.steps for n in _assigned(step.code)}
    for probe in grading.probes:
        if probe.bound and probe.bound not in _assigned(tasks[probe.task].solution):
            raise LessonError(
                f"{{grading}} block: probe {probe.name!r} changes {probe.bound!r} where the "
                f"cell of {probe.task!r} binds it, and the task's solution binds no such name "
                "at the top of its cell",
                where=at_line(where, probe.line),
                fix="vary a name the solution assigns at the top of its cell, or give a name a "
                "step assigns its value with 'transform: replace' and 'value:'",
            )
        if probe.source == "step" and probe.target not in step_names:
            raise LessonError(
                f"{{grading}} block: probe {probe.name!r} varies {probe.target!r}, which no step "
                "assigns: a probe varies a value at its source, before the task's cell runs",
                where=at_line(where, probe.line),
                fix="vary an input the generators draw, a name a step assigns (with 'replace'), "
                "'gradients', or a library function such as optax.apply_updates (or one each "
                "instance of a library's named tuple carries: optax.GradientTransformation.update)",
            )


def _assigned(code: str) -> list[str]:
    """Names a step's or a solution's top-level assignments bind (`value, grads = ...` binds
    both): where a step's name is replaced, and where a `binding` probe changes a name (the
    child cuts a task cell at top-level statements only, `grading_child.cells._segments`)."""
    return [name for statement in parse_python(code).body for name in bindings(statement)]
