"""A batch on a Dask distributed cluster: the parent reads, the workers grade.

The parent reads every submission itself (below the batch folder, no link followed, as a
local batch does: `grade.batches.folder.read_items`) and sends the bytes, in chunks, to the
scheduler at `--dask ADDRESS`. On a worker, `grade_chunk` loads its own copy of the lesson,
refuses another revision, and grades the bytes of each file in a sandboxed child of its own
with `grade_many`, exactly as a local batch does, on the seed the parent chose: so the
verdicts are a local batch's. A worker that cannot isolate the files (no sandbox, and not root
with namespaces) refuses, unless the batch was started with `--run-submissions-as-me`.

Dask is the `cluster` extra: `pip install -e '.[cluster]'`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from lessonkit.defaults import CONNECT_TIMEOUT_S
from lessonkit.errors import UsageError
from lessonkit.grade.batches.folder import BatchItem
from lessonkit.grade.batches.kind import BatchEntry
from lessonkit.grade.batches.local import grade_many, unreadable
from lessonkit.grade.judging.results import GradeReport
from lessonkit.lesson.model import Lesson
from lessonkit.run.isolation import sandbox_if_any
from lessonkit.run.limits import Limits
from lessonkit.settings import compile_cache_from, settings_around

CHUNKS_PER_WORKER = 2
"""Files go out in about this many chunks per worker thread: each chunk's grader needs the
reference run (computed by a worker's first chunk, then read from its reference store), and
smaller chunks spread a slow file's cost."""


class WorkerRefused(RuntimeError):
    """A worker cannot grade as a local batch would (no sandbox, another lesson revision)."""


@dataclass(frozen=True)
class ChunkFile:
    index: int
    name: str  # the file's name, without its folders: the worker needs only its suffix
    data: bytes


def grade_chunk(
    lesson_id: str,
    revision: str,
    seed: int,
    limits: Limits,
    files: Sequence[ChunkFile],
    allow_unsandboxed: bool,
) -> list[tuple[int, GradeReport]]:
    """On a worker: grade each file in a child of its own; (index, report) for each."""
    from lessonkit.lesson.catalog import find_lesson

    lesson = find_lesson(lesson_id)
    if lesson.meta.revision != revision:
        raise WorkerRefused(
            f"this worker has {lesson_id} revision {lesson.meta.revision}, not {revision}"
        )
    # This function is the worker's entry point: its compile cache and switches are the
    # worker's own environment's, as a command's are its shell's.
    isolation = sandbox_if_any(compile_cache_from(os.environ))
    if isolation.kind not in ("sandbox", "namespaces") and not allow_unsandboxed:
        raise WorkerRefused(f"this worker cannot isolate submissions: {isolation.reason}")
    # Each under its index: names from two students never meet, even in a message.
    items = [BatchItem(Path(str(f.index)) / PurePosixPath(f.name).name, f.data) for f in files]
    entries = grade_many(
        lesson,
        items,
        jobs=1,
        settings=settings_around(os.environ, isolation, limits=limits),
        seed=seed,
    )
    return [(file.index, entry.report) for file, entry in zip(files, entries, strict=True)]


def _chunks(files: list[ChunkFile], workers: int) -> list[list[ChunkFile]]:
    count = max(1, min(len(files), workers * CHUNKS_PER_WORKER))
    return [files[k::count] for k in range(count) if files[k::count]]


def grade_on_dask(
    lesson: Lesson,
    items: Sequence[BatchItem],
    *,
    address: str,
    seed: int,
    limits: Limits,
    allow_unsandboxed: bool,
    on_report: Callable[[BatchEntry], None] | None = None,
) -> tuple[BatchEntry, ...]:
    """Every item's entry, in item order, graded on the cluster at `address`."""
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise UsageError(
            "--dask needs Dask's distributed scheduler client",
            fix="pip install -e '.[cluster]'",
        ) from None
    results: list[BatchEntry | None] = [None] * len(items)
    files: list[ChunkFile] = []
    for index, item in enumerate(items):
        if item.data is None:  # not read by the parent: its row says why
            report = unreadable(lesson, item.path, item.problem or "", 0.0)
            results[index] = BatchEntry(item.path, replace(report, seed=seed))
            if on_report is not None:
                on_report(results[index])
            continue
        files.append(ChunkFile(index, item.path.name, item.data))
    if files:
        try:
            client = Client(address, timeout=f"{CONNECT_TIMEOUT_S}s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise UsageError(
                f"cannot reach the Dask scheduler at {address} ({exc})",
                fix="start it (dask scheduler), or give --dask the address it prints",
            ) from None
        with client:
            threads = sum(client.nthreads().values()) or 1
            futures = [
                client.submit(
                    grade_chunk,
                    lesson.meta.id,
                    lesson.meta.revision,
                    seed,
                    limits,
                    chunk,
                    allow_unsandboxed,
                    pure=False,
                )
                for chunk in _chunks(files, threads)
            ]
            for future in as_completed(futures):
                try:
                    graded = future.result()
                except WorkerRefused as exc:
                    raise UsageError(
                        f"a Dask worker refused to grade: {exc}",
                        fix="install the sandbox (bubblewrap) and this lesson revision on "
                        "every worker",
                    ) from None
                for index, report in graded:
                    item = items[index]
                    report = replace(report, file=str(item.path))
                    entry = BatchEntry(item.path, report, item.sha256, item.data)
                    results[index] = entry
                    if on_report is not None:
                        on_report(entry)
    return tuple(entry for entry in results if entry is not None)
