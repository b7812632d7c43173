"""The `{grading}` block: how a lesson is graded, declared in the lesson, read into `Grading`.

The block's body is YAML::

    inputs:              # names the steps assign, each with a generator tree
      params:
        weight: {uniform: [-2, 2], shape: [2]}
        bias: {uniform: [-1, 1]}
      x: {uniform: [-2.5, 2.5], shape: [2]}
    input_sets: 2        # generated sets per run, besides the lesson's own inputs
    points: {make-it-yours: 2, repair: 3}     # per task; 1 when not given
    attempts:            # attempts `lessonkit verify` grades: each must get its verdict
      - task: make-it-yours
        name: typed-in answer
        code: |
          norm_squared = manual = 96.
        expect: failed
        message: hard-coded
    probes:
      - name: grads with an extra leaf
        task: make-it-yours
        vary: grads
        transform: add_leaf          # add_leaf, drop_key or shift_key
        key: extra
        value: [1.0, 2.0, 2.0]
        messages:
          norm_squared: "`norm_squared` does not count a leaf added to `grads`: ..."

Every mistake is a `LessonError` at the block's line (or the probe's own line).
"""

from __future__ import annotations

import math
import re
from typing import get_args

from lessonkit.model import (
    Attempt,
    AttemptStatus,
    Grading,
    InputTree,
    Probe,
    Transform,
    Uniform,
)

TRANSFORMS: tuple[str, ...] = get_args(Transform)
STATUSES: tuple[str, ...] = get_args(AttemptStatus)
_KEYS = frozenset({"inputs", "input_sets", "points", "probes", "attempts"})
_ATTEMPT_KEYS = frozenset({"task", "name", "code", "expect", "message"})
_PROBE_KEYS = frozenset({"name", "task", "vary", "transform", "key", "value", "messages"})
_UNIFORM_KEYS = frozenset({"uniform", "shape", "decimals"})
MAX_INPUT_SETS = 8
MAX_LEAF_SIZE = 64


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


def _generator(path: str, spec: object, block: _Block) -> InputTree:
    where = block.line_of(rf"\b{re.escape(path.rsplit('/', 1)[-1])}:")
    if not isinstance(spec, dict) or not spec:
        raise block.error(
            f"input {path!r} must be a mapping: names or {{uniform: [low, high]}}", where
        )
    if "uniform" not in spec:
        return {
            str(name): _generator(f"{path}/{name}", child, block) for name, child in spec.items()
        }
    unknown = set(spec) - _UNIFORM_KEYS
    if unknown:
        raise block.error(f"input {path!r}: unknown key {sorted(unknown)[0]!r}", where)
    bounds = spec["uniform"]
    if (
        not isinstance(bounds, list)
        or len(bounds) != 2
        or not all(map(_number, bounds))
        or not bounds[0] < bounds[1]
    ):
        raise block.error(f"input {path!r}: 'uniform' must be [low, high] with low < high", where)
    shape = spec.get("shape", [])
    if not isinstance(shape, list) or not all(
        isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in shape
    ):
        raise block.error(f"input {path!r}: 'shape' must be a list of positive integers", where)
    if math.prod(shape) > MAX_LEAF_SIZE:
        raise block.error(f"input {path!r}: at most {MAX_LEAF_SIZE} values per leaf", where)
    decimals = spec.get("decimals", 2)
    if not isinstance(decimals, int) or isinstance(decimals, bool) or not 0 <= decimals <= 6:
        raise block.error(f"input {path!r}: 'decimals' must be 0 to 6", where)
    return Uniform(float(bounds[0]), float(bounds[1]), tuple(shape), decimals)


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


def _probe(entry: object, index: int, block: _Block) -> Probe:
    required = {"name", "task", "vary", "transform", "messages"}
    entry, name, where = _entry(entry, index, block, "probe", _PROBE_KEYS, required)
    transform = entry["transform"]
    if transform not in TRANSFORMS:
        raise block.error(
            f"probe {name!r}: transform must be one of {', '.join(TRANSFORMS)}, got {transform!r}",
            where,
        )
    value = entry.get("value")
    if transform != "drop_key":
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
    messages = entry["messages"]
    if not isinstance(messages, dict) or not messages:
        raise block.error(f"probe {name!r}: 'messages' must map graded names to messages", where)
    return Probe(
        name=name,
        task=str(entry["task"]),
        target=str(entry["vary"]),
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
        probes=tuple(_probe(p, i, block) for i, p in enumerate(probes)),
        points=tuple((str(k), float(v)) for k, v in points.items()),
        line=line,
        attempts=tuple(_attempt(a, i, block) for i, a in enumerate(attempts)),
    )
