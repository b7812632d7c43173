"""Every number the prose states is declared in lesson.md and agrees with the executed code."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

REQUIRED = {
    "prediction": 1.0,
    "residual": -2.0,
    "prediction_derivative": -4.0,
    "weight_gradient": [-8.0, -4.0],
    "bias_gradient": -4.0,
    "updated_weight": [1.4, -0.8],
    "updated_bias": 0.2,
    "new_prediction": 2.2,
    "new_residual": -0.8,
    "loss_before": 4.0,
    "loss_after": 0.64,
    "squared_norm": 96.0,
    "scale_derivative": -4.0,
    "leaf_count": 2,
    "parameter_values": 3,
}


@pytest.fixture(scope="module")
def namespace(lesson):
    scope: dict = {}
    for step in lesson.steps:
        exec(compile(step.code, f"step {step.number}", "exec"), scope)
    return scope


def test_required_numbers_are_declared(lesson):
    declared = {n.name: n.value for n in lesson.numbers}
    for name, value in REQUIRED.items():
        assert declared.get(name) == value, name


def test_declared_numbers_match_execution(lesson, namespace, capsys):
    for number in lesson.numbers:
        computed = eval(number.expr, {**namespace, "jax": jax, "jnp": jnp})
        assert np.allclose(np.asarray(computed), np.asarray(number.value), rtol=1e-6, atol=1e-6), (
            f"lesson.md:{number.line}: {number.name} is declared {number.value} "
            f"but the code gives {computed}"
        )


def _forms(value) -> list[str]:
    values = value if isinstance(value, list) else [value]
    return [f"{v:g}" if float(v) != int(v) else str(int(v)) for v in values]


def test_declared_numbers_appear_in_the_prose(lesson):
    prose = re.sub(r"```\{numbers\}.*?```", "", lesson.source, flags=re.S)
    for number in lesson.numbers:
        for form in _forms(number.value):
            assert form in prose, f"{number.name}: {form} is not stated in the prose"


def test_a_wrong_declaration_is_caught(lesson, namespace):
    """The check above can fail: a number off by a little is rejected."""
    number = next(n for n in lesson.numbers if n.name == "loss_after")
    computed = eval(number.expr, {**namespace, "jax": jax, "jnp": jnp})
    assert not np.allclose(computed, 0.65, rtol=1e-6, atol=1e-6)


def test_tree_diagram_matches_describe(lesson, namespace):
    from lessonkit.model import Diagram
    from lessonkit.trees import describe

    (diagram,) = lesson.items(Diagram)
    assert describe(namespace[diagram.tree], name=diagram.tree) == diagram.text
