"""Every task check fails on wrong attempts, with the right message, and accepts other
correct ways of writing the answer. All attempts are graded in one batch."""

from __future__ import annotations

import os
import re

import pytest

from lessonkit.lesson.load import load_lesson

from conftest import (
    LESSON_MD,
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

LESSON = load_lesson(LESSON_MD)  # wrong attempts are small edits of its reference solutions

NORM = "norm_squared = sum(jnp.sum(g ** 2) for g in jax.tree.leaves(grads))\n"
MANUAL = 'manual = jnp.sum(grads["weight"] ** 2) + grads["bias"] ** 2\n'
NESTED_SOLUTION = LESSON.task("nested-model").solution + "\n"
REPAIR_SOLUTION = LESSON.task("repair").solution + "\n"
PARTIAL = 'partial = {key: leaf for key, leaf in grads.items() if key != "bias"}'


ADAM_SETUP = """\
import optax
adam = optax.adam(0.1)
adam_updates, _ = adam.update(grads, adam.init(params), params)
optax_step = optax.apply_updates(params, adam_updates)
"""
ADAM_CHECK = "assert jax.tree.all(jax.tree.map(jnp.allclose, optax_step, adam_by_hand))\n"


def _adam(update: str) -> str:
    return ADAM_SETUP + f"adam_by_hand = {update}\n"


def _nested(old: str, new: str) -> str:
    assert old in NESTED_SOLUTION
    return NESTED_SOLUTION.replace(old, new)


def _repair(old: str, new: str) -> str:
    assert old in REPAIR_SOLUTION
    return REPAIR_SOLUTION.replace(old, new)


OTHER_INPUTS = r"right on the lesson's inputs but not on other inputs \(weight \[[-0-9., ]+\]"
HARD_CODED = OTHER_INPUTS + ".*hard-coded"  # the check's guess, where no mistake is named

WRONG: list[Wrong] = [
    # Make it yours
    (
        "mk-hard-coded",
        "make-it-yours",
        "norm_squared = 96.\n" + MANUAL,
        r"`norm_squared` is " + OTHER_INPUTS + r"(?!.*hard-coded)",  # "typed-in answer" named
    ),
    (
        "mk-names-the-keys",
        "make-it-yours",
        "norm_squared = jnp.sum(grads['weight'] ** 2) + grads['bias'] ** 2\n" + MANUAL,
        r"`norm_squared` does not count a leaf added to the gradient tree",
    ),
    (
        "mk-missing-bias",
        "make-it-yours",
        "norm_squared = jnp.sum(grads['weight'] ** 2)\n" + MANUAL,
        r"^`norm_squared` is 80\.0; expected 96\.0\.$",
    ),
    (
        "mk-manual-copies-norm",
        "make-it-yours",
        NORM + "manual = norm_squared\nassert jnp.allclose(norm_squared, manual)\n",
        r"`manual` changes when a leaf is added to the gradient tree",
    ),
    (
        "mk-assert-typed-number-first",
        "make-it-yours",
        NORM + "assert jnp.allclose(norm_squared, 96.)\n" + MANUAL,
        r"The assertion at line \d+ fails \(`assert jnp\.allclose\(norm_squared, 96\.\)`\) on "
        r"other inputs .* before `manual` is assigned: the check holds only on the lesson's inputs",
    ),
    (
        "mk-squares-not-summed",
        "make-it-yours",
        "norm_squared = jax.tree.map(lambda g: g ** 2, grads)\n" + MANUAL,
        r"`norm_squared` is a dict with keys bias, weight; expected 96\.0",
    ),
    (
        "mk-absolute-values",
        "make-it-yours",
        "norm_squared = sum(jnp.sum(jnp.abs(g)) for g in jax.tree.leaves(grads))\n" + MANUAL,
        r"`norm_squared` is 16\.0; expected 96\.0",
    ),
    # Extend to a nested model
    (
        "nm-always-true",
        "nested-model",
        _nested(
            "same_structure = jax.tree.structure(g) == jax.tree.structure(nested)",
            "same_structure = True",
        ),
        r"`same_structure` stays true when `g` lacks a key",
    ),
    (
        "nm-structure-only",
        "nested-model",
        _nested(
            "same_structure = jax.tree.structure(g) == jax.tree.structure(nested)",
            "same_structure = jax.tree.structure(g)",
        ),
        r"`same_structure` is a PyTreeDef; expected True",
    ),
    (
        "nm-scale-read-from-g",
        "nested-model",
        _nested(
            'scale_by_hand = 2 * (nested["scale"] * inner - 3.) * inner',
            'scale_by_hand = g["scale"]',
        ),
        r"`scale_by_hand` follows g\[\"scale\"\]",
    ),
    (
        "nm-scale-typed-in",
        "nested-model",
        _nested(
            'scale_by_hand = 2 * (nested["scale"] * inner - 3.) * inner', "scale_by_hand = -4."
        ),
        r"`scale_by_hand` is " + HARD_CODED,
    ),
    (
        "nm-missing-bias",
        "nested-model",
        _nested('"layer": params', '"layer": {"weight": params["weight"]}').replace(
            ' + p["layer"]["bias"]', ""
        ),
        r"`nested` is missing `layer/bias` \(expected float32\[\]\)",
    ),
    (
        "nm-scale-skips-bias",
        "nested-model",
        _nested(
            'pred = p["scale"] * (jnp.dot(p["layer"]["weight"], x) + p["layer"]["bias"])',
            'pred = p["scale"] * jnp.dot(p["layer"]["weight"], x) + p["layer"]["bias"]',
        ),
        r"`g` is right on the lesson's inputs but not on other inputs.* at `scale`",
    ),
    (
        "nm-integer-scale",
        "nested-model",
        _nested('"scale": jnp.array(1.)', '"scale": jnp.array(1)'),
        r"TypeError: grad requires real- or complex-valued inputs.*\n.*\n  line \d+: g = jax\.grad",
    ),
    # Repair a mismatched update tree
    (
        "rp-wrong-sign",
        "repair",
        _repair("p - 0.05 * g, params, grads)", "p + 0.05 * g, params, grads)"),
        r"^`fixed` at `bias` is -0\.2; expected 0\.2\.$",
    ),
    (
        "rp-wrong-learning-rate",
        "repair",
        _repair("p - 0.05 * g, params, grads)", "p - 0.1 * g, params, grads)"),
        r"^`fixed` at `bias` is 0\.4; expected 0\.2\.$",
    ),
    (
        "rp-swapped-leaves",
        "repair",
        _repair("params, grads)", "params, {'weight': grads['bias'], 'bias': grads['weight']})"),
        r"`fixed` at `bias` is float32\[2\]; expected float32\[\]",
    ),
    (
        "rp-bias-kept",
        "repair",
        _repair(PARTIAL, "partial = dict(grads)"),
        r"`partial` has `bias`, which the expected tree does not have",
    ),
    (
        "rp-weight-dropped",
        "repair",
        _repair(PARTIAL, 'partial = {"bias": grads["bias"]}'),
        r"`partial` is missing `weight`.*1 more layout difference",
    ),
    (
        "rp-typed-in-update",
        "repair",
        _repair(
            "fixed = jax.tree.map(lambda p, g: p - 0.05 * g, params, grads)",
            'fixed = {"weight": jnp.array([1.4, -0.8]), "bias": jnp.array(0.2)}',
        ),
        r"`fixed` is right on the lesson's inputs but not on other inputs .*: "
        r"at `(weight|bias)` got",
    ),
    (
        "rp-update-with-partial",
        "repair",
        _repair(
            "fixed = jax.tree.map(lambda p, g: p - 0.05 * g, params, grads)",
            "fixed = jax.tree.map(lambda p, g: p - 0.05 * g, params, partial)",
        ),
        r"^ValueError: the trees passed together must have one structure, but `partial` is "
        r"missing `bias` \(expected float32\[\]\) \(compared with `params`\)\.",
    ),
    (
        "rp-fixed-is-updated",
        "repair",
        _repair(
            "fixed = jax.tree.map(lambda p, g: p - 0.05 * g, params, grads)", "fixed = updated"
        ),
        r"^`fixed` follows `updated`, the step's own result",
    ),
    (
        "rp-no-message",
        "repair",
        _repair('print("Expected tree mismatch")', "pass"),
        r'The cell should print "Expected tree mismatch"; it printed nothing',
    ),
    # Adam's first step by hand (optional)
    (
        "ad-plain-sgd",
        "adam-by-hand",
        _adam("jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)"),
        r"`adam_by_hand` at `(weight|bias)` is .*; expected",
    ),
    (
        "ad-wrong-sign",
        "adam-by-hand",
        _adam("jax.tree.map(lambda p, g: p + 0.1 * jnp.sign(g), params, grads)"),
        r"`adam_by_hand` at `(weight|bias)` is .*; expected",
    ),
    (
        "ad-wrong-rate",
        "adam-by-hand",
        _adam("jax.tree.map(lambda p, g: p - 0.01 * jnp.sign(g), params, grads)"),
        r"`adam_by_hand` at `(weight|bias)` is .*; expected",
    ),
    (
        "ad-hard-coded",
        "adam-by-hand",
        _adam('{"weight": jnp.array([1.1, -0.9]), "bias": jnp.array(0.1)}'),
        r"`adam_by_hand` is " + HARD_CODED,
    ),
    (
        "ad-missing-bias",
        "adam-by-hand",
        _adam('{"weight": params["weight"] - 0.1 * jnp.sign(grads["weight"])}'),
        r"bias",
    ),
]

RIGHT: list[Right] = [
    (
        "mk-optax-norm",
        "make-it-yours",
        "import optax\nnorm_squared = optax.tree.norm(grads) ** 2\n"
        'manual = grads["weight"] @ grads["weight"] + grads["bias"] * grads["bias"]\n'
        "assert jnp.allclose(norm_squared, manual)\n",
    ),
    (
        "mk-tree-reduce",
        "make-it-yours",
        "norm_squared = jax.tree.reduce(lambda total, g: total + jnp.sum(g * g), grads, 0.0)\n"
        'manual = jnp.sum(jnp.square(grads["weight"])) + jnp.square(grads["bias"])\n'
        "assert jnp.allclose(norm_squared, manual)\n",
    ),
    (
        "mk-python-floats",
        "make-it-yours",
        "norm_squared = sum(float((leaf ** 2).sum()) for leaf in jax.tree.leaves(grads))\n"
        'manual = float(jnp.sum(grads["weight"] ** 2)) + float(grads["bias"] ** 2)\n'
        "assert abs(norm_squared - manual) < 1e-4\nassert jnp.allclose(norm_squared, 96.)\n",
    ),
    (
        "nm-own-names",
        "nested-model",
        'nested = {"layer": dict(params), "scale": jnp.ones(())}\n'
        "def nested_loss(tree):\n"
        '    layer = tree["layer"]\n'
        '    pred = tree["scale"] * (layer["weight"] @ x + layer["bias"])\n'
        "    return (pred - 3.) ** 2\n"
        "_, g = jax.value_and_grad(nested_loss)(nested)\n"
        "same_structure = jax.tree_util.tree_structure(g) == jax.tree_util.tree_structure(nested)\n"
        "assert same_structure\n"
        'wx_b = params["weight"] @ x + params["bias"]\n'
        "scale_by_hand = 2.0 * (1.0 * wx_b - 3.0) * wx_b\n"
        'assert jnp.allclose(g["scale"], scale_by_hand)\n',
    ),
    (
        "nm-python-float-scale",
        "nested-model",
        _nested('"scale": jnp.array(1.)', '"scale": 1.0').replace(
            'scale_by_hand = 2 * (nested["scale"] * inner - 3.) * inner',
            "scale_by_hand = jax.grad(lambda s: (s * inner - 3.) ** 2)(1.0)",
        ),
    ),
    (
        "rp-comprehensions",
        "repair",
        'partial = {key: leaf for key, leaf in grads.items() if key != "bias"}\n'
        "try:\n"
        "    jax.tree.map(lambda p, g: p - 0.05 * g, params, partial)\n"
        "except ValueError as error:\n"
        "    mismatch = error.args[0]\n"
        '    print("Expected tree mismatch")\n'
        "else:\n"
        '    raise AssertionError("Expected a missing-key failure")\n'
        "fixed = {key: params[key] - 0.05 * grads[key] for key in params}\n"
        "assert loss(fixed) < loss(params)\n",
    ),
    (
        # Issue 32: the published page's own answer names the key it keeps; the task's text
        # ("remove bias") allows it, so no probe may reject it.
        "rp-page-names-the-kept-key",
        "repair",
        'partial = {"weight":grads["weight"]}\n'
        "try:\n"
        "    jax.tree.map(lambda p,g:p-0.05*g,params,partial)\n"
        "except ValueError as error:\n"
        "    mismatch = str(error)\n"
        '    print("Expected tree mismatch")\n'
        "else:\n"
        '    raise AssertionError("Expected a missing-key failure")\n'
        "fixed=jax.tree.map(lambda p,g:p-0.05*g,params,grads)\n"
        "assert jnp.allclose(loss(fixed),0.64,atol=1e-6)\n",
    ),
    (
        "rp-optax-apply",
        "repair",
        "import optax\n"
        "partial = dict(grads)\n"
        'del partial["bias"]\n'
        "try:\n"
        "    jax.tree_util.tree_map(lambda p, g: p - 0.05 * g, params, partial)\n"
        "except ValueError as caught:\n"
        '    print("Expected tree mismatch")\n'
        "    mismatch = str(caught)\n"
        "fixed = optax.apply_updates(params, jax.tree.map(lambda g: -0.05 * g, grads))\n",
    ),
    (
        "ad-sign",
        "adam-by-hand",
        _adam("jax.tree.map(lambda p, g: p - 0.1 * jnp.sign(g), params, grads)") + ADAM_CHECK,
    ),
    (
        "ad-comprehension",
        "adam-by-hand",
        _adam("{k: params[k] - 0.1 * grads[k] / (jnp.abs(grads[k]) + 1e-8) for k in params}")
        + ADAM_CHECK,
    ),
]

OTHER_TASKS = ("make-it-yours", "nested-model", "repair")
OPTIONAL_TASKS = ("adam-by-hand",)


@pytest.fixture(scope="module")
def reports(lesson, tmp_path_factory) -> dict[str, dict]:
    files = attempt_files(lesson, WRONG, RIGHT, unsolved=OTHER_TASKS + OPTIONAL_TASKS)
    files["no-optional.py"] = make_attempt(lesson, unsolved=OPTIONAL_TASKS)
    files["half-done.py"] = make_attempt(
        lesson, {"make-it-yours": NORM + 'manual = todo("manual: by name")\n'}
    )
    return grade_shared(tmp_path_factory, "grade-tasks", lesson, files)


def test_attempts_cover_every_task():
    check_coverage(OTHER_TASKS + OPTIONAL_TASKS, WRONG, RIGHT)


@pytest.mark.parametrize(("name", "task", "body", "pattern"), WRONG, ids=[w[0] for w in WRONG])
def test_wrong_attempt_fails_with_its_message(reports, lesson, name, task, body, pattern):
    check_wrong_attempt(reports[f"{name}.py"], lesson, task, pattern)


@pytest.mark.parametrize(("name", "task", "body"), RIGHT, ids=[r[0] for r in RIGHT])
def test_other_correct_attempt_passes(reports, name, task, body):
    check_right_attempt(reports[f"{name}.py"], task)


def test_reference_solutions_pass_everything(reports):
    report = reports["solved.py"]
    assert report["passed"] is True
    assert [t["status"] for t in report["tasks"]] == ["passed"] * 4
    assert all(p["status"] == "passed" for p in report["prerequisites"])
    assert all(t["hint"] is None for t in report["tasks"])


def test_untouched_scaffolds_are_not_attempted(reports, lesson):
    report = reports["unsolved.py"]
    assert [t["status"] for t in report["tasks"]] == ["not attempted"] * 4
    assert report["passed"] is False
    first = report["tasks"][0]
    assert re.search(r'todo\(\.\.\.\) is still at line \d+ \("norm_squared: ', first["message"])
    assert all(t["hint"] is None for t in report["tasks"])  # hints come after a try


def test_one_placeholder_left_is_not_attempted(reports):
    result = task_result(reports["half-done.py"], "make-it-yours")
    assert result["status"] == "not attempted"
    assert '("manual: by name")' in result["message"]


def test_messages_never_show_solution_code(reports, lesson):
    """A message may quote the learner's own lines, never a reference line they did not write."""
    bodies = {name: (task, body) for name, task, body, _ in WRONG}
    for name, (_task, body) in bodies.items():
        written = {line.strip() for line in body.splitlines()}
        for result in reports[f"{name}.py"]["tasks"]:
            solution = lesson.task(result["id"]).solution.splitlines()
            hidden = {s.strip() for s in solution if len(s.strip()) > 12} - written
            leaked = [line for line in hidden if line in result["message"]]
            assert not leaked, (name, result["message"])


def test_an_optional_task_left_out_still_passes(reports):
    report = reports["no-optional.py"]
    assert [(t["id"], t["status"], t["optional"]) for t in report["tasks"]] == [
        ("make-it-yours", "passed", False),
        ("nested-model", "passed", False),
        ("repair", "passed", False),
        ("adam-by-hand", "not attempted", True),
    ]
    assert report["passed"] is True


# --------------------------------------------------------------------------- edges and accept
# Issue 19, B7 and B16: a real attempt at a repository lesson, graded as `lessonkit check`
# grades it (a few files in one batch, on one seed).


def _grade(lesson, tmp_path, files: dict[str, str]) -> dict[str, dict]:
    from lessonkit.grade import grade_many
    from lessonkit.grade.batches.folder import read_items
    from lessonkit.run.isolation import sandbox_if_any
    from lessonkit.run.limits import Limits
    from lessonkit.settings import settings_around

    paths = []
    for name, content in files.items():
        (tmp_path / name).write_text(content, encoding="utf-8")
        paths.append(tmp_path / name)
    settings = settings_around(os.environ, sandbox_if_any(), limits=Limits(timeout=30.0))
    entries = grade_many(lesson, read_items(paths), jobs=2, settings=settings, seed=7)
    return {e.path.name: e.report.to_json() for e in entries}


def test_b7_a_running_max_from_the_generators_lower_bound_fails_on_the_edge(tmp_path):
    """A first carry of -9.0 is below every draw (uniform [-9, -1]) but not below an edge."""
    from conftest import REPO

    state03 = load_lesson(REPO / "phases/03-state/03-scan-carries-state/lesson.md")
    from_bound = (
        "def max_step(best, x):\n"
        "    best = jnp.maximum(best, x)\n"
        "    return best, best\n\n"
        "_, running_max = jax.lax.scan(max_step, jnp.array(-9.0), xs)\n"
        'print("Running max:", running_max)\n'
    )
    reports = _grade(
        state03,
        tmp_path,
        {
            "from-bound.py": make_attempt(state03, {"running-max": from_bound}),
            "solved.py": make_attempt(state03),
        },
    )
    result = task_result(reports["from-bound.py"], "running-max")
    assert result["status"] == "failed", result
    assert re.search(r"not on edge inputs \(xs \[-1000\.0, -500\.0", result["message"])
    assert "got [-9.0, -9.0" in result["message"]
    solved = task_result(reports["solved.py"], "running-max")
    assert solved["status"] == "passed", solved
    # one edge, graded on itself and on values drawn beyond, between, across and close to it
    assert solved["message"].endswith("and on 5 edge input sets."), solved["message"]


def test_b16_an_ordereddict_and_float64_leaves_pass_where_the_task_accepts_them(lesson, tmp_path):
    ordered = _repair(
        "fixed = jax.tree.map(lambda p, g: p - 0.05 * g, params, grads)",
        "from collections import OrderedDict\n"
        "fixed = OrderedDict((k, params[k] - 0.05 * grads[k]) for k in params)",
    )
    # An OrderedDict `partial` is accepted as a value, but jax.tree.map then raises another
    # error (the containers' types differ), not the missing key the task reproduces.
    ordered_partial = _repair(
        PARTIAL,
        "from collections import OrderedDict\n"
        'partial = OrderedDict((k, v) for k, v in grads.items() if k != "bias")',
    )
    f64 = "import numpy as np\nf64 = lambda a: np.asarray(a, np.float64)\n"
    fixed64 = _repair(
        "fixed = jax.tree.map(lambda p, g: p - 0.05 * g, params, grads)",
        f64 + "fixed = {k: f64(params[k]) - 0.05 * f64(grads[k]) for k in params}",
    )
    adam64 = _adam(
        "jax.tree.map(lambda p, g: np.asarray(p, np.float64) - 0.1 * np.asarray(g, np.float64)"
        " / (np.abs(np.asarray(g, np.float64)) + 1e-8), params, grads)"
    ).replace("import optax\n", "import optax\nimport numpy as np\n")
    # Only the tasks that declare `accept` widen: nested-model's `g` stays float32-exact.
    g64 = _nested(
        "g = jax.grad(nested_loss)(nested)",
        "g = jax.tree.map(lambda a: np.asarray(a, np.float64), jax.grad(nested_loss)(nested))",
    )
    reports = _grade(
        lesson,
        tmp_path,
        {
            "ordered.py": make_attempt(lesson, {"repair": ordered}),
            "ordered-partial.py": make_attempt(lesson, {"repair": ordered_partial}),
            "float64.py": make_attempt(
                lesson, {"repair": fixed64, "adam-by-hand": adam64 + ADAM_CHECK}
            ),
            "strict.py": make_attempt(lesson, {"nested-model": "import numpy as np\n" + g64}),
        },
    )
    assert reports["ordered.py"]["passed"] is True, reports["ordered.py"]["tasks"]
    other_error = task_result(reports["ordered-partial.py"], "repair")
    assert other_error["status"] == "failed", other_error
    assert other_error["message"].startswith("`mismatch` is "), other_error
    assert reports["float64.py"]["passed"] is True, reports["float64.py"]["tasks"]
    strict = task_result(reports["strict.py"], "nested-model")
    assert strict["status"] == "failed" and "float64" in strict["message"], strict
