"""The compile cache works wherever the course lives (issue 35, item 5).

The folder is named by `LESSONKIT_COMPILE_CACHE`; the trusted reference child writes files
the sandboxed learner children (user ids of their own) can read, whatever the caller's
umask; and a cache they cannot read is said once per command, never a silent cold compile.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from lessonkit.run.cache_access import cache_problem
from lessonkit.run.sandbox import find_sandbox

from conftest import make_attempt


def check(lesson, tmp_path, cache, umask: int = 0o022) -> subprocess.CompletedProcess[str]:
    """`lessonkit check` of the solved practice file, with `cache` as the compile cache."""
    solved = tmp_path / "solved.py"
    solved.write_text(make_attempt(lesson), encoding="utf-8")
    env = {**os.environ, "LESSONKIT_COMPILE_CACHE": str(cache), "LESSONKIT_NO_REFERENCE_CACHE": "1"}
    env.pop("LESSONKIT_NO_COMPILE_CACHE", None)
    return subprocess.run(
        [sys.executable, "-m", "lessonkit", "check", lesson.meta.id, str(solved), "--seed", "3"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=lambda: os.umask(umask),
    )


def test_the_reference_writes_a_cache_learner_children_can_read(lesson, tmp_path):
    cache = tmp_path / "shared" / "jax-cache"
    done = check(lesson, tmp_path, cache, umask=0o077)
    assert done.returncode == 0, done.stdout + done.stderr
    written = [p for p in cache.rglob("*") if p.is_file()]
    assert written, "the trusted reference child wrote nothing to the named cache"
    assert all(p.stat().st_mode & 0o004 for p in written)
    assert cache_problem(cache) is None


def test_a_cache_learner_children_cannot_read_is_said_once(lesson, tmp_path):
    sandbox, _ = find_sandbox()
    if sandbox is None or not sandbox.privileged:
        pytest.skip("only a privileged sandbox runs learner children as user ids of their own")
    cache = tmp_path / "private-cache"
    cache.mkdir()
    os.chmod(cache, 0o700)
    done = check(lesson, tmp_path, cache)
    assert done.returncode == 0, done.stdout + done.stderr
    said = " ".join(done.stderr.split())
    assert said.count("cannot be read by the sandboxed learner children") == 1, done.stderr
    assert "mode 0700" in said


CACHE_HITS = """import jax, jax.numpy as jnp
from jax._src import monitoring
seen = []
monitoring.register_event_listener(lambda name, **_: seen.append(name))
jax.jit(lambda x: x * 3.0 + 1.0)(jnp.ones(7)).block_until_ready()
never = jax.config.jax_persistent_cache_min_compile_time_secs
result = f"from the cache: {'/jax/compilation_cache/cache_hits' in seen}, writes from {never} s"
"""
"""A cell that compiles one program and reports whether it came from the compile cache, and
how slow a compile must be for this child to write the cache."""


def test_a_learner_child_without_a_sandbox_reads_the_cache_and_never_writes_it(tmp_path):
    """Without a sandbox (every gVisor host) a learner child got no compile cache and
    compiled each program again (under runsc 4.9 against 1.9 host CPU-s a child)."""
    import time

    from lessonkit.grade.channel.child_handle import ChildHandle, grading_starter
    from lessonkit.run.forking import forks_children
    from lessonkit.run.isolation import Isolation
    from lessonkit.run.limits import DEFAULT_LIMITS

    from conftest import one_cell_request

    isolation = Isolation(None, cache=tmp_path / "cache")
    starter = grading_starter(isolation, DEFAULT_LIMITS) if forks_children() else None
    results = []
    try:
        for trusted in (True, False):  # the reference fills the cache, then a learner
            child = ChildHandle(
                trusted=trusted, isolation=isolation, limits=DEFAULT_LIMITS, starter=starter
            )
            request = one_cell_request(CACHE_HITS, 60.0)
            try:
                child.send(request)
                record = child.collect(request, time.monotonic() + 90, timeout=60.0)
            finally:
                child.close()
            (run,) = record.runs.values()
            assert run.error is None, run.error
            results.append(run.values["result"].value)
    finally:
        if starter is not None:
            starter.close()
    assert results == [
        "from the cache: False, writes from 0 s",  # the reference compiled and wrote it
        "from the cache: True, writes from inf s",
    ]
