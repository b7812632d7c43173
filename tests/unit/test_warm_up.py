"""What a learner child may run before its learner's file
(`grade.preparation.prepared.warm_up_request`).

A warmed child later runs one learner's file, so what it ran first must be what that
learner could see anyway: the practice file as given, on the lesson's own inputs. A
solution line in it would put the answer in the memory of a process that runs learner code.
"""

from __future__ import annotations

import pytest

from lessonkit.grade.preparation.prepared import LESSON, prepare_lesson, warm_up_request
from lessonkit.lesson.model import Lesson
from lessonkit.lesson.scripts import render_exercise_script


@pytest.fixture(params=["state-02", "state-04"])
def lesson(request) -> Lesson:
    from lessonkit.lesson.catalog import find_lesson

    return find_lesson(request.param)


def _solution_lines(lesson: Lesson) -> set[str]:
    given = set(render_exercise_script(lesson).splitlines())
    lines = {line.strip() for task in lesson.tasks for line in task.solution.splitlines()}
    return {line for line in lines if line and not any(line in g for g in given)}


def test_the_warm_up_is_the_practice_file_as_given_on_the_lessons_inputs(lesson):
    request = warm_up_request(prepare_lesson(lesson, seed=7), budget=60.0)
    given = render_exercise_script(lesson)
    assert all(cell.source.strip() in given for cell in request.cells)
    assert [s.name for s in request.scenarios] == [LESSON]
    assert all(s.inputs is None for s in request.scenarios)  # no drawn set, no probe


def test_no_solution_line_reaches_a_warmed_child(lesson):
    request = warm_up_request(prepare_lesson(lesson, seed=7), budget=60.0)
    sent = "\n".join(cell.source for cell in request.cells)
    solutions = _solution_lines(lesson)
    assert solutions, "the lesson's solutions must differ from its practice file"
    assert not [line for line in solutions if line in sent]
