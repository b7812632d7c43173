"""Differentiation however it is written (issue 50): every public callable of `jax` that
differentiates carries a gradients probe's change, found by calling each one, not listed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
