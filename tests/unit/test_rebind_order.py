"""The folders a grading fork binds again on its new /tmp: parents only, so a read-only
folder never needs a mount point made inside it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lessonkit.run.isolate import outermost

_names = st.sampled_from(["a", "ab", "b", "lib", "site-packages", "confine.py"])
_paths = st.lists(_names, min_size=1, max_size=4).map(lambda parts: "/tmp/" + "/".join(parts))


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder + "/")


def test_a_file_inside_a_kept_venv_is_covered_by_the_venv():
    venv = "/tmp/v"
    script = "/tmp/v/lib/python3.11/site-packages/lessonkit/run/confine.py"
    assert outermost((script, venv, "/tmp/cache/jax")) == (venv, "/tmp/cache/jax")


def test_a_sibling_sharing_a_prefix_is_not_inside():
    assert outermost(("/tmp/a", "/tmp/ab")) == ("/tmp/a", "/tmp/ab")


@given(st.lists(_paths, max_size=8))
def test_every_kept_path_is_bound_once_through_exactly_one_outermost_folder(paths):
    chosen = outermost(tuple(paths))
    assert set(chosen) <= set(paths)
    for path in paths:
        assert sum(_inside(path, folder) for folder in chosen) == 1
    for folder in chosen:
        assert not any(_inside(folder, other) for other in chosen if other != folder)
