"""What a course costs: grading throughput, merging, the gradebook, and a cohort's time.

Measured in one run on this machine:

- a batch of `--files` mixed submissions (solved and wrong) graded with `--jobs 1` and
  `--jobs 2`: seconds per submission and submissions per minute, and the parent's and its
  children's peak memory (`ru_maxrss` of this process's children: the largest single one)
- `merge_shards` on 10,000 synthetic journal entries in 8 shards, then the merged CSV
- the gradebook: 10,000 attempts kept in one transaction, then the course table and a
  Canvas export read back from it

From those it prints the time for 1,000 and 10,000 submissions on one machine like this
one and on N of them (shards scale the grading; the merge runs once).

Run from the repository root:  python bench/course_scale.py [--files 6] [--workers 8]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lessonkit.course.exports import canvas_csv
from lessonkit.course.gradebook import Gradebook, attempt_of, course_table
from lessonkit.course.shards import ShardResult, merge_shards
from lessonkit.grade.batches.journal import JournalEntry, JournalHeader, Shard
from lessonkit.grade.batches.kind import BatchEntry
from lessonkit.grade.judging.report import Scoring, summary_csv
from lessonkit.grade.judging.results import FAILED, PASSED, GradeReport, TaskResult
from lessonkit.lesson.catalog import find_lesson

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from conftest import make_attempt

LESSON = "state-02"
WRONG = {"make-it-yours": "norm_squared = 96.\nmanual = 96.\n"}


def _grade_batch(folder: Path, jobs: int) -> float:
    out = folder.parent / f"out-{jobs}"
    argv = [sys.executable, "-m", "lessonkit", "check", LESSON, "--batch", str(folder)]
    argv += ["--jobs", str(jobs), "--seed", "1", "--out", str(out), "--json"]
    started = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    return time.perf_counter() - started


def _report(lesson, index: int) -> GradeReport:
    tasks = tuple(
        TaskResult(t.id, t.title, PASSED if (index + k) % 3 else FAILED, "m", None, t.optional)
        for k, t in enumerate(lesson.tasks)
    )
    return GradeReport(LESSON, f"s{index}.py", tasks, (), 1.0, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=6)
    parser.add_argument("--workers", type=int, default=8, help="N machines for the estimate")
    args = parser.parse_args()
    lesson = find_lesson(LESSON)
    rows = 10_000

    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary) / "class"
        folder.mkdir()
        for i in range(args.files):
            text = make_attempt(lesson, WRONG if i % 2 else None)
            (folder / f"student{i:03d}.py").write_text(text, encoding="utf-8")
        seconds = {jobs: _grade_batch(folder, jobs) for jobs in (1, 2)}
    peak_child_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    peak_self_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    reports = [_report(lesson, i) for i in range(rows)]
    shards = []
    for k in range(1, 9):
        shard = Shard(k, 8)
        header = JournalHeader(
            f"r{k}", LESSON, lesson.meta.revision, "0.1.0", "/c", 1, shard, batch="b"
        )
        entries = []
        for i, report in enumerate(reports):
            path = f"s{i}.py"
            if shard.holds(path):
                data = f"# {i}\n".encode()
                digest = hashlib.sha256(data).hexdigest()
                entries.append(JournalEntry(header.run, path, digest, 0.0, report, data))
        shards.append(ShardResult(Path(f"shard{k}"), header, tuple(entries)))
    started = time.perf_counter()
    merged = merge_shards(shards)
    batch = [BatchEntry(Path(e.path), e.report, e.sha256, e.data) for e in merged.entries]
    summary_csv(batch, Scoring.of(lesson))
    json.dumps([e.report.to_json() for e in batch])
    merge_s = time.perf_counter() - started

    scoring = Scoring.of(lesson)
    made = [
        attempt_of(
            e.report,
            scoring,
            student=e.path.removesuffix(".py"),
            lesson_title=lesson.meta.title,
            revision=lesson.meta.revision,
            toolkit="0.1.0",
            file=e.path,
            data=e.data or b"",
            submitted=0.0,
            graded_utc="2026-12-04T00:00:00Z",
            fingerprint=merged.fingerprint,
        )
        for e in merged.entries
    ]
    with (
        tempfile.TemporaryDirectory() as temporary,
        Gradebook(Path(temporary) / "g.sqlite") as book,
    ):
        started = time.perf_counter()
        book.add_attempts(made)
        keep_s = time.perf_counter() - started
        started = time.perf_counter()
        attempts = book.attempts()
        canvas_csv(course_table(attempts, book.students(), "latest"))
        read_s = time.perf_counter() - started

    per = {jobs: s / args.files for jobs, s in seconds.items()}
    print(f"course scale on this machine ({args.files} submissions graded, {rows:,} rows merged)")
    for jobs in (1, 2):
        rate = 60 / per[jobs]
        print(f"  batch --jobs {jobs}: {per[jobs]:.2f} s per submission, {rate:.1f} per minute")
    print(f"  speed-up of 2 jobs over 1: {per[1] / per[2]:.2f}x")
    print(f"  peak memory: parent {peak_self_mib:.0f} MiB, largest child {peak_child_mib:.0f} MiB")
    print(f"  merge of {rows:,} rows in 8 shards (+ CSV and JSON): {merge_s:.2f} s")
    print(
        f"  gradebook: keep {rows:,} attempts {keep_s:.2f} s; table + Canvas export {read_s:.2f} s"
    )
    print("estimated wall time (grading at --jobs 2; merge and gradebook once)")
    for cohort in (1_000, 10_000):
        one = cohort * per[2] + merge_s * cohort / rows + keep_s * cohort / rows
        many = cohort * per[2] / args.workers + merge_s * cohort / rows + keep_s * cohort / rows
        print(
            f"  {cohort:>6,} submissions: one machine {one / 60:6.1f} min, "
            f"{args.workers} machines {many / 60:6.1f} min"
        )


if __name__ == "__main__":
    main()
