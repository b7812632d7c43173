"""How long `check()` takes inside a notebook kernel, first call and warm.

A kernel (through nbclient) runs the practice notebook's cells with every task solved, then
calls `check("make-it-yours")` once (this starts the grading server: JAX in the reference
and learner children, the reference run) and then `--checks` more times, and `check()` for
every task as many times, each in a cell of its own. Each cell is timed from the kernel's
client (execute request to reply), so the time includes the kernel collecting its history,
grading in a fresh sandboxed child that was started ahead, the reply and the display.
The target: a warm check of one task < 1 s.
Between checks the bench waits `--pause` seconds, as a learner reads the verdict and edits:
the server starts the next learner child right after answering, and it needs about that
long to import JAX on a loaded machine (with `--pause 0` a check waits for it).

Run from the repository root:  python bench/notebook_check.py [--checks 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import nbformat
from nbclient import NotebookClient

from lessonkit.lesson.catalog import find_lesson
from lessonkit.lesson.cell import task_cell_source

LESSON = "state-02"
TARGET = 1.0


def solved_cells() -> list[nbformat.NotebookNode]:
    """The practice notebook's code cells, every task cell holding its reference solution."""
    lesson = find_lesson(LESSON)
    notebook = nbformat.read(lesson.directory / "exercises" / f"{LESSON}.ipynb", as_version=4)
    solutions = {
        task_cell_source(t, t.scaffold): task_cell_source(t, t.solution) for t in lesson.tasks
    }
    cells = [c for c in notebook.cells if c.cell_type == "code"]
    for cell in cells:
        cell.source = solutions.get(cell.source, cell.source)
    return cells


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
    cells = solved_cells()
    calls = [("first", 'check("make-it-yours")')]
    calls += [("one task", 'check("make-it-yours")')] * args.checks
    calls += [("every task", "check()")] * args.checks
    notebook = nbformat.v4.new_notebook()
    notebook.cells = cells + [nbformat.v4.new_code_cell(source) for _, source in calls]
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        client = NotebookClient(notebook, timeout=900, resources={"metadata": {"path": folder}})
        with client.setup_kernel():
            for index, cell in enumerate(cells):
                client.execute_cell(cell, index)
            for offset, (label, _) in enumerate(calls):
                if label != "first":
                    time.sleep(args.pause)
                index = len(cells) + offset
                started = time.perf_counter()
                client.execute_cell(notebook.cells[index], index)
                times.setdefault(label, []).append(time.perf_counter() - started)
                shown = notebook.cells[index].outputs[0]["data"]["text/plain"]
                if "passed" not in shown:
                    raise SystemExit(f"bench: expected a pass, got:\n{shown}")
    print(f"{len(calls)} checks, {args.pause:g} s apart, timed from the kernel's client")
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
