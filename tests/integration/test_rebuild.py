"""A rebuild runs the lesson's code only when that code changed.

`lessonkit build` keeps the numbers check's verdict in outputs/numbers-check.json, keyed by a
hash of the steps, the declared numbers and JAX, and keeps the figure when figure.json says
it was drawn from the same code by the same matplotlib. So a rebuild after no change, or
after a prose-only edit, imports neither JAX, matplotlib nor the grader; a step edit runs
the steps again. Seen through `python -X importtime`, which lists every module imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import copy_lesson_repo

HEAVY = {"jax", "matplotlib", "lessonkit.grade"}


def _build(root: Path) -> tuple[int, set[str]]:
    """`lessonkit build state-02` in `root`: its exit code and the modules it imported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "lessonkit", "build", "state-02"],
        cwd=root,
        env={**os.environ, "LESSONKIT_ROOT": str(root)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    return done.returncode, modules


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_rebuild_runs_no_step_unless_the_code_changed(tmp_path):
    folder = copy_lesson_repo(tmp_path)
    kept = folder / "outputs" / "numbers-check.json"
    key = json.loads(kept.read_text(encoding="utf-8"))["key"]

    code, modules = _build(tmp_path)  # the committed verdict and figure are current
    assert code == 0
    assert "lessonkit.site.artifacts" in modules and not HEAVY & modules

    _edit(folder / "lesson.md", "The tree is nothing more than", "A tree is nothing more than")
    code, modules = _build(tmp_path)
    assert code == 0
    assert not HEAVY & modules
    assert json.loads(kept.read_text(encoding="utf-8"))["key"] == key

    _edit(folder / "lesson.md", "x = jnp.array([2., 1.])", "x = jnp.array([2., 1.])\n_unused = 0")
    _, modules = _build(tmp_path)  # the record of main.py is now stale: the site build stops
    assert {"jax", "matplotlib"} <= modules
    assert json.loads(kept.read_text(encoding="utf-8"))["key"] != key


def test_a_wrong_kept_verdict_is_not_trusted(tmp_path):
    """A verdict whose key is not this code's is ignored: the steps run and it is rewritten."""
    folder = copy_lesson_repo(tmp_path)
    kept = folder / "outputs" / "numbers-check.json"
    body = json.loads(kept.read_text(encoding="utf-8"))
    right = body["key"]
    kept.write_text(json.dumps({**body, "key": "0" * 64}), encoding="utf-8")
    code, modules = _build(tmp_path)
    assert code == 0
    assert "jax" in modules
    assert json.loads(kept.read_text(encoding="utf-8"))["key"] == right
