"""One MLIR context for many lowerings, in a grading child.

JAX makes a new MLIR context for every program it lowers (`mlir.make_ir_context`, which
loads and registers its dialects each time). For the small programs a lesson's cells make,
that costs more than the lowering itself: about a quarter of a grading child's CPU, since a
child runs a file's cells once per scenario and lowers hundreds of programs. Here the
context is made once and handed out again.

A context keeps every array a program embeds as a constant for as long as the context
lives, and JAX's caches keep some program of every context alive, so a shared context
would keep every constant of every program. So the arrays embedded are counted
(`mlir._numpy_array_attribute`, through which every array constant is made), and once
they pass `EMBEDDED_BYTES` this process goes back to a new context per program, JAX's
own way: sharing never holds more than that much memory. A context a caller changed
(`allow_unregistered_dialects`, which Pallas's TPU calls set) is not handed out again.

What a program lowers to, and so its compile-cache key, does not depend on the context.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

MLIR_MODULE = "jax._src.interpreters.mlir"
EMBEDDED_BYTES = 16 * 2**20


class SharedContext:
    """Stands for `make` (JAX's `make_ir_context`): one context, handed out again until
    the arrays embedded pass `EMBEDDED_BYTES`; after that a new one for each call."""

    def __init__(self, make: Callable[[], Any], budget: int = EMBEDDED_BYTES):
        self.make = make
        self.budget = budget
        self.embedded = 0
        self._context: Any = None

    @property
    def sharing(self) -> bool:
        return self.embedded < self.budget

    def __call__(self) -> Any:
        if not self.sharing:
            return self.make()
        context = self._context
        if context is None or getattr(context, "allow_unregistered_dialects", False):
            context = self._context = self.make()
        return context

    def counted(self, attribute: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """`attribute` (an array -> its constant), counting the bytes of every array."""

        def embed(array: Any) -> Any:
            self.embedded += int(getattr(array, "nbytes", 0))
            if not self.sharing:
                self._context = None  # let it go once nothing lowered in it lives
            return attribute(array)

        return embed


def share_ir_contexts() -> SharedContext | None:
    """Make JAX's lowerings in this process share one MLIR context (see the module's
    docstring); None, and nothing changed, where this JAX lacks either hook."""
    try:
        module: ModuleType | None = importlib.import_module(MLIR_MODULE)
    except ImportError:
        return None
    make = getattr(module, "make_ir_context", None)
    attribute = getattr(module, "_numpy_array_attribute", None)
    if make is None or attribute is None:
        return None
    if isinstance(make, SharedContext):
        return make
    shared = SharedContext(make)
    module._numpy_array_attribute = shared.counted(attribute)
    module.make_ir_context = shared
    return shared
