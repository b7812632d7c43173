"""What a learner cell may patch (modules, the array type, JAX's config), restored after every
cell, so a patched `jnp.allclose` affects only the cell that patched it."""

from __future__ import annotations

import contextlib
import operator
import sys
import threading


class _Missing:
    pass


MISSING = _Missing()


def _same(current: dict, saved: dict) -> bool:
    """Whether `current` holds the very objects `saved` does, under the same keys: compared
    in C, since most cells change nothing and a module holds hundreds of names. Same keys in
    the same order, then each value identical (never `==`, which an array answers elementwise
    and a learner's class answers as it likes)."""
    return (
        len(current) == len(saved)
        and list(current) == list(saved)
        and all(map(operator.is_, current.values(), saved.values()))
    )


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
            if _same(current, saved):
                continue
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
