"""Probes as scenarios: each varies one value at its source, before any cell runs.

A probe is one more run of the whole file, of the same shape as a drawn input set: values
for names the steps assign, and library calls whose results are changed (`ChangedCall`). The
parent builds it from the lesson alone, so nothing in the child decides whether a probe
applies: the reference runs the same scenario, and every graded name of the probe's task
must then have the reference's value.

Every probe runs on an input set drawn for it alone, never on the lesson's inputs or
another scenario's, so a cell that remembers what an earlier scenario computed cannot tell
a probe by comparing:

- `input`: the probe's drawn set, with the transform applied here, to the data, before it
  is sent (`params` with a leaf added or dropped);
- `step`: a name a step assigns gets the probe's value instead (`updated`), exactly as a
  drawn input replaces `params`;
- `gradients` and `call`: the child wraps JAX's differentiation functions, or the named
  library function, so that what they return is changed where it is made; a shift is bent
  by the value it moves (`_bend`), so a call on an answer the cell knows cannot measure it;
- `binding` (and a `gradients` probe's `where_bound`): the child changes the name where the
  task's cell binds it (`grading_child.cells.compile_cell`).

Every probe also runs `COPIES` times, each copy on inputs and a family member of its own,
shuffled among the other scenarios like any of them; it passes only if every copy does. A
cell that counts scenarios and applies a probe's change at a guessed place must then guess
every copy's place at once.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from lessonkit.grade.channel.protocol import ChangedCall
from lessonkit.grade.preparation.inputs import Tree, draw_set
from lessonkit.grading_child.transforms import apply, row
from lessonkit.lesson.model import Grading, Probe, ProbeValue

COPIES = 3
"""How many times each probe runs, each copy on inputs and a family member of its own.

Scenarios share one process, so a cell can count them and apply a probe's change itself at
the place it guesses the probe runs. With one run per probe, a guess among N shuffled
scenarios lands once in N; with three copies, all of which must pass, it must name exactly
the three places of one probe: once in C(N, 3) (1771 for 2 drawn sets and 7 probes, N =
23, where one run each gave 1 in 9). Each copy is one more run of the file, so three buys
that for two extra runs per probe."""


@dataclass(frozen=True)
class ProbeRun:
    """What one probe scenario sends: input values (or None for the lesson's) and sources."""

    name: str  # the scenario's name in this process (the child sees another)
    probe: Probe
    inputs: dict[str, Tree] | None
    sources: tuple[ChangedCall, ...]
    copy: int = 1  # which of the probe's `COPIES` runs this is


def _changed(tree: Tree, probe: Probe) -> Tree:
    """The parent's own transform of drawn data: the child's transforms
    (`grading_child/transforms.py`), on numbers and lists instead of arrays."""
    if not isinstance(tree, dict):
        raise ValueError(f"probe {probe.name!r}: {probe.target!r} is not a mapping of inputs")
    return apply(probe.transform, tree, probe.key, probe.value, _plain, _shifted)


def _plain(value: object) -> Tree:
    return list(value) if isinstance(value, tuple) else value  # type: ignore[return-value]


def _shifted(tree: Tree, by: object) -> Tree:
    if isinstance(tree, dict):
        return {k: _shifted(v, by) for k, v in tree.items()}
    if isinstance(tree, list):
        if isinstance(by, tuple) and len(by) == len(tree):
            return [_shifted(v, b) for v, b in zip(tree, by, strict=True)]
        return [_shifted(v, by) for v in tree]
    if isinstance(by, tuple):
        raise ValueError("a list of shifts for a single number")
    if isinstance(tree, bool):
        return tree
    if isinstance(tree, int) and float(by).is_integer():
        return tree + int(by)
    return round(float(tree) + float(by), 6)


_KEY_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _drawn_like(value: ProbeValue, rng: random.Random, low: float, high: float) -> ProbeValue:
    """A value of `value`'s shape, each number of magnitude in [low, high], either sign."""
    if isinstance(value, tuple | list):
        return tuple(_drawn_like(v, rng, low, high) for v in value)  # type: ignore[misc]
    return round(rng.choice((-1.0, 1.0)) * rng.uniform(low, high), 2)


def family_member(probe: Probe, rng: random.Random) -> Probe:
    """This run's probe, drawn from the family the lesson declares.

    The declared key and value are an example: an added leaf gets a key name and values
    drawn each run (of the declared value's shape), and a shift moves by amounts drawn each
    run, so a cell written for the published instance (a key named `extra`, a shift of 1.0)
    meets one it could not know. A dropped key, a replaced step value and the library call
    stay as declared: they name what the task is about.
    """
    drawn = row(probe.transform)
    key, value = probe.key, probe.value
    if drawn.drawn_key:
        key = rng.choice(_KEY_LETTERS) + "".join(rng.choices(_KEY_LETTERS + "0123456789_", k=7))
    if drawn.drawn_value is not None:
        value = _drawn_like(probe.value, rng, *drawn.drawn_value)
    return replace(probe, key=key, value=value)


def _rng(seed: int, number: int, copy: int) -> random.Random:
    """Copy 1 draws as a probe always drew (a seed replays it); every other copy from its own
    stream, so no two copies share inputs or a family member."""
    suffix = "" if copy == 1 else f"/{copy}"
    return random.Random(f"{seed}/probe/{number}{suffix}")


def _name(number: int, copy: int) -> str:
    return f"probe-{number}" if copy == 1 else f"probe-{number}-{copy}"


def probe_run(probe: Probe, grading: Grading, seed: int, number: int, copy: int = 1) -> ProbeRun:
    """The scenario for one copy of one probe; `number` and `copy` keep its draw apart from
    every other scenario's."""
    name = _name(number, copy)
    rng = _rng(seed, number, copy)
    drawn = draw_set(grading, rng)
    probe = family_member(probe, rng)
    if probe.source == "input":
        drawn[probe.target] = _changed(drawn[probe.target], probe)
        return ProbeRun(name, probe, drawn, (), copy)
    if probe.source == "step":
        given = apply(probe.transform, None, probe.key, probe.value, _plain, _shifted)
        return ProbeRun(name, probe, {**drawn, probe.target: given}, (), copy)
    bend = _bend(probe, rng)
    sources = tuple(
        ChangedCall(call, probe.transform, probe.key, probe.value, bend)  # type: ignore[arg-type]
        for call in (probe.target, probe.where_bound)
        if call
    )
    return ProbeRun(name, probe, drawn or None, sources, copy)


def _bend(probe: Probe, rng: random.Random) -> tuple[float, float, float] | None:
    """How a changed call's shift follows the value it moves (`ChangedCall.bend`), drawn for
    each copy: a depth under 1 (every leaf still moves, by 0.4 to 1.6 times the shift), a
    frequency of about 1 (a result that differs in its last bits moves alike) and a phase."""
    if not row(probe.transform).bends:
        return None
    return (rng.uniform(0.3, 0.6), rng.uniform(0.7, 1.3), rng.uniform(0.0, 6.283))


def probe_copies(probe: Probe, grading: Grading, seed: int, number: int) -> tuple[ProbeRun, ...]:
    """The `COPIES` scenarios of one probe, copy 1 first."""
    return tuple(probe_run(probe, grading, seed, number, c) for c in range(1, COPIES + 1))


def probe_runs(grading: Grading, seed: int) -> tuple[ProbeRun, ...]:
    """Every copy of every probe as a scenario: probes in declaration order, each probe's
    copies together, so the first failing run a task meets is its first failing probe's."""
    return tuple(
        run for n, p in enumerate(grading.probes, 1) for run in probe_copies(p, grading, seed, n)
    )
