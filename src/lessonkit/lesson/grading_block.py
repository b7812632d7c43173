"""The `{grading}` block: how a lesson is graded, declared in the lesson, read into `Grading`.

Its YAML keys (inputs and their generators, input_sets, accept, points, method, jit,
attempts, probes) are documented with examples in docs/authoring.md. Every mistake is a
`LessonError` at the block's line (or the probe's own line).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import get_args

from lessonkit.grading_child.transforms import ROWS, ValueShape
from lessonkit.grading_child.transforms import row as transform_row
from lessonkit.lesson.model import (
    AttemptStatus,
    Bernoulli,
    DeclaredAttempt,
    EdgeValue,
    Generator,
    Grading,
    InputTree,
    Integers,
    MessagesWhen,
    Probe,
    ProbeSource,
    ProbeValue,
    Transform,
    Uniform,
)
from lessonkit.lesson.rules import RULE_KEYS, RULES, TaskRule
from lessonkit.lesson.rules.base import Fail

TRANSFORMS: tuple[str, ...] = get_args(Transform)
STATUSES: tuple[str, ...] = get_args(AttemptStatus)
_KEYS = frozenset({"inputs", "input_sets", "points", "probes", "attempts", *RULE_KEYS})
_ATTEMPT_KEYS = frozenset({"task", "name", "code", "expect", "message", "why", "instead"})
_PROBE_KEYS = frozenset(
    {
        "name",
        "task",
        "vary",
        "transform",
        "key",
        "value",
        "messages",
        "messages_when",
        "where_bound",
    }
)
MAX_INPUT_SETS = 8
MAX_LEAF_SIZE = 64
MAX_EDGE_SETS = 8  # edge input sets in one block, all generators together
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
FLOAT32_MAX = 3.4028234663852886e38


class _Block:
    """Errors at the right line of lesson.md."""

    def __init__(self, body: str, line: int, where: str, error):
        self._lines = body.splitlines()
        self.line = line
        self._where = where
        self.error = error  # RawBlock.error: (message, line) -> LessonError

    def line_of(self, pattern: str, after: int = 0) -> int:
        """The first line of lesson.md past line `after` that matches, else the block's."""
        regex = re.compile(pattern)
        for offset, text in enumerate(self._lines):
            if self.line + 1 + offset > after and regex.search(text):
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
    shape = _shape(path, spec, block, where)

    def float32(value: object) -> bool:
        return _number(value) and abs(value) <= FLOAT32_MAX

    edges = _edges(path, spec, block, where, shape, float32, float, "numbers in float32's range")
    return Uniform(float(low), float(high), shape, decimals, edges)


def _integers(path: str, spec: dict, block: _Block, where: int) -> Integers:
    low, high = _bounds(path, "integers", spec, block, where, _is_int)
    if low < INT32_MIN or high > INT32_MAX:
        raise block.error(
            f"input {path!r}: 'integers' bounds must fit int32 ({INT32_MIN} to {INT32_MAX})",
            where,
        )
    shape = _shape(path, spec, block, where)

    def int32(value: object) -> bool:
        return _is_int(value) and INT32_MIN <= value <= INT32_MAX

    edges = _edges(path, spec, block, where, shape, int32, int, "integers that fit int32")
    return Integers(low, high, shape, edges)


def _bernoulli(path: str, spec: dict, block: _Block, where: int) -> Bernoulli:
    p = spec["bernoulli"]
    if not _number(p) or not 0 < p < 1:
        raise block.error(
            f"input {path!r}: 'bernoulli' must be the probability of True, between 0 and 1",
            where,
        )
    shape = _shape(path, spec, block, where)

    def boolean(value: object) -> bool:
        return isinstance(value, bool)

    edges = _edges(path, spec, block, where, shape, boolean, bool, "true or false")
    return Bernoulli(float(p), shape, edges)


def _edges(
    path: str,
    spec: dict,
    block: _Block,
    where: int,
    shape: tuple[int, ...],
    check: Callable[[object], bool],
    convert: Callable[[object], EdgeValue],
    what: str,
) -> tuple[EdgeValue, ...]:
    """`edges:` values of the generator's own shape and kind (none when not given)."""
    if "edges" not in spec:
        return ()
    edges = spec["edges"]
    if not isinstance(edges, list) or not edges:
        raise block.error(f"input {path!r}: 'edges' must be a list of values", where)
    dims = "a single value" if not shape else f"shape [{', '.join(map(str, shape))}]"
    out = []
    for number, edge in enumerate(edges, 1):
        value = _edge(edge, shape, check, convert)
        if value is None:
            raise block.error(
                f"input {path!r}: edge {number} must be {dims} of {what}, like the generator",
                where,
            )
        out.append(value)
    return tuple(out)


def _edge(
    value: object,
    shape: tuple[int, ...],
    check: Callable[[object], bool],
    convert: Callable[[object], EdgeValue],
) -> EdgeValue | None:
    """One edge as nested tuples of `shape`, or None when its shape or kind is wrong."""
    if not shape:
        return convert(value) if check(value) else None
    if not isinstance(value, list) or len(value) != shape[0]:
        return None
    items = [_edge(item, shape[1:], check, convert) for item in value]
    return None if any(item is None for item in items) else tuple(items)


# Each generator: the key that names it, the keys it takes, and its reader (one entry each).
GENERATORS: dict[str, tuple[frozenset[str], Callable[..., Generator]]] = {
    "uniform": (frozenset({"uniform", "shape", "decimals", "edges"}), _uniform),
    "integers": (frozenset({"integers", "shape", "edges"}), _integers),
    "bernoulli": (frozenset({"bernoulli", "shape", "edges"}), _bernoulli),
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


def _probe_source(target: str, inputs: frozenset[str], varies: str) -> ProbeSource:
    """`gradients`, a dotted library function, an input name, a name a step assigns (given
    its value by `replace`), or else a name the task's own cell binds (changed there)."""
    if target == "gradients":
        return "gradients"
    if "." in target:
        return "call"
    if target in inputs:
        return "input"
    return "step" if varies == "step" else "binding"


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


def _numbers(value: object) -> ProbeValue:
    """A number, or a list of numbers (as a tuple); else None."""
    if _number(value):
        return float(value)  # type: ignore[arg-type]
    if isinstance(value, list) and value and all(map(_number, value)):
        return tuple(float(v) for v in value)
    return None


_VALUE_PROBLEMS: dict[ValueShape, tuple[Callable[[object], bool], str]] = {
    "numbers": (
        lambda value: _numbers(value) is not None,
        "'value' must be a number or a list of numbers",
    ),
    "replacement": (_replacement, "'value' must be a number, a list or a mapping of them"),
    "none": (lambda value: value is None, "{transform} takes no 'value'"),
}
"""For each shape of a transform's value (`child.transforms.ValueShape`): whether a probe's
value has it, and what to say when it does not."""


def _probe(entry: object, index: int, block: _Block, inputs: frozenset[str]) -> Probe:
    required = {"name", "task", "vary", "transform"}
    entry, name, where = _entry(entry, index, block, "probe", _PROBE_KEYS, required)
    target, transform = str(entry["vary"]), entry["transform"]
    if transform not in TRANSFORMS:
        raise block.error(
            f"probe {name!r}: transform must be one of {', '.join(TRANSFORMS)}, got {transform!r}",
            where,
        )
    spec = transform_row(transform)
    source = _probe_source(target, inputs, spec.varies)
    if target.count(".") and not all(part.isidentifier() for part in target.split(".")):
        raise block.error(f"probe {name!r}: {target!r} is not a module.function name", where)
    if (source == "step") != (spec.varies == "step"):
        raise block.error(
            f"probe {name!r}: '{transform}' gives a value to a name a step assigns, not to "
            f"{target!r}",
            where,
        )
    value = entry.get("value")
    fits, problem = _VALUE_PROBLEMS[spec.value]
    if not fits(value):
        raise block.error(f"probe {name!r}: " + problem.format(transform=transform), where)
    if spec.value == "numbers":
        value = _numbers(value)
    if spec.needs_key and not entry.get("key"):
        raise block.error(f"probe {name!r}: {transform} needs a 'key'", where)
    messages = entry.get("messages", {})
    if not isinstance(messages, dict):
        raise block.error(f"probe {name!r}: 'messages' must map graded names to messages", where)
    when = entry.get("messages_when", "always")
    if when not in get_args(MessagesWhen):
        allowed = ", ".join(get_args(MessagesWhen))
        problem = f"messages_when must be one of {allowed}, got {when!r}"
        raise block.error(f"probe {name!r}: {problem}", where)
    if when != "always" and source not in ("input", "step"):
        raise block.error(
            f"probe {name!r}: messages_when says whether the cell reads the name the probe "
            f"varies, and {target!r} is no input or step name a cell reads",
            where,
        )
    bound = str(entry.get("where_bound", ""))
    if bound and (source != "gradients" or spec.changes != "structure" or not bound.isidentifier()):
        raise block.error(
            f"probe {name!r}: where_bound names a name the task's cell binds, changed there as "
            "JAX's derivatives are, by a transform that changes a structure "
            "(a second change of it changes nothing): it goes with 'vary: gradients' and "
            f"{', '.join(r.name for r in ROWS if r.authored and r.changes == 'structure')}",
            where,
        )
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
        messages_when=when,
        where_bound=bound,
    )


def _attempt(entry: object, index: int, block: _Block) -> DeclaredAttempt:
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
    why, instead = (" ".join(str(entry.get(key, "")).split()) for key in ("why", "instead"))
    return DeclaredAttempt(
        str(entry["task"]), name, str(entry["code"]), entry["expect"], message, where, why, instead
    )


def _edge_count(tree: InputTree) -> int:
    if isinstance(tree, dict):
        return sum(_edge_count(child) for child in tree.values())
    return len(tree.edges)


def _task_rules(data: dict, block: _Block) -> tuple[tuple[str, str, TaskRule], ...]:
    """Every per-task rule the block gives (`RULES`), read one task at a time."""
    out = []
    for kind in RULES:
        name = kind.key
        rules = data.get(name)
        if rules is None:
            continue
        at = block.line_of(rf"^\s*{name}:")
        if not isinstance(rules, dict):
            raise block.error(f"'{name}' must map task ids to {kind.shape}", at)
        for task_id, value in rules.items():
            where = block.line_of(rf"^\s*['\"]?{re.escape(str(task_id))}['\"]?:", after=at)
            where = at if where == block.line else where
            fail = _failing(block, f"{name} {task_id!r}", where)
            out.append((name, str(task_id), kind.read(value, where, fail)))
    return tuple(out)


def _failing(block: _Block, what: str, where: int) -> Fail:
    """The errors of one task's rule: `jit 'my-task': ...`, at its line."""
    return lambda message: block.error(f"{what}: {message}", where)


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
    if sum(_edge_count(tree) for _, tree in generators) > MAX_EDGE_SETS:
        raise error(
            f"at most {MAX_EDGE_SETS} 'edges' values in all, each is one more input set",
            block.line_of(r"\bedges:"),
        )
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
        rules=_task_rules(data, block),
    )
