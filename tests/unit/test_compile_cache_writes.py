"""JAX's compile cache in a grading child: an entry is written whole, a damaged one is healed,
and the cache's own warnings never reach a cell's output (`grading_child/compile_cache.py`).

The whole path, a batch killed mid-write in its compile cache and resumed, is
tests/integration/test_batch_faults.py; this pins the hook on JAX's cache class.
"""

from __future__ import annotations

import warnings

import pytest
from jax._src import lru_cache

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
