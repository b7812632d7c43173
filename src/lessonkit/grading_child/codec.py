"""Frozen dataclasses as JSON objects and back, read strictly: the one codec of the records
the parent sends across the process boundary (`request.py`, `confinement.py`).

A record's fields and their types are its shape, declared once: `to_line` writes every
field (tuples as lists), `from_line` and `decode` accept exactly those keys with values of
those types and raise `ShapeError` for anything else, so the two sides of the boundary
cannot drift apart without one of them saying so. Standard library only: the grading child,
the starter and `run/confine.py` load it by path with the rest of this folder.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from typing import Any, Literal, TypeVar, Union

Record = TypeVar("Record")


class ShapeError(ValueError):
    """A value that is not the record's shape: an unknown, missing or repeated key, or a
    value of the wrong type."""


def encode(record: object) -> dict:
    """The record as a JSON-ready object: every field, nested records as objects."""
    return dataclasses.asdict(record)


def to_line(record: object) -> bytes:
    """The record as one JSON line."""
    return json.dumps(encode(record)).encode() + b"\n"


def from_line(kind: type[Record], line: str | bytes) -> Record:
    """One JSON line read as a `kind`, or `ShapeError`."""
    try:
        data = json.loads(line, object_pairs_hook=_no_repeats)
    except ValueError as exc:
        raise ShapeError(f"{kind.__name__}: not one JSON object ({exc})") from None
    return decode(kind, data)


def decode(kind: type[Record], data: object) -> Record:
    """`data` (JSON values) read as a `kind`, or `ShapeError` naming where it differs."""
    return _read(kind, data, kind.__name__)


def _no_repeats(pairs: list[tuple[str, object]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise ShapeError(f"the key {key!r} is repeated")
        out[key] = value
    return out


@functools.cache
def _fields(kind: type) -> dict[str, object]:
    hints = typing.get_type_hints(kind)
    return {field.name: hints[field.name] for field in dataclasses.fields(kind)}


def _record(kind: type, data: object, where: str) -> object:
    if type(data) is not dict:
        raise ShapeError(f"{where}: expected an object, got {type(data).__name__}")
    fields = _fields(kind)
    unknown, missing = sorted(set(data) - set(fields)), sorted(set(fields) - set(data))
    if unknown or missing:
        raise ShapeError(f"{where}: unknown keys {unknown}, missing keys {missing}")
    return kind(
        **{name: _read(hint, data[name], f"{where}.{name}") for name, hint in fields.items()}
    )


_SCALARS: dict[type, tuple[type, ...]] = {
    bool: (bool,),
    int: (int,),
    float: (float, int),  # JSON writes 2.0 as 2.0, but a parent's 2 stays 2
    str: (str,),
    type(None): (type(None),),
}


def _read(hint: object, data: object, where: str) -> object:
    """`data` as `hint` says: a record, a Literal, a union, a tuple, a dict or a scalar."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return data
    if dataclasses.is_dataclass(hint):
        return _record(hint, data, where)
    if origin is Literal:
        if any(type(data) is type(choice) and data == choice for choice in args):
            return data
        raise ShapeError(f"{where}: expected one of {list(args)}, got {data!r:.80}")
    if origin in (Union, types.UnionType):
        for option in args:
            try:
                return _read(option, data, where)
            except ShapeError:
                continue
        raise ShapeError(f"{where}: expected {hint}, got {type(data).__name__}")
    if origin is tuple:
        if type(data) is not list:
            raise ShapeError(f"{where}: expected a list, got {type(data).__name__}")
        if len(args) == 2 and args[1] is Ellipsis:
            args = (args[0],) * len(data)
        if len(args) != len(data):
            raise ShapeError(f"{where}: expected {len(args)} items, got {len(data)}")
        return tuple(
            _read(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, data, strict=True))
        )
    if origin is dict:
        if type(data) is not dict or not all(type(key) is str for key in data):
            raise ShapeError(f"{where}: expected an object, got {type(data).__name__}")
        return {key: _read(args[1], v, f"{where}.{key}") for key, v in data.items()}
    if hint in _SCALARS:
        if type(data) not in _SCALARS[hint]:
            raise ShapeError(f"{where}: expected {hint.__name__}, got {type(data).__name__}")
        return float(data) if hint is float else data
    raise TypeError(f"{where}: the codec has no reader for {hint!r}")  # a record's own mistake
