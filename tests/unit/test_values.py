"""The one value model (issue 32): what the child encodes and the parent compares, for every
pytree JAX knows, end to end: a live value through the child's encoder and the wire parser
to the verdict's sentence."""

from __future__ import annotations

import dataclasses
import functools
import json
import math

import pytest

from lessonkit.grade.channel.reported import Interference, parse_value
from lessonkit.grade.judging.checks import value_problem
from lessonkit.grading_child.encoder import Encoder

jax = pytest.importorskip("jax")
jnp = jax.numpy
np = pytest.importorskip("numpy")
optax = pytest.importorskip("optax")


@functools.cache
def _encoder() -> Encoder:
    return Encoder(np, jax)


def reported(value):
    """A live value as the parent reads it: encoded by the child, sent as JSON, parsed."""
    return parse_value(json.loads(json.dumps(_encoder().encode(value))))


def problem(name: str, expected, got) -> str | None:
    return value_problem(name, reported(expected), reported(got))


@functools.partial(jax.tree_util.register_dataclass, data_fields=["w"], meta_fields=["act"])
@dataclasses.dataclass
class Linear:
    w: jax.Array
    act: str


PARAMS = {"weight": jnp.array([1.0, -1.0]), "bias": jnp.array(0.0)}


def test_functions_and_transformations_are_known_by_their_type_alone():
    """`sgd` is a GradientTransformationExtraArgs; expected a GradientTransformationExtraArgs."""
    assert problem("sgd", optax.sgd(0.1), optax.sgd(0.2)) is None
    assert problem("adam", optax.adam(0.1), optax.adam(0.1)) is None
    assert problem("step", jax.jit(lambda x: x), jax.jit(lambda x: 2 * x)) is None
    assert problem("f", lambda x: x, print) is not None  # another type: a builtin function
    assert problem("obj", object(), object()) is None


def test_key_path_entries_are_values():
    """`leaves_with_paths` at `0/0/0` is a SequenceKey; expected a SequenceKey."""
    tree = {"a": [1.0, (2.0, 3.0)], "b": Linear(jnp.ones(2), "relu")}
    paths = jax.tree_util.tree_flatten_with_path(tree)[0]
    assert problem("paths", paths, jax.tree_util.tree_flatten_with_path(tree)[0]) is None
    other = jax.tree_util.tree_flatten_with_path({"a": tree["a"], "c": tree["b"]})[0]
    message = problem("paths", paths, other)
    assert message == "`paths` at `3/0/0/key` is the string 'c'; expected the string 'b'."
    kinds = [type(k).__name__ for path, _ in paths for k in path]
    assert {"DictKey", "SequenceKey", "GetAttrKey"} <= set(kinds)


def test_namedtuples_and_registered_dataclasses_are_named_by_their_fields():
    state = optax.adam(0.1).init(PARAMS)
    moved = optax.adam(0.1).update(PARAMS, state, PARAMS)[1]
    message = problem("opt_state", state, moved)
    assert message is not None and message.startswith("`opt_state` at `0/count` is 1; expected 0")
    layer = Linear(jnp.array([1.0, 2.0]), "relu")
    assert problem("layer", layer, Linear(jnp.array([1.0, 2.0]), "relu")) is None
    assert problem("layer", layer, Linear(jnp.array([1.0, 3.0]), "relu")) == (
        "`layer` at `w` is [1.0, 3.0]; expected [1.0, 2.0]."
    )
    assert problem("nothing", None, None) is None


def test_integers_stay_integers_in_messages():
    """`n_leaves` is 4.0; expected 5.0."""
    assert problem("n_leaves", 5, 4) == "`n_leaves` is 4; expected 5."
    assert problem("count", jnp.array(5), jnp.array(4)) == "`count` is 4; expected 5."
    assert problem("sizes", jnp.array([2, 1]), jnp.array([2, 3])) == (
        "`sizes` is [2, 3]; expected [2, 1]."
    )


def test_nan_at_the_same_place_equals_nan():
    assert problem("loss", jnp.array(jnp.nan), jnp.array(jnp.nan)) is None
    assert problem("losses", [1.0, math.nan], [1.0, math.nan]) is None
    assert problem("loss", jnp.array(jnp.nan), jnp.array(1.0)) is not None


def test_a_float_is_not_the_integer_a_count_should_be():
    """A float32 0.0 leaf passed where an int32 is expected."""
    assert problem("count", jnp.array(0, jnp.int32), jnp.array(0.0)) is not None
    assert problem("count", 0, 0.0) is not None
    assert problem("count", 3, jnp.array(3)) is None  # a Python int and an int32 agree


def test_fields_that_do_not_fit_their_items_are_interference():
    bad = {"t": "seq", "type": "State", "items": [{"t": "none"}], "fields": ["a", "b"]}
    with pytest.raises(Interference):
        parse_value(bad)
    with pytest.raises(Interference):
        parse_value({**bad, "items": [{"t": "none"}] * 2, "fields": ["a", "a"]})


def test_evidence_shows_an_optimizer_state_the_run_holds():
    """`show: - tree: opt_state` said "your run reported no value for it" (issue 32)."""
    from lessonkit.evidence.observe import _bind
    from lessonkit.trees import describe

    lesson_state = optax.adam(0.1).init(PARAMS)
    learner_state = optax.adam(0.1).update(PARAMS, lesson_state, PARAMS)[1]
    lesson_sgd = optax.sgd(0.1)
    namespace = {"opt_state": lesson_state, "sgd": lesson_sgd, "layer": Linear(jnp.ones(2), "x")}
    values = {
        "opt_state": reported(learner_state),
        "sgd": reported(optax.sgd(0.2)),
        "layer": reported(Linear(jnp.array([3.0, 4.0]), "x")),
    }
    _bind(namespace, values, set(values))
    assert int(namespace["opt_state"][0].count) == 1  # the learner's, in the lesson's types
    assert namespace["opt_state"][0].mu["weight"].tolist() == pytest.approx([0.1, -0.1])
    assert "count: int32[]" in describe(namespace["opt_state"], "opt_state")
    assert namespace["sgd"] is lesson_sgd  # functions are the lesson's
    assert namespace["layer"].w.tolist() == [3.0, 4.0]
