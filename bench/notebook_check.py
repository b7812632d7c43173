"""How long `check()` takes inside a notebook kernel, first call and warm.

A kernel (through nbclient) runs the practice notebook's cells with every task solved, then
calls `check("make-it-yours")` once (this starts the grading server: JAX in the reference
and learner children, the reference run) and then `--checks` more times, and `check()` for
every task as many times. Each call is timed inside the kernel, from the call to the verdict
being displayed, so the time includes sending the history, grading in a fresh sandboxed
child that was started ahead, and the reply. The target: a warm check of one task < 1 s.
Between checks the kernel waits `--pause` seconds, as a learner reads the verdict and edits:
the server starts the next learner child right after answering, and it needs about that
long to import JAX on a loaded machine (with `--pause 0` a check waits for it).

Run from the repository root:  python bench/notebook_check.py [--checks 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time

import nbformat
from nbclient import NotebookClient

from lessonkit.catalog import find_lesson
from lessonkit.render.cells import task_cell_source

LESSON = "state-02"
TARGET = 1.0
TIMED = """\
import time as _time
_time.sleep({pause})  # the learner reads the verdict and edits a cell
_start = _time.perf_counter()
check({task})
_times.setdefault({label!r}, []).append(_time.perf_counter() - _start)"""


def solved_notebook(checks: int, pause: float) -> nbformat.NotebookNode:
    lesson = find_lesson(LESSON)
    notebook = nbformat.read(lesson.directory / "exercises" / f"{LESSON}.ipynb", as_version=4)
    solutions = {
        task_cell_source(t, t.scaffold): task_cell_source(t, t.solution) for t in lesson.tasks
    }
    cells = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        cell.source = solutions.get(cell.source, cell.source)
        cells.append(cell)
    timed = [TIMED.format(task='"make-it-yours"', label="first", pause=0)]
    timed += [TIMED.format(task='"make-it-yours"', label="one task", pause=pause)] * checks
    timed += [TIMED.format(task="", label="every task", pause=pause)] * checks
    new = nbformat.v4.new_code_cell
    notebook.cells = [
        *cells,
        new("_times = {}"),
        *map(new, timed),
        new("print(json.dumps(_times))"),
    ]
    notebook.cells[-1].source = "import json\n" + notebook.cells[-1].source
    return notebook


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checks", type=int, default=5, help="warm checks of each kind")
    parser.add_argument(
        "--pause",
        type=float,
        default=3.0,
        help="seconds between checks, as a learner reads and edits (default 3); "
        "the next learner child starts in this time",
    )
    args = parser.parse_args()
    notebook = solved_notebook(args.checks, args.pause)
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        NotebookClient(notebook, timeout=900, resources={"metadata": {"path": folder}}).execute()
        total = time.perf_counter() - started
    times = json.loads(notebook.cells[-1].outputs[0]["text"])
    print(f"notebook run with {2 * args.checks + 1} checks, {args.pause:g} s apart: {total:.1f} s")
    print(f"first check (starts the grading server): {times['first'][0]:.2f} s")
    for label in ("one task", "every task"):
        values = times[label]
        median = statistics.median(values)
        print(
            f"warm check, {label}: median {median:.3f} s, max {max(values):.3f} s "
            f"over {len(values)} (target < {TARGET:g} s: {'met' if median < TARGET else 'MISSED'})"
        )


if __name__ == "__main__":
    main()
