"""Values as JSON data, read from exact built-in, NumPy and JAX types only, so no class a
learner defines runs code while it is reported."""

from __future__ import annotations

import collections
import sys

from . import wire
from .wire import MAX_DEPTH, MAX_ELEMENTS, MAX_LEAVES, MAX_NAME, MAX_STRING


class Encoder:
    """Turns values into JSON data without running code that a value's class defines.

    Only exact types are read: Python scalars, strings, None, modules, exact `dict`,
    `collections.OrderedDict` and `defaultdict` (C types: their items are read by their own
    C methods, taken from the classes here), `list`, `tuple` and NamedTuples, exact
    `numpy.ndarray`, NumPy scalar types, JAX's own array type and its typed PRNG key arrays
    (through `jax.random.key_data`), and JAX's key-path entries (`DictKey`, `SequenceKey`,
    `GetAttrKey`, `FlattenedIndexKey`) by their one field. Any other value is read as JAX
    reads it: a node JAX flattens (a registered dataclass, an optax state, a
    `GradientTransformation`) by its children and their key-path names, through
    `jax.tree_util` (a registered class's own flatten runs here, in the process whose code
    registered it); a leaf JAX cannot look into (a function, a jitted function, an object) by
    its type's name alone, which is all there is to compare.
    """

    def __init__(self, np_module, jax_module):
        self._asarray = np_module.asarray
        self._ndarray = np_module.ndarray
        self._numpy_scalars = frozenset(
            t for t in set(np_module.sctypeDict.values()) if issubclass(t, np_module.generic)
        )
        self._float32 = np_module.float32
        self._jax_array = type(jax_module.numpy.zeros(()))
        self._key_array = type(jax_module.random.key(0))
        self._key_data = jax_module.random.key_data
        self._module_type = type(sys)
        self._dict_items = dict.items
        self._ordered_dict = collections.OrderedDict
        self._ordered_items = collections.OrderedDict.items  # its own order, not dict's
        self._default_dict = collections.defaultdict
        self._len = len
        self._type = type
        tree_util = jax_module.tree_util
        self._flatten = tree_util.tree_flatten_with_path
        self._key_fields = {
            tree_util.DictKey: "key",
            tree_util.SequenceKey: "idx",
            tree_util.GetAttrKey: "name",
            tree_util.FlattenedIndexKey: "key",
        }

    def encode(self, value) -> dict:
        try:
            return self._value(value, [0], 0)
        except Exception as exc:  # a value that cannot even be inspected
            return wire.value("other", type=self._type_name(value), note=type(exc).__name__)

    def _type_name(self, value) -> str:
        name = getattr(self._type(value), "__name__", "object")
        return name[:MAX_NAME] if self._type(name) is str else "object"

    def _value(self, value, leaves: list[int], depth: int) -> dict:
        kind = self._type(value)
        if value is None:
            return wire.value("none")
        if kind in (bool, int, float):
            if kind is int and not -(2**53) <= value <= 2**53:
                return wire.value("number", type="int", value=float(value))
            return wire.value("number", type=kind.__name__, value=value)
        if kind is str:
            return wire.value("str", value=value[:MAX_STRING], length=self._len(value))
        if kind is self._key_array:
            return self._key(value)
        if kind is self._jax_array or kind is self._ndarray or kind in self._numpy_scalars:
            return self._array(value)
        if kind is self._module_type:
            return wire.value("module", name=str.__str__(value.__name__)[:MAX_NAME])
        if depth >= MAX_DEPTH:
            return wire.value("big", type=self._type_name(value), why="nested too deeply")
        read_items = None  # identity tests only: a class is never asked to compare itself
        if kind is dict or kind is self._default_dict:
            read_items = self._dict_items
        elif kind is self._ordered_dict:
            read_items = self._ordered_items
        if read_items is not None:
            name = kind.__name__
            items = []
            for key, child in read_items(value):
                if self._type(key) not in (str, int, bool, float):
                    return wire.value("other", type=name, note="keys that are not str or int")
                leaves[0] += 1
                if leaves[0] > MAX_LEAVES:
                    return wire.value("big", type=name, why="too many entries")
                if self._type(key) is str:
                    key = key[:200]
                items.append([key, self._value(child, leaves, depth + 1)])
            return wire.value("dict", type=name, items=items)
        field = self._key_fields.get(kind)
        if field is not None:  # a key-path entry is a value too: its one field
            child = self._value(getattr(value, field), leaves, depth + 1)
            return wire.value("seq", type=kind.__name__, fields=[field], items=[child])
        if kind is list or kind is tuple or _is_namedtuple(kind):
            items = []
            for child in (list.__iter__ if kind is list else tuple.__iter__)(value):
                leaves[0] += 1
                if leaves[0] > MAX_LEAVES:
                    return wire.value("big", type=self._type_name(value), why="too many entries")
                items.append(self._value(child, leaves, depth + 1))
            out = wire.value("seq", type=self._type_name(value), items=items)
            if kind is not list and kind is not tuple:
                out["fields"] = [str.__str__(f)[:MAX_NAME] for f in tuple.__iter__(kind._fields)]
            return out
        return self._node(value, leaves, depth)

    def _node(self, value, leaves: list[int], depth: int) -> dict:
        """Any other value as JAX flattens it one level: a node's children by key path, or
        a leaf JAX cannot look into (a function, an object) by its type's name."""
        pairs, _ = self._flatten(value, is_leaf=lambda x: x is not value)
        name = self._type_name(value)
        if self._len(pairs) == 1 and pairs[0][0] == ():
            return wire.value("other", type=name)
        fields, items = [], []
        for path, child in pairs:
            leaves[0] += 1
            if leaves[0] > MAX_LEAVES:
                return wire.value("big", type=name, why="too many entries")
            fields.append(self._key_name(path))
            items.append(self._value(child, leaves, depth + 1))
        out = wire.value("seq", type=name, items=items)
        if None not in fields and self._len(set(fields)) == self._len(fields):
            out["fields"] = fields
        return out

    def _key_name(self, path) -> str | int | None:
        """A one-entry key path's name (`mu`, `weight`, 0); None for anything else."""
        if self._type(path) is not tuple or self._len(path) != 1:
            return None
        field = self._key_fields.get(self._type(path[0]))
        key = None if field is None else getattr(path[0], field)
        if self._type(key) is int and -(2**31) <= key <= 2**31:
            return key
        return str.__str__(key)[:MAX_NAME] if self._type(key) is str else None

    def _key(self, value) -> dict:
        """A typed PRNG key array: its implementation, shape and raw key data."""
        data = self._asarray(self._key_data(value))
        shape = [int(d) for d in value.shape]
        name = str(value.dtype)
        impl = name[4:-1] if name.startswith("key<") and name.endswith(">") else name
        out = wire.value("key", dtype="key", impl=impl[:40], shape=shape)
        if data.size <= MAX_ELEMENTS:
            out["data"] = [int(v) for v in data.reshape(-1).tolist()]
        return out

    def _array(self, value) -> dict:
        data = self._asarray(value)
        shape = [int(d) for d in data.shape]
        out = wire.value("array", dtype=str(data.dtype), shape=shape)
        if data.size > MAX_ELEMENTS:
            return out
        if data.dtype.kind == "c":
            return wire.value("other", type=f"complex array ({data.dtype})")
        if data.dtype.kind in "OUSVMm" and data.dtype.kind != "V":
            return wire.value("other", type=f"array of {data.dtype}"[:MAX_NAME])
        if data.dtype.kind not in "biuf":  # bfloat16 and other extension floats
            try:
                data = data.astype(self._float32)
            except Exception:
                return wire.value("other", type=f"array of {data.dtype}"[:MAX_NAME])
        out["data"] = data.reshape(-1).tolist()
        return out


def _is_namedtuple(kind: type) -> bool:
    """A class made by `typing.NamedTuple` or `collections.namedtuple`: tuple plus _fields."""
    return kind.__bases__ == (tuple,) and type(getattr(kind, "_fields", None)) is tuple
