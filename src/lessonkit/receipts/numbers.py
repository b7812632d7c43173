"""The third numbers rule: each declared value is what its expression gives after the steps run,
and each `{diagram}` is what `lessonkit.trees.describe` draws of its tree after them.

It runs the build steps in this process (`run.inprocess`), so it imports JAX. A passing
verdict is kept in `outputs/numbers-check.json`, keyed by a hash of the steps, expressions,
declared values and installed JAX, so a rebuild after a prose edit runs nothing; `lessonkit
verify` always runs afresh.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lessonkit.atomic import write_atomically
from lessonkit.defaults import NUMBERS_ATOL, NUMBERS_RTOL
from lessonkit.errors import LessonError
from lessonkit.lesson.files import NUMBERS_CHECK, NUMBERS_SCHEMA
from lessonkit.lesson.model import Diagram, Lesson, Number
from lessonkit.lesson.numbers import lesson_line, prose_problems
from lessonkit.run.environment import package_version


def _agrees(computed: Any, number: Number) -> bool:
    import numpy as np

    try:
        got = np.asarray(computed, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        return False
    want = np.asarray(number.values, dtype=float)
    return got.shape == want.shape and bool(
        np.allclose(got, want, rtol=NUMBERS_RTOL, atol=NUMBERS_ATOL)
    )


def _shown(computed: Any) -> str:
    import numpy as np

    try:
        values = np.asarray(computed, dtype=float)
    except (TypeError, ValueError):
        return repr(computed)
    if values.ndim == 0:
        return f"{float(values):.7g}"
    return "[" + ", ".join(f"{v:.7g}" for v in values.reshape(-1)) + "]"


def _stated(lesson: Lesson, number: Number) -> str:
    lines = ", ".join(str(line) for line in number.stated)
    return f" (stated at {lesson.path.name}:{lines})" if number.stated else ""


def value_problems(lesson: Lesson) -> tuple[LessonError, ...]:
    """Declared numbers that the code, run now, does not give; a failing step is one problem."""
    from lessonkit.run.inprocess import quiet_cpu, run_steps  # imports JAX

    namespace: dict[str, Any] = {"__name__": "__lessonkit_numbers__"}
    try:
        with quiet_cpu():
            run_steps(lesson, namespace)
    except LessonError as exc:
        return (exc,)
    problems = list(_diagram_problems(lesson, namespace))
    for number in lesson.numbers:
        try:
            with quiet_cpu():
                computed = eval(number.expr, namespace)  # the author's own expression
        except Exception as exc:
            problems.append(
                LessonError(
                    f"{number.name}: its expr raised {type(exc).__name__}: {exc}",
                    where=lesson_line(lesson, number.line),
                )
            )
            continue
        if not _agrees(computed, number):
            problems.append(
                LessonError(
                    f"{number.name} is declared {number.shown} but the code gives "
                    f"{_shown(computed)}{_stated(lesson, number)}",
                    where=lesson_line(lesson, number.line),
                    fix="if the code is right, change the declaration and the prose that "
                    "states it; otherwise fix the code",
                )
            )
    return tuple(problems)


def _diagram_problems(lesson: Lesson, namespace: dict[str, Any]) -> list[LessonError]:
    """Each `{diagram}` must be `describe(NAME)` of the value its `:tree:` names, exactly."""
    from lessonkit.trees import describe

    problems = []
    for diagram in lesson.items(Diagram):
        where = lesson_line(lesson, diagram.line)
        if diagram.tree not in namespace:
            problems.append(
                LessonError(
                    f"{{diagram}} of `{diagram.tree}`: the steps define no such name",
                    where=where,
                    fix="name a value the steps assign in its :tree: option",
                )
            )
            continue
        drawn = describe(namespace[diagram.tree], name=diagram.tree)
        if drawn.strip() != diagram.text.strip():
            problems.append(
                LessonError(
                    f"the {{diagram}} of `{diagram.tree}` is not what the code gives; "
                    f"lessonkit.trees.describe({diagram.tree}) draws:\n{drawn}",
                    where=where,
                    fix="if the code is right, put that drawing in the block and fix the prose "
                    "around it; otherwise fix the code",
                )
            )
    return problems


def number_problems(lesson: Lesson) -> tuple[LessonError, ...]:
    """Every broken rule: prose first (no code runs for it), then the values the code gives."""
    return prose_problems(lesson) + value_problems(lesson)


class NumbersError(LessonError):
    """The lesson's prose, declarations and code disagree; lists every problem."""

    def __init__(self, problems: tuple[LessonError, ...]):
        self.problems = problems
        first = problems[0]
        rest = "".join(f"\n{p.where}: {p.message}" for p in problems[1:])
        super().__init__(first.message + rest, where=first.where, fix=first.fix)


def numbers_key(lesson: Lesson) -> str:
    """The hash of everything the value rule depends on: steps, expressions, values,
    diagrams, JAX."""
    parts = {
        "steps": [step.code for step in lesson.steps],
        "numbers": [[n.name, n.expr, list(n.values)] for n in lesson.numbers],
        "diagrams": [[d.tree, d.text] for d in lesson.items(Diagram)],
        "jax": package_version("jax"),
        "jaxlib": package_version("jaxlib"),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode("utf-8")).hexdigest()


def _record_path(lesson: Lesson) -> Path:
    return lesson.directory / NUMBERS_CHECK


def _render_record(lesson: Lesson, key: str) -> bytes:
    body = {
        "schema": NUMBERS_SCHEMA,
        "lesson": lesson.meta.id,
        "about": "The declared numbers and diagrams were computed by this code and agreed; "
        "`lessonkit build` runs the steps again only when the key (steps, expressions, values, "
        "diagrams, JAX) changes.",
        "key": key,
        "numbers": [n.name for n in lesson.numbers],
    }
    return (json.dumps(body, indent=2) + "\n").encode("utf-8")


def numbers_current(lesson: Lesson, key: str | None = None) -> bool:
    """Whether the kept verdict says the code gives every declared value, for this code.

    `key`: `numbers_key(lesson)`, when the caller has it already.
    """
    try:
        body = json.loads(_record_path(lesson).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(body, dict)
        and body.get("schema") == NUMBERS_SCHEMA
        and body.get("lesson") == lesson.meta.id
        and body.get("key") == (key or numbers_key(lesson))
    )


@dataclass(frozen=True)
class NumbersCheck:
    """What `check_numbers` did: whether the lesson's code ran, and the verdict file it
    wrote (None when the kept one was current or nothing was kept)."""

    ran: bool
    written: Path | None = None


def check_numbers(lesson: Lesson, *, keep: bool = True) -> NumbersCheck:
    """Raise NumbersError naming every problem, if there is one (`build` and `run` call it).

    With `keep`, a current kept verdict skips the run and a passing run is kept for the next
    call.
    """
    problems = prose_problems(lesson)
    if problems:
        raise NumbersError(problems)
    key = numbers_key(lesson)
    if keep and numbers_current(lesson, key):
        return NumbersCheck(ran=False)
    problems = value_problems(lesson)
    if problems:
        raise NumbersError(problems)
    if keep:
        path, content = _record_path(lesson), _render_record(lesson, key)
        if not path.is_file() or path.read_bytes() != content:
            write_atomically(path, content)
            return NumbersCheck(ran=True, written=path)
    return NumbersCheck(ran=True)
