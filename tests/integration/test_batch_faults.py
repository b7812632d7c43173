"""Faults: a batch killed with SIGKILL half-way and resumed, and a batch graded as shards
merged in any order and twice, end exactly as one undisturbed batch on the same seed.

The cohort (`tests/fault_cohort.py`) holds files whose messages depend on the scenario
order, so a resume or a shard that drew another order would show.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import invoke
from fault_cohort import (
    INTEGRITY,
    STEM,
    batch_argv,
    gradebook_view,
    killed_half_way,
    lessonkit_command,
    outputs,
    write_cohort,
)

pytestmark = pytest.mark.slow

SEED = "4242"
FILES = 12


def _printed(argv: list[str]) -> str:
    code, out, err = invoke(argv)
    assert code == 0, err
    return out


def _run(argv: list[str]) -> None:
    done = subprocess.run(lessonkit_command(*argv), capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr


def _gradebook(path: Path, scratch: Path) -> dict:
    view = gradebook_view(path, scratch, _printed)
    assert view[INTEGRITY] == [("ok",)]
    return view


@pytest.fixture(scope="module")
def undisturbed(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(submissions, outputs, gradebook) of one batch graded without a fault."""
    root = tmp_path_factory.mktemp("faults")
    folder = root / "week1"
    write_cohort(folder, FILES)
    out, gradebook = root / "undisturbed", root / "undisturbed.sqlite"
    _run(batch_argv(folder, out, SEED, 2, gradebook))
    return folder, out, gradebook


def test_a_batch_killed_half_way_and_resumed_ends_as_an_undisturbed_one(undisturbed, tmp_path):
    folder, out, gradebook = undisturbed
    resumed, resumed_book = tmp_path / "resumed", tmp_path / "resumed.sqlite"
    argv = batch_argv(folder, resumed, SEED, 2, resumed_book)
    _, kept, _ = killed_half_way(lessonkit_command(*argv), resumed, FILES)
    assert FILES // 2 <= kept < FILES, kept
    assert not (resumed / f"{STEM}.json").exists()  # killed before its outputs
    _run([*argv, "--resume"])
    assert outputs(resumed) == outputs(out)
    assert _gradebook(resumed_book, tmp_path) == _gradebook(gradebook, tmp_path)


def _cut_in_half(path: Path) -> None:
    """What a SIGKILL in the middle of writing `path` in place leaves: its first half."""
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _cut_short_each_shared_file(out: Path, cache: Path) -> dict[str, int]:
    """Leave every file the batch shares across files as a kill mid-write would: the journal's
    last line cut in half (a kill mid-append), each reference-store entry and each compile-cache
    file cut in half (a kill inside an in-place write), and a stray half-written temporary file
    beside the store's entries (a kill before an atomic write's rename). How many of each."""
    journal = out / f".{STEM}.journal.jsonl"
    text = journal.read_bytes()
    last = text.rstrip(b"\n").rfind(b"\n") + 1
    journal.write_bytes(text[: last + (len(text) - last) // 2])
    store = sorted((cache / "lessonkit" / "references").glob("*.json"))
    compiled = [p for p in (cache / "lessonkit").glob("jax-*/*") if p.is_file()]
    for path in (*store, *compiled):
        _cut_in_half(path)
    if store:
        stray = store[0].with_name(f".{store[0].name}.0123456789ab")
        stray.write_bytes(b'{"schema": ')
    return {"journal lines": 1, "store entries": len(store), "compile-cache files": len(compiled)}


def test_a_batch_killed_mid_write_in_each_shared_file_resumes_as_an_undisturbed_one(
    undisturbed, tmp_path, monkeypatch
):
    folder, out, gradebook = undisturbed
    cache = tmp_path / "cache"  # this batch's own store and compile cache, to cut short
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    resumed, resumed_book = tmp_path / "resumed", tmp_path / "resumed.sqlite"
    argv = batch_argv(folder, resumed, SEED, 2, resumed_book)
    killed_half_way(lessonkit_command(*argv), resumed, FILES)
    cut = _cut_short_each_shared_file(resumed, cache)
    assert all(cut.values()), cut  # each shared file was there to cut
    done = subprocess.run(
        lessonkit_command(*argv, "--resume"), capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "crashed" not in done.stdout + done.stderr
    assert outputs(resumed) == outputs(out)
    assert _gradebook(resumed_book, tmp_path) == _gradebook(gradebook, tmp_path)


def test_shards_merged_in_any_order_and_twice_give_one_gradebook(undisturbed, tmp_path):
    folder, out, gradebook = undisturbed
    shards = []
    for index in (1, 2):
        shard = tmp_path / f"shard-{index}"
        _run([*batch_argv(folder, shard, SEED, 2, None), "--shard", f"{index}/2"])
        shards.append(str(shard))
    books = {"ab": tmp_path / "ab.sqlite", "ba": tmp_path / "ba.sqlite"}
    _printed(["merge", *shards, "--out", str(tmp_path / "ab"), "--gradebook", str(books["ab"])])
    _printed(
        ["merge", *shards[::-1], "--out", str(tmp_path / "ba"), "--gradebook", str(books["ba"])]
    )
    again = ["merge", *shards, "--out", str(tmp_path / "again"), "--gradebook", str(books["ab"])]
    _printed(again)  # the same shards merged again into the same gradebook
    expected = _gradebook(gradebook, tmp_path)
    assert _gradebook(books["ab"], tmp_path) == expected
    assert _gradebook(books["ba"], tmp_path) == expected
    whole = outputs(out)
    for merged in ("ab", "ba", "again"):
        joined = outputs(tmp_path / merged)
        for name in ("batch CSV (but seconds)", "feedback files"):
            assert joined[name] == whole[name], (merged, name)
