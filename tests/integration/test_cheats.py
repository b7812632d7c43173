"""The cheat set: `lessonkit verify` proves every task's checks able to fail.

The literal renderer is checked without a child (its literals are evaluated with NumPy
standing in for `jax.numpy`, and read back by the worker's own encoder); the cheat set is
graded on the fixture lesson, whose rubric must reject every cheat, and on a copy of it whose
drawn inputs leave one task's answer unchanged, which `lessonkit verify` must name.
"""

from __future__ import annotations

import collections
import importlib
import math
import os
import shutil
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lessonkit.grade.channel import reported as r
from lessonkit.grade.channel.protocol import parse_value
from lessonkit.grade.self_checks.literals import LiteralError, literal, zeros
from lessonkit.grading_child.encoder import Encoder
from lessonkit.lesson.load import load_lesson
from lessonkit.settings import proving_settings

from conftest import FIXTURE_MD, REPO, invoke

# --------------------------------------------------------------------------- literals


KEY_ENTRIES = ("DictKey", "SequenceKey", "GetAttrKey", "FlattenedIndexKey")


class _NotJax:
    """Stands in for JAX's array and key types: NumPy-only values never have them."""


_FAKE_JAX = SimpleNamespace(
    numpy=SimpleNamespace(zeros=lambda shape: _NotJax()),
    random=SimpleNamespace(key=lambda seed: _NotJax(), key_data=None),
    tree_util=SimpleNamespace(  # every other value a leaf; key-path entries never met
        tree_flatten_with_path=lambda value, is_leaf=None: ([((), value)], None),
        **{name: type(name, (), {}) for name in KEY_ENTRIES},
    ),
)
_ENCODER = Encoder(np, _FAKE_JAX)
_NAMES = {"jnp": np, "np": np, "collections": collections, "importlib": importlib}


def evaluated(source: str) -> r.Value:
    """The literal evaluated with NumPy as `jnp`, reported as a child reports it."""
    return parse_value(_ENCODER.encode(eval(source, dict(_NAMES))))


_TEXT = st.text(st.characters(codec="utf-8", categories=("L", "N", "P", "Zs")), max_size=12)
_DTYPES = {
    "float32": st.floats(width=32),
    "float64": st.floats(),
    "int32": st.integers(-(2**31), 2**31 - 1),
    "uint32": st.integers(0, 2**32 - 1),
    "bool": st.booleans(),
}


@st.composite
def arrays(draw) -> r.Array:
    dtype = draw(st.sampled_from(sorted(_DTYPES)))
    shape = tuple(draw(st.lists(st.integers(0, 3), max_size=3)))
    data = draw(st.lists(_DTYPES[dtype], min_size=math.prod(shape), max_size=math.prod(shape)))
    return r.Array(dtype, shape, tuple(data))


_LEAVES = st.one_of(
    st.just(r.NoneValue()),
    st.booleans().map(lambda b: r.Number("bool", b)),
    st.integers(-(2**53), 2**53).map(lambda i: r.Number("int", i)),
    st.floats().map(lambda x: r.Number("float", x)),
    _TEXT.map(lambda s: r.Text(s, len(s))),
    st.just(r.Module("math")),
    arrays(),
)


def _sequence(kind: str, items: list) -> r.Sequence:
    """A list or tuple, or a NamedTuple with the field names an honest child reports."""
    fields = () if kind in ("list", "tuple") else tuple(f"f{i}" for i in range(len(items)))
    return r.Sequence(kind, tuple(items), fields)


def _containers(children):
    keys = st.one_of(_TEXT, st.integers(-5, 5))
    return st.one_of(
        st.dictionaries(keys, children, max_size=3).map(lambda d: r.Mapping(tuple(d.items()))),
        st.tuples(
            st.sampled_from(["list", "tuple", "ScaleByAdamState"]),
            st.lists(children, max_size=3),
        ).map(lambda pair: _sequence(*pair)),
    )


VALUES = st.recursive(_LEAVES, _containers, max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_a_literal_reports_exactly_the_value_it_was_rendered_from(value):
    """Every leaf kind, dtype and container, NaN, infinities and -0.0 included."""
    assert repr(evaluated(literal(value))) == repr(value)


def _leaves(value: r.Value) -> list[r.Value]:
    if isinstance(value, r.Mapping):
        return [leaf for _, child in value.items for leaf in _leaves(child)]
    if isinstance(value, r.Sequence):
        return [leaf for child in value.items for leaf in _leaves(child)]
    return [value]


@settings(max_examples=200, deadline=None)
@given(VALUES)
def test_zeros_keep_the_layout_and_zero_every_leaf(value):
    from lessonkit.grade.self_checks.cheats import same_layout

    back = evaluated(zeros(value))
    assert same_layout(value, back)
    for leaf in _leaves(back):
        match leaf:
            case r.Number() | r.Text():
                assert not leaf.value
            case r.Array():
                assert not any(leaf.data)


def test_a_literal_imports_only_the_modules_it_names():
    from lessonkit.grade.self_checks.literals import imports_for

    assert imports_for("x = jnp.zeros((2,), dtype='float32')") == ["import jax.numpy as jnp"]
    assert imports_for("x = np.array(1.0, dtype='float64')") == ["import numpy as np"]


def test_a_key_array_is_wrapped_key_data_of_its_implementation():
    key = r.KeyArray("fry", "key", (2,), (1, 2, 3, 4))
    assert literal(key) == (
        "jax.random.wrap_key_data(jnp.array([1, 2, 3, 4], dtype='uint32').reshape((2, 2)), "
        "impl='threefry2x32')"
    )
    assert zeros(key) == (
        "jax.random.wrap_key_data(jnp.zeros((2, 2), dtype='uint32'), impl='threefry2x32')"
    )


@pytest.mark.parametrize(
    "value, said",
    [
        (r.Opaque("other", "Thing"), "a Thing that the grader only names"),
        (r.Text("abc", 300), "a string of 300 characters, reported cut short"),
        (r.Array("float32", (5000,), None), "too large"),
        (r.KeyArray("threefry", "key", (), (1, 2)), "unknown implementation"),
        (r.Sequence("not a name", ()), "not a list, tuple or NamedTuple"),
    ],
)
def test_a_value_no_literal_reproduces_is_the_builders_error(value, said):
    with pytest.raises(LiteralError, match=said):
        literal(value)


# --------------------------------------------------------------------------- the cheat set


@pytest.fixture(scope="module")
def fixture_verdicts():
    from lessonkit.grade.grader import Grader
    from lessonkit.grade.self_checks.cheats import grade_cheats

    with Grader(proving_settings(os.environ, timeout=30.0)) as grader:
        return grade_cheats(load_lesson(FIXTURE_MD), grader)


def test_the_fixture_lesson_rejects_every_cheat_of_the_set(fixture_verdicts):
    built, verdicts = fixture_verdicts
    assert built.errors == ()
    got = {(v.cheat.task, v.cheat.kind): v for v in verdicts}
    # `line` is text: no input has its layout, and zeros are its typed-in cheat again
    assert sorted(got) == [
        ("report-line", "typed-in"),
        ("report-line", "zeros"),
        ("twice", "inputs unchanged"),
        ("twice", "typed-in"),
        ("twice", "zeros"),
    ]
    assert all(v.malformed is None for v in verdicts), [v.malformed for v in verdicts]
    assert {v.status for v in verdicts} == {"failed"}
    typed_in = got[("twice", "typed-in")].message
    assert "right on the lesson's inputs but not on other inputs" in typed_in
    assert got[("twice", "zeros")].message.startswith("`twice` at `0` is 0; expected 5.")
    unchanged = got[("twice", "inputs unchanged")].message
    assert unchanged.startswith("`twice` at `0` is 3; expected 5.")
    assert got[("report-line", "zeros")].message.startswith("`line` is the string ''")


def test_a_cheat_that_is_not_well_formed_is_the_builders_error(monkeypatch):
    """Zeros built with the wrong layout (None) are not a cheat at all: verify blames the
    builder, whatever verdict the rubric gave them."""
    from lessonkit.grade.self_checks import cheats

    monkeypatch.setattr(cheats, "zeros", lambda value: "None")
    settings = proving_settings(os.environ, timeout=30.0)
    problems = cheats.prove_cheats(load_lesson(FIXTURE_MD), settings=settings)
    assert len(problems) == 2, problems
    for problem, name in zip(sorted(problems, reverse=True), ("twice", "line"), strict=True):
        assert "the cheat builder could not build a well-formed zeros cheat" in problem
        assert f"(`{name}` is None; expected" in problem and ".):" not in problem
        assert "a bug in lessonkit's cheat builder, not in the lesson" in problem


_ALL_INPUTS = """\
inputs:
  scale: {uniform: [0.5, 2.0]}
  start: {integers: [10, 99]}
  flag: {bernoulli: 0.5}
  ints: {integers: [-5, 5], shape: [2]}
"""
_TYPED_IN_LINE = """\
  - task: report-line
    name: typed-in line
    code: |
      line = "Count: 4, flag: False"
      print(line)
    expect: failed
    message: "`line` is right on the lesson's inputs but not on other inputs"
    why: "`line` is typed in from the lesson's run, so it is right only for its `after`."
    instead: "Build `line` from the values of `after` with an f-string."
"""


def test_verify_names_the_task_and_the_cheat_a_weak_rubric_lets_through(tmp_path):
    """Only `scale` drawn: `report-line` prints the count and flag, which never change, and
    its author declared no typed-in attempt, yet verify must say that its checks cannot fail."""
    source = FIXTURE_MD.read_text(encoding="utf-8")
    assert _ALL_INPUTS in source and _TYPED_IN_LINE in source
    weak = source.replace(_ALL_INPUTS, "inputs:\n  scale: {uniform: [0.5, 2.0]}\n")
    weak = weak.replace(_TYPED_IN_LINE, "")
    folder = tmp_path / "phases" / "99-fixture" / "01-tuples"
    folder.mkdir(parents=True)
    (folder / "lesson.md").write_text(weak, encoding="utf-8")
    shutil.copy(FIXTURE_MD.parents[1] / "phase.yaml", folder.parent / "phase.yaml")
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    for argv in (["build", "fixture-01"], ["run", "fixture-01", "--record"]):
        invoke(argv, root=tmp_path, cwd=tmp_path)
    code, out, err = invoke(["build", "fixture-01"], root=tmp_path, cwd=tmp_path)
    assert code == 0, out + err
    code, out, err = invoke(["verify", "fixture-01"], root=tmp_path, cwd=tmp_path)
    problems = [line for line in out.splitlines() if "cheat" in line]
    assert code == 1, out + err
    assert len(problems) == 1, out
    (problem,) = problems
    assert "lesson fixture-01, task 'report-line' passes the typed-in cheat" in problem
    assert "`line` = a literal of the reference's value" in problem
    assert "declare a probe" in problem and "an edge input" in problem
    assert "grade the printed text as a value" in problem
    assert "verify: 1 problem(s)" in out
