"""One random stream feeding two leaves, found in the leaves' numbers.

Leaves drawn with one key share their numbers even at different shapes: JAX draws a shape's
numbers from the key's stream in order, so `normal(key, (4,))` is the start of
`normal(key, (3, 4))`, and scaling (He initialisation) only multiplies them. So for every
pair of floating-point leaves this asks whether one's flattened numbers are a scaled run of
the other's; constant leaves carry no stream and are skipped. The search is bounded
(`MAX_WORK`), since the leaves come from learner code: a file that spends it is reported as
such, never passed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lessonkit.defaults import STREAM_ULPS
from lessonkit.project.parameters import Leaf, Parameters

MIN_SCALED = 3  # numbers in a run found times a constant: any two numbers fit some constant
MAX_CANDIDATES = 64  # places where one pair of leaves is compared in full
MAX_WORK = 20_000_000  # numbers compared in all, for one tree


@dataclass(frozen=True)
class SharedStream:
    """`inner`'s numbers are `factor` times `outer`'s numbers from `offset` on."""

    inner: str
    outer: str
    offset: int
    length: int
    factor: float

    def describe(self) -> str:
        """The finding in words: which numbers of which leaf."""
        last = self.offset + self.length - 1
        where = (
            f"the first {self.length} numbers of {self.outer}"
            if self.offset == 0
            else f"numbers {self.offset} to {last} of {self.outer}"
        )
        times = "" if self.factor == 1.0 else f", times {self.factor:.6g}"
        return f"{self.inner} is {where}{times}"


@dataclass(frozen=True)
class StreamSearch:
    """What the search found in one tree, and whether it ran out of its budget first."""

    found: tuple[SharedStream, ...]
    pairs: int  # pairs of leaves compared
    exhausted: bool = False


@dataclass(frozen=True)
class _Numbers:
    """A floating-point leaf's numbers, flattened, with its successive ratios sorted."""

    name: str
    values: np.ndarray  # float64
    rel_tol: float  # relative: a few units in the last place of the leaf's dtype
    ratios: np.ndarray  # values[i + 1] / values[i], sorted, where values[i] != 0
    starts: np.ndarray  # the i of each ratio
    anchor: int | None  # the first i with values[i] != 0: where a run is looked up
    constant: bool  # every number the same: no stream to look for

    @classmethod
    def of(cls, leaf: Leaf) -> _Numbers | None:
        dtype = np.dtype(leaf.dtype)
        if dtype.kind != "f":
            return None
        values = np.frombuffer(leaf.data, dtype).astype(np.float64)
        if values.size < 2 or not np.all(np.isfinite(values)):
            return None
        nonzero = np.flatnonzero(values[:-1])
        ratios = values[nonzero + 1] / values[nonzero]
        order = np.argsort(ratios, kind="stable")
        rel_tol = STREAM_ULPS * float(np.finfo(dtype).eps)
        anchor = int(nonzero[0]) if nonzero.size else None
        constant = bool(values.min() == values.max())
        return cls(leaf.name, values, rel_tol, ratios[order], nonzero[order], anchor, constant)


def _match(inner: _Numbers, outer: _Numbers, offset: int) -> float | None:
    """The scale that makes `inner` the run of `outer` at `offset`, if one does."""
    run = outer.values[offset : offset + inner.values.size]
    if inner.values.size < MIN_SCALED:
        return 1.0 if np.array_equal(inner.values, run) else None
    anchor = inner.anchor
    assert anchor is not None
    if run[anchor] == 0:
        return None
    factor = inner.values[anchor] / run[anchor]
    allowed = max(inner.rel_tol, outer.rel_tol) * float(np.max(np.abs(inner.values)))
    if np.all(np.abs(inner.values - factor * run) <= allowed):
        return float(np.float32(factor)) if abs(factor - 1.0) > allowed else 1.0
    return None


def _find(inner: _Numbers, outer: _Numbers, budget: list[int]) -> SharedStream | None:
    """Where `inner`'s numbers are a scaled run of `outer`'s, or None."""
    size = inner.values.size
    anchor = inner.anchor
    if anchor is None or size > outer.values.size:
        return None
    target = inner.values[anchor + 1] / inner.values[anchor]
    slack = 2 * max(inner.rel_tol, outer.rel_tol) * abs(target)
    low = np.searchsorted(outer.ratios, target - slack, side="left")
    high = np.searchsorted(outer.ratios, target + slack, side="right")
    offsets = np.sort(outer.starts[low:high] - anchor)
    offsets = offsets[(offsets >= 0) & (offsets + size <= outer.values.size)]
    for offset in offsets[:MAX_CANDIDATES]:
        if budget[0] < size:
            budget[0] = -1  # spent: the caller reports it
            return None
        budget[0] -= size
        factor = _match(inner, outer, int(offset))
        if factor is not None:
            return SharedStream(inner.name, outer.name, int(offset), size, factor)
    return None


def shared_streams(parameters: Parameters) -> StreamSearch:
    """Every pair of leaves where one's numbers are a scaled run of the other's."""
    leaves = [n for leaf in parameters.leaves if (n := _Numbers.of(leaf)) is not None]
    budget = [MAX_WORK]  # numbers left to compare, shared by every pair
    found: list[SharedStream] = []
    pairs = 0
    for i, first in enumerate(leaves):
        for second in leaves[i + 1 :]:
            pairs += 1
            inner, outer = sorted((first, second), key=lambda n: n.values.size)
            if inner.constant:
                continue
            hit = _find(inner, outer, budget)
            if hit is None and inner.values.size == outer.values.size:
                hit = _find(outer, inner, budget)
            if hit is not None:
                found.append(hit)
            if budget[0] < 0:
                return StreamSearch(tuple(found), pairs, exhausted=True)
    return StreamSearch(tuple(found), pairs)
