"""Values as the child reports them (JSON data), compared in the parent without JAX.

A reported value is a dict tagged by `t`: `array` (dtype, shape, data), `number`, `str`,
`none`, `dict`, `seq`, `module`, `key`, `big` or `other`. It is described for
`lessonkit.treediff`, the engine `lessonkit.trees.compare` uses too, so the grader decides
and words a difference by the same rules a learner meets in the lesson: structure and key
paths first, then leaf kinds, shapes and dtypes, and values last. A Python number and a
0-d array of numbers compare by value alone, whatever holds them.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

from lessonkit import treediff
from lessonkit.grade.protocol import Value
from lessonkit.treediff import Difference

__all__ = ["Difference", "Reported", "describe", "differences", "explain_layout", "layout"]


class Reported:
    """A reported value described for the engine; `Entry.origin` is the value itself."""

    __slots__ = ("value",)

    def __init__(self, value: Value):
        self.value = value

    def entry(self) -> treediff.Entry:
        return _entry(self.value)

    def children(self) -> Sequence[tuple[Hashable, Reported]]:
        value = self.value
        if value["t"] == "dict":
            return [(key, Reported(child)) for key, child in value["items"]]
        if value["t"] == "seq":
            return [(i, Reported(child)) for i, child in enumerate(value["items"])]
        return []

    def same_layout(self, other: object) -> bool:
        return False


def differences(expected: Value, got: Value) -> tuple[Difference, ...]:
    """Every difference, structural ones first (in the lesson's order), then values."""
    return treediff.differences(Reported(expected), Reported(got), values=True)


def reported(side: treediff.Entry | None) -> Value | None:
    """The reported value behind one side of a difference."""
    return None if side is None else side.origin


def _entry(value: Value) -> treediff.Entry:
    kind = value["t"]
    label = layout(value)
    if kind in ("dict", "seq"):
        return treediff.Entry(
            "node", f"{kind}:{value['type']}", label, leaves=_leaf_count(value), origin=value
        )
    if _is_scalar_number(value):
        return treediff.Entry(
            "leaf", "number", label, data=_numbers(value), approx=True, origin=value
        )
    if _is_bool(value):
        return treediff.Entry("leaf", "bool", label, data=_numbers(value), origin=value)
    if kind == "array":
        return treediff.Entry(
            "leaf",
            "array",
            label,
            shape=tuple(value["shape"]),
            dtype=value["dtype"],
            data=_numbers(value),
            approx=True,
            origin=value,
        )
    if kind == "key":
        data = value.get("data")
        return treediff.Entry(
            "leaf",
            "key",
            label,
            shape=tuple(value["shape"]),
            dtype=value["impl"],
            data=None if data is None else tuple(data),
            origin=value,
        )
    if kind == "str":
        return treediff.Entry(
            "leaf", "str", label, data=(value["value"], value["length"]), origin=value
        )
    if kind == "module":
        return treediff.Entry("leaf", "module", label, data=(value["name"],), origin=value)
    if kind == "none":
        return treediff.Entry("leaf", "none", label, data=(), origin=value)
    # `other` and `big`: nothing was read, so nothing can be confirmed
    return treediff.Entry("leaf", f"other:{value['type']}", label, origin=value)


def _leaf_count(value: Value) -> int:
    if value["t"] == "dict":
        return sum(_leaf_count(child) for _, child in value["items"])
    if value["t"] == "seq":
        return sum(_leaf_count(child) for child in value["items"])
    return 1


def _is_scalar_number(value: Value) -> bool:
    """A Python int/float or a 0-d integer or floating array: compared by value alone."""
    if value["t"] == "number":
        return value["type"] in ("int", "float")
    return value["t"] == "array" and value["shape"] == [] and value["dtype"][:1] in ("f", "i", "u")


def _is_bool(value: Value) -> bool:
    if value["t"] == "number":
        return value["type"] == "bool"
    return value["t"] == "array" and value["shape"] == [] and value["dtype"] == "bool"


def _numbers(value: Value) -> tuple[float, ...] | None:
    """The flat data of a number or array, or None when it was not sent."""
    if value["t"] == "number":
        return (float(value["value"]),)
    data = value.get("data")
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


def layout(value: Value) -> str:
    """A value's layout in the words of `lessonkit.trees`: `float32[2]`, `int 3 (Python scalar)`."""
    kind = value["t"]
    if kind == "array":
        return f"{value['dtype']}[{','.join(map(str, value['shape']))}]"
    if kind == "key":
        return f"key<{value['impl']}>[{','.join(map(str, value['shape']))}]"
    if kind == "number":
        number = {"bool": bool, "int": int, "float": float}[value["type"]](value["value"])
        return f"{value['type']} {number!r} (Python scalar)"
    if kind == "str":
        return f"str {_short_repr(value['value'])}"
    if kind == "none":
        return "None"
    if kind in ("dict", "seq"):
        return value["type"]
    if kind == "module":
        return f"module {value['name']}"
    return value.get("type", "object")


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
    """A short reading of a value for a message: `96.0`, `[1.4, -0.8]`, `a str '96'`."""
    if value is None:
        return "nothing"
    kind = value["t"]
    if kind == "number":
        if value["type"] == "bool":
            return str(bool(value["value"]))
        return _format_number(float(value["value"]))
    if kind == "array":
        data = value.get("data")
        if data is None:
            return f"a {layout(value)} array"
        if value["shape"] == []:
            return str(bool(data[0])) if value["dtype"] == "bool" else _format_number(data[0])
        shown = ", ".join(_format_number(float(v)) for v in data[:limit])
        more = ", ..." if len(data) > limit else ""
        text = f"[{shown}{more}]"
        return text if len(value["shape"]) == 1 else f"{layout(value)} {text}"
    if kind == "str":
        text = value["value"]
        return f"the string {text[:40]!r}" + ("..." if len(text) > 40 else "")
    if kind == "none":
        return "None"
    if kind == "key":
        words = value.get("data")
        if words is None:
            return f"a {layout(value)} PRNG key array"
        shown = ", ".join(str(int(w)) for w in words[:limit])
        more = ", ..." if len(words) > limit else ""
        return f"a {layout(value)} PRNG key array with key data [{shown}{more}]"
    if kind == "dict":
        keys = ", ".join(str(k) for k, _ in value["items"][:limit])
        return f"a dict with keys {keys}" if keys else "an empty dict"
    if kind == "seq":
        n = len(value["items"])
        return f"a {value['type']} of {n} item{'' if n == 1 else 's'}"
    if kind == "module":
        return f"the module {value['name']}"
    if kind == "big":
        return f"a very large {value.get('type', 'value')}"
    return f"a {value.get('type', 'value')}"
