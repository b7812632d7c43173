"""The optional experiments: their stated output is what the code prints, and the check bites."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys

import pytest

from lessonkit.lesson.model import Quiz

from conftest import LESSON_DIR, REPO

GOING_FURTHER = LESSON_DIR / "code" / "going_further.py"


def _printed(lesson, code: str) -> list[str]:
    """Lines printed by `code` run after the build steps, in a fresh namespace."""
    scope: dict = {}
    with contextlib.redirect_stdout(io.StringIO()):
        for step in lesson.steps:
            exec(compile(step.code, f"step {step.number}", "exec"), scope)
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(compile(code, "experiment", "exec"), scope)
    return buffer.getvalue().splitlines()


def test_four_optional_experiments_with_outputs(lesson):
    optional = lesson.optional_experiments
    assert [e.title for e in optional] == [
        "Name every leaf by its key path",
        "Keep metadata out of the gradient",
        "Register a dataclass for the layer",
        "Optimizer state is a tree of its own",
    ]
    assert all(e.output and e.prompt and e.expected for e in optional)


def test_they_come_after_the_challenge_and_each_has_a_quiz(lesson):
    titles = [s.title for s in lesson.sections]
    first = titles.index("Going further: name every leaf by its key path")
    assert titles.index("Repair a mismatched update tree") < first
    quiz_ids = [q.id for q in lesson.quizzes]
    assert quiz_ids[:4] == ["quiz-key-paths", "quiz-metadata", "quiz-dataclass", "quiz-optimizer"]
    for section in lesson.sections[first : first + 4]:
        assert sum(isinstance(i, Quiz) for i in section.items) == 1


def test_going_further_script_prints_every_stated_line(lesson):
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    result = subprocess.run(
        [sys.executable, str(GOING_FURTHER.relative_to(REPO))],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    expected = ["Before/after: 4.0 0.6399999260902405"]
    for experiment in lesson.optional_experiments:
        expected += list(experiment.output)
    expected.append("PASS: state-02 going further")  # the optional task's solution prints nothing
    assert result.stdout.splitlines() == expected


@pytest.mark.parametrize("index", range(4))
def test_each_stated_output_matches_execution(lesson, index):
    experiment = lesson.optional_experiments[index]
    assert _printed(lesson, experiment.code) == list(experiment.output)


WRONG = {
    # With the scale at 1 both scalar gradients are -4: the swap can no longer be seen.
    0: ('"scale": jnp.array(2.)}', '"scale": jnp.array(1.)}'),
    # Differentiating the tree that still holds the name: the repair is undone.
    1: ("jax.grad(loss)(trainable)", "jax.grad(loss)(named)"),
    # Declaring activation a data field makes it a leaf.
    2: (
        'data_fields=["weight", "bias"], meta_fields=["activation"]',
        'data_fields=["weight", "bias", "activation"], meta_fields=[]',
    ),
    # A different learning rate moves the parameters elsewhere.
    3: ("optax.adam(0.1)", "optax.adam(0.2)"),
}


@pytest.mark.parametrize("index", range(4))
def test_a_wrong_variant_no_longer_matches(lesson, index):
    experiment = lesson.optional_experiments[index]
    old, new = WRONG[index]
    assert old in experiment.code
    try:
        printed = _printed(lesson, experiment.code.replace(old, new))
    except Exception as error:  # the wrong variant may fail outright: also a mismatch
        printed = [f"raised {type(error).__name__}"]
    assert printed != list(experiment.output)
