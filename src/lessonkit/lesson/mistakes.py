"""A lesson's declared mistakes: each wrong attempt explains itself, in the lesson's own names.

A learner who makes a declared mistake reads its title, what they misunderstood (`:why:`)
and what to do instead (`:instead:`), so both must be there and must speak of names the
lesson's code has; a hint's `:for:` names only checks and mistakes of its own task.
"""

from __future__ import annotations

import ast
import keyword
import re

from lessonkit.errors import LessonError
from lessonkit.lesson.blocks import at_line
from lessonkit.lesson.model import DeclaredAttempt, Grading, Lesson
from lessonkit.lesson.rules import CHECKS
from lessonkit.lesson.syntax import parse_python

_QUOTED_NAME = re.compile(r"`([A-Za-z_]\w*)`")
"""A code span that is one bare name (`total`): a value the text says the lesson has."""


def declared_mistakes(lesson: Lesson) -> tuple[DeclaredAttempt, ...]:
    """The lesson's wrong attempts that explain themselves: what the grader names and the
    class report counts."""
    grading = lesson.grading
    return () if grading is None else tuple(a for a in grading.attempts if a.is_mistake)


def lesson_names(lesson: Lesson) -> frozenset[str]:
    """Every name the lesson's steps, experiments and task code have: what they bind anywhere
    (in a `try` block too), import, read (`sum`, `jnp`) or reach as an attribute (`init` of
    `optimizer.init`), the graded inputs, and Python's keywords (`for`, `match`), which a
    text may quote too."""
    sources = [step.code for step in lesson.steps]
    sources += [e.code for e in lesson.experiments]
    for task in lesson.tasks:
        sources += [task.scaffold, task.solution]
    names: set[str] = {*keyword.kwlist, *keyword.softkwlist}
    for source in sources:
        try:
            tree = parse_python(source)
        except (SyntaxError, LessonError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.alias):
                names.update((node.asname or node.name).split("."))
                names.update(node.name.split("."))
            elif isinstance(node, ast.FunctionDef | ast.ClassDef):
                names.add(node.name)
    grading = lesson.grading
    if grading is not None:
        names.update(grading.input_names)
    return frozenset(names)


def validate_mistakes(lesson: Lesson, grading: Grading) -> None:
    """Every `:expect: failed` attempt has `:why:` and `:instead:`, and every attempt's texts
    quote only the lesson's names; every hint's `:for:` names a check or a mistake of its own
    task."""
    where = str(lesson.path)
    known = lesson_names(lesson)
    for attempt in grading.attempts:
        at = at_line(where, attempt.line)
        for option, text in (("why", attempt.why), ("instead", attempt.instead)):
            if not text and attempt.expect == "failed":
                raise LessonError(
                    f"{{attempt}} block: wrong attempt {attempt.name!r} has no ':{option}:'",
                    where=at,
                    fix="give every ':expect: failed' attempt ':why:' (what the learner "
                    "misunderstood) and ':instead:' (what to do instead): the learner whose "
                    "answer makes this mistake reads both",
                )
            unknown = [n for n in _QUOTED_NAME.findall(text) if n not in known]
            if unknown:
                raise LessonError(
                    f"{{attempt}} block: ':{option}:' of {attempt.name!r} quotes "
                    f"`{unknown[0]}`, a name the lesson's code never uses",
                    where=at,
                    fix="quote only names the lesson's steps, experiments or tasks bind, import "
                    "or use (a keyword such as `for` is fine too)",
                )
    for task in lesson.tasks:
        titles = {a.name for a in grading.attempts if a.task == task.id and a.is_mistake}
        for target in task.hint_for:
            if target not in CHECKS and target not in titles:
                raise LessonError(
                    f"{{hint}} block of task {task.id!r}: ':for:' names {target!r}, neither a "
                    "check nor a declared mistake of this task",
                    where=at_line(where, task.line),
                    fix=f"name one of the checks ({', '.join(CHECKS)}) or the title of "
                    "an ':expect: failed' attempt at this task",
                )
