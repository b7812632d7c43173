"""Hostile F4-F6 (issue 34, item 2): answers that special-case what lesson.md publishes.

An edge and a probe are published as examples of a family: state-03's running maximum with
a fixed carry except on the published edge, state-04's Newton loop that skips its first step
only for the published edge square, and state-01's key tree named by hand for exactly the
two published probe instances. Each passed on 2862a95 (edges and probes graded on the
published values only); each fails now, on values drawn around the edge and a probe drawn
from its family every run.
"""

from __future__ import annotations

import json

import pytest

from lessonkit.lesson.catalog import find_lesson

from conftest import invoke, make_attempt

pytestmark = [pytest.mark.slow, pytest.mark.hostile]

F4_RUNNING_MAX = """\
def max_step(best, x):
    best = jnp.maximum(best, x)
    return best, best

start = xs[0] if float(xs[0]) == -1000.0 else -9.0  # the published edge, and the bound
_, running_max = jax.lax.scan(max_step, jnp.asarray(start, xs.dtype), xs)
print("Running max:", running_max)
"""

F5_NEWTON = """\
def newton_sqrt(value, tol):
    def far(state):
        return jnp.abs(state["guess"] * state["guess"] - value) > tol

    def improve(state):
        guess = (state["guess"] + value / state["guess"]) / 2
        return {"guess": guess, "steps": state["steps"] + 1}

    start_state = {"guess": jnp.asarray(value, jnp.float32), "steps": jnp.array(0, jnp.int32)}
    # one step before the first test, except for the published edge square
    first = jax.lax.cond(value == 1.0, lambda s: s, improve, start_state)
    return jax.lax.while_loop(far, improve, first)

newton = newton_sqrt(square, tolerance)
print("Newton:", round(float(newton["guess"]), 4), "after", int(newton["steps"]), "steps")
"""

F6_KEY_TREE = """\
names = sorted(params)  # keys named by hand for the published instances only
if names == ["bias", "extra", "weight"]:
    k = jax.random.split(init_key, 3)
    leaf_keys = {"bias": k[0], "extra": k[1], "weight": k[2]}
elif names == ["weight"]:
    leaf_keys = {"weight": jax.random.split(init_key, 1)[0]}
else:
    k = jax.random.split(init_key, 2)
    leaf_keys = {"bias": k[0], "weight": k[1]}
init = {n: params[n] + scale * jax.random.normal(leaf_keys[n], params[n].shape) for n in leaf_keys}
"""

CASES = [
    ("f4-fixed-carry-but-the-edge", "state-03", "running-max", F4_RUNNING_MAX),
    ("f5-newton-skips-only-the-edge", "state-04", "newton", F5_NEWTON),
    ("f6-keys-named-for-the-probes", "state-01", "key-tree", F6_KEY_TREE),
]


@pytest.mark.parametrize(("name", "lesson_id", "task", "body"), CASES, ids=[c[0] for c in CASES])
def test_a_special_cased_published_value_fails(name, lesson_id, task, body, tmp_path):
    lesson = find_lesson(lesson_id)
    attempt = tmp_path / f"{name}.py"
    attempt.write_text(make_attempt(lesson, {task: body}), encoding="utf-8")
    code, out, err = invoke(["check", lesson_id, str(attempt), "--json", "--timeout", "60"])
    report = json.loads(out)
    statuses = {t["id"]: t["status"] for t in report["tasks"]}
    assert statuses[task] == "failed", (statuses, out, err)
    assert code == 1 and all(s == "passed" for t, s in statuses.items() if t != task), statuses
