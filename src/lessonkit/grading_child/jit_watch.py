"""The jit watch: a watched function's first call repeated through `jax.jit`, for one cell."""

from __future__ import annotations

import functools
import sys

from .cells import error_report


class _Discard:
    """Where a repeated call's prints go: the cell's output shows each print once."""

    encoding = "utf-8"

    def write(self, text) -> int:
        return len(text) if type(text) is str else 0

    def flush(self) -> None:
        pass


def start(jax_module, files: dict[str, int]) -> JitWatch:
    """The watch of one cell (`wire.CELL_RULES`): `files` maps a cell's file name to its index."""
    return JitWatch(jax_module.jit, files)


class JitWatch:
    """Traces the first call of each watched function through `jax.jit`, for one cell.

    The cell's own call runs first and its result is what the cell gets; the repeat, on the
    same arguments, only records whether jit could trace the function, so it stops at the
    trace: a Python condition on a traced value fails there, and lowering, compiling and
    running the program would add nothing to the outcome. The parent decides what that
    means for the task.
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
            self._jit(function).trace(*args, **kwargs)
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
