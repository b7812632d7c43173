"""Differentiation however it is written (issue 50): every public callable of `jax` that
differentiates carries a gradients probe's change, found by calling each one, not listed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lessonkit.grade.submission.known_answers import DERIVATIVES

SURVEY = Path(__file__).with_name("differentiation_survey.py")


def test_every_public_jax_callable_that_differentiates_carries_the_probe():
    """Each public callable of `jax` is called on a test function in a process of its own
    (`differentiation_survey.py`); one that makes autodiff's traces differentiates, and
    what it returns must move under a gradients probe. A new alias or transform is found
    by the same calls."""
    ran = subprocess.run(
        [sys.executable, str(SURVEY)], capture_output=True, text=True, timeout=300, check=True
    )
    found = json.loads(ran.stdout)
    differentiating = {name for name, seen in found.items() if seen["differentiates"]}
    # The survey sees differentiation at all (JAX's own documented transforms among it).
    assert {"grad", "jacobian", "jvp", "vjp"} <= differentiating, sorted(differentiating)
    unchanged = sorted(n for n in differentiating if not found[n]["changed"])
    assert unchanged == [], f"differentiates but the probe did not reach it: {unchanged}"
    unread = sorted(differentiating - DERIVATIVES)
    assert unread == [], f"differentiates but a cell's syntax is not read for it: {unread}"
    never = sorted(n for n, seen in found.items() if seen["changed"] and not seen["differentiates"])
    assert never == [], f"changed by a gradients probe without differentiating: {never}"


COMPOSED = Path(__file__).with_name("composed_differentiation.py")
BY_HAND_FROM_DIRECTIONS = {"jvp", "linearize", "jet"}
"""Inner ways whose gradient is put together from directional derivatives (`jvp` along each
axis, `linear_transpose` of `linearize`'s map, `jet`'s series): a tree of the cell's own
making, which no structure site reaches."""


@pytest.mark.slow
def test_every_pair_of_differentiating_transforms_grades_right_and_wrong_through_it():
    """Every pair of the public transformations that differentiate (the survey's), one
    inside the other, and `jax.experimental.jet` (issue 60): the gradient read back out of
    the outer one passes, `scale_by_hand` read from it fails, and under a dropped key it
    passes, each as a probe grades it (`composed_differentiation.py`). A Taylor series
    (`jet`) is no derivative the probe can move: a cell with one passes where no other
    derivative of it is reached, and its mistakes are for the other scenarios to find."""
    ran = subprocess.run(
        [sys.executable, str(COMPOSED)], capture_output=True, text=True, timeout=1200, check=True
    )
    found = json.loads(ran.stdout)
    assert {"grad", "jacfwd", "jvp", "hessian"} <= set(found["differentiating"])
    rows = found["rows"]
    assert len(rows) == (len(found["differentiating"]) + 1) * len(found["differentiating"])
    errors = [r for r in rows if "error" in r]
    assert errors == [], errors
    jet_free = [r for r in rows if r["inner"] != "jet"]
    assert [r for r in jet_free if not (r["right"] and r["wrong"])] == []
    shaped = [r for r in jet_free if r["inner"] not in BY_HAND_FROM_DIRECTIONS]
    assert [r for r in shaped if not r["structure"]] == []
