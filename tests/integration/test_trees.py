"""Tests for lessonkit.trees: diagrams, layout comparison, trainable split, optimizer state."""

from __future__ import annotations

import collections
import dataclasses
import os
import subprocess
import sys
import textwrap
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lessonkit.trees import (
    Difference,
    TreeMismatch,
    TreeReport,
    assert_same_layout,
    check_trainable,
    compare,
    compare_state,
    describe,
    format_leaf,
    format_path,
    is_trainable,
    merge_trainable,
    partition_trainable,
)

# --------------------------------------------------------------------------- containers


class Pair(NamedTuple):
    weight: Any
    bias: Any


@dataclasses.dataclass
class Linear:
    weight: Any
    bias: Any
    activation: str = "relu"


jax.tree_util.register_dataclass(Linear, data_fields=["weight", "bias"], meta_fields=["activation"])


class KeyedBox:
    """A custom node registered with keys: children named ``inner`` and ``scale``."""

    def __init__(self, inner: Any, scale: Any):
        self.inner, self.scale = inner, scale


jax.tree_util.register_pytree_with_keys(
    KeyedBox,
    lambda box: (
        (
            (jax.tree_util.GetAttrKey("inner"), box.inner),
            (jax.tree_util.GetAttrKey("scale"), box.scale),
        ),
        None,
    ),
    lambda _, children: KeyedBox(*children),
)


class TaggedBox:
    """A custom node without keys (children get flattened indices) and a static tag."""

    def __init__(self, value: Any, tag: str):
        self.value, self.tag = value, tag


jax.tree_util.register_pytree_node(
    TaggedBox,
    lambda box: ((box.value,), box.tag),
    lambda tag, children: TaggedBox(children[0], tag),
)


def lesson_params() -> dict[str, jax.Array]:
    return {"weight": jnp.array([1.0, -1.0]), "bias": jnp.array(0.0)}


def kinds_and_paths(report: TreeReport) -> list[tuple[str, str]]:
    return [(d.kind, d.path) for d in report.differences]


# --------------------------------------------------------------------------- describe


def test_describe_matches_the_lesson_diagram_exactly():
    expected = (
        "params\n"
        "├── weight: float32[2]\n"
        "└── bias: float32[]\n"
        "2 leaves, 3 numerical parameter values"
    )
    assert describe(lesson_params()) == expected


def test_describe_keeps_insertion_order_not_jax_sorted_order():
    text = describe({"z": np.zeros(1, np.float32), "a": np.zeros(1, np.float32)}, name="t")
    assert text.splitlines()[1:3] == ["├── z: float32[1]", "└── a: float32[1]"]


def test_describe_every_container_kind():
    tree = {
        "pair": Pair(np.zeros(2, np.float32), np.zeros((), np.float32)),
        "linear": Linear(np.zeros((2, 3), np.float32), np.zeros(3, np.float32)),
        "layers": [np.zeros(1, np.int32), (np.zeros(2, np.float16),)],
        "keyed": KeyedBox(np.zeros(4, np.float32), None),
        "tagged": TaggedBox(np.zeros(5, np.float32), "t1"),
        "opt": None,
        "empty": {},
    }
    expected = """\
    model
    ├── pair: Pair
    │   ├── weight: float32[2]
    │   └── bias: float32[]
    ├── linear: Linear(activation='relu')
    │   ├── weight: float32[2,3]
    │   └── bias: float32[3]
    ├── layers: list
    │   ├── 0: int32[1]
    │   └── 1: tuple
    │       └── 0: float16[2]
    ├── keyed: KeyedBox
    │   ├── inner: float32[4]
    │   └── scale: None (empty node)
    ├── tagged: TaggedBox static 't1'
    │   └── 0: float32[5]
    ├── opt: None (empty node)
    └── empty: dict (empty node)
    8 leaves, 24 numerical parameter values"""
    assert describe(tree, name="model") == textwrap.dedent(expected)


def test_describe_non_array_leaves_are_leaves_but_not_values():
    tree = {"w": jnp.ones(3), "name": "mlp", "lr": 0.1, "steps": 3, "flag": True}
    assert describe(tree).splitlines() == [
        "params",
        "├── w: float32[3]",
        "├── name: str 'mlp' (not a numerical array)",
        "├── lr: float 0.1 (Python scalar)",
        "├── steps: int 3 (Python scalar)",
        "└── flag: bool True (Python scalar)",
        "5 leaves, 3 numerical parameter values (4 leaves are not numerical arrays)",
    ]


def test_describe_pluralises_one_leaf_and_one_value():
    assert describe(jnp.zeros(()), name="x") == "x: float32[]\n1 leaf, 1 numerical parameter value"
    one_str = "x: str 'a' (not a numerical array)\n1 leaf, 0 numerical parameter values"
    assert describe("a", name="x") == one_str + " (1 leaf is not a numerical array)"
    assert (
        describe(None, name="x") == "x: None (empty node)\n0 leaves, 0 numerical parameter values"
    )


def test_describe_marks_weak_types_on_request():
    tree = {"scale": jnp.asarray(1.0), "w": jnp.ones(2), "n": np.float32(1.0)}
    marked = describe(tree, show_weak_types=True).splitlines()
    assert marked[1] == "├── scale: float32[]  weak"
    assert marked[2] == "├── w: float32[2]"
    assert marked[3] == "└── n: float32[]"
    assert "weak" not in describe(tree)


def test_describe_shows_sharding_over_several_devices():
    script = """
        import jax, jax.numpy as jnp
        from jax.sharding import NamedSharding, PartitionSpec as P
        from lessonkit.trees import describe
        mesh = jax.make_mesh((8,), ("x",))
        w = jax.device_put(jnp.zeros((8, 2)), NamedSharding(mesh, P("x")))
        b = jax.device_put(jnp.zeros(2), NamedSharding(mesh, P()))
        print(describe({"w": w, "b": b, "local": jnp.ones(3)}))
    """
    env = {
        **os.environ,
        "XLA_FLAGS": "--xla_force_host_platform_device_count=8",
        "JAX_PLATFORMS": "cpu",
    }
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert out.splitlines() == [
        "params",
        "├── w: float32[8,2]  sharded over 8 devices: PartitionSpec('x',)",
        "├── b: float32[2]  replicated over 8 devices",
        "└── local: float32[3]",
        "3 leaves, 21 numerical parameter values",
    ]


def test_format_helpers():
    keys = (jax.tree_util.SequenceKey(0), jax.tree_util.GetAttrKey("mu"))
    assert format_path((*keys, jax.tree_util.DictKey("bias"))) == "0/mu/bias"
    assert format_path(()) == "(root)"
    assert format_leaf(np.zeros((2, 3), np.int8)) == "int8[2,3]"
    assert format_leaf("mlp") == "str 'mlp'"


# --------------------------------------------------------------------------- compare


def test_equal_layouts_match_even_with_different_values():
    params = lesson_params()
    grads = jax.grad(lambda p: jnp.sum(p["weight"] ** 2) + p["bias"])(params)
    report = compare(params, grads, names=("params", "grads"))
    assert report.ok
    assert report.num_leaves == (2, 2)
    assert str(report) == "grads matches params: same structure, paths, shapes and dtypes"
    abstract = jax.eval_shape(lambda p: p, params)  # ShapeDtypeStructs have a layout too
    assert compare(params, abstract).ok
    assert kinds_and_paths(compare(abstract, {**abstract, "bias": jnp.zeros(1)})) == [
        ("shape", "bias")
    ]


def test_missing_bias_is_explained_by_path():
    params = lesson_params()
    report = compare(params, {"weight": params["weight"]}, names=("params", "grads"))
    assert not report.ok
    assert report.differences == (
        Difference("missing", "bias", "float32[]", "nothing", (jax.tree_util.DictKey("bias"),)),
    )
    assert report.differences[0].keystr == "['bias']"
    assert str(report) == (
        "grads differs from params in 1 place:\n"
        "  missing  bias  params has float32[], grads has nothing"
    )


def test_renamed_key_is_one_missing_and_one_extra_under_the_same_parent():
    a = {"layer": {"weight": np.zeros(2), "bias": np.zeros(())}}
    b = {"layer": {"weight": np.zeros(2), "b": np.zeros(())}}
    assert kinds_and_paths(compare(a, b)) == [("missing", "layer/bias"), ("extra", "layer/b")]


def test_every_difference_is_listed_structure_first():
    a = {
        "enc": {"w": np.zeros((2, 3), np.float32), "b": np.zeros(3, np.float32)},
        "dec": [np.zeros(3, np.float32), np.zeros(1, np.float32)],
        "head": np.zeros(4, np.float32),
        "gone": np.zeros(1, np.float32),
    }
    b = {
        "enc": {"w": np.zeros((3, 2), np.float32), "b": np.zeros(3, np.int32)},
        "dec": (np.zeros(3, np.float32), np.zeros(1, np.float32)),
        "head": np.zeros(5, np.float16),
        "new": np.zeros(1, np.float32),
    }
    report = compare(a, b, names=("params", "grads"))
    assert kinds_and_paths(report) == [
        ("node", "dec"),
        ("missing", "gone"),
        ("extra", "new"),
        ("shape", "enc/w"),
        ("shape", "head"),
        ("dtype", "enc/b"),
        ("dtype", "head"),
    ]
    text = str(report)
    assert text.splitlines()[0] == "grads differs from params in 7 places:"
    assert "  node     dec    params has list, grads has tuple" in text
    assert "  shape    enc/w  params has float32[2,3], grads has float32[3,2]" in text


def test_deep_leaf_mismatches_are_each_located():
    def tree(odd_shape: tuple, odd_dtype: type) -> dict[str, Any]:
        f32 = np.float32
        return {
            "a": [np.zeros(1, f32), np.zeros(1, f32), np.zeros(odd_shape, f32)],
            "b": {"c": np.zeros(1, f32), "d": [np.zeros(1, f32), np.zeros(1, odd_dtype)]},
            "e": np.zeros(odd_shape, f32),
        }

    report = compare(tree((1,), np.float32), tree((2,), np.int8))
    assert kinds_and_paths(report) == [("shape", "a/2"), ("shape", "e"), ("dtype", "b/d/1")]
    keys = jax.tree_util.DictKey, jax.tree_util.SequenceKey
    assert report.of_kind("dtype")[0].key_path == (keys[0]("b"), keys[0]("d"), keys[1](1))


def test_node_type_change_with_same_children_is_reported_once():
    a = {"p": {"weight": np.zeros(2), "bias": np.zeros(())}}
    b = {"p": Pair(np.zeros(2), np.zeros(()))}
    report = compare(a, b)
    assert report.differences == (
        Difference("node", "p", "dict", "Pair", (jax.tree_util.DictKey("p"),)),
    )


def test_node_type_change_with_different_children_lists_them_too():
    a = {"weight": np.zeros(2), "scale": np.zeros(())}
    b = Pair(np.zeros(2), np.zeros(()))
    assert kinds_and_paths(compare(a, b)) == [
        ("node", "(root)"),
        ("missing", "scale"),
        ("extra", "bias"),
    ]


def test_list_versus_tuple_is_a_node_difference():
    report = compare([np.zeros(1)], (np.zeros(1),))
    assert report.differences == (Difference("node", "(root)", "list", "tuple"),)


def test_ordered_dict_key_order_is_a_node_difference():
    a = collections.OrderedDict(a=np.zeros(1), b=np.zeros(2))
    b = collections.OrderedDict(b=np.zeros(2), a=np.zeros(1))
    assert kinds_and_paths(compare(a, b)) == [("node", "(root)")]
    assert compare(a, collections.OrderedDict(a=np.zeros(1), b=np.zeros(2))).ok


def test_dataclass_static_field_change_is_a_node_difference():
    a = {"l": Linear(np.zeros(2), np.zeros(()), "relu")}
    b = {"l": Linear(np.zeros(2), np.zeros(()), "tanh")}
    (diff,) = compare(a, b).differences
    assert (diff.kind, diff.path) == ("node", "l")
    assert (diff.expected, diff.got) == ("Linear(activation='relu')", "Linear(activation='tanh')")


def test_custom_node_aux_data_and_keyed_children():
    report = compare(TaggedBox(np.zeros(1), "a"), TaggedBox(np.zeros(1), "b"))
    assert kinds_and_paths(report) == [("node", "(root)")]
    keyed = compare(KeyedBox(np.zeros(2), np.zeros(())), KeyedBox(np.zeros(3), np.zeros(())))
    assert kinds_and_paths(keyed) == [("shape", "inner")]
    assert keyed.differences[0].keystr == ".inner"


def test_leaf_versus_subtree_is_a_node_difference_at_that_path():
    a = {"w": np.zeros(2, np.float32)}
    b = {"w": {"kernel": np.zeros(2, np.float32)}}
    assert compare(a, b).differences == (
        Difference("node", "w", "float32[2]", "dict with 1 leaf", (jax.tree_util.DictKey("w"),)),
    )
    assert kinds_and_paths(compare({"w": None}, {"w": np.zeros(1)})) == [("node", "w")]


def test_shape_and_dtype_of_one_leaf_are_both_reported():
    report = compare({"w": np.zeros(2, np.float32)}, {"w": np.zeros(3, np.int32)})
    assert kinds_and_paths(report) == [("shape", "w"), ("dtype", "w")]
    assert report.of_kind("dtype")[0].got == "int32[3]"
    with pytest.raises(ValueError, match="unknown kind"):
        report.of_kind("value")


def test_array_versus_python_value_is_a_type_difference():
    report = compare({"lr": jnp.asarray(0.1)}, {"lr": 0.1})
    assert report.differences == (
        Difference(
            "type", "lr", "float32[]", "float 0.1 (Python scalar)", (jax.tree_util.DictKey("lr"),)
        ),
    )
    assert compare({"name": "a"}, {"name": "b"}).ok  # metadata values are not layout


def test_assert_same_layout_raises_with_the_full_report():
    params = lesson_params()
    assert_same_layout(params, jax.tree.map(jnp.zeros_like, params))
    with pytest.raises(TreeMismatch) as caught:
        assert_same_layout(params, {"weight": jnp.ones(3)}, names=("params", "grads"))
    assert isinstance(caught.value, ValueError)
    assert kinds_and_paths(caught.value.report) == [("missing", "bias"), ("shape", "weight")]
    assert str(caught.value) == str(caught.value.report)


# --------------------------------------------------------------------------- trainable


def mixed_tree() -> dict[str, Any]:
    return {
        "w": jnp.ones((2, 2)),
        "b": np.zeros(2, np.float32),
        "meta": {"name": "mlp", "lr": 0.01, "steps": 10, "frozen": False},
        "step": jnp.array(3, jnp.int32),
        "mask": np.ones(2, bool),
        "opt": None,
    }


def test_check_trainable_names_each_non_float_leaf_with_why():
    report = check_trainable(mixed_tree())
    assert not report.ok
    assert report.num_leaves == 8
    found = {item.path: item.why for item in report.not_trainable}
    assert sorted(found) == [
        "mask",
        "meta/frozen",
        "meta/lr",
        "meta/name",
        "meta/steps",
        "step",
    ]
    assert "bool" in found["meta/frozen"]
    assert "Python scalar" in found["meta/lr"]
    assert "string" in found["meta/name"]
    assert "Python int" in found["meta/steps"]
    assert "integer array" in found["step"]
    assert "boolean array" in found["mask"]
    assert str(report).splitlines()[0] == "6 of 8 leaves are not floating-point arrays:"
    assert check_trainable({"w": jnp.ones(2)}).ok
    ok = "every leaf is a floating-point array (1 leaf, all trainable)"
    assert str(check_trainable({"w": jnp.ones(2)})) == ok


def test_is_trainable():
    assert is_trainable(jnp.ones(2)) and is_trainable(np.zeros((), np.float16))
    assert is_trainable(jnp.ones(2, jnp.complex64))
    assert is_trainable(np.float64(1.0)) and not is_trainable(np.int64(1))
    for leaf in (1.0, 1, True, "x", jnp.ones(2, jnp.int32), np.ones(2, bool)):
        assert not is_trainable(leaf)


def test_partition_and_merge_round_trip():
    tree = mixed_tree()
    trainable, other = partition_trainable(tree)
    assert trainable["meta"] == {"name": None, "lr": None, "steps": None, "frozen": None}
    assert trainable["w"] is tree["w"] and other["w"] is None
    assert other["step"] is tree["step"] and trainable["step"] is None
    assert jax.tree.leaves(trainable) == [tree["b"], tree["w"]]  # sorted keys: b, w
    merged = merge_trainable(trainable, other)
    assert jax.tree.structure(merged) == jax.tree.structure(tree)
    assert all(x is y for x, y in zip(jax.tree.leaves(merged), jax.tree.leaves(tree), strict=True))
    grads = jax.grad(lambda t: jnp.sum(merge_trainable(t, other)["w"]))(trainable)
    assert compare(trainable, grads).ok


# --------------------------------------------------------------------------- optimizer state


def test_compare_state_finds_adam_moments_and_lists_count_as_other_state():
    params = lesson_params()
    state = optax.adam(1e-3).init(params)
    report = compare_state(params, state)
    assert report.ok
    assert [m.path for m in report.matched] == ["0/mu", "0/nu"]
    assert [(o.path, o.layout) for o in report.other] == [("0/count", "int32[]")]
    assert str(report) == textwrap.dedent(
        """\
        params: 2 leaves
          bias     float32[]
          weight   float32[2]
        opt_state subtrees shaped like params:
          0/mu     matches params
          0/nu     matches params
        other optimizer state:
          0/count  int32[]"""
    )


def test_compare_state_reports_a_close_but_wrong_moment_tree():
    params = lesson_params()
    adam, empty = optax.adam(1e-3).init(params)
    wrong_shape = (adam._replace(nu={"weight": jnp.zeros(3), "bias": jnp.zeros(())}), empty)
    report = compare_state(params, wrong_shape)
    assert not report.ok
    mu, nu = report.matched
    assert mu.report.ok
    assert kinds_and_paths(nu.report) == [("shape", "weight")]
    assert "      shape  weight  params has float32[2], 0/nu has float32[3]" in str(report)
    lost_key = (adam._replace(mu={"weight": jnp.zeros(2)}), empty)
    mu, _ = compare_state(params, lost_key).matched
    assert (mu.path, kinds_and_paths(mu.report)) == ("0/mu", [("missing", "bias")])


def test_compare_state_with_stateless_optimizer():
    params = lesson_params()
    report = compare_state(params, optax.sgd(0.1).init(params))
    assert report.ok and not report.matched and not report.other
    assert "opt_state has no subtree shaped like params" in str(report)


# --------------------------------------------------------------------------- properties

DTYPES = [np.float32, np.float16, np.int32, np.int8, np.bool_]
KEYS = st.text(alphabet="abcxyz", min_size=1, max_size=3)


@st.composite
def array_leaves(draw: st.DrawFn, min_ndim: int = 0) -> Any:
    shape = tuple(draw(st.lists(st.integers(0, 3), min_size=min_ndim, max_size=2)))
    dtype = draw(st.sampled_from(DTYPES))
    value = np.zeros(shape, dtype)
    return jnp.asarray(value) if draw(st.booleans()) else value


def trees_of(leaves: st.SearchStrategy, empty_nodes: bool = True) -> st.SearchStrategy:
    return st.recursive(
        leaves | st.none() if empty_nodes else leaves,
        lambda children: (
            st.dictionaries(KEYS, children, max_size=3)
            | st.lists(children, max_size=3)
            | st.lists(children, max_size=3).map(tuple)
        ),
        max_leaves=12,
    )


def copy_tree(tree: Any) -> Any:
    return jax.tree.map(lambda x: x.copy() if hasattr(x, "copy") else x, tree)


def locations(tree: Any, path: tuple = ()) -> list[tuple[tuple, Any]]:
    """Every (path, subtree) of a tree of dicts, lists, tuples, None and leaves."""
    found = [(path, tree)]
    if isinstance(tree, dict):
        for key, child in tree.items():
            found += locations(child, (*path, key))
    elif isinstance(tree, list | tuple):
        for index, child in enumerate(tree):
            found += locations(child, (*path, index))
    return found


def replace_at(tree: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(tree, dict):
        return {k: replace_at(v, rest, new) if k == head else v for k, v in tree.items()}
    items = [replace_at(v, rest, new) if i == head else v for i, v in enumerate(tree)]
    return type(tree)(items)


def slash(path: tuple) -> str:
    return "/".join(str(k) for k in path) or "(root)"


@st.composite
def edited_trees(
    draw: st.DrawFn, trees: st.SearchStrategy | None = None
) -> tuple[Any, Any, list[tuple[str, str]]]:
    """A random tree, a copy with one random edit, and the differences expected."""
    tree = draw(trees if trees is not None else trees_of(array_leaves()))
    places = locations(tree)
    edits = []
    for path, node in places:
        if isinstance(node, dict) and node:
            edits += [("delete", path, node), ("rename", path, node)]
        if isinstance(node, list | tuple):
            edits.append(("retype", path, node))
        if isinstance(node, np.ndarray | jax.Array):
            edits += [("reshape", path, node), ("recast", path, node), ("wrap", path, node)]
    if not edits:  # None or {}: replace the empty root node with a leaf
        return tree, np.zeros(1), [("node", "(root)")]
    kind, path, node = draw(st.sampled_from(edits))
    if kind in ("delete", "rename"):
        key = draw(st.sampled_from(sorted(node)))
        rest = {k: v for k, v in node.items() if k != key}
        if kind == "delete":
            return tree, replace_at(tree, path, rest), [("missing", slash((*path, key)))]
        renamed = {**rest, "renamed": node[key]}
        expected = [("missing", slash((*path, key))), ("extra", slash((*path, "renamed")))]
        return tree, replace_at(tree, path, renamed), expected
    if kind == "retype":
        new = tuple(node) if isinstance(node, list) else list(node)
        return tree, replace_at(tree, path, new), [("node", slash(path))]
    if kind == "reshape":
        new = np.zeros((*node.shape, 2), node.dtype)
        return tree, replace_at(tree, path, new), [("shape", slash(path))]
    if kind == "recast":
        dtype = draw(st.sampled_from([d for d in DTYPES if np.dtype(d) != node.dtype]))
        return tree, replace_at(tree, path, np.zeros(node.shape, dtype)), [("dtype", slash(path))]
    return tree, replace_at(tree, path, {"w": node}), [("node", slash(path))]


@settings(max_examples=60, deadline=None)
@given(trees_of(array_leaves()))
def test_any_tree_matches_its_copy(tree):
    assert compare(tree, copy_tree(tree)).ok
    assert compare(tree, tree).ok


@settings(max_examples=150, deadline=None)
@given(edited_trees())
def test_one_edit_is_reported_at_exactly_that_path(case):
    tree, edited, expected = case
    report = compare(tree, edited)
    assert sorted(kinds_and_paths(report)) == sorted(expected), str(report)
    flipped = compare(edited, tree)
    swap = {"missing": "extra", "extra": "missing"}
    assert sorted(kinds_and_paths(flipped)) == sorted((swap.get(k, k), p) for k, p in expected)


@settings(max_examples=100, deadline=None)
@given(edited_trees(trees_of(array_leaves(min_ndim=1), empty_nodes=False)))
def test_the_grader_sees_the_same_layout_differences_as_compare(case):
    """One engine: a live tree and the values a learner's process reports differ alike.

    (Arrays of at least one dimension and no None: the grader compares 0-d arrays and
    Python numbers by value alone, and reads None as a leaf, on purpose.)
    """
    from lessonkit.grade.channel.reported import parse_value
    from lessonkit.grade.channel.values import differences, explain_layout
    from lessonkit.grading_child.encoder import Encoder

    tree, edited, _ = case
    encoder = Encoder(np, jax)

    def encode(value: Any) -> Any:
        return parse_value(encoder.encode(value))

    found = differences(encode(tree), encode(edited))
    report = compare(tree, edited, names=("expected", "x"))
    layout = [(d.kind, d.location or "(root)", d.words) for d in found if d.kind != "value"]
    assert sorted(layout) == sorted(
        (d.kind, d.path, (d.expected, d.got)) for d in report.differences
    )
    if layout:
        assert explain_layout("x", found).startswith("`x`")


MIXED_LEAVES = array_leaves() | st.sampled_from(["mlp", 0.5, 3, True])


@settings(max_examples=40, deadline=None)
@given(trees_of(MIXED_LEAVES))
def test_partition_then_merge_is_the_identity(tree):
    trainable, other = partition_trainable(tree)
    assert all(is_trainable(x) for x in jax.tree.leaves(trainable))
    assert not any(is_trainable(x) for x in jax.tree.leaves(other))
    merged = merge_trainable(trainable, other)
    assert jax.tree.structure(merged) == jax.tree.structure(tree)
    assert all(x is y for x, y in zip(jax.tree.leaves(merged), jax.tree.leaves(tree), strict=True))
    assert len(check_trainable(tree).not_trainable) == len(jax.tree.leaves(other))
