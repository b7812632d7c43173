"""A folder of phase project scripts graded as one batch: a report for every file, and no
file stops the rest.

The parent reads each script below the batch folder without following a link
(`grade.batch.read_items`) and grades its bytes (`grade_project`); a file that cannot be
read, and a grader bug on one file, is that file's report, never the end of the batch. The
files share the workers, so none waits at another's end; an exception in the caller's
thread (Ctrl-C) stops every run in flight and starts no more. The outputs, one JSON and a
Markdown feedback file per script, are written whole, once every file is graded.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lessonkit.atomic import write_atomically
from lessonkit.errors import LessonkitError, grader_failed
from lessonkit.grade.batch import BatchItem
from lessonkit.grade.sources import SubmissionError, decode_source, read_bytes
from lessonkit.lesson.project import ProjectContract
from lessonkit.lesson.text import safe_name
from lessonkit.project.grade import grade_project
from lessonkit.project.report import ProjectReport, failed_to_read
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


def grade_scripts(
    phase: str,
    contract: ProjectContract,
    items: Sequence[BatchItem],
    relatives: Sequence[str],
    *,
    isolation: Isolation,
    seed: int,
    limits: Limits,
    jobs: int,
    on_report: Callable[[str, ProjectReport], None] | None = None,
) -> tuple[ProjectReport, ...]:
    """Each item's report, in item order; `relatives` name them in the reports.

    `on_report(relative, report)` is called from a worker thread as each file is graded.
    """
    stop = threading.Event()

    def grade_one(item: BatchItem, relative: str) -> ProjectReport:
        try:
            if item.data is None:
                raise LessonkitError(item.problem or "")
            script = read_script(item.path, item.data)
            report = grade_project(
                phase,
                contract,
                relative,
                script,
                isolation=isolation,
                seed=seed,
                limits=limits,
                jobs=1,  # the files share the workers, so no worker waits at a file's end
                stop=stop,
            )
        except LessonkitError as exc:
            report = failed_to_read(phase, relative, contract, exc.message, seed)
        except Exception as exc:  # a grader bug must not cost the other files their grades
            message = grader_failed(exc, detail=False)
            report = failed_to_read(phase, relative, contract, message, seed)
        if on_report is not None:
            on_report(relative, report)
        return report

    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        futures = [pool.submit(grade_one, i, r) for i, r in zip(items, relatives, strict=True)]
        return tuple(future.result() for future in futures)
    except BaseException:  # Ctrl-C: stop every run in flight, start no more
        stop.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def batch_summary(phase: str, seed: int, reports: Sequence[ProjectReport]) -> dict:
    """The batch's JSON: its phase, its seed and every report."""
    return {"schema": 1, "phase": phase, "seed": seed, "reports": [r.to_json() for r in reports]}


def write_outputs(
    out_dir: Path,
    stem: str,
    reports: Sequence[ProjectReport],
    feedback_names: Sequence[str],
    summary: dict,
) -> None:
    """Each report's feedback file (named by `feedback_names`, in order) and `stem`.json.

    Raises:
        OSError: a file could not be written.
    """
    for report, name in zip(reports, feedback_names, strict=True):
        write_atomically(out_dir / "feedback" / name, report.feedback_markdown())
    write_atomically(out_dir / f"{stem}.json", json.dumps(summary, indent=2) + "\n")
