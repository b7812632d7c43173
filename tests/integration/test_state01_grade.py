"""state-01 (Random keys without surprises): every task check fails on wrong attempts for
the right reason and accepts other correct ways of writing the answer. One batch grades all.

The lesson is only a lesson.md: nothing here or in src/ is special to it beyond its file.
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
    make_attempt,
    task_result,
)

STATE01_MD = REPO / "phases" / "03-state" / "01-random-keys-without-surprises" / "lesson.md"
TASKS = ("two-draws", "per-step", "key-tree")

PAIR = "noise_pair = jax.random.split(noise_key)\n"
A = "noisy_a = x + scale * jax.random.normal(noise_pair[0], x.shape)\n"
B = "noisy_b = x + scale * jax.random.normal(noise_pair[1], x.shape)\n"
DIFFER = "assert not jnp.allclose(noisy_a, noisy_b)\n"
KEYS = "walk_keys = jnp.stack([jax.random.fold_in(noise_key, step) for step in range(4)])\n"
STEP = "walk_end + scale * jax.random.normal(walk_keys[step], x.shape)"
PRINT = 'print("Walk after 4 steps:", walk_end.shape)\n'
FLAT = "leaves, treedef = jax.tree.flatten(params)\n"
LEAF_KEYS = (
    "leaf_keys = jax.tree.unflatten(treedef, list(jax.random.split(init_key, len(leaves))))\n"
)
INIT = (
    "init = jax.tree.map(lambda p, k: p + scale * jax.random.normal(k, p.shape),"
    " params, leaf_keys)\n"
)
SAME_TREE = "assert jax.tree.structure(init) == jax.tree.structure(params)\n"


def _walk(keys: str, update: str) -> str:
    return keys + f"walk_end = x\nfor step in range(4):\n    walk_end = {update}\n" + PRINT


KEY_DIFFERS = r"is a key<fry>\[{n}\] PRNG key array with key data \[[0-9, .]+\]; expected a key<fry>\[{n}\] PRNG key array with key data"  # noqa: E501

WRONG: list[Wrong] = [
    (
        "td-parent-for-both",
        "two-draws",
        PAIR
        + "noisy_a = x + scale * jax.random.normal(noise_key, x.shape)\n"
        + "noisy_b = x + scale * jax.random.normal(noise_key, x.shape)\n"
        + DIFFER,
        r"^`noisy_a` is \[[-0-9., ]+\]; expected \[[-0-9., ]+\]\.$",
    ),
    (
        "td-one-child-twice",
        "two-draws",
        PAIR + A + "noisy_b = x + scale * jax.random.normal(noise_pair[0], x.shape)\n" + DIFFER,
        r"^`noisy_b` is \[[-0-9., ]+\]; expected \[[-0-9., ]+\]\.$",
    ),
    (
        "td-split-the-spent-key",
        "two-draws",
        "noise_pair = jax.random.split(key)\n" + A + B + DIFFER,
        r"^`noise_pair` " + KEY_DIFFERS.format(n=2),
    ),
    (
        "td-no-scale",
        "two-draws",
        PAIR + "noisy_a = x + jax.random.normal(noise_pair[0], x.shape)\n" + B + DIFFER,
        r"^`noisy_a` is \[[-0-9., ]+\]; expected \[[-0-9., ]+\]\.$",
    ),
    (
        "td-hard-coded",
        "two-draws",
        PAIR + "noisy_a = jnp.array([0.519891, -1.07702, 1.87413])\n" + B + DIFFER,
        r"^`noisy_a` is right on the lesson's inputs but not on other inputs \((?!.*hard-coded)",
    ),
    (
        "ps-reused-key",
        "per-step",
        _walk(KEYS, "walk_end + scale * jax.random.normal(noise_key, x.shape)"),
        r"^`walk_end` is \[[-0-9., ]+\]; expected \[[-0-9., ]+\]\.$",
    ),
    (
        "ps-off-by-one",
        "per-step",
        _walk(
            "walk_keys = jnp.stack([jax.random.fold_in(noise_key, step + 1)"
            " for step in range(4)])\n",
            STEP,
        ),
        r"^`walk_keys` " + KEY_DIFFERS.format(n=4),
    ),
    (
        "ps-parameter-key",
        "per-step",
        _walk("walk_keys = jnp.stack([jax.random.fold_in(init_key, s) for s in range(4)])\n", STEP),
        r"^`walk_keys` " + KEY_DIFFERS.format(n=4),
    ),
    (
        "ps-spent-base-key",
        "per-step",
        _walk("walk_keys = jnp.stack([jax.random.fold_in(key, s) for s in range(4)])\n", STEP),
        r"^`walk_keys` " + KEY_DIFFERS.format(n=4),
    ),
    (
        "ps-no-accumulation",
        "per-step",
        _walk(KEYS, "x + scale * jax.random.normal(walk_keys[step], x.shape)"),
        r"^`walk_end` is \[[-0-9., ]+\]; expected \[[-0-9., ]+\]\.$",
    ),
    (
        "ps-list-of-keys",
        "per-step",
        _walk("walk_keys = [jax.random.fold_in(noise_key, s) for s in range(4)]\n", STEP),
        r"^`walk_keys` is a list .*; expected a key<fry>\[4\] PRNG key array",
    ),
    (
        "kt-one-key-everywhere",
        "key-tree",
        "leaf_keys = jax.tree.map(lambda p: init_key, params)\n" + INIT + SAME_TREE,
        r"^`leaf_keys` at `bias` " + KEY_DIFFERS.format(n=""),
    ),
    (
        "kt-keys-by-name",
        "key-tree",
        'ks = jax.random.split(init_key)\nleaf_keys = {"bias": ks[0], "weight": ks[1]}\n'
        + INIT
        + SAME_TREE,
        r"^`leaf_keys` does not get a key for a leaf added to `params`",
    ),
    (
        "kt-keys-reversed",
        "key-tree",
        FLAT + "leaf_keys = jax.tree.unflatten(treedef,"
        " list(jax.random.split(init_key, len(leaves)))[::-1])\n" + INIT + SAME_TREE,
        r"^`leaf_keys` at `bias` " + KEY_DIFFERS.format(n=""),
    ),
    (
        "kt-init-key-for-every-leaf",
        "key-tree",
        FLAT
        + LEAF_KEYS
        + "init = jax.tree.map(lambda p: p + scale * jax.random.normal(init_key, p.shape),"
        " params)\n" + SAME_TREE,
        r"^`init` at `bias` is [-0-9.]+; expected [-0-9.]+\.",
    ),
    (
        "kt-leaves-by-name",
        "key-tree",
        FLAT
        + LEAF_KEYS
        + 'init = {"bias": params["bias"] + scale * jax.random.normal(leaf_keys["bias"], ()),\n'
        + '        "weight": params["weight"]'
        ' + scale * jax.random.normal(leaf_keys["weight"], (2,))}\n' + SAME_TREE,
        r"^`init` does not perturb a leaf added to `params`",
    ),
]

RIGHT: list[Right] = [
    (
        "td-num-and-order",
        "two-draws",
        "noise_pair = jax.random.split(noise_key, num=2)\n"
        "noisy_a = jax.random.normal(noise_pair[0], shape=x.shape) * scale + x\n"
        "noisy_b = jax.random.normal(noise_pair[1], jnp.shape(x)) * scale + x\n" + DIFFER,
    ),
    (
        "td-unpacked",
        "two-draws",
        PAIR + "ka, kb = noise_pair\n"
        "noisy_a = x + scale * jax.random.normal(ka, x.shape)\n"
        "noisy_b = x + scale * jax.random.normal(kb, x.shape)\n",
    ),
    (
        "ps-vmap-fold-in",
        "per-step",
        _walk(
            "walk_keys = jax.vmap(lambda s: jax.random.fold_in(noise_key, s))(jnp.arange(4))\n",
            STEP,
        ),
    ),
    (
        "ps-sum-of-steps",
        "per-step",
        KEYS
        + "walk_end = x + scale * sum(jax.random.normal(k, x.shape) for k in walk_keys)\n"
        + PRINT,
    ),
    (
        "kt-structure-num-leaves",
        "key-tree",
        "treedef = jax.tree.structure(params)\n"
        "leaf_keys = jax.tree.unflatten(treedef, jax.random.split(init_key, treedef.num_leaves))\n"
        + INIT
        + SAME_TREE,
    ),
    (
        "kt-zip-leaves",
        "key-tree",
        FLAT
        + LEAF_KEYS
        + "init = jax.tree.unflatten(treedef, [p + scale * jax.random.normal(k, jnp.shape(p))"
        " for p, k in zip(leaves, jax.tree.leaves(leaf_keys))])\n",
    ),
]


@pytest.fixture(scope="module")
def state01():
    return load_lesson(STATE01_MD)


@pytest.fixture(scope="module")
def reports(state01, tmp_path_factory) -> dict[str, dict]:
    files = attempt_files(state01, WRONG, RIGHT, unsolved=TASKS)
    return grade_shared(tmp_path_factory, "grade-state01", state01, files)


def test_attempts_cover_every_task(state01):
    assert tuple(t.id for t in state01.tasks) == TASKS
    check_coverage(TASKS, WRONG, RIGHT)


@pytest.mark.parametrize(("name", "task", "body", "pattern"), WRONG, ids=[w[0] for w in WRONG])
def test_wrong_attempt_fails_with_its_message(reports, state01, name, task, body, pattern):
    check_wrong_attempt(reports[f"{name}.py"], state01, task, pattern)


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


# B2 (issue 19): a helper cell before the tasks wraps the grading child's cell runner so that
# every cell reports its probe as "not applied" and no aliases. The key-tree attempts that
# only a probe tells apart from the reference must still not pass.
WRAP_CELL_RUNNER = """# %%
import sys as _sys
_frame = _sys._getframe()
while _frame is not None and type(_frame.f_locals.get("self")).__name__ != "ChildProgram":
    _frame = _frame.f_back
_runner = None if _frame is None else _frame.f_locals["self"]
if _runner is not None and hasattr(_runner, "_cell") and not getattr(_runner, "quiet", False):
    def _quiet(*args, _real=_runner._cell, **kwargs):
        result = _real(*args, **kwargs)
        if type(result) is dict:
            if "hook" in result:
                result["hook"] = "not applied"
            result.pop("aliases", None)
        return result
    _runner._cell = _quiet
    _runner.quiet = True

"""
B2_NAMES = ("kt-keys-by-name", "kt-leaves-by-name")  # WRONG's key-tree attempts a probe catches
B2_ATTEMPTS = {name: body for name, _, body, _ in WRONG if name in B2_NAMES}


@pytest.fixture(scope="module")
def b2_reports(state01, tmp_path_factory) -> dict[str, dict]:
    files = {
        f"b2-{name}.py": make_attempt(state01, {"key-tree": body}, prefix=WRAP_CELL_RUNNER)
        for name, body in B2_ATTEMPTS.items()
    }
    return grade_shared(tmp_path_factory, "grade-state01-b2", state01, files, jobs=1)


@pytest.mark.parametrize("name", sorted(B2_ATTEMPTS))
def test_b2_key_tree_attempt_fails_under_a_wrapped_cell_runner(b2_reports, name):
    assert sorted(B2_ATTEMPTS) == sorted(B2_NAMES)
    result = task_result(b2_reports[f"b2-{name}.py"], "key-tree")
    assert result["status"] in ("failed", "error"), result
