"""A cohort past one machine: which shard a batch grades, and joining the shards again.

A shard is chosen by `--shard K/N`, a Slurm job array or a Kubernetes Indexed Job. Each
shard's journal (`grade.batches.journal`) is its result: `read_shard` refuses one whose lines
do not verify with the grading key or whose seal is missing or does not bind its entries,
and `merge_shards` refuses shards graded differently, overlapping or missing, naming which.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lessonkit.errors import UsageError, shown
from lessonkit.grade.batches import (
    JournalEntry,
    JournalHeader,
    JournalKey,
    JournalSeal,
    NotSealed,
    NotVerified,
    OldSchema,
    Shard,
    check_seal,
    read_sealed,
    short,
)
from lessonkit.grade.judging import GradeReport

MAX_SHARDS = 100_000
MAX_SHARD_FILE_BYTES = 1 << 30
_SPEC = re.compile(r"(\d{1,6})/(\d{1,6})")


def parse_shard(text: str) -> Shard:
    """`K/N` with 1 <= K <= N: shard K of N."""
    match = _SPEC.fullmatch(text.strip())
    if match is None:
        raise UsageError(f"--shard {text!r} is not K/N", fix="write it as 2/8: shard 2 of 8")
    return _shard(int(match[1]), int(match[2]), f"--shard {text}")


def _shard(index: int, count: int, where: str) -> Shard:
    if not 1 <= count <= MAX_SHARDS:
        raise UsageError(f"{where}: the number of shards must be 1 to {MAX_SHARDS}")
    if not 1 <= index <= count:
        raise UsageError(
            f"{where}: shard {index} of {count} does not exist (shards count from 1 to {count})"
        )
    return Shard(index, count)


def _whole(env: Mapping[str, str], name: str) -> int:
    value = env.get(name, "")
    if not re.fullmatch(r"\d{1,9}", value.strip()):
        raise UsageError(f"${name} is {value!r}, not a whole number")
    return int(value)


def choose_shard(
    given: Shard | None, shard_count: int | None, env: Mapping[str, str]
) -> Shard | None:
    """The shard this batch grades: `--shard`, else a Slurm array task, else a Kubernetes
    indexed job's completion index; None for the whole folder."""
    if given is not None:
        if shard_count is not None and shard_count != given.count:
            raise UsageError(f"--shard {given} and --shard-count {shard_count} disagree")
        return given
    if "SLURM_ARRAY_TASK_ID" in env:
        task, first = _whole(env, "SLURM_ARRAY_TASK_ID"), _whole(env, "SLURM_ARRAY_TASK_MIN")
        count = _whole(env, "SLURM_ARRAY_TASK_COUNT")
        if task < first or task - first >= count:
            raise UsageError(
                f"Slurm array task {task} is not one of {count} tasks from {first}",
                fix="submit a contiguous array, e.g. sbatch --array=0-7 (no step)",
            )
        return _shard(task - first + 1, count, "the Slurm array")
    if "JOB_COMPLETION_INDEX" in env:
        if shard_count is None:
            raise UsageError(
                "a Kubernetes indexed job gives this pod's index, not the number of shards",
                fix="add --shard-count N, N being the job's completions",
            )
        index = _whole(env, "JOB_COMPLETION_INDEX")
        return _shard(index + 1, shard_count, "the Kubernetes indexed job")
    if shard_count is not None:
        raise UsageError(
            "--shard-count needs $JOB_COMPLETION_INDEX (a Kubernetes indexed job)",
            fix="give --shard K/N instead",
        )
    return None


@dataclass(frozen=True)
class ShardResult:
    """One shard's kept journal, read from the folder its `--out` named."""

    path: Path
    header: JournalHeader
    entries: tuple[JournalEntry[GradeReport], ...]


def read_shard(folder: Path, key: JournalKey) -> ShardResult:
    """The one `check-*.shard.jsonl` in `folder`, read with a size cap, every line of it
    verified with `key`."""
    if not folder.is_dir():
        raise UsageError(f"{shown(folder)} is not a folder", fix="give the shards' --out folders")
    found = sorted(p for p in folder.glob("check-*.shard.jsonl") if p.is_file())
    if len(found) != 1:
        what = "no shard result" if not found else f"{len(found)} shard results"
        raise UsageError(
            f"{shown(folder)} holds {what} (check-LESSON.shard.jsonl)",
            fix="give each shard's own --out folder, after its batch has finished",
        )
    path = found[0]
    try:
        with path.open("rb") as file:
            data = file.read(MAX_SHARD_FILE_BYTES + 1)
        if len(data) > MAX_SHARD_FILE_BYTES:
            raise UsageError(f"{shown(path)} is over {MAX_SHARD_FILE_BYTES >> 30} GiB")
        header, entries, seals = read_sealed(data.decode("utf-8"), key, GradeReport.from_json)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {shown(path)}: {exc}") from None
    except NotVerified as exc:
        raise UsageError(
            f"{shown(path)}, {exc.what}: {exc.why} ({key.where}); it is not the result of a "
            "batch graded with this key, so nothing in it is merged",
            fix="merge only the --out folders of `check --shard`, with the grading key they "
            "were graded with (--key FILE)",
        ) from None
    except OldSchema as exc:
        raise UsageError(
            f"{shown(path)} is a shard result of another lessonkit ({exc}, where a finished "
            "shard is sealed)",
            fix="grade that shard again with this lessonkit, then merge its --out folder",
        ) from None
    except ValueError:
        raise UsageError(f"{shown(path)} is not a shard result of this lessonkit") from None
    if header.shard is None:
        raise UsageError(f"{shown(path)} is the journal of a whole batch, not of a shard")
    _check_sealed(path, header, entries, seals)
    return ShardResult(path, header, entries)


def _check_sealed(
    path: Path,
    header: JournalHeader,
    entries: Sequence[JournalEntry[GradeReport]],
    seals: Sequence[JournalSeal],
) -> None:
    """A shard result is merged only whole: sealed at its batch's end, over these entries."""
    try:
        check_seal(header, entries, seals)
    except NotSealed as exc:
        fix = (
            f"finish shard {header.shard}: run its `check --batch ... --shard {header.shard} "
            "--resume` again, then merge its --out folder"
            if exc.unfinished
            else f"grade shard {header.shard} again (`check --batch ... --shard "
            f"{header.shard}`) and merge its fresh --out folder"
        )
        raise UsageError(f"{shown(path)}: {exc.why}; nothing in it is merged", fix=fix) from None


@dataclass(frozen=True)
class Merged:
    lesson: str
    revision: str
    toolkit: str
    seed: int | None
    shards: int
    entries: tuple[JournalEntry[GradeReport], ...]
    """Every shard's entries, by path."""
    fingerprint: str = ""
    """The grading fingerprint every shard was graded under."""


_ALIKE = (
    ("folder", "submission folders"),
    ("seed", "input seeds"),
    ("batch", "batches (the folder's files differed, or their bytes)"),
    ("lesson", "lessons"),
    ("revision", "lesson revisions"),
    ("toolkit", "lessonkit versions"),
    ("fingerprint", "grading fingerprints (the lesson's grading or the grader differed)"),
)


def _shown(header: JournalHeader, field: str) -> str:
    value = str(getattr(header, field))
    if field == "fingerprint":
        return short(value)
    return f"batch {value[:12]}" if field == "batch" else value


def merge_shards(results: Sequence[ShardResult]) -> Merged:
    """Join the shards of one batch; refuse any mix that is not exactly one whole batch."""
    if not results:
        raise UsageError("give at least one shard's --out folder")
    first = results[0].header
    for field, what in _ALIKE:
        values = {getattr(r.header, field) for r in results}
        if len(values) > 1:
            by = ", ".join(f"{shown(r.path)}: {_shown(r.header, field)}" for r in results)
            raise UsageError(f"the shards were graded with different {what} ({by})")
    counts = {r.header.shard.count for r in results if r.header.shard}
    if len(counts) > 1:
        raise UsageError(
            "the shards split the batch in different numbers of shards ("
            + ", ".join(f"{shown(r.path)}: {r.header.shard}" for r in results)
            + ")"
        )
    count = counts.pop()
    seen: dict[int, Path] = {}
    for result in results:
        index = result.header.shard.index
        if index in seen:
            raise UsageError(
                f"shard {index}/{count} is given twice: {shown(seen[index])} and "
                f"{shown(result.path)}"
            )
        seen[index] = result.path
    missing = [f"{k}/{count}" for k in range(1, count + 1) if k not in seen]
    if missing:
        raise UsageError(
            f"shard(s) {', '.join(missing[:10])} missing" + (" ..." if len(missing) > 10 else ""),
            fix="give every shard's --out folder, once each",
        )
    owner: dict[str, Path] = {}
    entries: list[JournalEntry[GradeReport]] = []
    for result in results:
        for entry in result.entries:
            if not result.header.shard.holds(entry.path):
                raise UsageError(
                    f"{shown(result.path)} holds {entry.path}, which is not in shard "
                    f"{result.header.shard}: it is not the result of `check --shard`"
                )
            if entry.path in owner:
                raise UsageError(
                    f"{entry.path} was graded by two shards: {shown(owner[entry.path])} and "
                    f"{shown(result.path)}",
                    fix="grade the shards of one batch with one --shard K/N each",
                )
            owner[entry.path] = result.path
            entries.append(entry)
    entries.sort(key=lambda e: e.path)
    return Merged(
        first.lesson,
        first.revision,
        first.toolkit,
        first.seed,
        count,
        tuple(entries),
        first.fingerprint,
    )
