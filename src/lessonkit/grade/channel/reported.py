"""Values a child reports, parsed into typed data.

A child sends each value as a small JSON object tagged as `wire.VALUES` lists. That object
comes from a process that may have run hostile code, so `parse_value` accepts only those
exact shapes (types, ranges, sizes and a node budget checked, unknown or missing fields refused)
and raises `Interference` for anything else. Past this point the grader handles frozen
dataclasses, never the raw JSON.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, get_args

from lessonkit.grading_child.wire import (
    MAX_ELEMENTS,
    MAX_NAME,
    MAX_NODES,
    MAX_STRING,
    VALUE_TAG,
    VALUES,
)
from lessonkit.grading_child.wire import PARSED_DEPTH as MAX_DEPTH
from lessonkit.lesson.text import safe_text

NumberType = Literal["bool", "int", "float"]
OpaqueKind = Literal["other", "big"]
Scalar = bool | int | float
DictKey = str | int | float | bool


class Interference(Exception):
    """A report that no honest child writes: the run cannot be trusted at all."""


@dataclass(frozen=True)
class NoneValue:
    """``None``."""


@dataclass(frozen=True)
class Number:
    """A Python ``bool``, ``int`` or ``float`` (ints beyond 2**53 arrive as floats)."""

    type: NumberType
    value: Scalar


@dataclass(frozen=True)
class Text:
    """A string: its first `MAX_STRING` characters and its full length."""

    value: str
    length: int

    @property
    def complete(self) -> bool:
        return len(self.value) == self.length


@dataclass(frozen=True)
class Array:
    """A NumPy or JAX array; ``data`` is its flat values, or None when it was too large."""

    dtype: str
    shape: tuple[int, ...]
    data: tuple[Scalar, ...] | None


@dataclass(frozen=True)
class KeyArray:
    """A typed PRNG key array; ``data`` is its key words (`jax.random.key_data`)."""

    impl: str
    dtype: str
    shape: tuple[int, ...]
    data: tuple[Scalar, ...] | None


@dataclass(frozen=True)
class Module:
    name: str


MappingType = Literal["dict", "OrderedDict", "defaultdict"]
MAPPING_TYPES: tuple[str, ...] = get_args(MappingType)


@dataclass(frozen=True)
class Mapping:
    """An exact ``dict``, ``OrderedDict`` or ``defaultdict`` (``type``), items in order."""

    items: tuple[tuple[DictKey, Value], ...]

    type: MappingType = "dict"


@dataclass(frozen=True)
class Sequence:
    """A list, tuple, NamedTuple or other node JAX flattens (``type`` is its class name);
    ``fields`` name the children as JAX's key paths do (empty: by position)."""

    type: str
    items: tuple[Value, ...]
    fields: tuple[str | int, ...] = ()

    def names(self) -> tuple[str | int, ...]:
        return self.fields or tuple(range(len(self.items)))


@dataclass(frozen=True)
class Opaque:
    """A value the child only named: another type (``other``) or one too large (``big``)."""

    kind: OpaqueKind
    type: str
    note: str | None = None


Value = NoneValue | Number | Text | Array | KeyArray | Module | Mapping | Sequence | Opaque


# --------------------------------------------------------------------------- parsing


def fields(
    data: object, required: set[str] | frozenset[str], optional: frozenset[str] = frozenset()
) -> dict:
    """`data` as an object with exactly the `required` keys and some `optional` ones."""
    if type(data) is not dict:
        raise Interference("a report field is not an object")
    keys = set(data)
    if not required <= keys or not keys <= required | optional:
        extra = sorted(keys - required - optional) or sorted(required - keys)
        raise Interference(f"a report has unexpected or missing fields ({', '.join(extra)})")
    return data


def text(value: object, limit: int = MAX_NAME) -> str:
    """A text field, with surrogates and control characters made harmless."""
    if type(value) is not str or len(value) > limit:
        raise Interference("a report holds a text field of the wrong type or size")
    return safe_text(value)


def integer(value: object, low: int = 0, high: int = 2**31) -> int:
    if type(value) is not int or not low <= value <= high:
        raise Interference("a report holds a number out of range")
    return value


def _element(value: object) -> Scalar:
    if type(value) not in (int, float, bool):
        raise Interference("array data holds something that is not a number")
    if type(value) is int and abs(value) > 2**64:
        raise Interference("array data holds an integer out of range")
    return value


_DTYPE = re.compile(r"[a-z0-9_<>\[\]]{1,32}")
_NUMBER_TYPES: dict[str, type] = {"bool": bool, "int": int, "float": float}


class Budget:
    """Value nodes left for one report: a report cannot grow the parent without bound."""

    def __init__(self) -> None:
        self.nodes = 0

    def take(self) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise Interference("a report holds more values than any honest run sends")


def parse_value(data: object, budget: Budget | None = None, depth: int = 0) -> Value:
    """One reported value as typed data, or `Interference`."""
    budget = budget or Budget()
    budget.take()
    if depth > MAX_DEPTH:
        raise Interference("a reported value is nested too deeply")
    if type(data) is not dict:
        raise Interference("a reported value is not an object")
    tag = data.get(VALUE_TAG)
    if type(tag) is not str or tag not in VALUES:
        raise Interference("a reported value has an unknown kind")
    required, optional = VALUES[tag]
    fields(data, {VALUE_TAG, *required}, optional)
    if tag == "none":
        return NoneValue()
    if tag == "number":
        return _number(data)
    if tag == "str":
        return Text(text(data["value"], MAX_STRING), integer(data["length"], 0, 2**40))
    if tag in ("array", "key"):
        return _array(data, tag)
    if tag == "module":
        return Module(text(data["name"]))
    if tag == "dict":
        return _mapping(data, budget, depth)
    if tag == "seq":
        if type(data["items"]) is not list:
            raise Interference("a reported sequence is malformed")
        items = tuple(parse_value(item, budget, depth + 1) for item in data["items"])
        return Sequence(text(data["type"]), items, _fields(data.get("fields", []), len(items)))
    if tag == "big":
        return Opaque("big", text(data["type"]), text(data["why"]))
    note = data.get("note")  # "other"
    return Opaque("other", text(data["type"]), None if note is None else text(note))


def _fields(raw: object, count: int) -> tuple[str | int, ...]:
    """A node's child names: none, or one distinct str or int per child."""
    if type(raw) is not list or (raw and len(raw) != count):
        raise Interference("a reported sequence's fields are malformed")
    names = tuple(text(n) if type(n) is str else integer(n, -(2**31)) for n in raw)
    if len(set(names)) != len(names):
        raise Interference("a reported sequence repeats a field")
    return names


def _number(data: dict) -> Number:
    kind, number = data["type"], data["value"]
    expected = _NUMBER_TYPES.get(kind) if type(kind) is str else None
    big_int = kind == "int" and type(number) is float  # ints beyond 2**53 come as floats
    if expected is None or (type(number) is not expected and not big_int):
        raise Interference("a reported number does not match its type")
    return Number(kind, number)


def _array(data: dict, tag: str) -> Array | KeyArray:
    dtype, shape = data["dtype"], data["shape"]
    if type(dtype) is not str or not _DTYPE.fullmatch(dtype):
        raise Interference("a reported dtype is malformed")
    if type(shape) is not list or len(shape) > 32:
        raise Interference("a reported shape is malformed")
    size = 1
    for d in shape:
        size *= integer(d, 0, 2**40)
    values = None
    if "data" in data:
        raw = data["data"]
        if type(raw) is not list or len(raw) > MAX_ELEMENTS * 4:
            raise Interference("reported array data is malformed")
        if tag == "array" and len(raw) != size:
            raise Interference("reported array data does not match its shape")
        if tag == "key" and size and len(raw) % size:
            raise Interference("reported key data does not match its shape")
        values = tuple(_element(item) for item in raw)
    if tag == "key":
        return KeyArray(text(data["impl"], 40), dtype, tuple(shape), values)
    return Array(dtype, tuple(shape), values)


def _mapping(data: dict, budget: Budget, depth: int) -> Mapping:
    kind = data["type"]
    if type(kind) is not str or kind not in MAPPING_TYPES or type(data["items"]) is not list:
        raise Interference("a reported dict is malformed")
    seen, items = set(), []
    for pair in data["items"]:
        if type(pair) is not list or len(pair) != 2:
            raise Interference("a reported dict entry is malformed")
        key = pair[0]
        if type(key) not in (str, int, float, bool) or (type(key) is str and len(key) > 200):
            raise Interference("a reported dict key is malformed")
        if (type(key), key) in seen:
            raise Interference("a reported dict repeats a key")
        seen.add((type(key), key))
        items.append(
            (safe_text(key) if type(key) is str else key, parse_value(pair[1], budget, depth + 1))
        )
    return Mapping(tuple(items), kind)
