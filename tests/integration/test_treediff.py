"""The tree-difference engine on hand-made descriptions, with no JAX in sight."""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from lessonkit.treediff import Entry, close, differences, summary


@dataclass(frozen=True)
class Made:
    """A described tree written out by hand: an entry and its named children."""

    here: Entry
    kids: tuple[tuple[Hashable, Made], ...] = ()
    equal_below: bool = False

    def entry(self) -> Entry:
        return self.here

    def children(self) -> Sequence[tuple[Hashable, Made]]:
        return self.kids

    def same_layout(self, other: object) -> bool:
        return self.equal_below and isinstance(other, Made) and other.equal_below


def node(kind: str = "dict", static: object = None, keys: bool = False, **kids: Made) -> Made:
    leaves = sum(k.here.leaves for k in kids.values())
    here = Entry("node", kind, kind, static=static, static_is_keys=keys, leaves=leaves)
    return Made(here, tuple(kids.items()))


def arr(shape=(2,), dtype="float32", data=None) -> Made:
    label = f"{dtype}[{','.join(map(str, shape))}]"
    return Made(Entry("leaf", "array", label, shape=shape, dtype=dtype, data=data, approx=True))


def kinds(found) -> list[tuple[str, str]]:
    return [(d.kind, d.location) for d in found]


def test_layout_comes_in_the_lessons_order_then_values():
    expected = node(w=arr(data=(1.0, 2.0)), b=arr((1,)), inner=node(x=arr()))
    got = node("tuple", w=arr(data=(1.0, 9.0)), b=arr((3,), "int32"), extra=arr())
    found = differences(expected, got, values=True)
    assert kinds(found) == [
        ("node", ""),
        ("missing", "inner"),
        ("extra", "extra"),
        ("shape", "b"),
        ("dtype", "b"),
        ("value", "w"),
    ]
    assert found[1].words == ("dict with 1 leaf", "nothing")
    assert kinds(differences(expected, got)) == kinds(found)[:-1]  # values only on request


def test_a_leaf_where_a_node_was_is_one_node_difference_with_summaries():
    (found,) = differences(node(w=node(a=arr(), b=arr())), node(w=arr()))
    assert (found.kind, found.location, found.words) == (
        "node",
        "w",
        ("dict with 2 leaves", "float32[2]"),
    )


def test_static_data_of_keyed_nodes_differs_only_when_the_keys_are_the_same():
    ab, ba = (
        node("od", ("a", "b"), True, a=arr(), b=arr()),
        node("od", ("b", "a"), True, b=arr(), a=arr()),
    )
    (order,) = differences(ab, ba)
    assert order.kind == "node" and order.words == ("od static ('a', 'b')", "od static ('b', 'a')")
    fewer = node("od", ("a",), True, a=arr())
    assert kinds(differences(ab, fewer)) == [("missing", "b")]
    assert kinds(differences(node(static=1), node(static=2))) == [("node", "")]


def test_values_not_read_never_match_and_nan_matches_only_nan():
    assert kinds(differences(arr(), arr(), values=True)) == [("value", "")]
    nan = arr(data=(math.nan, 1.0))
    assert differences(nan, nan, values=True) == ()  # issue 32: NaN in the same place
    assert kinds(differences(nan, arr(data=(1.0, math.nan)), values=True)) == [("value", "")]
    assert kinds(differences(nan, arr(data=(0.0, 1.0)), values=True)) == [("value", "")]
    exact = Made(Entry("leaf", "key", "key[]", data=(7, 8)))
    near = Made(Entry("leaf", "key", "key[]", data=(7, 9)))
    assert kinds(differences(exact, near, values=True)) == [("value", "")]
    assert differences(exact, exact, values=True) == ()


def test_a_quick_equal_answer_skips_the_subtree():
    left = Made(node(a=arr()).here, node(a=arr()).kids, equal_below=True)
    right = Made(node(a=arr((3,))).here, node(a=arr((3,))).kids, equal_below=True)
    assert differences(left, right) == ()  # the describer vouched for it
    assert kinds(differences(left, right, values=True)) == [("shape", "a")]


def test_closeness_is_allclose_like():
    assert close([1.0, 100.0], [1.000001, 100.001])
    assert not close([1.0], [1.1]) and not close([1.0], [1.0, 2.0])
    assert close([math.inf], [math.inf]) and not close([math.inf], [-math.inf])
    assert summary(None) == "nothing" and summary(node(kind="None").here) == "None (empty node)"


def test_the_engine_and_the_graders_words_need_no_jax():
    code = (
        "import sys, lessonkit.treediff, lessonkit.grade.channel.values, "
        "lessonkit.grade.judging.checks; "
        "print(sorted(m for m in ('jax', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
