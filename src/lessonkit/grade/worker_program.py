"""The grading child: runs lesson and learner cells and reports what they produced.

It never judges. It runs as a plain script (`python -I worker_program.py FD`), started by
`run/confine.py` once its limits hold and, for a learner, once it runs as a user of its own;
it imports nothing from lessonkit, and talks to the parent over two channels: requests arrive
as JSON lines on a private copy of stdin, reports leave as JSON lines on the pipe FD (see
`lessonkit.grade.protocol` for both).

A child runs either the lesson's reference code (trusted, never learner code) or one
learner's file, never both and never two learners' files. Once learner code has run, the
parent trusts nothing this process says: its reports are parsed strictly as data. What is
done here still matters for honest learners: the encoder reads only exact built-in, NumPy
and JAX types (a learner class cannot run code while it is reported), and the modules a
learner might patch are restored after every cell, so a patched `jnp.allclose` affects only
the cell that patched it.
"""

from __future__ import annotations

import ast
import builtins
import collections
import contextlib
import functools
import importlib
import importlib.util
import json
import math
import os
import resource
import signal
import sys
import threading
import time


def _load(relative: str, name: str):
    """A lessonkit module loaded by path (`grade/wire.py`): no lessonkit import, since the
    sandbox binds only these files."""
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(name, os.path.join(here, relative))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


wire = _load("wire.py", "lessonkit_wire")
globals()[wire.CHILD_MARK] = True  # read by check() in the learner's file: do not grade here
MAX_ELEMENTS = wire.MAX_ELEMENTS
MAX_LEAVES = wire.MAX_LEAVES
MAX_DEPTH = wire.MAX_DEPTH
MAX_TEXT = wire.MAX_TEXT
MAX_MESSAGE = wire.MAX_MESSAGE
MAX_STRING = wire.MAX_STRING
MAX_NAME = wire.MAX_NAME
OUTPUT_HEAD = wire.OUTPUT_HEAD
OUTPUT_TAIL = wire.OUTPUT_TAIL


class CellTimeout(BaseException):
    """Raised inside learner code when the request's time budget runs out."""


class _Missing:
    pass


MISSING = _Missing()


# --------------------------------------------------------------------------- set-up


def private_stdin() -> int:
    """A private descriptor for requests; fd 0 then reads /dev/null for learner code."""
    requests = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return requests


class Channel:
    """JSON lines on the report pipe."""

    def __init__(self, fd: int):
        self._fd = fd
        self._dumps = json.dumps
        self._write = os.write

    def send(self, message: dict) -> None:
        data = self._dumps(message).encode() + b"\n"
        view = memoryview(data)
        while view:
            written = self._write(self._fd, view)
            view = view[written:]


class OutputCapture:
    """A stand-in for sys.stdout/sys.stderr that keeps the head and tail of what is written."""

    encoding = "utf-8"
    errors = "replace"

    def __init__(self) -> None:
        self.head: list[str] = []
        self.head_size = 0
        self.tail = ""
        self.size = 0

    def write(self, text) -> int:
        text = text if isinstance(text, str) else str(text)
        self.size += len(text)
        if self.head_size < OUTPUT_HEAD:
            part = text[: OUTPUT_HEAD - self.head_size]
            self.head.append(part)
            self.head_size += len(part)
            text = text[len(part) :]
        if text:
            self.tail = (self.tail + text[-OUTPUT_TAIL:])[-OUTPUT_TAIL:]
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    def text(self) -> str:
        head = "".join(self.head)
        if self.size <= OUTPUT_HEAD + OUTPUT_TAIL and not self.tail:
            return head
        skipped = self.size - self.head_size - len(self.tail)
        if skipped <= 0:
            return head + self.tail
        return f"{head}\n[... {skipped:,} characters not shown ...]\n{self.tail}"


class ModuleGuard:
    """Snapshots of the modules learner code could patch, restored after every cell."""

    def __init__(self, modules: list, jax_module, array_type: type):
        self._watched = modules
        self._array_type = array_type
        self._config = jax_module.config
        self._module_type = type(sys)
        self.refresh()

    def refresh(self) -> None:
        """Take the snapshot again (after imports the lesson itself needs)."""
        self._modules = [(m.__name__, m, dict(vars(m))) for m in self._watched]
        self._array_attrs = dict(vars(self._array_type))
        self._config_values = dict(getattr(self._config, "values", {}))
        self._threads = threading.active_count()

    def restore(self) -> list[str]:
        """Undo every change and name what was changed."""
        changed = []
        for name, module, saved in self._modules:
            current = vars(module)
            for key in [k for k in current if k not in saved]:
                if not isinstance(current[key], self._module_type):  # lazily loaded submodules
                    changed.append(f"{name}.{key}")
                    del current[key]
            for key, value in saved.items():
                if current.get(key, MISSING) is not value:
                    changed.append(f"{name}.{key}")
                    current[key] = value
        for key, value in self._array_attrs.items():
            if vars(self._array_type).get(key, MISSING) is not value:
                changed.append(f"jax.Array.{key}")
                setattr(self._array_type, key, value)
        for key in [k for k in vars(self._array_type) if k not in self._array_attrs]:
            changed.append(f"jax.Array.{key}")
            delattr(self._array_type, key)
        values = getattr(self._config, "values", {})
        for key, value in self._config_values.items():
            if values.get(key, MISSING) != value:
                changed.append(f"jax.config.{key}")
                with contextlib.suppress(Exception):
                    self._config.update(key, value)
        if threading.active_count() > self._threads:
            changed.append("threading (a thread is still running)")
        return changed


# --------------------------------------------------------------------------- values


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


# --------------------------------------------------------------------------- code


def _assigns_only(statement: ast.stmt, names: frozenset[str]) -> bool:
    """True for `params = ...`, `x = ...` or `params, x = ...`: inputs the scenario supplies."""
    if isinstance(statement, ast.Assign):
        targets = []
        for target in statement.targets:
            targets.extend(target.elts if isinstance(target, ast.Tuple) else [target])
    elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
        targets = [statement.target]
    else:
        return False
    return bool(targets) and all(isinstance(t, ast.Name) and t.id in names for t in targets)


class CompileError(Exception):
    def __init__(self, report: dict):
        super().__init__(report.get("message", ""))
        self.report = report


JIT_HOOK = "__lessonkit_jit__"  # the namespace name of `JitWatch.wrap` while a cell runs


def _bound_at_top(statement: ast.stmt) -> list[str]:
    """Names a top-level `def` or plain assignment binds."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
        return [statement.name]
    if isinstance(statement, ast.Assign):
        return [t.id for t in statement.targets if isinstance(t, ast.Name)]
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        return [statement.target.id]
    return []


def _watch_jit(body: list, names: frozenset[str]) -> list:
    """After each top-level statement that binds a watched name, `name = HOOK(name, "name")`."""
    out = []
    for statement in body:
        if isinstance(statement, ast.With):  # an optional task's cell: `with optional_task():`
            statement.body = _watch_jit(statement.body, names)
        out.append(statement)
        for name in _bound_at_top(statement):
            if name in names:
                hook = ast.parse(f"{name} = {JIT_HOOK}({name}, {name!r})").body[0]
                out.append(ast.copy_location(hook, statement))
    return out


def compile_cell(cell: dict, strip: frozenset[str]):
    """The cell's code, without the assignments of names the scenario supplies, and with
    the functions its task's `jit:` rule names handed to the jit watch as they are bound."""
    filename = f"<cell {cell['index']}>"
    try:
        tree = ast.parse(cell["source"], filename=filename)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        line = getattr(exc, "lineno", None) or 1
        raise CompileError(
            {
                "kind": "syntax",
                "type": type(exc).__name__,
                "module": "builtins",
                "message": str(getattr(exc, "msg", exc))[:MAX_TEXT],
                "frames": [[cell["index"], line + cell["offset"], 1]],
            }
        ) from None
    if strip:
        tree.body = [s for s in tree.body if not _assigns_only(s, strip)]
    watched = frozenset(cell.get("jit") or ())
    if watched:
        tree.body = _watch_jit(tree.body, watched)
        ast.fix_missing_locations(tree)
    ast.increment_lineno(tree, cell["offset"])
    return compile(tree, filename, "exec", dont_inherit=True)  # not this file's __future__


def error_report(exc: BaseException, cells_by_file: dict[str, int]) -> dict:
    """The exception's type, message and the learner's own frames (cell index, line)."""
    frames: list[list[int]] = []  # [cell index, line, times in a row]
    tb = exc.__traceback__
    while tb is not None:
        index = cells_by_file.get(tb.tb_frame.f_code.co_filename)
        if index is not None:
            if frames and frames[-1][:2] == [index, tb.tb_lineno]:
                frames[-1][2] += 1
            else:
                frames.append([index, tb.tb_lineno, 1])
        tb = tb.tb_next
    if isinstance(exc, CellTimeout):
        kind = "timeout"
    elif isinstance(exc, SystemExit):
        kind = "exit"
    elif isinstance(exc, KeyboardInterrupt):
        kind = "interrupt"
    else:
        kind = "exception"
    try:
        message = str(exc)
    except Exception:
        message = ""
    report = {
        "kind": kind,
        "type": type(exc).__qualname__,
        "module": type(exc).__module__,
        "message": message[:MAX_MESSAGE],
        "frames": frames[:2] + frames[2:][-6:],
    }
    if isinstance(exc, SystemExit):
        code = exc.code
        report["exit_code"] = code if isinstance(code, int) or code is None else str(code)[:80]
    return report


# --------------------------------------------------------------------------- transforms


def _add_leaf(tree, key, value, make_array):
    if type(tree) is not dict:
        raise TypeError("not a dict")
    return {**tree, key: make_array(value)}


def _drop_key(tree, key, _value, _make_array):
    if type(tree) is not dict or key not in tree:
        raise TypeError("no such key")
    return {k: v for k, v in tree.items() if k != key}


def _shift(tree, value):
    """Every leaf of a subtree plus `value` (dicts, lists and tuples walked; arrays shifted)."""
    if type(tree) is dict:
        return {k: _shift(v, value) for k, v in tree.items()}
    if type(tree) in (list, tuple):
        return type(tree)(_shift(v, value) for v in tree)
    return tree + value


def _shift_key(tree, key, value, make_array):
    """`tree[key]` shifted; with no key, the whole tree."""
    if not key:
        return _shift(tree, make_array(value))
    if type(tree) is not dict or key not in tree:
        raise TypeError("no such key")
    return {**tree, key: _shift(tree[key], make_array(value))}


def _unchanged(tree, _key, _value, _make_array):
    """The change of a call a scenario does not vary: every scenario wraps the same calls."""
    return tree


TRANSFORMS = {
    "add_leaf": _add_leaf,
    "drop_key": _drop_key,
    "shift_key": _shift_key,
    "none": _unchanged,
}


class Sources:
    """Library calls whose results a scenario changes, installed before its first cell.

    A probe changes a value where it is made, so every path from it (a second name bound in
    the same statement, a list, a closure) carries the change. A result the transform does
    not fit (a key it lacks) is returned as it is.
    """

    def __init__(self, jax_module, make_array):
        self._jax = jax_module
        self._make_array = make_array

    def prepare(self, sources: list) -> list:
        """(call, change) for each source: what `install` wraps, with no description left.

        A scenario keeps only these closures, so no plain data in the child (a dict in a
        frame a cell can walk to) says what a scenario varies."""
        return [(source["call"], self._change(source)) for source in sources]

    def install(self, changes: list):
        """Wrap each call with its change; return the function that puts the originals back.

        The wrappers carry no `__wrapped__` (functools.wraps would hand a cell the original)."""
        saved: list[tuple[object, str, object]] = []
        for call, change in changes:
            if call == "gradients":
                for name, wrap in _DERIVATIVES.items():
                    original = getattr(self._jax, name)
                    saved.append((self._jax, name, original))
                    setattr(self._jax, name, wrap(original, change))
            else:
                module_name, _, name = call.rpartition(".")
                module = importlib.import_module(module_name)
                original = getattr(module, name)
                saved.append((module, name, original))
                setattr(module, name, _returns_changed(original, change))

        def undo() -> None:
            for owner, name, original in reversed(saved):
                setattr(owner, name, original)

        return undo

    def _change(self, source: dict):
        transform = TRANSFORMS[source["transform"]]
        key, value, make_array = source.get("key"), source.get("value"), self._make_array

        def change(tree):
            try:
                return transform(tree, key, value, make_array)
            except TypeError:
                return tree  # a result the probe does not fit is left as it is

        return change


def _each(change):
    """Apply `change` to a derivative, or to each one when several arguments were asked for."""

    def apply(result):
        if type(result) is tuple:
            return tuple(change(r) for r in result)
        return change(result)

    return apply


def _wrap_grad(original, change):
    """jax.grad, jacrev or jacfwd whose derivatives (not their aux data) are changed."""

    def grad(fun, *args, has_aux=False, **kwargs):
        inner = original(fun, *args, has_aux=has_aux, **kwargs)
        each = _each(change)

        def derivative(*a, **k):
            out = inner(*a, **k)
            return (each(out[0]), out[1]) if has_aux else each(out)

        return _named(derivative, inner)

    return _named(grad, original)


def _wrap_value_and_grad(original, change):
    def value_and_grad(fun, *args, **kwargs):
        inner = original(fun, *args, **kwargs)
        each = _each(change)

        def both(*a, **k):
            value, derivative = inner(*a, **k)
            return value, each(derivative)

        return _named(both, inner)

    return _named(value_and_grad, original)


def _wrap_vjp(original, change):
    def vjp(fun, *primals, has_aux=False, **kwargs):
        out = original(fun, *primals, has_aux=has_aux, **kwargs)
        pullback, each = out[1], _each(change)

        def changed(*a, **k):
            return each(pullback(*a, **k))

        return (out[0], _named(changed, pullback), *out[2:])

    return _named(vjp, original)


_DERIVATIVES = {
    "grad": _wrap_grad,
    "value_and_grad": _wrap_value_and_grad,
    "vjp": _wrap_vjp,
    "jacrev": _wrap_grad,
    "jacfwd": _wrap_grad,
}


def _returns_changed(original, change):
    def call(*args, **kwargs):
        return change(original(*args, **kwargs))

    return _named(call, original)


def _named(wrapper, original):
    """`wrapper` under the original's name and docstring, with no path back to it (what
    functools.wraps leaves on `__wrapped__`)."""
    for attribute in ("__module__", "__name__", "__qualname__", "__doc__"):
        with contextlib.suppress(AttributeError, TypeError):
            setattr(wrapper, attribute, getattr(original, attribute))
    return wrapper


# --------------------------------------------------------------------------- jit watch


class _Discard:
    """Where a repeated call's prints go: the cell's output shows each print once."""

    encoding = "utf-8"

    def write(self, text) -> int:
        return len(text) if type(text) is str else 0

    def flush(self) -> None:
        pass


class JitWatch:
    """Repeats the first call of each watched function through `jax.jit`, for one cell.

    The cell's own call runs first and its result is what the cell gets; the repeat, on the
    same arguments, only records whether jit could trace the function. The parent decides
    what that means for the task.
    """

    def __init__(self, jit, files: dict[str, int]):
        self._jit = jit
        self._files = files
        self._wraps = functools.wraps
        self.bound: set[str] = set()
        self.outcomes: dict[str, dict] = {}
        self.open = True

    def wrap(self, function, name: str):
        if not callable(function):
            return function
        self.bound.add(name)
        watch = self

        def watched(*args, **kwargs):
            result = function(*args, **kwargs)
            if watch.open and name not in watch.outcomes:
                watch.outcomes[name] = watch._repeat(function, name, args, kwargs)
            return result

        try:
            return self._wraps(function)(watched)
        except Exception:  # a callable without the usual attributes: keep the plain wrapper
            return watched

    def _repeat(self, function, name: str, args, kwargs) -> dict:
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = _Discard()
        try:
            self._jit(function)(*args, **kwargs)
        except Exception as exc:  # a timeout (BaseException) still stops the cell
            return {"name": name, "status": "error", "error": error_report(exc, self._files)}
        finally:
            sys.stdout, sys.stderr = saved
        return {"name": name, "status": "ok"}

    def report(self, names: list) -> list[dict]:
        """One entry per watched name: its outcome, or why there is none."""
        self.open = False
        out = []
        for name in names:
            if name in self.outcomes:
                out.append(self.outcomes[name])
            else:
                status = "not called" if name in self.bound else "not defined"
                out.append({"name": name, "status": status})
        return out


# --------------------------------------------------------------------------- running


class _Scenario:
    """One scenario made ready to run: its name in this request (`run-3`, drawn per request),
    its input arrays, and the changes to install; nothing here names what kind it is."""

    __slots__ = ("changes", "inputs", "lesson_only", "name")

    def __init__(self, name: str, inputs: dict | None, changes: list, lesson_only: bool):
        self.name, self.inputs, self.changes, self.lesson_only = name, inputs, changes, lesson_only


class WorkerProgram:
    """Runs one request: every scenario of one plan, reporting cell by cell."""

    def __init__(
        self, channel: Channel, encoder: Encoder, guard: ModuleGuard, jax_module, jnp_module
    ):
        self.channel = channel
        self.encoder = encoder
        self.guard = guard
        self._asarray = jnp_module.asarray
        self._float32 = jnp_module.float32
        self._int32 = jnp_module.int32
        self._bool = jnp_module.bool_
        self._perf = time.perf_counter
        self.patched: list[str] = []
        self.deadline: float | None = None
        self._compiled: dict[tuple, object] = {}  # per request: each scenario reuses the code
        self.sources = Sources(jax_module, self.make_array)
        self._jit = jax_module.jit

    def make_array(self, value):
        return self._asarray(value, dtype=self._float32)

    def make_inputs(self, spec):
        """A drawn input set (see `grade.inputs.Leaf`): a float or a list of floats becomes
        a float32 array, a list of ints an int32 array, a list of bools a bool array; a
        Python int or bool stays what the lesson's own code would have written."""
        if isinstance(spec, dict):
            return {k: self.make_inputs(v) for k, v in spec.items()}
        if type(spec) in (int, bool):
            return spec
        first = spec
        while type(first) is list and first:
            first = first[0]
        if type(first) is bool:
            return self._asarray(spec, dtype=self._bool)
        if type(first) is int:
            return self._asarray(spec, dtype=self._int32)
        return self.make_array(spec)

    # -- timing: the alarm is armed only while learner code runs

    def _arm(self) -> None:
        if self.deadline is None:
            return
        remaining = self.deadline - self._perf()
        if remaining <= 0:
            raise CellTimeout()
        signal.setitimer(signal.ITIMER_REAL, remaining)

    def _disarm(self) -> None:
        if self.deadline is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def run(self, request: dict) -> None:
        for name in request.get("preload", ()):
            with contextlib.suppress(Exception):
                __import__(name)
        self.guard.refresh()
        budget = request.get("budget")
        self.deadline = None if budget is None else self._perf() + float(budget)
        if budget is not None:
            limit = resource.getrusage(resource.RUSAGE_SELF)
            used = limit.ru_utime + limit.ru_stime
            try:
                hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
                resource.setrlimit(resource.RLIMIT_CPU, (int(used + float(budget) * 2 + 10), hard))
            except (ValueError, OSError):
                pass
        self.patched = []
        self._compiled = {}
        cells = request["cells"]
        files = {f"<cell {c['index']}>": c["index"] for c in cells}
        timed_out = False
        # Every scenario is made ready before any cell runs and the request forgets their
        # descriptions: a cell that walks up to these frames finds names, arrays and closures.
        prepared = [self._prepare(spec) for spec in request.pop("scenarios")]
        try:
            for scenario in prepared:
                if not self._scenario(request, scenario, cells, files):
                    timed_out = True
                    break
        finally:
            self._disarm()
            self.deadline = None
        self._close_figures()
        self.channel.send(
            wire.event(
                "done",
                request=request["id"],
                timed_out=timed_out,
                patched=sorted(set(self.patched)),
            )
        )

    def _prepare(self, spec: dict) -> _Scenario:
        inputs = spec.get("inputs")
        return _Scenario(
            spec["name"],
            None if inputs is None else {k: self.make_inputs(v) for k, v in inputs.items()},
            self.sources.prepare(spec.get("sources") or []),
            bool(spec.get("lesson_only_cells", False)),
        )

    def _scenario(self, request: dict, scenario: _Scenario, cells: list, files: dict) -> bool:
        """Run one scenario; False when the time budget ran out."""
        namespace = {"__name__": "__main__", "__builtins__": builtins}
        strip: frozenset[str] = frozenset()
        if scenario.inputs is not None:
            namespace.update(scenario.inputs)
            strip = frozenset(scenario.inputs)
        undo = self.sources.install(scenario.changes)
        self.guard.refresh()  # the changed calls are this scenario's baseline
        try:
            return self._cells(request, scenario, cells, files, namespace, strip)
        finally:
            undo()
            self.guard.refresh()

    def _cells(self, request, scenario, cells, files, namespace, strip) -> bool:
        for cell in cells:
            index = cell["index"]
            if cell["role"] == "skip" or (cell["role"] == "lesson" and not scenario.lesson_only):
                continue
            where = {"request": request["id"], "scenario": scenario.name, "cell": index}
            self.channel.send(wire.event("start", **where))
            inputs_here = strip if cell["role"] == "setup" else frozenset()
            result = self._cell(cell, namespace, inputs_here, files)
            report = wire.event("cell", **where, **result)
            names = cell.get("report") or []
            if names:
                report["values"] = {
                    n: self.encoder.encode(namespace[n]) for n in names if n in namespace
                }
            if index == request.get("checkpoint"):
                names = request.get("checkpoint_names") or []
                report["checkpoint"] = {
                    n: self.encoder.encode(namespace[n]) for n in names if n in namespace
                }
            self.channel.send(report)
            if result.get("error", {}).get("kind") == "timeout":
                return False
        return True

    def _compile(self, cell: dict, strip: frozenset[str]):
        key = (cell["index"], strip)
        if key not in self._compiled:
            self._compiled[key] = compile_cell(cell, strip)
        return self._compiled[key]

    def _cell(self, cell: dict, namespace: dict, strip: frozenset[str], files) -> dict:
        try:
            code = self._compile(cell, strip)
        except CompileError as exc:
            return {"status": "error", "error": exc.report, "output": ""}
        capture = OutputCapture()
        saved = sys.stdout, sys.stderr
        error = None
        watched = cell.get("jit") or []
        watch = JitWatch(self._jit, files) if watched else None
        if watch is not None:
            namespace[JIT_HOOK] = watch.wrap
        sys.stdout = sys.stderr = capture
        try:
            self._arm()
            try:
                exec(code, namespace)
            finally:
                self._disarm()
                namespace.pop(JIT_HOOK, None)
        except BaseException as exc:  # learner code may raise anything, SystemExit included
            self._disarm()
            error = error_report(exc, files)
            trees = self._mismatched_trees(exc, cell, namespace, error)
            if trees:
                error["trees"] = trees
        finally:
            sys.stdout, sys.stderr = saved
            self.patched.extend(self.guard.restore())
        result = {"status": "error" if error else "ok", "output": capture.text()}
        if error:
            result["error"] = error
        if watch is not None:
            result["jit"] = watch.report(watched)
        return result

    def _mismatched_trees(self, exc: BaseException, cell: dict, namespace: dict, error: dict):
        """For a pytree structure error: the trees named in the failing call, as data.

        JAX's own message names no key path a learner can act on; with the trees the parent
        can say which key path one of them lacks. Only plain names are read, from the
        learner's frame, so no learner code runs.
        """
        message = error.get("message", "")
        if not any(mark in message for mark in _TREE_ERRORS) or not error["frames"]:
            return None
        index, line, _ = error["frames"][-1]
        if index != cell["index"]:
            return None
        frame_names = dict(namespace)
        tb = exc.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == f"<cell {index}>":
                frame_names = {**namespace, **tb.tb_frame.f_locals}
            tb = tb.tb_next
        try:
            tree = ast.parse(cell["source"])
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and node.lineno + cell["offset"] == line:
                names = [a.id for a in node.args if isinstance(a, ast.Name)]
                found = [
                    [n, self.encoder.encode(frame_names[n])]
                    for n in names
                    if n in frame_names and not callable(frame_names[n])  # a type slot, no code
                ]
                if len(found) >= 2:
                    return found[:4]
        return None

    @staticmethod
    def _close_figures() -> None:
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is not None:
            with contextlib.suppress(Exception):
                pyplot.close("all")


# What JAX says when trees passed together to one call (`jax.tree.map` and its users) differ;
# other structure errors, such as a loop's carry, name their difference themselves.
_TREE_ERRORS = ("pytree structure error", "Dict key mismatch", "node type mismatch")


def _on_alarm(signum, frame):
    raise CellTimeout()


def main() -> None:
    report_fd = int(sys.argv[1])
    requests = os.fdopen(private_stdin(), "r", encoding="utf-8")
    sys.argv = sys.argv[:1]
    channel = Channel(report_fd)
    signal.signal(signal.SIGALRM, _on_alarm)

    import jax
    import jax.numpy as jnp
    import numpy as np

    jax_tree = sys.modules.get("jax.tree") or jax.tree
    watched = [builtins, jax, jnp, jax_tree, jax.tree_util, jax.lax, np, os, math]
    guard = ModuleGuard(watched, jax, type(jnp.zeros(())))
    runner = WorkerProgram(channel, Encoder(np, jax), guard, jax, jnp)
    channel.send(wire.event("ready", jax=jax.__version__, python=sys.version.split()[0]))
    for line in requests:
        if line.strip():
            runner.run(json.loads(line))


if __name__ == "__main__":
    main()
