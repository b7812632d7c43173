"""The grading starter imports every module a lesson's practice file imports, its tasks'
cells included (issue 51, item 1): a module left to each forked child (state-02's optax)
cost every child under gVisor hundreds of file opens and stats."""

from __future__ import annotations

import ast

import pytest

from lessonkit.grade.preparation.prepared import prepare_lesson
from lessonkit.lesson.catalog import all_lessons


def _imports(code: str) -> set[str]:
    found: set[str] = set()
    for statement in ast.parse(code).body:
        if isinstance(statement, ast.Import):
            found.update(alias.name for alias in statement.names)
        elif isinstance(statement, ast.ImportFrom) and statement.module:
            found.add(statement.module)
    return found


@pytest.mark.parametrize("lesson", all_lessons(), ids=lambda lesson: lesson.meta.id)
def test_every_task_import_is_imported_by_the_starter(lesson):
    preload = prepare_lesson(lesson, seed=1).preload
    for task in lesson.tasks:
        missing = _imports(task.scaffold) - set(preload)
        assert not missing, f"{lesson.meta.id} task {task.id}: {sorted(missing)} not in {preload}"
