"""Reported values compared and worded in the parent, without JAX.

A reported value (`lessonkit.grade.channel.reported`) is described for `lessonkit.treediff`, the
engine `lessonkit.trees.compare` uses too, so the grader decides and words a difference by
the same rules a learner meets in the lesson: structure and key paths first, then leaf
kinds, shapes and dtypes, and values last. A Python number and a 0-d array of numbers
compare by value, whatever holds them, within one kind: integers with integers, floats with
floats (a float32 0.0 is not the int32 0 a count should be). NaN at the same place equals
NaN. A value the child could not look into (a function, a jitted function, an object) is
known by its type's name alone, so it differs only when that name does: it has no value
that could fail a comparison.

A task's `accept` rule (`lesson.rules.accept.Accept`, declared in the lesson's `{grading}` block)
widens what counts as the same answer for that task's graded names, and nothing else: any
readable mapping with the same keys as the dict, or a float leaf of another accepted dtype.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import replace

from lessonkit import treediff
from lessonkit.grade.channel import reported as r
from lessonkit.grade.channel.reported import Value
from lessonkit.lesson.rules.accept import EXACT, Accept
from lessonkit.treediff import Difference

__all__ = [
    "Difference",
    "Reported",
    "describe",
    "differences",
    "explain_layout",
    "layout",
    "opaque_type",
    "reported",
]


class Reported:
    """A reported value described for the engine; `Entry.origin` is the value itself."""

    __slots__ = ("accept", "value")

    def __init__(self, value: Value, accept: Accept = EXACT):
        self.value = value
        self.accept = accept

    def entry(self) -> treediff.Entry:
        return _accepted(_entry(self.value), self.accept)

    def children(self) -> Sequence[tuple[Hashable, Reported]]:
        value, accept = self.value, self.accept
        if isinstance(value, r.Mapping):
            return [(key, Reported(child, accept)) for key, child in value.items]
        if isinstance(value, r.Sequence):
            named = zip(value.names(), value.items, strict=True)
            return [(name, Reported(child, accept)) for name, child in named]
        return []

    def same_layout(self, other: object) -> bool:
        return False


def differences(expected: Value, got: Value, accept: Accept = EXACT) -> tuple[Difference, ...]:
    """Every difference, structural ones first (in the lesson's order), then values."""
    return treediff.differences(Reported(expected, accept), Reported(got, accept), values=True)


def _accepted(entry: treediff.Entry, accept: Accept) -> treediff.Entry:
    """The entry as `accept` compares it: what must match is widened, the label is kept."""
    if accept == EXACT:
        return entry
    if accept.mappings == "any" and entry.type.startswith("Mapping:"):
        return replace(entry, type="Mapping:any")
    if entry.dtype is not None and entry.dtype in accept.floats:
        return replace(entry, dtype="|".join(accept.floats))
    return entry


def reported(side: treediff.Entry | None) -> Value | None:
    """The reported value behind one side of a difference."""
    return None if side is None else side.origin


def is_container(value: Value) -> bool:
    return isinstance(value, r.Mapping | r.Sequence)


def _entry(value: Value) -> treediff.Entry:
    label = layout(value)
    leaf = "leaf"
    match value:
        case r.Mapping() | r.Sequence():
            kind = f"{type(value).__name__}:{value.type}"
            return treediff.Entry("node", kind, label, leaves=_leaf_count(value), origin=value)
        case r.Number(type="bool"):
            return treediff.Entry(leaf, "bool", label, data=(value.value,), origin=value)
        case r.Number():
            number = (float(value.value),)
            return treediff.Entry(
                leaf, _NUMBER_KINDS[value.type], label, data=number, approx=True, origin=value
            )
        case r.Array(shape=()) if value.dtype == "bool":
            return treediff.Entry(leaf, "bool", label, data=_floats(value.data), origin=value)
        case r.Array(shape=()) if value.dtype[:1] in ("f", "i", "u"):
            data = _floats(value.data)
            kind = "float number" if value.dtype[:1] == "f" else "integer"
            return treediff.Entry(leaf, kind, label, data=data, approx=True, origin=value)
        case r.Array():
            return treediff.Entry(
                leaf,
                "array",
                label,
                shape=value.shape,
                dtype=value.dtype,
                data=_floats(value.data),
                approx=True,
                origin=value,
            )
        case r.KeyArray():
            return treediff.Entry(
                leaf,
                "key",
                label,
                shape=value.shape,
                dtype=value.impl,
                data=value.data,
                origin=value,
            )
        case r.Text():
            data = (value.value, value.length)
            return treediff.Entry(leaf, "str", label, data=data, origin=value)
        case r.Module():
            return treediff.Entry(leaf, "module", label, data=(value.name,), origin=value)
        case r.NoneValue():
            return treediff.Entry(leaf, "none", label, data=(), origin=value)
    if value.kind == "other":  # known by its type's name alone: nothing else to compare
        return treediff.Entry(leaf, f"other:{value.type}", label, data=(), origin=value)
    # too large to read: nothing was read, so nothing can be confirmed
    return treediff.Entry(leaf, f"other:{value.type}", label, origin=value)


_NUMBER_KINDS = {"int": "integer", "float": "float number", "bool": "bool"}


def opaque_type(value: Value) -> str | None:
    """The type of the first part of `value` known by its type's name alone, or None."""
    if isinstance(value, r.Opaque):
        return value.type if value.kind == "other" else None
    if isinstance(value, r.Mapping | r.Sequence):
        children = (c for _, c in value.items) if isinstance(value, r.Mapping) else value.items
        return next((t for t in map(opaque_type, children) if t is not None), None)
    return None


def _leaf_count(value: Value) -> int:
    if isinstance(value, r.Mapping):
        return sum(_leaf_count(child) for _, child in value.items)
    if isinstance(value, r.Sequence):
        return sum(_leaf_count(child) for child in value.items)
    return 1


def _floats(data: tuple[r.Scalar, ...] | None) -> tuple[float, ...] | None:
    return None if data is None else tuple(float(v) for v in data)


# --------------------------------------------------------------------------- wording


def _format_number(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == int(x) and abs(x) < 1e15:
        return f"{x:.1f}"
    return f"{x:.6g}"


def _format_element(x: r.Scalar, dtype: str) -> str:
    """An array element as its dtype writes it: `4` for an int32, `4.0` for a float32."""
    if dtype == "bool":
        return str(bool(x))
    if dtype[:1] in ("i", "u") and not (isinstance(x, float) and not x.is_integer()):
        return str(int(x))
    return _format_number(float(x))


def layout(value: Value) -> str:
    """A value's layout in the words of `lessonkit.trees`: `float32[2]`, `int 3 (Python scalar)`."""
    match value:
        case r.Array():
            return f"{value.dtype}[{','.join(map(str, value.shape))}]"
        case r.KeyArray():
            return f"key<{value.impl}>[{','.join(map(str, value.shape))}]"
        case r.Number():
            return f"{value.type} {_NUMBER_TYPES[value.type](value.value)!r} (Python scalar)"
        case r.Text():
            return f"str {_short_repr(value.value)}"
        case r.NoneValue():
            return "None"
        case r.Mapping() | r.Sequence():
            return value.type
        case r.Module():
            return f"module {value.name}"
    return value.type


_NUMBER_TYPES = {"bool": bool, "int": int, "float": float}


def _short_repr(x: object, limit: int = 40) -> str:
    text = repr(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def explain_layout(name: str, found: Sequence[Difference]) -> str:
    """One sentence for the first layout difference, and how many others there are."""
    structural = [d for d in found if d.kind != "value"]
    first = structural[0]
    expected, got = first.words
    path = first.location
    if first.kind == "missing":
        sentence = f"`{name}` is missing `{path}` (expected {expected})"
    elif first.kind == "extra":
        sentence = f"`{name}` has `{path}`, which the expected tree does not have ({got})"
    else:
        at = f" at `{path}`" if path else ""
        sentence = f"`{name}`{at} is {got}; expected {expected}"
    more = len(structural) - 1
    if more:
        sentence += f" ({more} more layout difference{'s' if more > 1 else ''})"
    return sentence + "."


def describe(value: Value | None, limit: int = 6) -> str:
    """A short reading of a value for a message: `96.0`, `[1.4, -0.8]`, `the string '96'`."""
    match value:
        case None:
            return "nothing"
        case r.Number(type="bool"):
            return str(bool(value.value))
        case r.Number(type="int"):
            return str(int(value.value))
        case r.Number():
            return _format_number(float(value.value))
        case r.Array(data=None):
            return f"a {layout(value)} array"
        case r.Array(shape=()):
            return _format_element(value.data[0], value.dtype)
        case r.Array():
            shown = ", ".join(_format_element(v, value.dtype) for v in value.data[:limit])
            more = ", ..." if len(value.data) > limit else ""
            text = f"[{shown}{more}]"
            return text if len(value.shape) == 1 else f"{layout(value)} {text}"
        case r.Text():
            return f"the string {value.value[:40]!r}" + ("..." if len(value.value) > 40 else "")
        case r.NoneValue():
            return "None"
        case r.KeyArray(data=None):
            return f"a {layout(value)} PRNG key array"
        case r.KeyArray():
            shown = ", ".join(str(int(w)) for w in value.data[:limit])
            more = ", ..." if len(value.data) > limit else ""
            return f"a {layout(value)} PRNG key array with key data [{shown}{more}]"
        case r.Mapping():
            keys = ", ".join(str(k) for k, _ in value.items[:limit])
            return f"a dict with keys {keys}" if keys else "an empty dict"
        case r.Sequence():
            n = len(value.items)
            return f"a {value.type} of {n} item{'' if n == 1 else 's'}"
        case r.Module():
            return f"the module {value.name}"
        case r.Opaque(kind="big"):
            return f"a very large {value.type}"
    return f"a {value.type}"


# --------------------------------------------------------------------------- wording


def value_problem(name: str, expected: Value, got: Value, accept: Accept = EXACT) -> str | None:
    """One sentence naming the key path, layout or value that differs, or None."""
    found = differences(expected, got, accept)
    if not found:
        return None
    first = found[0]
    if first.kind != "value":
        if is_container(expected):
            return explain_layout(name, found)
        if first.kind in ("shape", "dtype"):
            return f"`{name}` is {layout(got)}; expected {layout(expected)}."
        return f"`{name}` is {describe(got)}; expected {describe(expected)}."
    at = f" at `{first.location}`" if first.path else ""
    got_value, expected_value = describe(reported(first.got)), describe(reported(first.expected))
    return f"`{name}`{at} is {got_value}; expected {expected_value}."


def difference_path(name: str, expected: Value, got: Value, accept: Accept = EXACT) -> str:
    """Where the first difference is: the name, then its key path in slash form."""
    found = differences(expected, got, accept)
    return "/".join(filter(None, (name, found[0].location if found else "")))


def value_detail(expected: Value, got: Value, accept: Accept) -> str:
    """The first difference as a phrase: where, what was got and what was expected."""
    first = differences(expected, got, accept)[0]
    at = f"at `{first.location}` " if first.path else ""
    return f"{at}got {describe(reported(first.got))}, expected {describe(reported(first.expected))}"
