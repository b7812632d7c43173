"""A rebuild runs the lesson's code only when that code changed, and validates only what it writes.

`lessonkit build` keeps the numbers check's verdict in outputs/numbers-check.json, keyed by a
hash of the steps, the declared numbers and JAX, and keeps the figure when figure.json says
it was drawn from the same code by the same matplotlib. So a rebuild after no change, or
after a prose-only edit, imports neither JAX, matplotlib nor the grader; a step edit runs
the steps again. The notebook is checked against nbformat's schema only where it is written,
so a build that writes none imports neither nbformat nor jsonschema (a second of CPU).
Seen through `python -X importtime`, which lists every module imported.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat

from conftest import LESSON_DIR, copy_lesson_repo, imported_by

HEAVY = {"jax", "matplotlib", "lessonkit.grade"}
VALIDATOR = {"nbformat", "jsonschema"}


def _build(root: Path) -> tuple[int, set[str]]:
    """`lessonkit build state-02` in `root`: its exit code and the modules it imported."""
    return imported_by(["build", "state-02"], root)


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
    assert "lessonkit.site.artifacts" in modules and not (HEAVY | VALIDATOR) & modules

    _edit(folder / "lesson.md", "The tree is nothing more than", "A tree is nothing more than")
    code, modules = _build(tmp_path)
    assert code == 0
    assert not HEAVY & modules
    assert modules >= VALIDATOR  # the notebook shows that prose: it is written, so validated
    assert json.loads(kept.read_text(encoding="utf-8"))["key"] == key

    _edit(folder / "lesson.md", "x = jnp.array([2., 1.])", "x = jnp.array([2., 1.])\n_unused = 0")
    _, modules = _build(tmp_path)  # the record of main.py is now stale: the site build stops
    assert {"jax", "matplotlib"} | VALIDATOR <= modules
    nbformat.validate(nbformat.read(folder / "exercises" / "state-02.ipynb", as_version=4))
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


def test_a_notebook_is_validated_where_it_is_written_and_is_as_before(tmp_path):
    """The notebook is JSON written without nbformat, byte for byte as before; nbformat checks
    it only when a build writes it."""
    folder = copy_lesson_repo(tmp_path)
    notebook = folder / "exercises" / "state-02.ipynb"
    notebook.unlink()
    code, modules = _build(tmp_path)
    assert code == 0
    assert modules >= VALIDATOR and not HEAVY & modules
    assert notebook.read_bytes() == (LESSON_DIR / "exercises" / "state-02.ipynb").read_bytes()
