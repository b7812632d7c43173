"""The input sets each task is graded on: the lesson's own, and sets drawn afresh every run.

A value that is right only on the lesson's inputs was typed in, not computed; a value that
is right on a fixed second set may have been typed in too. So besides the lesson's own
inputs, every run draws `input_sets` sets from the generators declared in the lesson's
`{grading}` block, from one seed per command (reported, and replayed by `--seed N`).
Each set is a complete replacement for the names the lesson's steps assign as inputs.

Draws stay inside a generator's bounds, so a value wrong only at or past them (a running
maximum that starts from the lower bound) passes every draw. A generator's `edges` close
that gap: after the drawn sets, every run adds the edge sets of each edge value, in the
order the block declares them. In an edge set, the leaf whose edge it is takes that value
and every other leaf is drawn as for a drawn set, so each edge is tried on its own, on
ordinary values of the other inputs (and from the same seed, so `--seed N` replays it).
An edge is a family, not one published value: besides the value itself, more sets give
that leaf values drawn around it (beyond it, between it and the bound it guards, across
that bound, and within a hair of the value itself), so an answer that special-cases the
published edge meets values it could not know.
"""

from __future__ import annotations

import math
import random
import secrets
from dataclasses import dataclass
from typing import Literal

from lessonkit.errors import UsageError
from lessonkit.lesson.model import (
    Bernoulli,
    EdgeValue,
    Generator,
    Grading,
    InputTree,
    Integers,
    Lesson,
    Uniform,
)

# A drawn leaf keeps its Python type through the JSON request: the child makes a float a
# float32 array, keeps an int or a bool as it is, and makes a list of them an array of
# float32, int32 or bool.
Leaf = float | int | bool
Tree = dict[str, "Tree"] | list | Leaf
SetKind = Literal["drawn", "edge"]
MAX_SEED = 2**32 - 1


@dataclass(frozen=True)
class InputSet:
    """Values for the input names: nested lists of floats, ints or bools (see `Leaf`)."""

    name: str
    values: dict[str, Tree]
    kind: SetKind = "drawn"

    def describe(self) -> str:
        """e.g. `weight [0.5, 2.0], bias 1.0, x [-1.0, 3.0]`."""
        parts: list[str] = []

        def walk(prefix: str, value: Tree) -> None:
            if isinstance(value, dict):
                for key, child in value.items():
                    walk(key, child)
            else:
                parts.append(f"{prefix} {value}")

        for name, value in self.values.items():
            walk(name, value)
        return ", ".join(parts)


@dataclass(frozen=True)
class LessonInputs:
    """The input names and this run's generated sets (the lesson's own come from its code)."""

    names: tuple[str, ...]
    seed: int
    others: tuple[InputSet, ...]  # the drawn sets, then the edge sets

    def count(self, kind: SetKind) -> int:
        return sum(s.kind == kind for s in self.others)


def new_seed() -> int:
    """A fresh seed for one command: nobody can know the inputs before the run."""
    return secrets.randbelow(MAX_SEED + 1)


def _draw_one(spec: Generator, rng: random.Random) -> Leaf:
    if isinstance(spec, Uniform):
        return round(rng.uniform(spec.low, spec.high), spec.decimals)
    if isinstance(spec, Integers):
        return rng.randint(spec.low, spec.high)
    return rng.random() < spec.p


def _draw(spec: InputTree, rng: random.Random) -> Tree:
    if isinstance(spec, dict):
        return {name: _draw(child, rng) for name, child in spec.items()}
    flat = [_draw_one(spec, rng) for _ in range(math.prod(spec.shape))]
    return flat[0] if not spec.shape else _reshape(flat, spec.shape)


def _reshape(flat: list[Leaf], shape: tuple[int, ...]) -> list:
    if len(shape) == 1:
        return flat
    step = len(flat) // shape[0]
    return [_reshape(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


def draw_set(grading: Grading, rng: random.Random) -> dict[str, Tree]:
    """One value for every input name, drawn from its generator tree."""
    return {name: _draw(spec, rng) for name, spec in grading.inputs}


Edge = tuple[tuple[str, ...], Generator, EdgeValue]
Around = Literal["beyond", "between", "across", "close"]
AROUND: tuple[Around, ...] = ("beyond", "between", "across", "close")


def _edge_leaves(spec: InputTree, path: tuple[str, ...]) -> list[Edge]:
    """(leaf path, generator, edge value) for every edge below `spec`, in declaration order."""
    if isinstance(spec, dict):
        return [edge for name, child in spec.items() for edge in _edge_leaves(child, (*path, name))]
    return [(path, spec, edge) for edge in spec.edges]


def _near(value: float, spec: Uniform | Integers, where: Around, rng: random.Random) -> Leaf:
    """A number drawn around one edge number, relative to the bound it guards.

    The bound is the generator's nearer end. `beyond`: farther from the bound than the edge
    (as far again at most); `between`: between the edge and the bound; `across`: near the
    bound, on either side of it. So an answer that special-cases the published edge, or is
    wrong only past the bound, meets values it cannot foresee. `close`:
    the edge itself, moved by less than a hundredth of the generator's rounding step, so a
    test for the published number (`value == 1.0`) misses a value that behaves as it does."""
    low, high = float(spec.low), float(spec.high)
    if where == "close" and isinstance(spec, Uniform):
        step = 10.0 ** -(spec.decimals + 2)
        return value + rng.choice((-1.0, 1.0)) * rng.uniform(0.1, 1.0) * step
    bound = low if abs(value - low) <= abs(value - high) else high
    side = -1.0 if value < bound or (value == bound and bound == low) else 1.0
    gap = abs(value - bound) or (high - low) / 4
    if where == "beyond":
        drawn = value + side * rng.uniform(0.0, gap)
    elif where == "between":
        drawn = value - side * rng.uniform(0.0, gap)
    else:
        reach = min(gap, (high - low) / 4)
        drawn = bound + rng.choice((-1.0, 1.0)) * rng.uniform(0.0, reach)
    if isinstance(spec, Integers):
        return round(drawn)
    return round(drawn, spec.decimals)


def _edge_around(edge: EdgeValue, spec: Generator, where: Around, rng: random.Random):
    """The edge value with every number drawn around it (`_near`); booleans are kept."""
    if isinstance(edge, tuple):
        return tuple(_edge_around(item, spec, where, rng) for item in edge)
    if isinstance(edge, bool) or isinstance(spec, Bernoulli):
        return edge
    return _near(float(edge), spec, where, rng)


def _as_tree(edge: EdgeValue) -> Tree:
    return [_as_tree(item) for item in edge] if isinstance(edge, tuple) else edge


def _with_edge(values: dict[str, Tree], path: tuple[str, ...], edge: EdgeValue) -> None:
    *parents, last = path
    node = values
    for name in parents:
        node = node[name]
    node[last] = _as_tree(edge)


def draw_inputs(grading: Grading, seed: int) -> LessonInputs:
    """The input sets for one seed: the same seed always gives the same sets."""
    rng = random.Random(seed)
    others = [
        InputSet(f"drawn-{number}", draw_set(grading, rng))
        for number in range(1, grading.input_sets + 1)
    ]
    edges = _edge_leaves(dict(grading.inputs), ())
    for number, (path, spec, edge) in enumerate(edges, 1):
        values = draw_set(grading, rng)
        _with_edge(values, path, edge)
        others.append(InputSet(f"edge-{number}", values, "edge"))
        if isinstance(spec, Bernoulli):
            continue  # a boolean edge has nothing around it
        for where in AROUND:
            if where == "close" and not isinstance(spec, Uniform):
                continue  # integers have no value closer than the next one, drawn `across`
            values = draw_set(grading, rng)
            _with_edge(values, path, _edge_around(edge, spec, where, rng))
            others.append(InputSet(f"edge-{number}-{where}", values, "edge"))
    return LessonInputs(grading.input_names, seed, tuple(others))


def grading_of(lesson: Lesson) -> Grading:
    """The lesson's `{grading}` block, or a clear message that it cannot be checked."""
    if lesson.grading is None:
        raise UsageError(
            f"lesson {lesson.meta.id!r} declares no grading",
            fix="add a {grading} block to its lesson.md (see docs/authoring.md)",
        )
    return lesson.grading
