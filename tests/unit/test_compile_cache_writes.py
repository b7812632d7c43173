"""JAX's compile cache in a grading child: an entry is written whole, a damaged one is healed,
the cache's own warnings never reach a cell's output, and each entry is read from disk once
per process (`grading_child/compile_cache.py`).

The whole path, a batch killed mid-write in its compile cache and resumed, is
tests/integration/test_batch_faults.py; this pins the hook on JAX's cache class.
"""

from __future__ import annotations

import warnings

import pytest
from jax._src import compilation_cache, lru_cache

from lessonkit.grading_child import compile_cache


@pytest.fixture
def whole(monkeypatch):
    """The hook in place on JAX's cache class, taken off after the test."""
    monkeypatch.setattr(lru_cache.LRUCache, "put", lru_cache.LRUCache.put)
    monkeypatch.delattr(lru_cache.LRUCache, "_whole", raising=False)
    with warnings.catch_warnings():
        compile_cache.keep_whole_and_quiet()
        yield


def test_an_entry_cut_short_is_healed_by_the_next_write(whole, tmp_path):
    cache = lru_cache.LRUCache(str(tmp_path), max_size=-1)
    entry = tmp_path / f"key{lru_cache._CACHE_SUFFIX}"
    entry.write_bytes(b"\x28\xb5\x2f")  # what a kill mid-write leaves of an entry
    cache.put("key", b"the whole compiled program")
    assert entry.read_bytes() == b"the whole compiled program"
    assert sorted(p.name for p in tmp_path.iterdir()) == [entry.name]  # no temporary left


def test_a_write_that_fails_leaves_the_entry_as_it_was(whole, tmp_path, monkeypatch):
    cache = lru_cache.LRUCache(str(tmp_path), max_size=-1)
    entry = tmp_path / f"key{lru_cache._CACHE_SUFFIX}"
    entry.write_bytes(b"before")

    def full_disk(*_):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(compile_cache.os, "replace", full_disk)
    with pytest.raises(OSError):
        cache.put("key", b"after")
    assert entry.read_bytes() == b"before"
    assert sorted(p.name for p in tmp_path.iterdir()) == [entry.name]


def test_the_cache_warnings_are_silent_and_others_are_not(whole):
    with warnings.catch_warnings(record=True) as seen:
        warnings.warn_explicit(
            "Error reading persistent compilation cache entry for 'jit_f': truncated",
            UserWarning,
            "compiler.py",
            782,
            module="jax._src.compiler",
        )
        warnings.warn_explicit("the learner's own", UserWarning, "cell.py", 1, module="__main__")
    assert [str(w.message) for w in seen] == ["the learner's own"]


class _Disk:
    """Stands for JAX's read of one cache entry: counts the reads, finds only `held` keys."""

    def __init__(self, held: set[str]):
        self.held = held
        self.reads: list[str] = []

    def __call__(self, cache_key, compile_options, backend, executable_devices):
        self.reads.append(cache_key)
        if cache_key not in self.held:
            return None, None
        return object(), 7  # a new executable each read, as deserializing makes


@pytest.fixture
def disk(monkeypatch) -> _Disk:
    """The read hook in place over a counting stand-in for JAX's read, taken off after."""
    fake = _Disk({"a", "b", "c"})
    monkeypatch.setattr(compilation_cache, "get_executable_and_time", fake)
    compile_cache.read_each_once()
    return fake


def _read(key: str, devices: tuple = ("cpu:0",), backend: object = None):
    return compilation_cache.get_executable_and_time(key, None, backend, devices)


def test_an_entry_is_read_once_and_the_same_executable_handed_out_again(disk):
    first = _read("a")
    assert _read("a") is first and disk.reads == ["a"]
    assert _read("b")[0] is not first[0] and disk.reads == ["a", "b"]
    compile_cache.read_each_once()  # a second call wraps nothing more
    assert _read("a") is first and disk.reads == ["a", "b"]


def test_a_miss_is_asked_again_and_other_devices_are_read_for_themselves(disk):
    assert _read("missing") == (None, None) and _read("missing") == (None, None)
    assert disk.reads == ["missing", "missing"]
    one, two = object(), object()
    assert _read("a", (one,)) is not _read("a", (two,))
    assert disk.reads == ["missing", "missing", "a", "a"]


def test_past_the_bound_the_least_recently_used_entry_is_let_go(disk, monkeypatch):
    monkeypatch.setattr(compile_cache, "KEPT_READS", 2)
    kept_a = _read("a")
    _read("b")
    assert _read("a") is kept_a  # now the most recently used
    _read("c")  # three entries: b goes
    assert _read("a") is kept_a and disk.reads == ["a", "b", "c"]
    _read("b")
    assert disk.reads == ["a", "b", "c", "b"]
