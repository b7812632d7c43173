"""The practice notebook's recorded outputs: what each non-task code cell printed.

`lessonkit run --record` runs the notebook's code cells in order in a child process (task
cells hold their solutions, but their output is never recorded: it would give the answer
away) and keeps each cell's stdout, with a hash of its code, in
`outputs/notebook-outputs.json`. The build puts outputs of unchanged cells into the notebook;
`verify` names every cell changed since recorded. Child side:
`python -m lessonkit.receipts.cells CELLS.json`, reporting through `$LESSONKIT_REPORT`.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from lessonkit.atomic import write_atomically
from lessonkit.errors import LessonkitError
from lessonkit.lesson.catalog import repo_root
from lessonkit.lesson.cell import Cell, task_cell_source
from lessonkit.lesson.files import CELL_OUTPUTS, CELL_OUTPUTS_SCHEMA
from lessonkit.lesson.layout import lesson_cells
from lessonkit.lesson.model import Lesson
from lessonkit.receipts import code_sha256
from lessonkit.receipts.machine_paths import without_machine_paths
from lessonkit.run.lesson_script import run_lesson_script, write_report
from lessonkit.run.process import child_environment

RECORD, SCHEMA = CELL_OUTPUTS, CELL_OUTPUTS_SCHEMA


class CellOutputsError(LessonkitError):
    """The notebook's outputs cannot be recorded or read."""


@dataclass(frozen=True)
class CellOutput:
    id: str
    code_sha256: str
    stdout: str


def recorded_cells(lesson: Lesson) -> tuple[Cell, ...]:
    """The notebook cells whose output is recorded: code, neither tasks nor solutions."""
    return tuple(
        c
        for c in lesson_cells(lesson)
        if c.kind == "code" and not c.solution and "task" not in c.tags
    )


def record_path(lesson: Lesson) -> Path:
    return lesson.directory / RECORD


def run_cells(lesson: Lesson, timeout_s: float) -> tuple[CellOutput, ...]:
    """Run the notebook's code cells in a child process; each recorded cell's stdout."""
    recorded = {c.id for c in recorded_cells(lesson)}
    solutions = {f"task-{t.id}": task_cell_source(t, t.solution) for t in lesson.tasks}
    cells = [
        {"id": c.id, "source": solutions.get(c.id, c.source), "record": c.id in recorded}
        for c in lesson_cells(lesson)
        if c.kind == "code" and not c.solution
    ]
    with tempfile.TemporaryDirectory(prefix="lessonkit-cells-") as folder:
        program = Path(folder) / "cells.json"
        program.write_text(json.dumps(cells), encoding="utf-8")
        run = run_lesson_script(
            [sys.executable, "-m", "lessonkit.receipts.cells", str(program)],
            cwd=Path(folder),
            env=child_environment("inherit", {"JAX_PLATFORMS": "cpu", "MPLBACKEND": "Agg"}),
            timeout_s=timeout_s,
        )
    report = run.report if isinstance(run.report, dict) else {}
    if run.exit_code != 0 or not all(isinstance(report.get(c["id"]), str) for c in cells):
        why = "timed out" if run.timed_out else f"failed: {run.stderr.strip()[-800:]}"
        raise CellOutputsError(
            f"running the practice notebook's cells {why}",
            fix="fix lesson.md so that its cells run top to bottom, then record again",
        )
    by_id = {c.id: c for c in recorded_cells(lesson)}
    root = repo_root(lesson.directory)
    return tuple(
        CellOutput(
            c["id"],
            code_sha256(by_id[c["id"]].source),
            without_machine_paths(report[c["id"]], root),
        )
        for c in cells
        if c["record"]
    )


def render_record(lesson: Lesson, outputs: tuple[CellOutput, ...]) -> str:
    body = {
        "schema": SCHEMA,
        "lesson": lesson.meta.id,
        "about": "What each non-task code cell of the practice notebook printed in the "
        "reference run; `lessonkit run --record` writes it, `lessonkit build` shows it.",
        "cells": [{"id": o.id, "code_sha256": o.code_sha256, "stdout": o.stdout} for o in outputs],
    }
    return json.dumps(body, indent=1, ensure_ascii=False) + "\n"


def save_record(lesson: Lesson, outputs: tuple[CellOutput, ...]) -> Path:
    path = record_path(lesson)
    write_atomically(path, render_record(lesson, outputs))
    return path


def load_record(lesson: Lesson) -> tuple[CellOutput, ...] | None:
    """The recorded outputs; None when there is no record yet."""
    path = record_path(lesson)
    if not path.is_file():
        return None
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
        if body["schema"] != SCHEMA or body["lesson"] != lesson.meta.id:
            raise ValueError("another schema or lesson")
        return tuple(
            CellOutput(str(c["id"]), str(c["code_sha256"]), str(c["stdout"])) for c in body["cells"]
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CellOutputsError(
            f"{RECORD} cannot be read ({exc})",
            where=str(path),
            fix=f"run `lessonkit run {lesson.meta.id} --record`",
        ) from None


def current_outputs(lesson: Lesson) -> dict[str, str]:
    """Cell id -> recorded stdout, for the cells whose code is as recorded."""
    record = load_record(lesson) or ()
    now = {c.id: code_sha256(c.source) for c in recorded_cells(lesson)}
    return {o.id: o.stdout for o in record if now.get(o.id) == o.code_sha256}


def stale_cells(lesson: Lesson) -> list[str]:
    """Ids of recorded-output cells whose code changed since the record (or never recorded)."""
    try:
        current = current_outputs(lesson)
    except CellOutputsError:
        return [c.id for c in recorded_cells(lesson)]
    return [c.id for c in recorded_cells(lesson) if c.id not in current]


# --------------------------------------------------------------------------- child side


def main(argv: list[str]) -> int:
    cells = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    namespace: dict = {"__name__": "__main__"}
    outputs: dict[str, str] = {}
    for cell in cells:
        captured = io.StringIO()
        with contextlib.redirect_stdout(captured):
            code = compile(cell["source"], f"<cell {cell['id']}>", "exec", dont_inherit=True)
            exec(code, namespace)
        outputs[cell["id"]] = captured.getvalue()
    write_report(outputs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
