"""The property rules: each decides, from parameter trees the parent read, whether it holds.

Every rule is a small pure function of `Parameters` (or of why a run produced none), so it can
be tested on fabricated trees. Leaves are compared bit for bit by the toolkit's one
tree-difference engine (`lessonkit.treediff`): a `Leaf`'s data is its exact bytes. The evidence
names the key paths (`layer1/w`) that make a property fail.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from lessonkit import treediff
from lessonkit.lesson.project import Property
from lessonkit.project.parameters import Parameters
from lessonkit.project.streams import shared_streams

Verdict = Literal["holds", "fails", "not checked"]
MAX_NAMED = 8  # key paths named in one piece of evidence


@dataclass(frozen=True)
class RunProblem:
    """Why a run gave no parameters: it failed, was stopped, or wrote no readable file."""

    run: str  # the run's name, `full`
    message: str


Outcome = Parameters | RunProblem


@dataclass(frozen=True)
class PropertyResult:
    """One property's verdict and the evidence for it."""

    property: Property
    verdict: Verdict
    evidence: str
    paths: tuple[str, ...] = ()  # the key paths the evidence is about

    @property
    def holds(self) -> bool:
        return self.verdict == "holds"


def _named(paths: Sequence[str]) -> str:
    shown = ", ".join(paths[:MAX_NAMED])
    return shown + (f" and {len(paths) - MAX_NAMED} more" if len(paths) > MAX_NAMED else "")


def _unchecked(name: Property, outcomes: Sequence[Outcome]) -> PropertyResult | None:
    problems = [o for o in outcomes if isinstance(o, RunProblem)]
    if not problems:
        return None
    first = problems[0]
    return PropertyResult(name, "not checked", f"the {first.run} run gave no parameters")


def check_runs(full: Outcome) -> PropertyResult:
    """The script ran and wrote a tree of a dict per layer: `layer/leaf` names, two or more
    layers."""
    if isinstance(full, RunProblem):
        return PropertyResult("runs", "fails", full.message)
    flat = [leaf.name for leaf in full.leaves if len(leaf.path) != 2]
    if flat:
        return PropertyResult(
            "runs",
            "fails",
            f"not a dict per layer: {_named(flat)} should be named layer/leaf",
            tuple(flat),
        )
    layers = full.layers
    if len(layers) < 2:
        return PropertyResult(
            "runs", "fails", f"only one layer ({layers[0]}); the model has two or more"
        )
    parts = "; ".join(
        f"{layer}: {', '.join(x.path[1] for x in full.leaves if x.path[0] == layer)}"
        for layer in layers
    )
    return PropertyResult(
        "runs", "holds", f"{len(full.leaves)} leaves in {len(layers)} layers ({parts})"
    )


def changed_leaves(before: Parameters, after: Parameters) -> tuple[str, ...]:
    """The key paths of `before`'s leaves that `after` lacks or holds otherwise, bit for bit."""
    found = treediff.differences(before.tree(), after.tree(), values=True)
    where = [d.path for d in found]
    return tuple(
        leaf.name
        for leaf in before.leaves
        if any(leaf.path[: len(path)] == tuple(map(str, path)) for path in where)
    )


def check_same(name: Property, expected: Outcome, got: Outcome, what: str) -> PropertyResult:
    """`got` equals `expected` in every leaf, bit for bit (and has no leaf more)."""
    if (unchecked := _unchecked(name, (expected, got))) is not None:
        return unchecked
    assert isinstance(expected, Parameters) and isinstance(got, Parameters)
    found = treediff.differences(expected.tree(), got.tree(), values=True)
    if not found:
        return PropertyResult(
            name, "holds", f"{what}: bit-identical in all {len(expected.leaves)} leaves"
        )
    paths = tuple(dict.fromkeys(d.location or "(the whole tree)" for d in found))
    return PropertyResult(name, "fails", f"{what}: differs at {_named(paths)}", paths)


def check_seed_sensitive(first: Outcome, second: Outcome, what: str) -> PropertyResult:
    """Another seed changes every leaf: a leaf the seed does not reach was not drawn from it."""
    if (unchecked := _unchecked("seed-sensitive", (first, second))) is not None:
        return unchecked
    assert isinstance(first, Parameters) and isinstance(second, Parameters)
    changed = set(changed_leaves(first, second))
    same = tuple(leaf.name for leaf in first.leaves if leaf.name not in changed)
    if same:
        return PropertyResult(
            "seed-sensitive", "fails", f"{what}: unchanged at {_named(same)}", same
        )
    return PropertyResult(
        "seed-sensitive", "holds", f"{what}: all {len(first.leaves)} leaves differ"
    )


def equal_leaves(parameters: Parameters) -> tuple[tuple[str, str], ...]:
    """Pairs of leaves with one shape and dtype and the same values, bit for bit."""
    pairs = []
    for a, b in itertools.combinations(parameters.leaves, 2):
        if not treediff.leaf_differences(a.entry(), b.entry(), values=True):
            pairs.append((a.name, b.name))
    return tuple(pairs)


def check_distinct_keys(initials: Sequence[tuple[str, Outcome]]) -> PropertyResult:
    """No two leaves share a random stream, in any of the initial trees (`(what, tree)`):
    none of one shape start equal, and no leaf's numbers are a run, equal or scaled, of
    another's (`streams`: one key drawn for leaves of different shapes)."""
    if (unchecked := _unchecked("distinct-keys", [o for _, o in initials])) is not None:
        return unchecked
    compared = 0
    for what, tree in initials:
        assert isinstance(tree, Parameters)
        pairs = equal_leaves(tree)
        if pairs:
            named = "; ".join(f"{a} and {b}" for a, b in pairs[:MAX_NAMED])
            paths = tuple(dict.fromkeys(p for pair in pairs for p in pair))
            return PropertyResult(
                "distinct-keys",
                "fails",
                f"{what}: {named} start equal (one key fed both)",
                paths,
            )
        search = shared_streams(tree)
        if search.found:
            named = "; ".join(s.describe() for s in search.found[:MAX_NAMED])
            more = len(search.found) - MAX_NAMED
            named += f" and {more} more" if more > 0 else ""
            paths = tuple(dict.fromkeys(p for s in search.found for p in (s.inner, s.outer)))
            return PropertyResult(
                "distinct-keys",
                "fails",
                f"{what}: one random stream feeds more than one leaf ({named})",
                paths,
            )
        if search.exhausted:
            return PropertyResult(
                "distinct-keys",
                "fails",
                f"{what}: the leaves repeat one pattern of numbers so often that the "
                "grader stopped comparing them; leaves drawn from their own keys do not",
            )
        compared += search.pairs
    return PropertyResult(
        "distinct-keys",
        "holds",
        f"{compared} pair{'s' if compared != 1 else ''} of leaves compared: none start equal, "
        "and no leaf's numbers are a run of another's, equal or scaled",
    )
