"""The grading fingerprint: what decides a verdict changes it, prose and positions do not;
every file of the package and what grading reads from the environment change the grader's
digest; and a batch into a gradebook graded under another fingerprint grades those files again
(or, asked to, keeps the old gradings and says so)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import importlib.metadata
import importlib.util
import pkgutil
import platform
from pathlib import Path
from types import SimpleNamespace

import pytest

import lessonkit
from lessonkit.course.batch_gradebook import CourseIntake
from lessonkit.course.gradebook import Gradebook, attempt_of
from lessonkit.grade.judging.report import Scoring
from lessonkit.grade.judging.results import FAILED, PASSED, GradeReport, TaskResult
from lessonkit.grade.provenance import fingerprint
from lessonkit.grade.provenance.fingerprint import grading_fingerprint, short

from conftest import lesson_changed

POSITIONS = {"line", "expected_line", "stated"}
"""Fields that say where something is written."""

STEP_3 = "updated = jax.tree.map(lambda p, g: p - 0.05 * g, params, grads)"
KEY_PATHS = "optional: 'yes'\nprompt: 'Predict before running: in what order do the three"
VERDICT_EDITS = {
    "step code": (STEP_3, STEP_3.replace("0.05", "0.04")),
    "experiment code": ("rebuilt = jax.tree.unflatten(definition, leaves)", "rebuilt = leaves"),
    "experiment role": (KEY_PATHS, KEY_PATHS.replace("'yes'", "'no'")),
    "figure code": ('"after": after}', '"after": before}'),
    "task scaffold": ('manual = todo("manual: add', 'manual2 = todo("manual: add'),
    "task solution": (
        "norm_squared = sum(jnp.sum(g ** 2)",
        "norm_squared = sum(jnp.sum(g * g)",
    ),
    "task kind": ("kind: exercise\n", "kind: challenge\n"),
    "points": ("  repair: 3\n", "  repair: 4\n"),
    "inputs": ("x: {uniform: [-2.5, 2.5], shape: [2]}", "x: {uniform: [-3, 3], shape: [2]}"),
    "input sets": ("input_sets: 2\n", "input_sets: 3\n"),
    "accept rule": (
        "adam-by-hand: {floats: [float32, float64]}",
        "adam-by-hand: {floats: [float32, float64], mappings: any}",
    ),
    "probe": ("  - name: moved layer gradients\n", "  - name: layer gradients moved\n"),
    "probe value": ("value: [0.5, -0.5]", "value: [0.5, -0.25]"),
    "attempt code": ("norm_squared = 96.\n", "norm_squared = 95.\n"),
    "attempt message": (
        ":message: `assert same_structure` can never fail",
        ":message: can never fail",
    ),
    "declared mistake": (":why: A squared norm adds up", ":why: A squared norm sums"),
}
"""One edit of state-02's lesson.md per part that decides a verdict, its points or the
mistake a feedback names."""

PROSE_EDITS = {
    "paragraph": (
        "We keep both parameters in one small nested structure,",
        "We keep both parameters in one small nested structure (a tree),\n\n",
    ),
    "task prompt": ("Compute the squared norm of all", "Compute the squared norm of every"),
    "task plan": ("  - Check that the two agree.", "  - Check that both agree."),
    "task hint": ("numbers and the bias leaf one.", "numbers and the bias leaf a single one."),
    "task title": ("## Make it yours\n", "## Make it your own\n"),
    "step intro": (":intro: Append this block below", ":intro: Add this block below"),
    "experiment prompt": (
        ":expected: All leaves agree with the hand-derived update.",
        ":expected: Every leaf agrees with the hand-derived update.",
    ),
    "quiz": ("Which check catches it?", "Which check sees it?"),
    "revision label": ("revision: v0.7.0\n", "revision: v0.7.1\n"),
}
"""Edits of words a person reads (and the author's revision label): no verdict reads them."""


@pytest.mark.parametrize(("old", "new"), VERDICT_EDITS.values(), ids=VERDICT_EDITS)
def test_what_decides_a_verdict_changes_the_fingerprint(lesson, tmp_path, old, new):
    """Red team: a probe restored without a `revision:` bump was served from old gradings;
    an edited experiment (which decides which learner cells run as what) kept them too."""
    changed = lesson_changed(lesson, tmp_path, old, new)
    assert changed.meta.revision == lesson.meta.revision
    assert grading_fingerprint(changed) != grading_fingerprint(lesson)


@pytest.mark.parametrize(("old", "new"), PROSE_EDITS.values(), ids=PROSE_EDITS)
def test_prose_and_line_numbers_leave_the_fingerprint_alone(lesson, tmp_path, old, new):
    """A one-word edit of a task's prose was another fingerprint (every file graded again)."""
    changed = lesson_changed(lesson, tmp_path, old, new)
    assert grading_fingerprint(changed) == grading_fingerprint(lesson)


def test_a_paragraph_that_moves_every_later_line_leaves_the_fingerprint_alone(lesson, tmp_path):
    changed = lesson_changed(lesson, tmp_path, *PROSE_EDITS["paragraph"])
    assert changed.grading.line != lesson.grading.line


def _fields_below(value, path=(), graded=True):
    """(path, graded, value) of every field of every model value below `value`; `graded`:
    neither the field nor a field above it is declared ungraded, nor a position."""
    if dataclasses.is_dataclass(value):
        for f in dataclasses.fields(value):
            inner = getattr(value, f.name)
            kept = graded and f.metadata.get("graded", True) and f.name not in POSITIONS
            yield (*path, f.name), kept, inner
            yield from _fields_below(inner, (*path, f.name), kept)
    elif isinstance(value, tuple):
        for index, inner in enumerate(value):
            yield from _fields_below(inner, (*path, index), graded)


def _replaced(value, path, new):
    """`value` with the field at `path` set to `new`."""
    if not path:
        return new
    head, *rest = path
    if isinstance(head, int):
        return (*value[:head], _replaced(value[head], rest, new), *value[head + 1 :])
    return dataclasses.replace(value, **{head: _replaced(getattr(value, head), rest, new)})


def _another(value):
    """A different value of a plain field's kind; None for one this test does not vary."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + " edited"
    if isinstance(value, dt.date):
        return value + dt.timedelta(days=1)
    if isinstance(value, tuple) and value and not dataclasses.is_dataclass(value[-1]):
        return value[:-1]
    return None


def test_every_field_of_the_model_is_graded_unless_declared_ungraded(lesson):
    """Whatever the model holds, a change to it is another fingerprint unless the model
    declares the field ungraded (or it says where something is written): the first field of
    each kind in state-02, each varied in turn. A field the model gains is graded."""
    before = grading_fingerprint(lesson)
    wrong, seen = [], set()
    for path, graded, value in _fields_below(lesson):
        kind = (tuple(p for p in path if isinstance(p, str)), type(value))
        other = _another(value)
        if other is None or kind in seen:
            continue
        seen.add(kind)
        changed = grading_fingerprint(_replaced(lesson, path, other)) != before
        if changed != graded:
            wrong.append(f"{'.'.join(map(str, path))}: {'not ' if graded else ''}changed")
    assert not wrong, "\n".join(wrong)
    assert len(seen) > 100  # the walk reached the model's items


def _installed_files() -> list[Path]:
    """Every file of the installed package, walked here apart from the code under test."""
    root = Path(lessonkit.__file__).parent
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )


def test_the_walk_finds_every_module():
    """pkgutil's modules, at any depth, are among the files the digest test varies."""
    files = set(_installed_files())
    for module in pkgutil.walk_packages(lessonkit.__path__, "lessonkit."):
        spec = importlib.util.find_spec(module.name)
        assert spec and Path(spec.origin) in files, module.name
    assert any(p.suffix != ".py" for p in files)  # templates and static files too


def test_every_file_of_the_package_is_in_the_grader_digest(monkeypatch):
    """Red team: `grade/judging/`, `grade/submission/`, `lesson/rules/`, `defaults.py` and
    the tree engine were outside the digest, so an older, looser grader's pass was served
    as unchanged. Each file is changed in turn (as read) and the digest must change."""
    monkeypatch.setattr(fingerprint, "_packages", lambda: ["jax==0.4"])  # a fixed, fast list
    before = fingerprint.grader_digest.__wrapped__()
    read_bytes = Path.read_bytes
    missed = []
    for path in _installed_files():

        def edited(self, _path=path):
            data = read_bytes(self)
            return data + b"\n# edited\n" if self == _path else data

        monkeypatch.setattr(Path, "read_bytes", edited)
        if fingerprint.grader_digest.__wrapped__() == before:
            missed.append(str(path.relative_to(Path(lessonkit.__file__).parent)))
        monkeypatch.setattr(Path, "read_bytes", read_bytes)
    assert not missed, f"{len(missed)} files outside the digest: {missed}"


@pytest.mark.parametrize(
    ("where", "name", "value"),
    [
        (platform, "python_version", lambda: "3.99.0"),
        (fingerprint, "GRADER_SETTINGS", {"JAX_PLATFORMS": "gpu"}),
        (fingerprint, "__version__", "99.0"),
        (fingerprint, "_packages", lambda: ["jax==0.0.1"]),
    ],
    ids=["python", "child settings", "lessonkit version", "packages"],
)
def test_what_the_grading_reads_from_the_environment_is_in_the_digest(
    monkeypatch, where, name, value
):
    before = fingerprint.grader_digest.__wrapped__()
    monkeypatch.setattr(where, name, value)
    assert fingerprint.grader_digest.__wrapped__() != before


def test_the_installed_versions_are_in_the_digest(monkeypatch):
    """JAX's version, read from the installed distributions."""
    before = fingerprint._packages()
    real = importlib.metadata.distributions
    older = [
        SimpleNamespace(metadata={"Name": d.metadata["Name"]}, version="0.0.1")
        if (d.metadata["Name"] or "").lower() == "jax"
        else d
        for d in real()
    ]
    monkeypatch.setattr(importlib.metadata, "distributions", lambda: older)
    assert "jax==0.0.1" in fingerprint._packages() and fingerprint._packages() != before


def test_the_digest_is_computed_once_per_process(monkeypatch):
    fingerprint.grader_digest()
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail("read again"))
    fingerprint.grader_digest()


def _graded(lesson, data: bytes, fingerprint: str, passing: bool):
    tasks = tuple(
        TaskResult(t.id, t.title, PASSED if passing else FAILED, "", None, t.optional)
        for t in lesson.tasks
    )
    return attempt_of(
        GradeReport(lesson.meta.id, "ana.py", tasks, (), 1.0, 7),
        Scoring.of(lesson),
        student="ana",
        lesson_title=lesson.meta.title,
        revision=lesson.meta.revision,
        toolkit="0.7.0",
        file="ana.py",
        data=data,
        submitted=100.0,
        graded_utc="2026-12-04T00:00:00Z",
        fingerprint=fingerprint,
    )


@pytest.mark.parametrize("keep_old", [False, True])
def test_a_batch_over_gradings_of_another_fingerprint_says_so_and_grades_again(
    lesson, tmp_path, keep_old
):
    """The lesson changed without a revision bump: the next batch kept '1 unchanged' and
    counted the old grading (9 of 8)."""
    folder = tmp_path / "week"
    folder.mkdir()
    data = b"# ana's file\n"
    (folder / "ana.py").write_bytes(data)
    book_path = tmp_path / "course.sqlite"
    with Gradebook(book_path) as book:
        book.add_attempts([_graded(lesson, data, "old-fingerprint", True)])
    now = grading_fingerprint(lesson)
    course = CourseIntake.open(str(book_path), None, folder)
    reused = course.reusable(lesson, folder, [folder / "ana.py"], now, keep_old=keep_old)
    assert reused.older == ("ana.py",) and reused.fingerprints == ("old-fingerprint",)
    assert len(reused.entries) == (1 if keep_old else 0)  # graded again unless kept
    said = course.older_note(reused, now, keep_old) or ""  # said before grading
    assert "1 file(s) were graded into" in said and short(now) in said
    assert ("keep those gradings" if keep_old else "graded again") in said
    with Gradebook(book_path) as book:  # the same submission, graded now (0 of 8)
        added = book.add_attempts([_graded(lesson, data, now, False)], keep_old=keep_old)
        assert (len(added.regraded), len(added.kept_old)) == ((0, 1) if keep_old else (1, 0))
        (attempt,) = book.attempts()
    assert attempt.fingerprint == ("old-fingerprint" if keep_old else now)
    assert attempt.sha256 == hashlib.sha256(data).hexdigest()
