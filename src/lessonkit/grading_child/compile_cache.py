"""JAX's compile cache, as the grader's own machinery: written whole, silent in a cell, and
each entry read from disk once per process.

JAX's file cache (`jax._src.lru_cache.LRUCache`, which every read and write of the
persistent cache goes through) writes an entry in place and never writes a key that
exists: a grader killed mid-write leaves an entry cut short, and every later read of it
warns into whatever cell is compiling, a learner's included, where it is taken for the
cell's output (seen after a SIGKILL and `--resume`: every resumed file failed a task on
"Error reading persistent compilation cache entry"). So here an entry is written to a
temporary file beside it and renamed over the key, whole or not at all, also over an
entry already there (a damaged one is healed by the next compile of its program), and the
warnings of JAX's compile-cache modules never reach a cell's output.
"""

from __future__ import annotations

import collections
import contextlib
import importlib
import os
import secrets
import warnings
from types import ModuleType

CACHE_MODULE = "jax._src.lru_cache"
WARNING_MODULES = r"jax\._src\.(compiler|compilation_cache|lru_cache)$"
"""The modules of JAX's compile-cache layer whose warnings are the grader's, not a cell's."""


def _jax_module(name: str) -> ModuleType | None:
    """One of JAX's own modules, or None where this JAX has no such module."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def keep_whole_and_quiet() -> None:
    """Make every later cache write whole and every cache warning silent, in this process."""
    warnings.filterwarnings("ignore", module=WARNING_MODULES)
    module = _jax_module(CACHE_MODULE)
    cache_type = getattr(module, "LRUCache", None)
    suffix = getattr(module, "_CACHE_SUFFIX", None)
    if cache_type is None or not isinstance(suffix, str) or "_whole" in vars(cache_type):
        return
    put_in_place = cache_type.put

    def put(self, key: str, value: bytes) -> None:
        if not key or getattr(self, "eviction_enabled", True):
            put_in_place(self, key, value)  # with eviction, JAX's own locking and sizes
            return
        path = os.path.join(os.fspath(self.path), f"{key}{suffix}")
        temporary = os.path.join(os.path.dirname(path), f".{key}.{secrets.token_hex(6)}")
        try:
            with open(temporary, "xb") as file:
                file.write(value)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise

    cache_type.put = put
    cache_type._whole = True


READ_MODULE = "jax._src.compilation_cache"
KEPT_READS = 512
"""Executables read from the cache that a process keeps, the least recently used let go."""


def read_each_once() -> None:
    """Keep each executable this process reads from the cache, by its key, and hand it out
    again: a cell run once per scenario defines its functions anew, and JAX, whose own
    caches go by the function, reads and deserializes the same program from disk each time.
    The key is a digest of the program, the compile options (its devices among them), the
    backend and JAX's version; JAX never writes a program with host callbacks to the cache,
    so no read one calls back into a cell."""
    module = _jax_module(READ_MODULE)
    read = getattr(module, "get_executable_and_time", None)
    if read is None or getattr(read, "_kept", False):
        return
    kept: collections.OrderedDict[tuple, tuple] = collections.OrderedDict()

    def get_executable_and_time(cache_key, compile_options, backend, executable_devices):
        key = (cache_key, id(backend), tuple(id(d) for d in executable_devices))
        found = kept.get(key)
        if found is not None:
            kept.move_to_end(key)
            return found
        found = read(cache_key, compile_options, backend, executable_devices)
        if found[0] is not None:
            kept[key] = found
            if len(kept) > KEPT_READS:
                kept.popitem(last=False)
        return found

    get_executable_and_time._kept = True
    module.get_executable_and_time = get_executable_and_time
