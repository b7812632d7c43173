"""The `{grading}` block: how a lesson is graded, declared in the lesson, read into `Grading`.

The block's body is YAML::

    inputs:              # names the steps assign, each with a generator tree
      params:
        weight: {uniform: [-2, 2], shape: [2]}    # float32
        bias: {uniform: [-1, 1]}
      x: {uniform: [-2.5, 2.5], shape: [2]}
      start: {integers: [10, 99]}                # a Python int; int32 with a shape
      flag: {bernoulli: 0.5}                     # a Python bool; bool with a shape
    input_sets: 2        # generated sets per run, besides the lesson's own inputs
    points: {make-it-yours: 2, repair: 3}     # per task; 1 when not given
    attempts:            # attempts `lessonkit verify` grades: each must get its verdict
      - task: make-it-yours
        name: typed-in answer
        code: |
          norm_squared = manual = 96.
        expect: failed
        message: hard-coded
    probes:              # more scenarios, each varying one value at its source
      - name: params with an extra leaf
        task: key-tree
        vary: params                 # an input: a fresh drawn set, changed by the transform
        transform: add_leaf          # add_leaf, drop_key or shift_key
        key: extra
        value: [1.0, 2.0, 3.0]
        messages:
          leaf_keys: "`leaf_keys` does not get a key for a leaf added to `params`: ..."
      - name: a wrong scale gradient
        task: nested-model
        vary: gradients              # every derivative jax.grad & co. return
        transform: shift_key
        key: scale
        value: 1.0
        messages: {scale_by_hand: "..."}
      # vary: optax.apply_updates   what a library function returns
      # vary: updated + transform: replace + value: {...}   a name a step assigns

Every mistake is a `LessonError` at the block's line (or the probe's own line).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import get_args

from lessonkit.model import (
    Attempt,
    AttemptStatus,
    Bernoulli,
    Generator,
    Grading,
    InputTree,
    Integers,
    Probe,
    ProbeSource,
    Transform,
    Uniform,
)

TRANSFORMS: tuple[str, ...] = get_args(Transform)
STATUSES: tuple[str, ...] = get_args(AttemptStatus)
_KEYS = frozenset({"inputs", "input_sets", "points", "probes", "attempts"})
_ATTEMPT_KEYS = frozenset({"task", "name", "code", "expect", "message"})
_PROBE_KEYS = frozenset({"name", "task", "vary", "transform", "key", "value", "messages"})
MAX_INPUT_SETS = 8
MAX_LEAF_SIZE = 64
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


class _Block:
    """Errors at the right line of lesson.md."""

    def __init__(self, body: str, line: int, where: str, error):
        self._lines = body.splitlines()
        self.line = line
        self._where = where
        self.error = error  # RawBlock.error: (message, line) -> LessonError

    def line_of(self, pattern: str) -> int:
        regex = re.compile(pattern)
        for offset, text in enumerate(self._lines):
            if regex.search(text):
                return self.line + 1 + offset
        return self.line


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _shape(path: str, spec: dict, block: _Block, where: int) -> tuple[int, ...]:
    shape = spec.get("shape", [])
    if not isinstance(shape, list) or not all(_is_int(d) and d > 0 for d in shape):
        raise block.error(f"input {path!r}: 'shape' must be a list of positive integers", where)
    if math.prod(shape) > MAX_LEAF_SIZE:
        raise block.error(f"input {path!r}: at most {MAX_LEAF_SIZE} values per leaf", where)
    return tuple(shape)


def _bounds(path: str, kind: str, spec: dict, block: _Block, where: int, check) -> list:
    bounds = spec[kind]
    if (
        not isinstance(bounds, list)
        or len(bounds) != 2
        or not all(map(check, bounds))
        or not bounds[0] < bounds[1]
    ):
        raise block.error(f"input {path!r}: {kind!r} must be [low, high] with low < high", where)
    return bounds


def _uniform(path: str, spec: dict, block: _Block, where: int) -> Uniform:
    low, high = _bounds(path, "uniform", spec, block, where, _number)
    decimals = spec.get("decimals", 2)
    if not _is_int(decimals) or not 0 <= decimals <= 6:
        raise block.error(f"input {path!r}: 'decimals' must be 0 to 6", where)
    return Uniform(float(low), float(high), _shape(path, spec, block, where), decimals)


def _integers(path: str, spec: dict, block: _Block, where: int) -> Integers:
    low, high = _bounds(path, "integers", spec, block, where, _is_int)
    if low < INT32_MIN or high > INT32_MAX:
        raise block.error(
            f"input {path!r}: 'integers' bounds must fit int32 ({INT32_MIN} to {INT32_MAX})",
            where,
        )
    return Integers(low, high, _shape(path, spec, block, where))


def _bernoulli(path: str, spec: dict, block: _Block, where: int) -> Bernoulli:
    p = spec["bernoulli"]
    if not _number(p) or not 0 < p < 1:
        raise block.error(
            f"input {path!r}: 'bernoulli' must be the probability of True, between 0 and 1",
            where,
        )
    return Bernoulli(float(p), _shape(path, spec, block, where))


# Each generator: the key that names it, the keys it takes, and its reader (one entry each).
GENERATORS: dict[str, tuple[frozenset[str], Callable[..., Generator]]] = {
    "uniform": (frozenset({"uniform", "shape", "decimals"}), _uniform),
    "integers": (frozenset({"integers", "shape"}), _integers),
    "bernoulli": (frozenset({"bernoulli", "shape"}), _bernoulli),
}
_OPTIONS = frozenset().union(*(keys for keys, _ in GENERATORS.values())) - set(GENERATORS)


def _generator(path: str, spec: object, block: _Block) -> InputTree:
    where = block.line_of(rf"\b{re.escape(path.rsplit('/', 1)[-1])}:")
    choices = ", ".join(f"{{{kind}: ...}}" for kind in GENERATORS)
    if not isinstance(spec, dict) or not spec:
        raise block.error(f"input {path!r} must be a mapping: names, or one of {choices}", where)
    kinds = [kind for kind in GENERATORS if kind in spec]
    if not kinds:
        stray = sorted(_OPTIONS & set(spec))
        if stray:
            raise block.error(
                f"input {path!r}: {stray[0]!r} without a generator; choose one of {choices}",
                where,
            )
        return {
            str(name): _generator(f"{path}/{name}", child, block) for name, child in spec.items()
        }
    if len(kinds) > 1:
        raise block.error(
            f"input {path!r}: one generator per input, got {' and '.join(kinds)}", where
        )
    keys, read = GENERATORS[kinds[0]]
    unknown = set(spec) - keys
    if unknown:
        raise block.error(
            f"input {path!r}: unknown key {sorted(unknown)[0]!r} for {kinds[0]!r}; "
            f"allowed: {', '.join(sorted(keys))}",
            where,
        )
    return read(path, spec, block, where)


def _entry(
    entry: object, index: int, block: _Block, kind: str, allowed: frozenset, required: set
) -> tuple[dict, str, int]:
    """One item of a `probes:` or `attempts:` list: a mapping with known keys, its name, line."""
    if not isinstance(entry, dict):
        raise block.error(f"{kind} {index + 1} must be a mapping", block.line_of(rf"^\s*{kind}s:"))
    name = str(entry.get("name", ""))
    where = block.line_of(rf"name:\s*['\"]?{re.escape(name)}") if name else block.line
    unknown = set(entry) - allowed
    if unknown:
        raise block.error(f"{kind} {name!r}: unknown key {sorted(unknown)[0]!r}", where)
    missing = required - set(entry)
    if missing:
        raise block.error(f"{kind} {index + 1}: missing {', '.join(sorted(missing))}", where)
    return entry, name, where


def _probe_source(target: str, inputs: frozenset[str]) -> ProbeSource:
    """`gradients`, a dotted library function, an input name, or else a name a step assigns."""
    if target == "gradients":
        return "gradients"
    if "." in target:
        return "call"
    return "input" if target in inputs else "step"


def _replacement(value: object) -> bool:
    """A value a `replace` probe may give: numbers, lists of numbers, mappings of them."""
    if isinstance(value, dict):
        return bool(value) and all(isinstance(k, str) and _replacement(v) for k, v in value.items())
    if isinstance(value, list):
        return (
            bool(value)
            and all(_number(v) or isinstance(v, list) for v in value)
            and all(_replacement(v) for v in value if isinstance(v, list))
        )
    return _number(value)


def _probe(entry: object, index: int, block: _Block, inputs: frozenset[str]) -> Probe:
    required = {"name", "task", "vary", "transform"}
    entry, name, where = _entry(entry, index, block, "probe", _PROBE_KEYS, required)
    target, transform = str(entry["vary"]), entry["transform"]
    if transform not in TRANSFORMS:
        raise block.error(
            f"probe {name!r}: transform must be one of {', '.join(TRANSFORMS)}, got {transform!r}",
            where,
        )
    source = _probe_source(target, inputs)
    if target.count(".") and not all(part.isidentifier() for part in target.split(".")):
        raise block.error(f"probe {name!r}: {target!r} is not a module.function name", where)
    if (source == "step") != (transform == "replace"):
        raise block.error(
            f"probe {name!r}: "
            + (
                f"{target!r} is not an input the generators draw, so the probe must give its "
                "value: 'transform: replace' with 'value:'"
                if source == "step"
                else f"'replace' gives a value to a name a step assigns, not to {target!r}"
            ),
            where,
        )
    value = entry.get("value")
    if transform == "replace":
        if not _replacement(value):
            raise block.error(
                f"probe {name!r}: 'value' must be a number, a list or a mapping of them", where
            )
    elif transform != "drop_key":
        if _number(value):
            value = float(value)
        elif isinstance(value, list) and value and all(map(_number, value)):
            value = tuple(float(v) for v in value)
        else:
            raise block.error(
                f"probe {name!r}: 'value' must be a number or a list of numbers", where
            )
    elif value is not None:
        raise block.error(f"probe {name!r}: drop_key takes no 'value'", where)
    if transform in ("add_leaf", "drop_key") and not entry.get("key"):
        raise block.error(f"probe {name!r}: {transform} needs a 'key'", where)
    messages = entry.get("messages", {})
    if not isinstance(messages, dict):
        raise block.error(f"probe {name!r}: 'messages' must map graded names to messages", where)
    return Probe(
        name=name,
        task=str(entry["task"]),
        source=source,
        target=target,
        transform=transform,
        key=str(entry.get("key", "")),
        value=value,
        messages=tuple((str(k), " ".join(str(v).split())) for k, v in messages.items()),
        line=where,
    )


def _attempt(entry: object, index: int, block: _Block) -> Attempt:
    required = {"task", "name", "code", "expect"}
    entry, name, where = _entry(entry, index, block, "attempt", _ATTEMPT_KEYS, required)
    if entry["expect"] not in STATUSES:
        raise block.error(
            f"attempt {name!r}: expect must be one of {', '.join(STATUSES)}, "
            f"got {entry['expect']!r}",
            where,
        )
    message = str(entry.get("message", ""))
    try:
        re.compile(message)
    except re.error as exc:
        problem = f"attempt {name!r}: message is not a regular expression ({exc})"
        raise block.error(problem, where) from None
    return Attempt(str(entry["task"]), name, str(entry["code"]), entry["expect"], message, where)


def parse_grading(data: object, body: str, line: int, where: str, error) -> Grading:
    """Build `Grading` from the block's YAML (task ids are checked once the lesson is known)."""
    block = _Block(body, line, where, error)
    if not isinstance(data, dict):
        raise error("body must be a YAML mapping with inputs, input_sets, points, probes", line)
    unknown = set(data) - _KEYS
    if unknown:
        raise error(
            f"unknown key {sorted(unknown)[0]!r}; allowed: {', '.join(sorted(_KEYS))}", line
        )
    inputs = data.get("inputs")
    if not isinstance(inputs, dict) or not inputs:
        raise error("'inputs' must map each input name the steps assign to its generator", line)
    generators = tuple((str(n), _generator(str(n), spec, block)) for n, spec in inputs.items())
    names = frozenset(name for name, _ in generators)
    sets = data.get("input_sets", 2)
    if not isinstance(sets, int) or isinstance(sets, bool) or not 1 <= sets <= MAX_INPUT_SETS:
        raise error(f"'input_sets' must be 1 to {MAX_INPUT_SETS}", block.line_of("input_sets:"))
    points = data.get("points") or {}
    if not isinstance(points, dict):
        raise error("'points' must map task ids to points", block.line_of("points:"))
    for task_id, value in points.items():
        if not _number(value) or value < 0:
            raise error(f"'points' for {task_id!r} must be a number >= 0", block.line_of("points:"))
    probes = data.get("probes") or []
    if not isinstance(probes, list):
        raise error("'probes' must be a list", block.line_of("probes:"))
    attempts = data.get("attempts") or []
    if not isinstance(attempts, list):
        raise error("'attempts' must be a list", block.line_of("attempts:"))
    return Grading(
        inputs=generators,
        input_sets=sets,
        probes=tuple(_probe(p, i, block, names) for i, p in enumerate(probes)),
        points=tuple((str(k), float(v)) for k, v in points.items()),
        line=line,
        attempts=tuple(_attempt(a, i, block) for i, a in enumerate(attempts)),
    )
