"""Reported values written back as Python source: the literals the cheat set types in.

A cheat binds a graded name to a literal of the reference's value, or to zeros of its layout,
so the literal must report exactly what the reference reported: same containers and keys,
same dtypes and shapes, same numbers (floats by `repr`, which round-trips). The source
names `jnp`, `np`, `jax`, `collections` and `importlib`; `imports_for` binds them. Arrays of
64-bit dtypes are NumPy arrays (JAX makes them 32-bit unless x64 is on); others are JAX's.
"""

from __future__ import annotations

import math
import re

from lessonkit.grade.channel import reported as r
from lessonkit.grade.channel.reported import Scalar, Value

IMPORTS = {
    "collections": "import collections",
    "importlib": "import importlib",
    "jax": "import jax",
    "jnp": "import jax.numpy as jnp",
    "np": "import numpy as np",
}


def imports_for(source: str) -> list[str]:
    """The import lines that the literals in `source` need."""
    return [line for name, line in IMPORTS.items() if re.search(rf"\b{name}\.", source)]


# the implementation names JAX prints in a key's dtype (`key<fry>`) and `wrap_key_data` takes
KEY_IMPLS = {"fry": "threefry2x32", "rbg": "rbg", "urbg": "unsafe_rbg"}
_NUMPY_ONLY = ("float64", "int64", "uint64", "complex128")


class LiteralError(Exception):
    """A reported value that no literal can reproduce (only named, too large, cut short)."""


def literal(value: Value) -> str:
    """Python source that evaluates to a value reported exactly like `value`."""
    match value:
        case r.NoneValue():
            return "None"
        case r.Number(type="bool"):
            return repr(bool(value.value))
        case r.Number(type="int"):
            return repr(int(value.value))
        case r.Number():
            return _float(float(value.value))
        case r.Text():
            if not value.complete:
                raise LiteralError(f"a string of {value.length} characters, reported cut short")
            return repr(value.value)
        case r.Array():
            if value.data is None:
                raise LiteralError(f"a {value.dtype} array of shape {value.shape}, too large")
            return _array(value.dtype, value.shape, value.data)
        case r.KeyArray():
            if value.data is None:
                raise LiteralError(f"a PRNG key array of shape {value.shape}, too large")
            return _key(value, value.data)
        case r.Module():
            return f"importlib.import_module({value.name!r})"
        case r.Mapping():
            items = ", ".join(f"{_key_literal(k)}: {literal(v)}" for k, v in value.items)
            return "{" + items + "}"
        case r.Sequence():
            return _sequence(value, [literal(item) for item in value.items])
    raise LiteralError(f"a {value.type} that the grader only names")


def zeros(value: Value) -> str:
    """Python source for zeros of `value`'s layout: same containers, shapes and dtypes."""
    match value:
        case r.Number(type="bool"):
            return "False"
        case r.Number(type="int"):
            return "0"
        case r.Number():
            return "0.0"
        case r.Text():
            return "''"
        case r.Array():
            module = "np" if value.dtype in _NUMPY_ONLY else "jnp"
            return f"{module}.zeros({_shape(value.shape)}, dtype={value.dtype!r})"
        case r.KeyArray():
            return _key(value, None)
        case r.Mapping():
            items = ", ".join(f"{_key_literal(k)}: {zeros(v)}" for k, v in value.items)
            return "{" + items + "}"
        case r.Sequence():
            return _sequence(value, [zeros(item) for item in value.items])
        case r.NoneValue() | r.Module():
            return literal(value)  # nothing to zero: the value itself
    raise LiteralError(f"a {value.type} that the grader only names")


def _float(x: float) -> str:
    if math.isnan(x):
        return "float('nan')"
    if math.isinf(x):
        return "float('inf')" if x > 0 else "-float('inf')"
    return repr(x)


def _scalar(x: Scalar) -> str:
    return _float(x) if type(x) is float else repr(x)


def _key_literal(key: r.DictKey) -> str:
    return _float(key) if type(key) is float else repr(key)


def _shape(shape: tuple[int, ...]) -> str:
    return repr(tuple(shape))


def _array(dtype: str, shape: tuple[int, ...], data: tuple[Scalar, ...]) -> str:
    module = "np" if dtype in _NUMPY_ONLY else "jnp"
    flat = "[" + ", ".join(_scalar(x) for x in data) + "]"
    if shape == ():
        return f"{module}.array({_scalar(data[0])}, dtype={dtype!r})"
    return f"{module}.array({flat}, dtype={dtype!r}).reshape({_shape(shape)})"


def _key(value: r.KeyArray, data: tuple[Scalar, ...] | None) -> str:
    """`jax.random.wrap_key_data` of the key words; zeros when `data` is None."""
    impl = KEY_IMPLS.get(value.impl)
    if impl is None:
        raise LiteralError(f"a PRNG key of the unknown implementation {value.impl!r}")
    shape = (*value.shape, 2 if impl == "threefry2x32" else 4)
    if data is None:
        words = f"jnp.zeros({_shape(shape)}, dtype='uint32')"
    elif len(data) != math.prod(shape):
        raise LiteralError(f"a PRNG key array of shape {value.shape}, too large")
    else:
        words = _array("uint32", shape, data)
    return f"jax.random.wrap_key_data({words}, impl={impl!r})"


def _sequence(value: r.Sequence, items: list[str]) -> str:
    type_name = value.type
    if type_name == "list":
        return "[" + ", ".join(items) + "]"
    if type_name == "tuple":
        return "(" + "".join(f"{item}, " for item in items).rstrip(" ") + ")"
    if not type_name.isidentifier():
        raise LiteralError(f"a {type_name!r} that is not a list, tuple or NamedTuple")
    # A NamedTuple (an optax state, a key-path entry, a registered dataclass) is reported by
    # its class name, its fields and items, so a NamedTuple of that name and fields holds it.
    names = value.fields or tuple(f"f{i}" for i in range(len(items)))
    if not all(isinstance(n, str) and n.isidentifier() and n[0] != "_" for n in names):
        raise LiteralError(f"a {type_name!r} whose children are not named by fields")
    fields = " ".join(names)  # type: ignore[arg-type]
    return f"collections.namedtuple({type_name!r}, {fields!r})({', '.join(items)})"
