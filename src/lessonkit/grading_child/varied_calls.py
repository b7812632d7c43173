"""Library calls a scenario changes, and names a task cell binds: JAX's derivatives, a named
function or a name, changed alike in every scenario."""

from __future__ import annotations

import importlib

from . import transforms
from .differentiation import Watch, each, named
from .request import ChangedCall


class VariedCalls:
    """Library calls whose results a scenario changes, installed before its first cell.

    "gradients" is every derivative JAX computes, however the cell asks for it: the change is
    made in JAX's differentiation layer (`differentiation.py`), not on named functions. A bare
    name is a value a task's cell binds, changed where the cell binds it (`binder`).

    A probe changes a value where it is made, so every path from it (a second name bound in
    the same statement, a list, a closure) carries the change. A result the transform does
    not fit (a key it lacks) is returned as it is.

    A shift depends on the value it moves (`bend`): a call on a function or values of the
    cell's own making, whose answer it knows, learns how far that answer moved, which says
    nothing about how far the task's own result moved, so it cannot be subtracted.
    """

    def __init__(self, jax_module, make_array):
        self._jax = jax_module
        self._make_array = make_array
        self._watches: list[Watch] = []
        self._bindings: dict[str, object] = {}  # a name a task's cell binds: its change
        self._bound = 0

    def reached(self) -> int:
        """How many derivatives the installed changes of JAX's differentiation altered so far,
        and bindings changed: a cell that took none the change reached (by finite differences,
        by hand), or never bound the name where it can be changed, is one the change says
        nothing about."""
        return sum(watch.reached for watch in self._watches) + self._bound

    def binder(self):
        """What the runner calls with each value a task cell binds to a name a scenario may
        change, for one run of the cell: the first value the change fits is changed, once a
        run, so every later statement reads the changed value (`g = dict(g)` carries it, and
        is not changed again)."""
        changes, done = dict(self._bindings), set()

        def bound(value, name):
            change = changes.get(name)
            if change is None or name in done:
                return value
            changed = change(value)
            if changed is not value:
                done.add(name)
                self._bound += 1
            return changed

        return bound

    def prepare(self, sources: tuple[ChangedCall, ...]) -> list:
        """(call, change) for each source: what `install` wraps, with no description left.

        A scenario keeps only these closures, so no plain data in the child (a dict in a
        frame a cell can walk to) says what a scenario varies."""
        return [
            (source.call, (self._change(source), transforms.row(source.transform).changes))
            for source in sources
        ]

    def install(self, changes: list):
        """Wrap each call with its change (JAX's differentiation: hook its layer); return the
        function that puts the originals back.

        The wrappers carry no `__wrapped__` (functools.wraps would hand a cell the original)."""
        saved: list[tuple[object, str, object]] = []
        undone = []
        for call, (change, changes_what) in changes:
            if call == "gradients":
                moves, reshapes = (changes_what == kind for kind in ("leaves", "structure"))
                watch = Watch(self._jax, change if moves else None, change if reshapes else None)
                undone.append(watch.install())
                self._watches.append(watch)
            elif "." not in call:  # a name a task's cell binds (`CellSpec.varies`)
                self._bindings[call] = change
            else:
                owner, name = _resolved(call)
                if name in getattr(owner, "_fields", ()):  # a function each instance carries
                    saved.append((owner, "__new__", owner.__new__))
                    owner.__new__ = _carries_changed(owner.__new__, name, change)
                else:
                    original = getattr(owner, name)
                    saved.append((owner, name, original))
                    setattr(owner, name, _returns_changed(original, change))

        def undo() -> None:
            for owner, name, original in reversed(saved):
                setattr(owner, name, original)
            for put_back in reversed(undone):
                put_back()
            self._watches.clear()
            self._bindings.clear()

        return undo

    def _change(self, source: ChangedCall):
        name, key, value = source.transform, source.key, source.value
        leaf, apply, bend = self._make_array, transforms.apply, source.bend

        def bent(moved, by):
            if not bend:
                return moved + by
            depth, frequency, phase = bend
            return moved + by * (1.0 + depth * self._jax.numpy.sin(frequency * moved + phase))

        def shift(tree, by):
            return _shift(tree, leaf(by), bent)

        def change(tree):
            return apply(name, tree, key, value, leaf, shift)  # unchanged where it does not fit

        return change


def _shift(tree, value, bent):
    """Every leaf of a subtree moved by `value` as `bent` says (dicts, lists and tuples walked;
    arrays shifted)."""
    if type(tree) is dict:
        return {k: _shift(v, value, bent) for k, v in tree.items()}
    if type(tree) in (list, tuple):
        return type(tree)(_shift(v, value, bent) for v in tree)
    return bent(tree, value)


def _resolved(call: str) -> tuple[object, str]:
    """(owner, attribute) a dotted name ends in: `optax.apply_updates` is (the module, the
    function); `optax.GradientTransformation.update` is (the class, its field)."""
    parts = call.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            owner = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:-1]:
            owner = getattr(owner, part)
        return owner, parts[-1]
    raise ImportError(f"no module in {call!r}")


def _carries_changed(original_new, field: str, change):
    """A named tuple's constructor whose instances carry `field` (a function, such as an
    optax transformation's `update`) with its results changed, each element of a tuple
    (`updates, state`) where the change fits. Made where the function is stored, so a cell
    that unpacks the tuple or calls the field gets the same; only the outermost call is
    changed (a chain's update calls its parts' updates)."""
    running = [0]

    def changed_call(function):
        def call(*args, **kwargs):
            running[0] += 1
            try:
                result = function(*args, **kwargs)
            finally:
                running[0] -= 1
            return result if running[0] else each(change, result)

        return named(call, function)

    def new(cls, *args, **kwargs):
        made = original_new(cls, *args, **kwargs)
        return made._replace(**{field: changed_call(getattr(made, field))})

    return new


def _returns_changed(original, change):
    def call(*args, **kwargs):
        return change(original(*args, **kwargs))

    return named(call, original)
