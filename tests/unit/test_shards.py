"""Shards: which files a shard grades, which shard an engine's environment names, and the
refusals of `merge`, from fabricated journals (no batch is graded here)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lessonkit.course.shards import ShardResult, choose_shard, merge_shards, parse_shard, read_shard
from lessonkit.errors import UsageError
from lessonkit.grade.batches.journal import (
    JournalEntry,
    JournalHeader,
    JournalKey,
    JournalSeal,
    NotSealed,
    NotVerified,
    OldSchema,
    Shard,
    batch_id,
    check_seal,
    read_journal,
    read_sealed,
)
from lessonkit.grade.judging.results import PASSED, GradeReport, TaskResult
from lessonkit.grade.provenance.fingerprint import grading_fingerprint, short

from conftest import lesson_changed

REPORT = GradeReport("state-02", "a.py", (TaskResult("t", "T", PASSED, "ok"),), (), 1.0, 7)


@given(st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=40), st.integers(1, 9))
def test_every_file_is_in_exactly_one_shard(paths, count):
    for path in paths:
        assert sum(Shard(k, count).holds(path) for k in range(1, count + 1)) == 1


def test_the_shard_is_the_path_hash_mod_n():
    import hashlib

    digest = int(hashlib.sha256(b"week1/alice.py").hexdigest(), 16)
    assert Shard(digest % 5 + 1, 5).holds("week1/alice.py")
    assert not Shard((digest + 1) % 5 + 1, 5).holds("week1/alice.py")


@pytest.mark.parametrize(
    ("text", "message"),
    [("0/4", "does not exist"), ("5/4", "does not exist"), ("2-4", "is not K/N"), ("1/0", "1 to")],
)
def test_a_wrong_shard_is_one_message(text, message):
    with pytest.raises(UsageError, match=message):
        parse_shard(text)


SLURM = {"SLURM_ARRAY_TASK_ID": "12", "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_COUNT": "4"}


def test_engines_pick_their_shard_from_the_environment():
    assert choose_shard(None, None, {}) is None
    assert choose_shard(parse_shard("2/3"), None, SLURM) == Shard(2, 3)  # --shard wins
    assert choose_shard(None, None, SLURM) == Shard(3, 4)
    assert choose_shard(None, 6, {"JOB_COMPLETION_INDEX": "0"}) == Shard(1, 6)
    assert choose_shard(None, 6, {"JOB_COMPLETION_INDEX": "5"}) == Shard(6, 6)


@pytest.mark.parametrize(
    ("count", "env", "message"),
    [
        (None, {"JOB_COMPLETION_INDEX": "1"}, "add --shard-count"),
        (3, {"JOB_COMPLETION_INDEX": "3"}, "does not exist"),
        (3, {}, "needs \\$JOB_COMPLETION_INDEX"),
        (None, {**SLURM, "SLURM_ARRAY_TASK_ID": "16"}, "contiguous array"),
        (None, {**SLURM, "SLURM_ARRAY_TASK_COUNT": "four"}, "not a whole number"),
    ],
)
def test_an_engine_environment_that_names_no_shard_is_refused(count, env, message):
    with pytest.raises(UsageError, match=message):
        choose_shard(None, count, env)


def _result(index: int, count: int, paths: list[str], **header) -> ShardResult:
    fields = {"run": f"r{index}", "lesson": "state-02", "revision": "r1", "toolkit": "0.1.0"}
    fields |= {"folder": "/class", "seed": 7, "shard": Shard(index, count), "batch": "b1"}
    fields |= header
    head = JournalHeader(**fields)
    entries = tuple(
        JournalEntry(head.run, p, "", 0.0, REPORT, None)
        for p in paths
        if Shard(index, count).holds(p)
    )
    return ShardResult(Path(f"out{index}/check-state-02.shard.jsonl"), head, entries)


PATHS = [f"student{i}.py" for i in range(12)]


def test_the_shards_of_one_batch_merge_into_every_file_once():
    merged = merge_shards([_result(k, 3, PATHS) for k in (3, 1, 2)])
    assert [e.path for e in merged.entries] == sorted(PATHS)
    assert (merged.seed, merged.shards) == (7, 3)


@pytest.mark.parametrize(
    ("results", "message"),
    [
        ([_result(1, 2, PATHS), _result(2, 2, PATHS, seed=8)], "different input seeds"),
        # Red team D1: shard 2/2 of mon/ and 1/2 of wed/, one seed, merged as one batch.
        ([_result(1, 2, PATHS), _result(2, 2, PATHS, folder="/wed")], "submission folders"),
        # Red team D2: one folder and seed, but a file changed between the two shards' runs.
        ([_result(1, 2, PATHS), _result(2, 2, PATHS, batch="b2")], "different batches"),
        ([_result(1, 2, PATHS), _result(2, 2, PATHS, lesson="state-01")], "different lessons"),
        ([_result(1, 2, PATHS), _result(2, 2, PATHS, revision="r2")], "lesson revisions"),
        ([_result(1, 2, PATHS), _result(2, 2, PATHS, toolkit="0.2.0")], "lessonkit versions"),
        ([_result(1, 2, PATHS), _result(2, 3, PATHS)], "different numbers of shards"),
        ([_result(1, 2, PATHS), _result(1, 2, PATHS)], "shard 1/2 is given twice"),
        ([_result(1, 3, PATHS), _result(3, 3, PATHS)], "shard\\(s\\) 2/3 missing"),
    ],
)
def test_a_mix_that_is_not_one_whole_batch_is_refused_naming_it(results, message):
    with pytest.raises(UsageError, match=message):
        merge_shards(results)


def test_shards_graded_under_different_points_are_refused_naming_both_fingerprints(
    lesson, tmp_path
):
    """Red team: two shards of one batch, both v0.7.0, graded under different points for
    repair; merge took them and recomputed the points (a shard's CSV 9,9, the merged 8,8)."""
    changed = lesson_changed(lesson, tmp_path, "  repair: 3\n", "  repair: 4\n")
    before, after = grading_fingerprint(lesson), grading_fingerprint(changed)
    assert changed.meta.revision == lesson.meta.revision and before != after
    one = _result(1, 2, PATHS, toolkit="0.7.0", fingerprint=before)
    two = _result(2, 2, PATHS, toolkit="0.7.0", fingerprint=after)
    with pytest.raises(UsageError, match="different grading fingerprints") as raised:
        merge_shards([one, two])
    assert short(before) in str(raised.value) and short(after) in str(raised.value)
    alike = _result(2, 2, PATHS, toolkit="0.7.0", fingerprint=before)
    assert merge_shards([one, alike]).fingerprint == before


def test_a_file_in_the_wrong_shard_or_in_two_is_refused():
    one, two = _result(1, 2, PATHS), _result(2, 2, PATHS)
    stray = JournalEntry("r1", two.entries[0].path, "", 0.0, REPORT, None)
    planted = ShardResult(one.path, one.header, (*one.entries, stray))
    with pytest.raises(UsageError, match="is not in shard 1/2"):
        merge_shards([planted, two])


KEY = JournalKey(b"k" * 32, "the test key")


def test_the_journal_round_trips_and_refuses_what_does_not_verify(tmp_path):
    head = _result(1, 1, []).header
    entry = JournalEntry(
        head.run, "a.py", __import__("hashlib").sha256(b"x").hexdigest(), 1.5, REPORT, b"x"
    )
    good = entry.line(KEY, head)
    other = JournalEntry("another", "b.py", "", 0.0, REPORT, None).line(KEY, head)  # skipped
    text = "\n".join([head.line(KEY), good, other])
    header, entries = read_journal(
        text + '\n{"run": "r1", "pa', KEY, GradeReport.from_json
    )  # a cut line: skipped
    assert header == head and entries == (entry,)
    folder = tmp_path / "out"
    folder.mkdir()
    result = folder / "check-state-02.shard.jsonl"
    seal = JournalSeal.of(head, [(entry.path, entry.sha256)]).line(KEY)
    result.write_text(f"{text}\n{seal}\n", encoding="utf-8")
    assert read_shard(folder, KEY).entries == (entry,)
    forged = [
        json.loads(good) | {"data": "eQ=="},  # b"y" under the sha256 of b"x"
        json.loads(good) | {"path": "mallory.py"},  # alice's verdict, another path
        json.loads(good) | {"mac": "0" * 64},
        {k: v for k, v in json.loads(good).items() if k != "mac"},
    ]
    for line in forged:
        with pytest.raises(NotVerified, match=r"entry 1 \(line 2, "):
            read_journal("\n".join([head.line(KEY), json.dumps(line)]), KEY, GradeReport.from_json)
    another_key = JournalKey(b"m" * 32, "another key")
    with pytest.raises(NotVerified, match="its first line"):
        read_journal(text, another_key, GradeReport.from_json)
    moved = dataclasses.replace(head, batch="b2")  # the entry moved under another batch's header
    with pytest.raises(NotVerified, match="for this batch"):
        read_journal("\n".join([moved.line(KEY), good]), KEY, GradeReport.from_json)
    with pytest.raises(UsageError, match=r"check-state-02.shard.jsonl, its first line: it is"):
        read_shard(folder, another_key)
    result.write_text('{"journal": 4}\n', encoding="utf-8")
    with pytest.raises(UsageError, match=r"another lessonkit \(a journal of schema 4; this"):
        read_shard(folder, KEY)
    with pytest.raises(OldSchema, match="schema 4; this lessonkit reads schema 6"):
        read_journal('{"journal": 4}\n', KEY, GradeReport.from_json)  # --resume: graded afresh
    result.write_text('{"run": "r1"}\n', encoding="utf-8")
    with pytest.raises(UsageError, match="not a shard result"):
        read_shard(folder, KEY)


def test_the_batch_id_is_the_listing_and_the_seed():
    files = [("a.py", "1" * 64), ("b/c.py", "")]
    assert batch_id(files, 7) == batch_id(list(reversed(files)), 7)
    assert batch_id(files, 7) != batch_id(files, 8)
    assert batch_id(files, 7) != batch_id([("a.py", "2" * 64), ("b/c.py", "")], 7)
    assert batch_id(files, 7) != batch_id(files[:1], 7)


def _sealed(index: int, names: list[str]) -> tuple[JournalHeader, list[str]]:
    """Shard `index`/2 of one batch: its header, then its signed entry lines and seal."""
    head = dataclasses.replace(_result(index, 2, []).header, run=f"run{index}")
    entries = [JournalEntry(head.run, n, "", 0.0, REPORT, None) for n in names]
    seal = JournalSeal.of(head, [(e.path, e.sha256) for e in entries])
    return head, [head.line(KEY), *(e.line(KEY, head) for e in entries), seal.line(KEY)]


def _seal_refusal(lines: list[str]) -> NotSealed:
    header, entries, seals = read_sealed("\n".join(lines), KEY, GradeReport.from_json)
    with pytest.raises(NotSealed) as caught:
        check_seal(header, entries, seals)
    return caught.value


def test_a_finished_shard_is_refused_unless_its_seal_binds_its_entries():
    """Issue 34: one signed entry line deleted made a student vanish from the merge."""
    head, lines = _sealed(1, ["a.py", "b.py", "c.py"])
    header, entries, seals = read_sealed("\n".join(lines), KEY, GradeReport.from_json)
    assert check_seal(header, entries, seals).entries == 3
    deleted = _seal_refusal([lines[0], *lines[2:]])
    assert not deleted.unfinished and "2 entries and its seal 3" in deleted.why
    unfinished = _seal_refusal(lines[:-1])
    assert unfinished.unfinished and "did not finish" in unfinished.why
    doubled = _seal_refusal([lines[0], lines[1], lines[1], lines[3], lines[4]])
    assert "'a.py' twice" in doubled.why
    twice = _seal_refusal([*lines, lines[-1]])
    assert "2 seals" in twice.why
    _, other = _sealed(2, ["a.py", "b.py", "c.py"])
    copied = _seal_refusal([*lines[:-1], other[-1]])
    assert "the seal of shard 2/2 (run run2" in copied.why
    # the same number of entries, one replaced by a signed one of another file: the digest
    swapped = [*lines[:3], JournalEntry(head.run, "d.py", "", 0.0, REPORT, None).line(KEY, head)]
    assert "not those its seal binds" in _seal_refusal([*swapped, lines[-1]]).why
    forged = json.loads(lines[-1])
    forged["seal"]["entries"] = 2
    forged_text = "\n".join([lines[0], *lines[2:-1], json.dumps(forged)])  # b.py, c.py
    with pytest.raises(NotVerified, match=r"its seal \(line 4\): it is not signed"):
        read_sealed(forged_text, KEY, GradeReport.from_json)


def test_read_shard_names_the_file_and_what_is_wrong_with_its_seal(tmp_path):
    _, lines = _sealed(1, ["a.py", "b.py"])
    folder = tmp_path / "out1"
    folder.mkdir()
    result = folder / "check-state-02.shard.jsonl"
    for kept, message in (
        ([lines[0], *lines[2:]], r"out1/check-state-02.shard.jsonl: it holds 1 entries"),
        (lines[:-1], r"out1/check-state-02.shard.jsonl: it has no seal: its batch did not"),
    ):
        result.write_text("\n".join(kept) + "\n", encoding="utf-8")
        with pytest.raises(UsageError, match=message) as caught:
            read_shard(folder, KEY)
        assert "nothing in it is merged" in str(caught.value)
    result.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert [e.path for e in read_shard(folder, KEY).entries] == ["a.py", "b.py"]
