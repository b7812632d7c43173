"""One meaning of "left for later", graded by `lessonkit check FILE --json`: a task is not
attempted when a `todo(...)` ran before its names were bound, as the practice file's own
`optional_task()` decides, never because its text still holds one."""

from __future__ import annotations

import json

from conftest import invoke, make_attempt, task_result

WRONG_ADAM = """\
import optax
adam = optax.adam(0.1)
adam_updates, _ = adam.update(grads, adam.init(params), params)
optax_step = optax.apply_updates(params, adam_updates)
adam_by_hand = jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)
"""


def _check(lesson, tmp_path, name: str, adam: str) -> tuple[int, dict]:
    path = tmp_path / name
    path.write_text(make_attempt(lesson, {"adam-by-hand": adam}), encoding="utf-8")
    code, out, err = invoke(["check", "state-02", str(path), "--json"])
    assert out.strip(), err
    return code, json.loads(out)


def test_a_todo_that_never_runs_does_not_hide_a_wrong_attempt(lesson, tmp_path):
    dead = WRONG_ADAM + 'if False:\n    todo("adam_by_hand: later")\n'
    code, report = _check(lesson, tmp_path, "dead-todo.py", dead)
    result = task_result(report, "adam-by-hand")
    assert result["status"] == "failed", result
    # graded as the wrong attempt it is: the declared mistake named, the check's finding kept
    assert result["mistake"] == "plain gradient descent", result
    assert "(What the check found: `adam_by_hand` at `" in result["message"], result
    assert code == 1 and report["passed"] is False


def test_an_optional_task_left_with_todos_own_error_never_fails_the_file(lesson, tmp_path):
    left = 'raise NotImplementedError("TODO: adam_by_hand, later")\n'
    code, report = _check(lesson, tmp_path, "raise-todo.py", left)
    result = task_result(report, "adam-by-hand")
    assert result["status"] == "not attempted", result
    assert (
        '("adam_by_hand, later") and ran before `adam_by_hand` was assigned' in (result["message"])
    )
    assert code == 0 and report["passed"] is True
