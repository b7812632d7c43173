"""What comparing a class costs: `lessonkit similar` on 1,000 submissions, beside grading them.

Measured in one run on this machine:

- `--students` (1,000) generated state-02 practice files, kept in a gradebook: each task's
  answer drawn from four independent answers, disguised (renamed, reordered, recommented,
  reformatted) half of the time, with a line of the student's own added, some tasks left
  blank; then `course.similarity.class_similarity` over the gradebook, as `lessonkit
  similar` runs it: seconds and peak memory (tracemalloc's peak of Python and NumPy
  allocations, and this process's resident set)
- a small batch of `--grade-files` of the same files graded with `lessonkit check --batch
  --jobs 1`: seconds per file, extrapolated to the class (stated as an extrapolation)

Run from the repository root:  python bench/similarity_scale.py [--students 1000]
"""

from __future__ import annotations

import argparse
import random
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from lessonkit.course.gradebook import Gradebook
from lessonkit.course.similarity import class_similarity
from lessonkit.lesson.catalog import find_lesson

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import similarity_cases as cases


def _file(rng: random.Random, index: int) -> str:
    codes = {}
    for task in cases.ANSWERS:
        if rng.random() < 0.1:
            continue  # left as the scaffold gave it
        answer = rng.randrange(4)
        if rng.random() < 0.5:
            code = cases.disguised(task, answer, rng)
        else:
            code = cases.answer_code(task, answer)
        codes[task] = code + f"\nprint({task.replace('-', '_')!r}, {index % 97}, {rng.random()})"
    return cases.practice_file(codes)


def _grade_seconds(texts: list[str]) -> float:
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary) / "class"
        folder.mkdir()
        for i, text in enumerate(texts):
            (folder / f"s{i:04d}.py").write_text(text, encoding="utf-8")
        argv = [sys.executable, "-m", "lessonkit", "check", cases.LESSON, "--batch", str(folder)]
        argv += ["--jobs", "1", "--seed", "1", "--out", str(Path(temporary) / "out"), "--json"]
        started = time.perf_counter()
        done = subprocess.run(argv, capture_output=True)
        seconds = time.perf_counter() - started
        if done.returncode not in (0, 1):  # 1: some file did not pass
            raise SystemExit(done.stderr.decode()[-2000:])
        return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=1000)
    parser.add_argument("--grade-files", type=int, default=4)
    parser.add_argument("--threshold", type=float, default=0.5)
    args = parser.parse_args()
    lesson = find_lesson(cases.LESSON)
    rng = random.Random(54)
    texts = [_file(rng, i) for i in range(args.students)]

    with tempfile.TemporaryDirectory() as temporary:
        with Gradebook(Path(temporary) / "course.sqlite") as book:
            book.add_attempts([cases.graded(lesson, f"s{i:04d}", t) for i, t in enumerate(texts)])
        path = Path(temporary) / "course.sqlite"
        started = time.perf_counter()
        with Gradebook(path) as book:
            report = class_similarity(lesson, book, "latest", args.threshold)
        compare_s = time.perf_counter() - started
        tracemalloc.start()  # a second run: tracing slows Python down several times
        with Gradebook(path) as book:
            class_similarity(lesson, book, "latest", args.threshold)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    grade_s = _grade_seconds(texts[: args.grade_files])
    per_file = grade_s / args.grade_files
    extrapolated = per_file * args.students
    print(
        f"similar: {report.students} submissions, {len(report.pairs)} pairs >= "
        f"{args.threshold}, {compare_s:.1f} s"
    )
    print(
        f"  peak memory: {peak / 2**20:.0f} MiB traced (Python + NumPy), peak resident set "
        f"of the whole bench {rss:.0f} MiB"
    )
    print(
        f"grading: {args.grade_files} files in {grade_s:.1f} s with --jobs 1 "
        f"({per_file:.2f} s per file), so {args.students} files: about {extrapolated:.0f} s "
        "(extrapolated from this batch, not measured)"
    )
    print(f"comparing takes {compare_s / extrapolated:.1%} of the grading time")


if __name__ == "__main__":
    main()
