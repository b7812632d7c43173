"""Grading a folder again into the gradebook, when almost nothing in it changed.

The week's second batch: `--files` submissions graded into a gradebook on Monday, then on
Wednesday the same folder with `--new` files added. Measured side by side in one run:

- `check --batch --gradebook` again (the gradebook holds every unchanged file's attempt, so
  only the new files are graded: what lessonkit does now)
- `check --batch` of the same folder into a fresh output folder (every file graded again:
  what a batch cost before, when each unchanged file was graded and stored once more)

Run from the repository root:  python bench/regrade_unchanged.py [--files 30] [--new 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lessonkit.grade.preparation.attempt_files import attempt_script
from lessonkit.lesson.catalog import find_lesson

LESSON = "state-02"


def lessonkit(*argv: str) -> float:
    """Seconds one `lessonkit` command takes (it must succeed)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "lessonkit", *argv], check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=30)
    parser.add_argument("--new", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    lesson = find_lesson(LESSON)
    solved = attempt_script(lesson)
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        folder = root / "week1"
        folder.mkdir()
        for number in range(args.files):
            (folder / f"s{number:03}.py").write_text(solved + f"# {number}\n", encoding="utf-8")
        book = str(root / "course.sqlite")
        common = ["check", LESSON, "--batch", str(folder), "--jobs", str(args.jobs)]
        monday = lessonkit(*common, "--gradebook", book, "--out", str(root / "mon"))
        for number in range(args.files, args.files + args.new):
            path = folder / f"s{number:03}.py"
            path.write_text(solved + f"# {number}\n", encoding="utf-8")
            os.utime(path, (2e9, 2e9))
        again = lessonkit(*common, "--gradebook", book, "--out", str(root / "wed"))
        everything = lessonkit(*common, "--out", str(root / "all"))
    total = args.files + args.new
    print(f"{args.files} files graded on Monday in {monday:.1f} s")
    print(f"Wednesday, {total} files of which {args.new} new, at --jobs {args.jobs}:")
    print(f"  every file graded again (before): {everything:6.1f} s")
    print(f"  only the new ones (now):          {again:6.1f} s")
    print(f"  ratio now/before: {again / everything:.2f}")


if __name__ == "__main__":
    main()
