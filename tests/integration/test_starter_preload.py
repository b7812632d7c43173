"""The starter imports a lesson's own modules once, ahead of every fork (issue 35, item 1),
and never at the price of a deadlock: a module that starts JAX's backend as it is imported
sends the starter back to a fresh start without them."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from lessonkit.run.starter import FORK_SERVER


def _preload_in_a_fresh_python(tmp_path, modules: list[str]) -> list[str]:
    """What `_preload(modules)` imported and whether it began again (`execv` recorded, not
    run), in a Python of its own: a started backend must not reach the test process."""
    (tmp_path / "plain_module.py").write_text("LOADED = True\n")
    (tmp_path / "starts_backend.py").write_text("import jax.numpy as jnp\njnp.zeros(1)\n")
    (tmp_path / "broken_module.py").write_text("raise RuntimeError('broken at import')\n")
    script = textwrap.dedent(
        f"""
        import importlib.util, os, sys
        sys.path.insert(0, {str(tmp_path)!r})
        spec = importlib.util.spec_from_file_location("fork_server", {str(FORK_SERVER)!r})
        server = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(server)

        def execv(path, argv):
            print("EXEC", *argv[1:])
            sys.exit(0)

        os.execv = execv
        server._preload({modules!r}, ["7", "/child", '["/pkgs"]', *{modules!r}])
        print("LOADED", *sorted(m for m in {modules!r} if m in sys.modules))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_the_lessons_modules_are_imported_and_a_broken_one_is_left_to_the_fork(tmp_path):
    said = _preload_in_a_fresh_python(tmp_path, ["plain_module", "broken_module", "json"])
    assert said == ["LOADED", "json", "plain_module"]


def test_a_module_that_starts_the_backend_sends_the_starter_back_without_any(tmp_path):
    said = _preload_in_a_fresh_python(tmp_path, ["plain_module", "starts_backend", "json"])
    # begun again with the parent's import paths, which a fresh start needs as much
    assert said == ["EXEC", "-I", str(FORK_SERVER), "7", "/child", '["/pkgs"]']
