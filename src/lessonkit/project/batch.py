"""A folder of phase project scripts as one batch: its grade-one function and `BatchKind`.

The lifecycle (the outputs checked first, the signed journal, `--resume`, the outputs
written whole at the end) is the lesson batch's own (`grade.batches.lifecycle`). Here is only
what a project does its own way: each script's bytes graded by `grade_project`, a file that
cannot be read and a grader bug on one file each that file's report, never the end of the
batch, and the outputs: one JSON and a Markdown feedback file per script. The files share
the pool's threads, so none waits at another's end; Ctrl-C stops every run in flight.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path

from lessonkit.errors import LessonkitError, grader_failed
from lessonkit.grade.batches import BatchEntry, BatchItem, BatchKind, OnEntry, grade_each
from lessonkit.grade.submission import SubmissionError, decode_source, read_bytes
from lessonkit.lesson.project import ProjectContract
from lessonkit.lesson.text import safe_name
from lessonkit.project.grade import grade_project
from lessonkit.project.report import ProjectReport, failed_to_read
from lessonkit.project.runs import new_seed
from lessonkit.run.isolation import Isolation
from lessonkit.run.limits import Limits


def read_script(path: Path, data: bytes | None = None) -> bytes:
    """A project script's bytes: a regular .py file of UTF-8 text, read in bounded time."""
    if path.suffix != ".py":
        raise SubmissionError(
            f"{safe_name(str(path))}: expected a .py project script",
            fix="give the Python script of your project",
        )
    data = read_bytes(path) if data is None else data
    decode_source(path, data)
    return data


def contract_revision(contract: ProjectContract) -> str:
    """The contract's revision, for the journal: a journal of another contract is not
    resumed (its verdicts answer other questions)."""
    return hashlib.sha256(repr(contract).encode("utf-8")).hexdigest()[:16]


def project_kind(
    phase: str,
    contract: ProjectContract,
    folder: Path,
    *,
    isolation: Isolation,
    limits: Limits,
    jobs: int,
) -> BatchKind[ProjectReport]:
    """`project --batch` of the scripts below `folder`; each report names its script by its
    path below the folder."""

    def relative(path: Path) -> str:
        return path.relative_to(folder).as_posix()

    def grade(
        items: Sequence[BatchItem], seed: int | None, on_report: OnEntry[ProjectReport]
    ) -> tuple[BatchEntry[ProjectReport], ...]:
        assert seed is not None, "the batch draws its seed before grading"
        stop = threading.Event()

        def grade_one(item: BatchItem) -> BatchEntry[ProjectReport]:
            name = relative(item.path)
            try:
                if item.data is None:
                    raise LessonkitError(item.problem or "")
                script = read_script(item.path, item.data)
                report = grade_project(
                    phase,
                    contract,
                    name,
                    script,
                    isolation=isolation,
                    seed=seed,
                    limits=limits,
                    jobs=1,  # the files share the pool's threads: none waits at a file's end
                    stop=stop,
                )
            except LessonkitError as exc:
                report = failed_to_read(phase, name, contract, exc.message, seed)
            except Exception as exc:  # a grader bug must not cost the other files their grades
                message = grader_failed(exc, detail=False)
                report = failed_to_read(phase, name, contract, message, seed)
            return BatchEntry(item.path, report, item.sha256, item.data)

        return grade_each(items, grade_one, jobs=jobs, on_done=on_report, stop=stop)

    def unreadable(path: Path, message: str, seed: int | None) -> ProjectReport:
        return failed_to_read(phase, relative(path), contract, message, seed or 0)

    def summary(entries: Sequence[BatchEntry[ProjectReport]], seed: int | None) -> dict:
        return batch_summary(phase, seed, [e.report for e in entries]) | {
            "isolation": isolation.kind  # what kept each script apart, as `check --batch` says
        }

    return BatchKind(
        subject=f"phase-{phase}",
        revision=contract_revision(contract),
        stem=f"project-phase-{phase}",
        from_json=ProjectReport.from_json,
        unreadable=unreadable,
        grade=grade,
        summary=summary,
        new_seed=new_seed,
    )


def batch_summary(phase: str, seed: int | None, reports: Sequence[ProjectReport]) -> dict:
    """The batch's JSON: its phase, its seed and every report."""
    return {"schema": 1, "phase": phase, "seed": seed, "reports": [r.to_json() for r in reports]}
