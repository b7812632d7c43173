"""A Gradescope autograder for one lesson: the bundle, and the run inside Gradescope's box.

The bundle holds the toolkit's source, the lesson (with its phase), pinned requirements,
`setup.sh` (run once as root) and `run_autograder`, which grades the file in
`/autograder/submission` into `/autograder/results/results.json` (`$AUTOGRADER_ROOT` replaces
`/autograder`). The learner child runs in bubblewrap where the container allows, else (as
root) in namespaces and a view of the files it makes itself, under a user id of its own, or
where the kernel allows no namespaces under that user id alone, the lesson readable by root
only. `results.json` says which applied.
"""

from __future__ import annotations

import io
import json
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import lessonkit
from lessonkit.atomic import write_atomically
from lessonkit.errors import UsageError, shown
from lessonkit.grade import Grader
from lessonkit.grade.batches import SUFFIXES, read_bytes_in_folder
from lessonkit.grade.judging import NOT_ATTEMPTED, PASSED, GradeReport, Scoring
from lessonkit.grade.submission import SubmissionError, read_submission
from lessonkit.lesson.model import Lesson
from lessonkit.lesson.text import markdown_text
from lessonkit.run.isolation import Isolation
from lessonkit.settings import GradingSettings

VENV = "/opt/lessonkit"
_EXECUTABLE = ("setup.sh", "run_autograder")
_SKIPPED = ("__pycache__", ".pytest_cache", ".ipynb_checkpoints")

SETUP = f"""#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder's image.
set -euo pipefail
cd "$(dirname "${{BASH_SOURCE[0]}}")"
export DEBIAN_FRONTEND=noninteractive
PYTHON=""
for version in 3.13 3.12 3.11; do
  if command -v "python$version" >/dev/null; then PYTHON="python$version"; break; fi
done
if command -v apt-get >/dev/null; then
  apt-get update -qq
  # bubblewrap: the sandbox, where the container allows user namespaces.
  apt-get install -y -qq bubblewrap >/dev/null || true
  if [ -z "$PYTHON" ]; then
    apt-get install -y -qq python3.11 python3.11-venv >/dev/null
    PYTHON=python3.11
  fi
fi
if [ -z "$PYTHON" ]; then
  echo "setup.sh: lessonkit needs Python 3.11 or newer" >&2
  exit 1
fi
"$PYTHON" -m venv {VENV}
{VENV}/bin/python -m pip install -q -r requirements.txt
{VENV}/bin/python -m pip install -q .
# The lesson (its reference solutions) and this bundle: readable by root only.
chown -R root:root .
chmod -R go-rwx .
"""

RUN = """#!/usr/bin/env bash
# Gradescope runs this as root for each submission: grade it, write results/results.json.
# To try it without Gradescope (and without root), see README.md beside this script.
set -uo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
PYTHON="${{LESSONKIT_PYTHON:-{venv}/bin/python}}"
if [ ! -x "$PYTHON" ] && ! command -v "$PYTHON" >/dev/null 2>&1; then
  echo "run_autograder: no Python at $PYTHON: run setup.sh first, or set LESSONKIT_PYTHON" \
    "to a Python that has requirements.txt installed (see README.md)" >&2
fi
export LESSONKIT_ROOT="$ROOT/source"
# The bundle's own toolkit, also where setup.sh has not installed it (a local try-out).
export PYTHONPATH="$ROOT/source/src${{PYTHONPATH:+:$PYTHONPATH}}"
status=0
"$PYTHON" -m lessonkit autograder {lesson} --run --root "$ROOT" || status=$?
if [ ! -s "$ROOT/results/results.json" ]; then
  mkdir -p "$ROOT/results"
  said="The autograder itself failed (exit $status): tell your instructor."
  printf '{{"score": 0, "output": "%s"}}\\n' "$said" > "$ROOT/results/results.json"
fi
"""


README = """# Gradescope autograder for {lesson}: {title}

Made by `lessonkit autograder {lesson} --output autograder.zip`. Upload the zip as a
Gradescope programming assignment's autograder (Ubuntu base image).

## What Gradescope does with it

- It unpacks the zip into `/autograder/source` and runs `setup.sh` once, as root. That
  installs Debian's `bubblewrap` (the sandbox) when `apt-get` is there, Python 3.11 or newer
  if none is, a virtual environment in `{venv}` with the pinned `requirements.txt` and this
  toolkit (`pyproject.toml`, `src/`), and leaves this folder (the lesson and its reference
  solutions) readable by root only.
- For each submission it runs `run_autograder`, which grades the one practice file (`.py` or
  `.ipynb`; `{lesson}.py` wins when there are several) in `/autograder/submission` and
  writes `/autograder/results/results.json`: one test per task, with its message and hint,
  never a solution. Optional tasks are extra credit (`max_score` 0). A submission that cannot
  be graded (no practice file, several) gets one message and no tests.
- The submission's code runs in bubblewrap where the container allows it; else, as root, in
  namespaces and a view of the files of its own under a user id of its own, or where the
  container allows no namespaces under that user id alone; `results.json` says which applied.

## The layout it expects

```
$AUTOGRADER_ROOT/          (/autograder on Gradescope)
  source/                  this zip, unpacked
  submission/              the student's upload
  results/results.json     written by run_autograder
```

## Trying it on your own machine (no root, no Gradescope)

With a Python that has `requirements.txt` installed (for example this repository's
`.venv/bin/python`), unpack the zip into `DIR/source`, put a practice file in
`DIR/submission`, and run:

```bash
AUTOGRADER_ROOT=DIR LESSONKIT_PYTHON=/path/to/python bash DIR/source/run_autograder
cat DIR/results/results.json
```

`run_autograder` then uses the bundle's own `src/`. With `lessonkit` installed,
`lessonkit autograder {lesson} --run --root DIR` does the same in one command.
"""


def _files_under(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not any(part in _SKIPPED for part in path.parts):
            yield path


def requirements(repo: Path) -> str:
    """The pinned CPU requirements, without the line that installs this checkout."""
    lines = (repo / "requirements-cpu.txt").read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if not line.strip().startswith("-e")) + "\n"


def bundle_files(lesson: Lesson, repo: Path) -> dict[str, bytes]:
    """Every file of the bundle by its path in the zip."""
    package = Path(lessonkit.__file__).resolve().parent
    files = {
        "setup.sh": SETUP.encode(),
        "run_autograder": RUN.format(venv=VENV, lesson=lesson.meta.id).encode(),
        "requirements.txt": requirements(repo).encode(),
        "pyproject.toml": (repo / "pyproject.toml").read_bytes(),
        "README.md": README.format(
            lesson=lesson.meta.id, title=lesson.meta.title, venv=VENV
        ).encode(),
    }
    for path in _files_under(package):
        files[f"src/lessonkit/{path.relative_to(package).as_posix()}"] = path.read_bytes()
    phase = lesson.directory.parent
    for path in (*phase.glob("*.yaml"), *_files_under(lesson.directory)):
        if path.is_file():
            files[path.relative_to(repo).as_posix()] = path.read_bytes()
    return files


def bundle_zip(lesson: Lesson, repo: Path) -> bytes:
    """The bundle as zip bytes: the same bytes for the same files (fixed times and modes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in sorted(bundle_files(lesson, repo).items()):
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if name in _EXECUTABLE else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buffer.getvalue()


# --------------------------------------------------------------------------- the run


def isolation_said(isolation: Isolation) -> str:
    """How the submission's learner child was kept from the lesson, said in results.json."""
    if isolation.kind == "sandbox":
        return (
            "Isolation: bubblewrap (the submission ran as a user id of its own, with no "
            "network and none of the autograder's files in view)."
        )
    if isolation.kind == "namespaces":
        return (
            f"Isolation: the submission's own namespaces, files and user id, made by the "
            f"grading child as root ({isolation.reason}): no network and none of the "
            "autograder's files in view."
        )
    if isolation.kind == "user":
        return (
            f"Isolation: a user id of the submission's own ({isolation.reason}, and no "
            "namespaces); the lesson's files are readable by root only."
        )
    return (
        f"Isolation: resource limits only, as the user running the autograder ({isolation.reason})."
    )


def find_submission(folder: Path, lesson: Lesson) -> Path:
    """The one practice file in `folder` (the lesson's own name wins when there are more)."""
    if not folder.is_dir():
        raise SubmissionError(f"there is no submission folder {shown(folder)}")
    found = sorted(
        p for p in folder.iterdir() if p.suffix in SUFFIXES and not p.name.startswith(".")
    )
    own = [p for p in found if p.stem == lesson.meta.id]
    chosen = own or found
    if len(chosen) == 1:
        return chosen[0]
    if not chosen:
        raise SubmissionError(
            f"the submission has no .py or .ipynb file: upload your practice file "
            f"({lesson.meta.id}.py or {lesson.meta.id}.ipynb)"
        )
    names = ", ".join(p.name for p in chosen)
    raise SubmissionError(
        f"the submission has several practice files ({names}): upload one, "
        f"or name it {lesson.meta.id}.py"
    )


def results_json(report: GradeReport, scoring: Scoring, said: str) -> dict:
    """Gradescope's results: the score, one test per task (its message, never a solution).

    Messages are Markdown (`output_format: md`). An optional task is extra credit: its test
    has `max_score` 0 and its score when passed; left out, it is neither passed nor failed.
    """
    earned = scoring.earned(report)
    points = scoring.available
    tests = []
    for task in report.tasks:
        output = markdown_text(task.message)  # quotes the learner's code: never markup
        if task.hint and task.status != PASSED:
            output += f"\n\nHint: {task.hint}"
        test = {
            "name": f"{task.title} (optional, extra credit)" if task.optional else task.title,
            "score": earned.get(task.id, 0.0),
            "max_score": 0.0 if task.optional else points.get(task.id, 0.0),
            "output": output,
            "output_format": "md",
            "visibility": "visible",
        }
        if not (task.optional and task.status == NOT_ATTEMPTED):
            test["status"] = "passed" if task.status == PASSED else "failed"
        tests.append(test)
    seed = f" Input sets drawn with seed {report.seed}." if report.seed is not None else ""
    return {
        "score": sum(earned.values()),
        "execution_time": max(1, round(report.seconds)),
        "output": f"{report.tally.words(all_passed=report.passed)}.{seed}\n\n{said}",
        "output_format": "md",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def not_graded_json(message: str, seconds: float) -> dict:
    """A submission that cannot be graded: one message, and no test to repeat it under."""
    return {
        "score": 0.0,
        "execution_time": max(1, round(seconds)),
        "output": message,
        "output_format": "md",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [],
    }


def _results(
    lesson: Lesson, folder: Path, settings: Callable[[], GradingSettings], started: float
) -> dict:
    """The results for the submission in `folder`; isolation is named only when code ran."""
    try:
        chosen = settings()
    except UsageError as exc:  # a refusal to grade (never as root)
        said = f"Isolation: none available ({exc.message})."
        return not_graded_json(said, time.perf_counter() - started)
    isolation = chosen.isolation
    with Grader(chosen, lesson=lesson) as grader:
        try:
            path = find_submission(folder, lesson)
            submission = read_submission(path, read_bytes_in_folder(folder, path))
        except SubmissionError as exc:
            return not_graded_json(markdown_text(str(exc)), time.perf_counter() - started)
        report = grader.grade_submission(lesson, submission, started)
    return results_json(report, Scoring.of(lesson), isolation_said(isolation))


def run_autograder(lesson: Lesson, root: Path, settings: Callable[[], GradingSettings]) -> dict:
    """Grade the submission under `root` and write `root/results/results.json`.

    `settings` makes the command's settings (no compile cache); where it refuses, the
    results say so.
    """
    started = time.perf_counter()
    results = _results(lesson, root / "submission", settings, started)
    out = root / "results"
    write_atomically(out / "results.json", json.dumps(results, indent=2) + "\n")
    return results
