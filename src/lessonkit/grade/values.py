"""Values as the child reports them (JSON data), compared in the parent without JAX.

A reported value is a dict tagged by `t`: `array` (dtype, shape, data), `number`, `str`,
`none`, `dict`, `seq`, `module`, `big` or `other`. Differences are listed the way the lesson
inspects a tree: structure and key paths first, then leaf kinds, shapes and dtypes, and
values last.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from lessonkit.grade.protocol import Value

RTOL = 1e-4
ATOL = 1e-5
STRUCTURAL = ("node", "missing", "extra", "type", "shape", "dtype")


@dataclass(frozen=True)
class Difference:
    """One way `got` differs from `expected`, at a key path such as `layer/weight`."""

    kind: str  # one of STRUCTURAL, or "value"
    path: str  # "" for the value itself
    expected: Value | None
    got: Value | None


def _children(value: Value) -> list[tuple[str, Value]] | None:
    if value["t"] == "dict":
        return [(str(key), child) for key, child in value["items"]]
    if value["t"] == "seq":
        return [(str(i), child) for i, child in enumerate(value["items"])]
    return None


def _join(prefix: str, key: str) -> str:
    return f"{prefix}/{key}" if prefix else key


def is_scalar_number(value: Value) -> bool:
    """A Python int/float or a 0-d integer or floating array: compared by value alone."""
    if value["t"] == "number":
        return value["type"] in ("int", "float")
    return value["t"] == "array" and value["shape"] == [] and value["dtype"][:1] in ("f", "i", "u")


def is_bool(value: Value) -> bool:
    if value["t"] == "number":
        return value["type"] == "bool"
    return value["t"] == "array" and value["shape"] == [] and value["dtype"] == "bool"


def numbers(value: Value) -> list[float] | None:
    """The flat data of a number or array, or None when it was not sent."""
    if value["t"] == "number":
        return [float(value["value"])]
    if value["t"] == "array":
        data = value.get("data")
        return None if data is None else [float(v) for v in data]
    return None


def close(expected: list[float], got: list[float]) -> bool:
    """Element-wise closeness like jnp.allclose, with NaN never close to anything."""
    if len(expected) != len(got):
        return False
    for e, g in zip(expected, got, strict=True):
        if math.isnan(e) or math.isnan(g):
            return False
        if math.isinf(e) or math.isinf(g):
            if e != g:
                return False
            continue
        if abs(g - e) > ATOL + RTOL * abs(e):
            return False
    return True


def _leaf_differences(expected: Value, got: Value, path: str) -> Iterator[Difference]:
    if (is_scalar_number(expected) and is_scalar_number(got)) or (
        is_bool(expected) and is_bool(got)
    ):
        e, g = numbers(expected), numbers(got)
        if e is None or g is None or not close(e, g):  # a scalar without data matches nothing
            yield Difference("value", path, expected, got)
        return
    if expected["t"] != got["t"]:
        yield Difference("type", path, expected, got)
        return
    kind = expected["t"]
    if kind == "array":
        if expected["shape"] != got["shape"]:
            yield Difference("shape", path, expected, got)
        if expected["dtype"] != got["dtype"]:
            yield Difference("dtype", path, expected, got)
        if expected["shape"] == got["shape"]:
            e, g = numbers(expected), numbers(got)
            if e is None or g is None or not close(e, g):
                yield Difference("value", path, expected, got)
    elif kind == "key":
        if expected["shape"] != got["shape"]:
            yield Difference("shape", path, expected, got)
        if expected["impl"] != got["impl"]:
            yield Difference("dtype", path, expected, got)
        if "data" not in expected or expected.get("data") != got.get("data"):
            yield Difference("value", path, expected, got)
    elif kind == "str":
        if expected["value"] != got["value"] or expected["length"] != got["length"]:
            yield Difference("value", path, expected, got)
    elif kind == "module":
        if expected["name"] != got["name"]:
            yield Difference("value", path, expected, got)
    elif kind in ("other", "big"):  # nothing was read, so nothing can be confirmed
        yield Difference(
            "type" if expected["type"] != got["type"] else "value", path, expected, got
        )


def _walk(expected: Value, got: Value, path: str) -> Iterator[Difference]:
    kids_e, kids_g = _children(expected), _children(got)
    if kids_e is None or kids_g is None:
        if kids_e is None and kids_g is None:
            yield from _leaf_differences(expected, got, path)
        else:
            yield Difference("node" if kids_e is not None else "type", path, expected, got)
        return
    if expected["t"] != got["t"] or expected["type"] != got["type"]:
        yield Difference("node", path, expected, got)
        if expected["t"] != got["t"]:
            return
    by_key = dict(kids_g)
    for key, child in kids_e:
        if key not in by_key:
            yield Difference("missing", _join(path, key), child, None)
        else:
            yield from _walk(child, by_key[key], _join(path, key))
    known = {key for key, _ in kids_e}
    for key, child in kids_g:
        if key not in known:
            yield Difference("extra", _join(path, key), None, child)


def differences(expected: Value, got: Value) -> tuple[Difference, ...]:
    """Every difference, structural ones first (in the lesson's order), then values."""
    found = list(_walk(expected, got, ""))
    order = {kind: rank for rank, kind in enumerate((*STRUCTURAL, "value"))}
    return tuple(sorted(found, key=lambda d: order[d.kind]))


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
    """A value's layout in the words of `lessonkit.trees`: `float32[2]`, `dict with 2 leaves`."""
    kind = value["t"]
    if kind == "array":
        return f"{value['dtype']}[{','.join(map(str, value['shape']))}]"
    if kind == "key":
        return f"key<{value['impl']}>[{','.join(map(str, value['shape']))}]"
    if kind == "number":
        return f"{value['type']} (Python scalar)"
    if kind == "str":
        return "str"
    if kind == "none":
        return "None"
    if kind in ("dict", "seq"):
        n = len(value["items"])
        return f"{value['type']} with {n} {'entry' if n == 1 else 'entries'}"
    if kind == "module":
        return f"module {value['name']}"
    return value.get("type", "object")


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
