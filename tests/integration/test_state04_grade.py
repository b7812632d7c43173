"""state-04 (Control flow under jit): every task check fails on wrong attempts for the right
reason, the `method:` and `jit:` rules included, and accepts other correct ways of writing
the answer. One batch grades all.

The wrong attempts here are written for this test, apart from lesson.md's own declared ones
(which `lessonkit verify` proves), so the two lists check each other.
"""

from __future__ import annotations

import pytest

from lessonkit.lesson.load import load_lesson

from conftest import (
    REPO,
    Right,
    Wrong,
    attempt_files,
    check_coverage,
    check_right_attempt,
    check_wrong_attempt,
    grade_shared,
)

STATE04_MD = REPO / "phases" / "03-state" / "04-control-flow-under-jit" / "lesson.md"
TASKS = ("clip-update", "safe-root", "newton")

NORM = "    norm = jnp.sqrt(sum(jnp.sum(leaf**2) for leaf in jax.tree.leaves(tree)))\n"
CLIPPED = (
    "\nclipped = clip_update(grads, max_norm)\n"
    'print("Clipped norm:", round(float(jnp.sqrt(sum(jnp.sum(leaf**2) '
    "for leaf in jax.tree.leaves(clipped)))), 4))\n"
)
LOGS = (
    "\nlog_values = jax.vmap(safe_log1p)(xs)\n"
    "log_grads = jax.vmap(jax.grad(safe_log1p))(xs)\n"
    'print("NaN in gradients:", bool(jnp.isnan(log_grads).any()))\n'
)
NEWTON = (
    "\nnewton = newton_sqrt(square, tolerance)\n"
    'print("Newton:", round(float(newton["guess"]), 4), "after", int(newton["steps"]), "steps")\n'
)
FAR = (
    '    def far(state):\n        return jnp.abs(state["guess"] * state["guess"] - value) > tol\n\n'
)
START = (
    '    start_state = {"guess": jnp.asarray(value, jnp.float32), '
    '"steps": jnp.array(0, jnp.int32)}\n'
)


def _improve(steps: str = 'state["steps"] + 1') -> str:
    return (
        "    def improve(state):\n"
        '        guess = (state["guess"] + value / state["guess"]) / 2\n'
        f'        return {{"guess": guess, "steps": {steps}}}\n\n'
    )


def _clip(body: str) -> str:
    return "def clip_update(tree, bound):\n" + NORM + body + CLIPPED


def _log(body: str) -> str:
    return "def safe_log1p(v):\n" + body + LOGS


def _newton(body: str) -> str:
    return "def newton_sqrt(value, tol):\n" + body + NEWTON


JIT_FAILS = r"runs when called directly but fails under `jax\.jit`, where the grader also calls it on the lesson's inputs: "  # noqa: E501

WRONG: list[Wrong] = [
    (
        "cu-python-if",
        "clip-update",
        _clip(
            "    if norm > bound:\n"
            "        return jax.tree.map(lambda leaf: leaf * (bound / norm), tree)\n"
            "    return tree\n"
        ),
        r"^Your cell uses a Python `if` statement \(line \d+\), which this task rules out",
    ),
    (
        "cu-ternary-under-jit",
        "clip-update",
        _clip(
            "    factor = bound / norm if norm > bound else 1.0\n"
            "    keep = lambda t: t\n"
            "    return jax.lax.cond(norm > bound, lambda t: jax.tree.map("
            "lambda leaf: leaf * factor, t), keep, tree)\n"
        ),
        r"^`clip_update` " + JIT_FAILS + r"TracerBoolConversionError at line \d+ "
        r"\(`factor = bound / norm if norm > bound else 1\.0`\)\. Under jit its arguments are "
        r"tracers",
    ),
    (
        "cu-always-scales",
        "clip-update",
        _clip(
            "    scale = lambda t: jax.tree.map(lambda leaf: leaf * (bound / norm), t)\n"
            "    return jax.lax.cond(norm > 0, scale, scale, tree)\n"
        ),
        r"^`clipped` is right on the lesson's inputs but not on edge inputs \(.*max_norm 100\.0",
    ),
    (
        "cu-branch-swapped",
        "clip-update",
        _clip(
            "    shrink = lambda t: jax.tree.map(lambda leaf: leaf * (bound / norm), t)\n"
            "    return jax.lax.cond(norm > bound, lambda t: t, shrink, tree)\n"
        ),
        r"^`clipped` at `b` is 12\.0; expected 6\.0\.$",
    ),
    (
        "cu-no-function",
        "clip-update",
        "norm = jnp.sqrt(sum(jnp.sum(leaf**2) for leaf in jax.tree.leaves(grads)))\n"
        "shrink = lambda t: jax.tree.map(lambda leaf: leaf * (max_norm / norm), t)\n"
        "clipped = jax.lax.cond(norm > max_norm, shrink, lambda t: t, grads)\n"
        'print("Clipped norm:", round(float(jnp.sqrt(sum(jnp.sum(leaf**2) '
        "for leaf in jax.tree.leaves(clipped)))), 4))\n",
        r"^The cell does not define `clip_update`: the task asks for a function of that name",
    ),
    (
        "sr-one-where",
        "safe-root",
        _log("    return jnp.where(v > 0, jnp.log1p(v), 0.0)\n"),
        r"^`log_grads` is \[nan, 0\.0, 0\.2\]; expected \[0\.0, 0\.0, 0\.2\]\.$",
    ),
    (
        "sr-guard-computed-unused",
        "safe-root",
        _log(
            "    inside = jnp.where(v > 0, v, 0.0)\n"
            "    return jnp.where(v > 0, jnp.log1p(v), 0.0)\n"
        ),
        r"^`log_grads` is \[nan, 0\.0, 0\.2\]; expected \[0\.0, 0\.0, 0\.2\]\.$",
    ),
    (
        "sr-log-instead-of-log1p",
        "safe-root",
        _log(
            "    inside = jnp.where(v > 0, v, 1.0)\n"
            "    return jnp.where(v > 0, jnp.log(inside), 0.0)\n"
        ),
        r"^`log_values` is \[",
    ),
    (
        "sr-no-where",
        "safe-root",
        _log("    return jnp.log1p(jnp.maximum(v, 0.0))\n"),
        r"^Your cell does not use `jax\.numpy\.where`, which this task asks for\.",
    ),
    (
        "nw-python-while",
        "newton",
        _newton(
            START.replace("start_state", "state")
            + '    while jnp.abs(state["guess"] ** 2 - value) > tol:\n'
            + '        state = {"guess": (state["guess"] + value / state["guess"]) / 2, '
            + '"steps": state["steps"] + 1}\n'
            + "    return state\n"
        ),
        r"^Your cell uses a Python `while` loop \(line \d+\), which this task rules out",
    ),
    (
        "nw-float-start",
        "newton",
        _newton(
            FAR
            + _improve()
            + '    start_state = {"guess": jnp.float32(float(value)), "steps": jnp.array(0)}\n'
            + "    return jax.lax.while_loop(far, improve, start_state)\n"
        ),
        r"^`newton_sqrt` " + JIT_FAILS + r"ConcretizationTypeError at line \d+",
    ),
    (
        "nw-step-first",
        "newton",
        _newton(
            FAR
            + _improve()
            + START
            + "    return jax.lax.while_loop(far, improve, improve(start_state))\n"
        ),
        r"^`newton` is right on the lesson's inputs but not on edge inputs \(.*square 1\.0.*\): "
        r"at `steps` got 1, expected 0",
    ),
    (
        "nw-never-counts",
        "newton",
        _newton(
            FAR
            + _improve('state["steps"]')
            + START
            + "    return jax.lax.while_loop(far, improve, start_state)\n"
        ),
        r"^`newton` at `steps` is 0; expected 5\.$",
    ),
    (
        "nw-fixed-trips",
        "newton",
        _newton(
            _improve().replace("def improve(state)", "def improve(i, state)")
            + START
            + "    return jax.lax.fori_loop(0, 5, improve, start_state)\n"
        ),
        r"^Your cell does not use `jax\.lax\.while_loop`, which this task asks for\.",
    ),
]

RIGHT: list[Right] = [
    (
        "cu-factor-by-cond",
        "clip-update",
        _clip(
            "    factor = jax.lax.cond(norm > bound, lambda: bound / norm, lambda: 1.0)\n"
            "    return jax.tree.map(lambda leaf: leaf * factor, tree)\n"
        ),
    ),
    (
        "cu-cond-per-leaf",
        "clip-update",
        _clip(
            "    return jax.tree.map(\n"
            "        lambda leaf: jax.lax.cond(\n"
            "            norm > bound, lambda: leaf * (bound / norm), lambda: leaf\n"
            "        ),\n"
            "        tree,\n"
            "    )\n"
        ),
    ),
    (
        "sr-guard-with-one",
        "safe-root",
        _log(
            "    inside = jnp.where(v > 0, v, 1.0)\n"
            "    return jnp.where(v > 0, jnp.log1p(inside), 0.0)\n"
        ),
    ),
    (
        "sr-guard-above-minus-one",
        "safe-root",
        _log(
            "    inside = jnp.where(v > -1, v, 0.0)\n"
            "    return jnp.where(v > 0, jnp.log1p(inside), 0.0)\n"
        ),
    ),
    (
        "sr-mask-times-log",
        "safe-root",
        _log(
            "    positive = v > 0\n    return jnp.log1p(jnp.where(positive, v, 0.0)) * positive\n"
        ),
    ),
    (
        "nw-lambdas",
        "newton",
        _newton(
            "    return jax.lax.while_loop(\n"
            '        lambda s: jnp.abs(s["guess"] ** 2 - value) > tol,\n'
            '        lambda s: {"guess": (s["guess"] + value / s["guess"]) / 2, '
            '"steps": s["steps"] + 1},\n'
            '        {"guess": jnp.float32(value), "steps": jnp.int32(0)},\n'
            "    )\n"
        ),
    ),
    (
        "nw-tuple-carry",
        "newton",
        _newton(
            "    def far(carry):\n"
            "        return jnp.abs(carry[0] * carry[0] - value) > tol\n\n"
            "    def improve(carry):\n"
            "        return ((carry[0] + value / carry[0]) / 2, carry[1] + 1)\n\n"
            "    first = (jnp.float32(value), jnp.int32(0))\n"
            "    guess, steps = jax.lax.while_loop(far, improve, first)\n"
            '    return {"guess": guess, "steps": steps}\n'
        ),
    ),
]


@pytest.fixture(scope="module")
def state04():
    return load_lesson(STATE04_MD)


@pytest.fixture(scope="module")
def reports(state04, tmp_path_factory) -> dict[str, dict]:
    files = attempt_files(state04, WRONG, RIGHT, unsolved=TASKS)
    return grade_shared(tmp_path_factory, "grade-state04", state04, files, timeout=60.0)


def test_attempts_cover_every_task(state04):
    assert tuple(t.id for t in state04.tasks) == TASKS
    check_coverage(TASKS, WRONG, RIGHT)


@pytest.mark.parametrize(("name", "task", "body", "pattern"), WRONG, ids=[w[0] for w in WRONG])
def test_wrong_attempt_fails_with_its_message(reports, state04, name, task, body, pattern):
    check_wrong_attempt(reports[f"{name}.py"], state04, task, pattern)


@pytest.mark.parametrize(("name", "task", "body"), RIGHT, ids=[r[0] for r in RIGHT])
def test_other_correct_attempt_passes(reports, name, task, body):
    check_right_attempt(reports[f"{name}.py"], task)


def test_reference_solutions_pass_and_scaffolds_are_not_attempted(reports):
    solved, unsolved = reports["solved.py"], reports["unsolved.py"]
    assert solved["passed"] is True
    assert [t["status"] for t in solved["tasks"]] == ["passed"] * 3
    assert all(p["status"] == "passed" for p in solved["prerequisites"])
    assert [t["status"] for t in unsolved["tasks"]] == ["not attempted"] * 3
    assert unsolved["passed"] is False
