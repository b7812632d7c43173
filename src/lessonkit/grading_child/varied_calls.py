"""Library calls a scenario changes: JAX's derivatives or a named function, wrapped alike in
every scenario."""

from __future__ import annotations

import contextlib
import importlib

from . import transforms


class VariedCalls:
    """Library calls whose results a scenario changes, installed before its first cell.

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
        name, key, value = source["transform"], source.get("key"), source.get("value")
        leaf, apply, bend = self._make_array, transforms.apply, source.get("bend")

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
