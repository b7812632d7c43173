"""The reference runs once per lesson revision and seed (issue 35, item 2).

A second grader on the same lesson and seed takes the reference's record from the store and
starts no trusted child, and grades right and wrong files exactly as the first did; another
seed misses; a store file that was damaged is ignored and written afresh, and so is one
whose values were edited with its key and format kept (issue 42, item 3): its MAC, made
with the grading key, no longer verifies.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path

import pytest

from lessonkit.grade import grader as grader_module
from lessonkit.grade.channel import child_pool
from lessonkit.grade.channel.reference_store import reference_store
from lessonkit.grade.grader import Grader
from lessonkit.lesson.load import load_lesson
from lessonkit.run.isolation import Isolation
from lessonkit.run.sandbox import find_sandbox
from lessonkit.settings import NO_REFERENCE_STORE_VARIABLE, settings_around

from conftest import LESSON_MD, REPO, make_attempt

STATE01_MD = REPO / "phases" / "03-state" / "01-random-keys-without-surprises" / "lesson.md"
WRONG_TWO_DRAWS = (
    "noise_pair = jax.random.split(noise_key)\n"
    "noisy_a = x + scale * jax.random.normal(noise_pair[0], x.shape)\n"
    "noisy_b = x + scale * jax.random.normal(noise_pair[0], x.shape) + 1.0\n"
)


@pytest.fixture(scope="module")
def state01():
    return load_lesson(STATE01_MD)


@pytest.fixture
def files(state01, tmp_path):
    right, wrong = tmp_path / "right.py", tmp_path / "wrong.py"
    right.write_text(make_attempt(state01), encoding="utf-8")
    wrong.write_text(make_attempt(state01, {"two-draws": WRONG_TWO_DRAWS}), encoding="utf-8")
    return right, wrong


@pytest.fixture(scope="module")
def isolation() -> Isolation:
    """The sandbox: where learner code runs as the grader's own user the store is off."""
    sandbox, why = find_sandbox()
    if sandbox is None:
        pytest.skip(f"no sandbox here ({why}): the reference store is not used without one")
    return Isolation(sandbox)


@pytest.fixture
def store(tmp_path, monkeypatch, isolation):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(NO_REFERENCE_STORE_VARIABLE, raising=False)
    kept = reference_store(isolation)
    assert kept is not None
    return kept


@pytest.fixture
def trusted_starts(monkeypatch) -> list[bool]:
    """Every child a grader starts, True for the trusted reference child."""
    started: list[bool] = []
    real = child_pool.ChildHandle

    def spy(*args, **kwargs):
        started.append(kwargs["trusted"])
        return real(*args, **kwargs)

    monkeypatch.setattr(child_pool, "ChildHandle", spy)
    return started


def graded(lesson, paths, seed: int, isolation: Isolation) -> list[dict]:
    """Each file's `--json` report, without the seconds it took."""
    with Grader(settings_around(os.environ, isolation, seed=seed)) as grader:
        reports = [grader.grade(lesson, path).to_json() for path in paths]
    return [{k: v for k, v in r.items() if k != "seconds"} for r in reports]


def test_a_second_grader_starts_no_trusted_child_and_grades_alike(
    state01, files, store, trusted_starts, isolation
):
    first = graded(state01, files, seed=11, isolation=isolation)
    assert trusted_starts.count(True) == 1
    assert [r["passed"] for r in first] == [True, False]
    # the reference run's record, and (a file failed) the runs of the declared mistakes
    kept = len(list(store.folder.glob("*.json")))
    assert kept >= 2  # the reference run's record, and the declared mistakes' runs

    trusted_starts.clear()
    second = graded(state01, files, seed=11, isolation=isolation)
    assert True not in trusted_starts  # the reference's record came from the store
    assert second == first

    trusted_starts.clear()
    other_seed = graded(state01, files, seed=12, isolation=isolation)
    assert trusted_starts.count(True) == 1  # another seed draws other inputs: a miss
    assert [r["passed"] for r in other_seed] == [True, False]
    assert len(list(store.folder.glob("*.json"))) == 2 * kept  # as many again, for seed 12


def test_the_declared_mistakes_run_only_once_a_file_fails(
    state01, files, store, trusted_starts, isolation, monkeypatch
):
    """A right file costs nothing for the mistakes: their requests are not even built."""
    built: list[object] = []
    real = grader_module.pending_mistakes

    def spy(*args, **kwargs):
        built.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(grader_module, "pending_mistakes", spy)
    assert [r["passed"] for r in graded(state01, files[:1], seed=13, isolation=isolation)] == [True]
    assert built == [] and len(list(store.folder.glob("*.json"))) == 1  # the reference's
    assert [r["passed"] for r in graded(state01, files, seed=13, isolation=isolation)] == [
        True,
        False,
    ]
    assert len(built) == 1 and len(list(store.folder.glob("*.json"))) >= 2


@dataclasses.dataclass(frozen=True)
class Graded:
    """A right file, its report, and the store entry its grading wrote."""

    right: Path
    report: list
    entry: Path


@pytest.fixture(scope="module")
def graded_at_21(state01, isolation, tmp_path_factory) -> Graded:
    """A right file graded once at seed 21, its report, and the store entry that grading
    wrote: each damaged-entry case starts from a copy, not from a grading of its own."""
    folder = tmp_path_factory.mktemp("seed21")
    right = folder / "right.py"
    right.write_text(make_attempt(state01), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(folder / "cache"))
        patch.delenv(NO_REFERENCE_STORE_VARIABLE, raising=False)
        kept = reference_store(isolation)
        assert kept is not None
        first = graded(state01, [right], seed=21, isolation=isolation)
    (entry,) = kept.folder.glob("*.json")
    return Graded(right, first, entry)


def _copied(graded: Graded, store) -> Graded:
    """`graded` with its store entry copied into `store`: the copy is the entry."""
    store.folder.mkdir(parents=True, exist_ok=True)
    shutil.copy2(graded.entry, store.folder / graded.entry.name)
    return dataclasses.replace(graded, entry=store.folder / graded.entry.name)


def test_a_copied_entry_is_used(state01, store, trusted_starts, graded_at_21, isolation):
    """The damaged-entry cases below start from this copy: undamaged, it is the record."""
    copy = _copied(graded_at_21, store)
    assert graded(state01, [copy.right], seed=21, isolation=isolation) == copy.report
    assert True not in trusted_starts


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # cut short
        lambda text: text.replace('"status": "ok"', '"status": "fine"', 1),  # no such status
        lambda text: json.dumps({**json.loads(text), "key": "0" * 64}),  # another key
        lambda text: "{" * 100_000,  # nested past any reader's depth
    ],
    ids=["cut", "bad-status", "other-key", "deep"],
)
def test_a_damaged_store_file_is_ignored_and_written_afresh(
    state01, store, trusted_starts, damage, isolation, graded_at_21
):
    copy = _copied(graded_at_21, store)
    text = copy.entry.read_text(encoding="utf-8")
    assert damage(text) != text
    copy.entry.write_text(damage(text), encoding="utf-8")

    again = graded(state01, [copy.right], seed=21, isolation=isolation)
    assert trusted_starts.count(True) == 1  # the reference ran again
    assert again == copy.report
    written = json.loads(copy.entry.read_text(encoding="utf-8"))
    assert written["key"] != "0" * 64  # rewritten whole


def test_switched_off_the_store_keeps_nothing(
    state01, files, store, trusted_starts, monkeypatch, isolation
):
    monkeypatch.setenv(NO_REFERENCE_STORE_VARIABLE, "1")
    graded(state01, files[:1], seed=31, isolation=isolation)
    graded(state01, files[:1], seed=31, isolation=isolation)
    assert trusted_starts.count(True) == 2
    assert not store.folder.exists() or not list(store.folder.glob("*.json"))


def _set_values(data: object, names: tuple[str, ...], number: float) -> int:
    """Every reported value named in `names`, anywhere in a stored record, set to `number`;
    how many were set."""
    count = 0
    if isinstance(data, dict):
        for name, value in data.items():
            if name in names and isinstance(value, dict) and value.get("t") == "array":
                value["data"] = [number] * len(value["data"])
                count += 1
            else:
                count += _set_values(value, names, number)
    elif isinstance(data, list):
        count += sum(_set_values(item, names, number) for item in data)
    return count


def test_an_entry_edited_with_its_key_and_format_kept_is_recomputed(
    store, trusted_starts, isolation, tmp_path
):
    """Red team: the seed-7 entry's `norm_squared` and `manual` set to 1.0 made a file that
    answers 1.0 pass make-it-yours, and the lesson's own solution fail."""
    lesson = load_lesson(LESSON_MD)
    solution, constant = tmp_path / "solution.py", tmp_path / "constant.py"
    solution.write_text(make_attempt(lesson), encoding="utf-8")
    answer = "norm_squared = 1.0\nmanual = 1.0\n"
    constant.write_text(make_attempt(lesson, {"make-it-yours": answer}), encoding="utf-8")
    graded(lesson, [solution], seed=7, isolation=isolation)
    (entry,) = store.folder.glob("*.json")
    kept = json.loads(entry.read_text(encoding="utf-8"))
    assert _set_values(kept["record"], ("norm_squared", "manual"), 1.0) > 0
    entry.write_text(json.dumps(kept), encoding="utf-8")  # key, format (and MAC) kept

    trusted_starts.clear()
    again = graded(lesson, [solution, constant], seed=7, isolation=isolation)
    solution_says = {t["id"]: (t["status"], t["message"]) for t in again[0]["tasks"]}
    assert again[0]["passed"] is True, solution_says["make-it-yours"]
    constant_says = {t["id"]: t["status"] for t in again[1]["tasks"]}
    assert constant_says["make-it-yours"] == "failed"
    assert trusted_starts.count(True) == 1  # the edited entry was not used: the reference ran
