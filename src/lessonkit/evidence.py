"""Evidence of learning: the template every learner gets, and a report filled from their run.

The lesson asks learners to keep five items (tree diagram, hand-derived leaves and update,
round trip, nested-scale derivative, missing-key repair), each with a prediction, the code
they ran, what it printed, and their reasoning. `render_template` lays those out from the
lesson. `collect_evidence` runs the learner's own practice file in a child process, which
reports values only (``python -m lessonkit.evidence FILE LESSON_MD``), and asks the grader
for its verdicts; `render_report` fills the observed parts and leaves the prediction and
reasoning to the learner. Predictions are never filled in for them.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import os
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lessonkit.environment import Environment, static_environment
from lessonkit.errors import LessonError
from lessonkit.execute import child_env, run_child, write_report
from lessonkit.model import Experiment, Lesson

DEFAULT_TIMEOUT_S = 120.0
NOT_ATTEMPTED = "not attempted"
AGREE_RTOL, AGREE_ATOL = 1e-5, 1e-6  # float32 arithmetic against decimal hand values
WRITE_HERE = "_(write yours here)_"


@dataclass(frozen=True)
class EvidenceItem:
    """One thing the lesson asks a learner to keep, tied to the lesson section it comes from."""

    key: str
    title: str
    section: str  # id of the lesson section it comes from; its experiment prompts the prediction
    keep: str
    question: str = ""  # the prediction prompt, when that section has none of its own


ITEMS: tuple[EvidenceItem, ...] = (
    EvidenceItem(
        "tree-diagram",
        "Parameter and gradient tree diagram",
        "containers",
        "The diagram of `params` and of `grads`: containers, leaf paths, shapes and dtypes.",
        "Before printing them: how many leaves do `params` and `grads` have, and what shape "
        "and dtype does each leaf have?",
    ),
    EvidenceItem(
        "hand-derived",
        "Hand-derived leaves and update",
        "verify-leaves",
        "Every number you derived by hand next to the value JAX computed.",
    ),
    EvidenceItem(
        "round-trip",
        "Flatten/unflatten round trip",
        "round-trip",
        "The leaves in flatten order, the tree definition, and the rebuilt tree.",
    ),
    EvidenceItem(
        "nested-scale",
        "Nested-scale derivative",
        "nested-model",
        'The gradient `g["scale"]` from `jax.grad` next to your own derivation.',
        "Before running it: what is the derivative of the loss with respect to `scale` at "
        "the starting point, and what tree structure will `g` have?",
    ),
    EvidenceItem(
        "missing-key",
        "Missing-key repair",
        "repair",
        "The error from the incomplete gradient tree and the repaired update.",
        "Before running it: what happens when the gradient tree has lost its `bias` entry, "
        "and what loss does the repaired update reach?",
    ),
)


def _prompt(lesson: Lesson, item: EvidenceItem) -> str:
    if item.question:
        return item.question
    for section in lesson.sections:
        if section.id == item.section:
            for block in section.items:
                if isinstance(block, Experiment):
                    return block.prompt
    raise LessonError(
        f"evidence item {item.title!r} needs a section {{#{item.section}}} with an experiment",
        where=str(lesson.path),
    )


def _section_title(lesson: Lesson, section_id: str) -> str:
    return next((s.title for s in lesson.sections if s.id == section_id), section_id)


def _fence(text: str, language: str = "text") -> str:
    """A fenced block longer than any backtick run inside `text`, so code cannot break out."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{language}\n{text.rstrip()}\n{ticks}"


def _item_block(
    lesson: Lesson,
    number: int,
    item: EvidenceItem,
    observed: str | None = None,
    code: str | None = None,
) -> str:
    """One item: prediction, code, what happened, reasoning; None leaves a part blank."""
    source = _section_title(lesson, item.section)
    results = observed or (
        "Paste what your code printed (and any error message), unedited:\n\n" + _fence("")
    )
    code = code or ("The code you ran, including your changes.\n\n" + _fence("", "python"))
    return "\n\n".join(
        [
            f"## {number}. {item.title}",
            f"*From the lesson: {source}.* Keep: {item.keep}",
            f"**Prediction**, written before you run anything. {_prompt(lesson, item)}\n\n"
            f"> {WRITE_HERE}",
            f"**Modified code**: {code}",
            f"**Observed results**\n\n{results}",
            "**Reasoning**: why the result came out as it did, and where your prediction was "
            f"right or wrong.\n\n> {WRITE_HERE}",
        ]
    )


def render_template(lesson: Lesson) -> str:
    """outputs/evidence-template.md: the five items, each to be filled in by the learner."""
    meta = lesson.meta
    blocks = [
        f"<!-- Generated by `lessonkit build` from lesson.md ({meta.id}); do not edit this "
        "file: copy it, or run `lessonkit evidence` for a report filled from your run. -->",
        f"# Evidence: {meta.title} ({meta.id})",
        f"Revision {meta.revision}. Keep these {len(ITEMS)} items: "
        + "; ".join(i.title.lower() for i in ITEMS)
        + ". For each one, write your prediction first, then run the code, paste what it "
        "printed, and explain what happened. Checkpoint answers and exercise evidence are "
        f"tracked separately. `lessonkit evidence {meta.id}` writes a copy of this template "
        "with the observed results filled in from your own run of your practice copy (from "
        f"`lessonkit start {meta.id}`), or of FILE when you add one.",
        f"**Name and date:** {WRITE_HERE}",
    ]
    blocks += [_item_block(lesson, n, item) for n, item in enumerate(ITEMS, 1)]
    return "\n\n".join(blocks) + "\n"


# --------------------------------------------------------------------------- the learner's run


@dataclass(frozen=True)
class CellOutcome:
    line: int  # where the cell's code starts in the file (cell number for a notebook)
    task: str | None
    source: str
    status: str  # "ran", "not attempted" or "error"
    stdout: str
    error: str | None


@dataclass(frozen=True)
class NumberCheck:
    """A number the lesson derives by hand, and the same expression evaluated in the run."""

    name: str
    derived: Any
    computed: Any
    error: str | None

    @property
    def agrees(self) -> bool:
        if self.error is not None:
            return False
        want, got = _flat(self.derived), _flat(self.computed)
        return len(want) == len(got) and all(
            math.isclose(a, b, rel_tol=AGREE_RTOL, abs_tol=AGREE_ATOL)
            for a, b in zip(want, got, strict=True)
        )


@dataclass(frozen=True)
class RoundTrip:
    leaves: tuple[tuple[str, Any], ...]  # (key path, value) in flatten order
    definition: str
    matches: bool  # the rebuilt tree has params' structure and every leaf equal
    rebuilt_by: str  # which tree was compared with params, as a sentence opening


@dataclass(frozen=True)
class NestedScale:
    g_scale: Any
    scale_by_hand: Any
    g_tree: str


@dataclass(frozen=True)
class LearnerRun:
    """What the learner's practice file did, as reported by the child that ran it."""

    environment: Environment
    cells: tuple[CellOutcome, ...]
    trees: tuple[tuple[str, str], ...]  # (name, diagram) for params and grads when defined
    numbers: tuple[NumberCheck, ...]
    round_trip: RoundTrip | None
    nested: NestedScale | None
    fixed_loss: float | None
    problem: str | None  # why the run reported nothing (timeout, crash), else None

    def task_cells(self, task_id: str) -> tuple[CellOutcome, ...]:
        return tuple(c for c in self.cells if c.task == task_id)


@dataclass(frozen=True)
class TaskVerdict:
    id: str
    title: str
    status: str
    message: str


@dataclass(frozen=True)
class Verdicts:
    """The grader's verdicts, or why there are none."""

    tasks: tuple[TaskVerdict, ...]
    passed: bool | None
    note: str | None


@dataclass(frozen=True)
class Evidence:
    lesson: str
    file: Path
    file_sha256: str
    run: LearnerRun
    verdicts: Verdicts


def _flat(value: Any) -> list[float]:
    if isinstance(value, list | tuple):
        return [x for v in value for x in _flat(v)]
    if isinstance(value, bool) or not isinstance(value, int | float):
        return [math.nan]
    return [float(value)]


def _plain(value: Any) -> Any:
    """A JSON value for an array, number or nested list (child side)."""
    import numpy as np

    try:
        plain = np.asarray(value).tolist()
        json.dumps(plain)
    except Exception:  # not numerical: show what it is instead
        return repr(value)
    return plain


def _error_text(exc: BaseException, filename: str) -> str:
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    where = f" (line {line})" if line is not None else ""
    return f"{type(exc).__name__}: {exc}{where}"


def _run_cells(
    submission: Any, namespace: dict[str, Any]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Run each cell; return its outcome and the names bound right after it ran.

    The snapshots (shallow copies) let values be read where the lesson means them: later
    cells, such as optional experiments, may reuse a name like `scale_by_hand`.
    """
    import contextlib
    import io

    outcomes, snapshots = [], []
    notebook = submission.path.suffix == ".ipynb"
    for cell in submission.cells:
        filename = f"{submission.path} [cell {cell.line}]" if notebook else str(submission.path)
        padding = "" if notebook else "\n" * (cell.line - 1)  # tracebacks cite the file's lines
        captured = io.StringIO()
        status, error = "ran", None
        try:
            code = compile(padding + cell.source, filename, "exec")
            with contextlib.redirect_stdout(captured):
                exec(code, namespace)
        except NotImplementedError as exc:
            status, error = NOT_ATTEMPTED, str(exc)
        except (Exception, SystemExit) as exc:
            status, error = "error", _error_text(exc, filename)
        outcomes.append(
            {
                "line": cell.line,
                "task": cell.task,
                "source": cell.source,
                "status": status,
                "stdout": captured.getvalue(),
                "error": error,
            }
        )
        snapshots.append(dict(namespace))
    return outcomes, snapshots


def _evaluate(expr: str, namespace: dict[str, Any]) -> tuple[Any, str | None]:
    try:
        return _plain(eval(expr, dict(namespace))), None
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"


def _round_trip(namespace: dict[str, Any]) -> dict[str, Any] | None:
    import jax
    import jax.numpy as jnp

    params = namespace.get("params")
    if params is None:
        return None
    pairs, definition = jax.tree_util.tree_flatten_with_path(params)
    rebuilt = namespace.get("rebuilt")
    rebuilt_by = "`rebuilt` from your run"
    if rebuilt is None:
        rebuilt = jax.tree.unflatten(definition, [leaf for _, leaf in pairs])
        rebuilt_by = "Your run defines no `rebuilt`; the tree unflattened from your leaves"
    try:
        matches = jax.tree.structure(rebuilt) == definition and all(
            bool(jnp.array_equal(a, b))
            for a, b in zip(jax.tree.leaves(rebuilt), jax.tree.leaves(params), strict=True)
        )
    except Exception:
        matches = False
    return {
        "leaves": [[jax.tree_util.keystr(path), _plain(leaf)] for path, leaf in pairs],
        "definition": str(definition),
        "matches": matches,
        "rebuilt_by": rebuilt_by,
    }


def _diagram(tree: Any, name: str) -> str:
    from lessonkit.trees import describe

    try:
        return describe(tree, name)
    except Exception as exc:  # the learner's value may not be a tree at all
        return f"(cannot draw {name}: {type(exc).__name__}: {exc})"


def collect_in_child(file: Path, lesson_path: Path) -> dict[str, Any]:
    """Child side: run every code cell of `file` in one namespace, then report values only."""
    from lessonkit.environment import read_environment
    from lessonkit.lesson import load_lesson
    from lessonkit.sources import read_submission

    lesson = load_lesson(lesson_path)
    submission = read_submission(file)
    namespace: dict[str, Any] = {"__name__": "__main__", "__file__": str(file)}
    cells, snapshots = _run_cells(submission, namespace)

    def after(task_id: str | None) -> dict[str, Any]:
        """Names as they stood after the task's cell (None: just before the first task)."""
        for index, cell in enumerate(cells):
            if task_id is None and cell["task"] is not None:
                return snapshots[index - 1] if index else {}
            if task_id is not None and cell["task"] == task_id:
                return snapshots[index]
        return namespace if task_id is None else {}

    base = after(None)
    trees = [[name, _diagram(base[name], name)] for name in ("params", "grads") if name in base]
    numbers = []
    for number in lesson.numbers:
        computed, error = _evaluate(number.expr, base)
        numbers.append(
            {"name": number.name, "derived": number.value, "computed": computed, "error": error}
        )
    nested, names = None, after("nested-model")
    g = names.get("g")
    if isinstance(g, dict) and "scale" in g:
        by_hand = names.get("scale_by_hand")
        nested = {
            "g_scale": _plain(g["scale"]),
            "scale_by_hand": None if by_hand is None else _plain(by_hand),
            "g_tree": _diagram(g, "g"),
        }
    names = after("repair")
    fixed_loss, _ = _evaluate("loss(fixed)", names) if "fixed" in names else (None, None)
    return {
        "environment": read_environment().to_dict(),
        "cells": cells,
        "trees": trees,
        "numbers": numbers,
        "round_trip": _round_trip(base),
        "nested": nested,
        "fixed_loss": fixed_loss if isinstance(fixed_loss, int | float) else None,
    }


def _learner_run(report: Any, problem: str | None) -> LearnerRun:
    if not isinstance(report, dict) or "cells" not in report:
        return LearnerRun(static_environment(), (), (), (), None, None, None, problem)
    trip, nested = report["round_trip"], report["nested"]
    return LearnerRun(
        environment=Environment.from_dict(report["environment"]),
        cells=tuple(CellOutcome(**c) for c in report["cells"]),
        trees=tuple((name, text) for name, text in report["trees"]),
        numbers=tuple(NumberCheck(**n) for n in report["numbers"]),
        round_trip=RoundTrip(
            tuple((p, v) for p, v in trip["leaves"]),
            trip["definition"],
            trip["matches"],
            trip["rebuilt_by"],
        )
        if trip
        else None,
        nested=NestedScale(**nested) if nested else None,
        fixed_loss=report["fixed_loss"],
        problem=problem,
    )


def _run_learner_file(lesson: Lesson, file: Path, timeout_s: float) -> LearnerRun:
    argv = [sys.executable, "-m", "lessonkit.evidence", str(file), str(lesson.path)]
    env = child_env({"JAX_PLATFORMS": "cpu", "MPLBACKEND": "Agg"})
    run = run_child(argv, cwd=Path.cwd(), env=env, timeout_s=timeout_s)
    problem = None
    if run.timed_out:
        problem = f"your file did not finish within {timeout_s:g} s and was stopped"
    elif not isinstance(run.report, dict):
        last = run.stderr.strip().splitlines()[-1:] or [f"exit code {run.exit_code}"]
        problem = f"your file could not be run to the end ({last[0]})"
    return _learner_run(run.report, problem)


def parse_verdicts(stdout: str, stderr: str, exit_code: int | None) -> Verdicts:
    """Verdicts from `lessonkit check --json` output, or a note saying why there are none.

    A non-zero exit code only means that not every task passed; the JSON decides.
    """
    try:
        data = json.loads(stdout)
        tasks = tuple(
            TaskVerdict(str(t["id"]), str(t["title"]), str(t["status"]), str(t.get("message", "")))
            for t in data["tasks"]
        )
        return Verdicts(tasks, bool(data["passed"]), None)
    except (ValueError, KeyError, TypeError):
        lines = stderr.strip().splitlines()
        reason = lines[-1] if lines else f"exit code {exit_code}, no JSON on stdout"
        return Verdicts((), None, f"`lessonkit check` gave no verdicts here ({reason})")


def _grade(lesson: Lesson, file: Path, timeout_s: float) -> Verdicts:
    """Ask the grader, in its own child process, for its verdicts on `file`."""
    argv = [sys.executable, "-m", "lessonkit", "check", lesson.meta.id, str(file), "--json"]
    run = run_child(argv, cwd=Path.cwd(), env=child_env({}), timeout_s=timeout_s)
    if run.timed_out:
        return Verdicts((), None, f"the grader did not finish within {timeout_s:g} s")
    return parse_verdicts(run.stdout, run.stderr, run.exit_code)


def collect_evidence(
    lesson: Lesson, file: Path, *, timeout_s: float = DEFAULT_TIMEOUT_S
) -> Evidence:
    """Run the learner's file and the grader side by side (two child processes)."""
    file = file.resolve()
    with ThreadPoolExecutor(max_workers=2) as pool:
        learner = pool.submit(_run_learner_file, lesson, file, timeout_s)
        grader = pool.submit(_grade, lesson, file, timeout_s)
        run, verdicts = learner.result(), grader.result()
    digest = hashlib.sha256(file.read_bytes()).hexdigest()
    return Evidence(lesson.meta.id, file, digest, run, verdicts)


# --------------------------------------------------------------------------- the report


def _number_text(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_number_text(v) for v in value) + "]"
    if isinstance(value, float):
        text = format(value, ".7g")
        return text if any(c in text for c in ".ein") else f"{text}.0"
    return "—" if value is None else str(value)


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _task_status(run: LearnerRun, task_id: str) -> str:
    cells = run.task_cells(task_id)
    if not cells:
        return f"no `# TASK {task_id}` cell found in your file"
    worst = next((c for c in cells if c.status != "ran"), cells[0])
    if worst.status == "ran":
        return "your task cell ran without an error"
    if worst.status == NOT_ATTEMPTED:
        return f"not attempted yet (a `todo(...)` is still in the cell: {worst.error})"
    return f"your task cell stopped with {worst.error}"


def _task_code(run: LearnerRun, task_id: str, unit: str) -> str | None:
    cells = run.task_cells(task_id)
    if not cells:
        return None
    where = ", ".join(str(c.line) for c in cells)
    code = "\n\n".join(c.source for c in cells)
    return f"your task cell ({unit} {where} of your file), as it ran.\n\n" + _fence(code, "python")


def _observed_trees(run: LearnerRun) -> str:
    if not run.trees:
        return "Your run defined neither `params` nor `grads`."
    return _fence("\n\n".join(text for _, text in run.trees))


def _observed_numbers(run: LearnerRun) -> str:
    if not run.numbers:
        return "No values were computed (see *Your run* above)."
    rows = ["| quantity | derived by hand | computed in your run | agrees |", "|---|---|---|---|"]
    for n in run.numbers:
        got = n.error if n.error else _number_text(n.computed)
        mark = "yes" if n.agrees else "**no**"
        rows.append(f"| {n.name} | {_number_text(n.derived)} | {_cell(got)} | {mark} |")
    agreeing = sum(n.agrees for n in run.numbers)
    return f"{agreeing} of {len(run.numbers)} values agree.\n\n" + "\n".join(rows)


def _observed_round_trip(run: LearnerRun) -> str:
    trip = run.round_trip
    if trip is None:
        return "Your run defined no `params`, so there was nothing to flatten."
    leaves = "\n".join(f"{path}: {_number_text(value)}" for path, value in trip.leaves)
    verdict = "equals" if trip.matches else "does **not** equal"
    return (
        f"Leaves in flatten order:\n\n{_fence(leaves)}\n\nTree definition: "
        f"`{trip.definition}`\n\n{trip.rebuilt_by} {verdict} `params` in structure and in "
        "every leaf."
    )


def _observed_nested(run: LearnerRun, lesson: Lesson) -> str:
    status = _task_status(run, "nested-model")
    if run.nested is None:
        return f"Task *Extend to a nested model*: {status}; no `g` with a `scale` leaf yet."
    hand = next((n.derived for n in run.numbers if n.name == "scale_derivative"), None)
    lines = [
        f"Task *Extend to a nested model*: {status}.",
        f'- `g["scale"]` in your run: {_number_text(run.nested.g_scale)}',
        f"- your `scale_by_hand`: {_number_text(run.nested.scale_by_hand)}",
    ]
    if hand is not None:
        lines.append(f"- the lesson's hand derivation: {_number_text(hand)}")
    return "\n".join(lines) + "\n\n" + _fence(run.nested.g_tree)


def _observed_repair(run: LearnerRun, lesson: Lesson) -> str:
    status = _task_status(run, "repair")
    printed = "".join(c.stdout for c in run.task_cells("repair"))
    lines = [f"Task *Repair a mismatched update tree*: {status}."]
    if printed.strip():
        lines.append(f"It printed:\n\n{_fence(printed)}")
    if run.fixed_loss is not None:
        hand = next((n.value for n in lesson.numbers if n.name == "loss_after"), None)
        expected = f" (the hand-derived loss is {_number_text(hand)})" if hand is not None else ""
        lines.append(f"`loss(fixed)` = {_number_text(run.fixed_loss)}{expected}")
    return "\n\n".join(lines)


def _your_run(evidence: Evidence, shown_file: str) -> str:
    run, env = evidence.run, evidence.run.environment
    lines = [
        f"File: `{shown_file}` (sha256 `{evidence.file_sha256[:16]}…`)",
        f"Environment: Python {env.python} ({env.python_implementation}) · JAX {env.jax} · "
        f"jaxlib {env.jaxlib} · NumPy {env.numpy} · Matplotlib {env.matplotlib} · "
        f"{env.devices_line()} · {env.os} · {env.cpu}",
    ]
    if run.problem:
        lines.append(f"**Problem:** {run.problem}")
    if run.cells:
        counts = {s: sum(c.status == s for c in run.cells) for s in ("ran", NOT_ATTEMPTED, "error")}
        lines.append(
            f"Cells: {counts['ran']} ran, {counts[NOT_ATTEMPTED]} not attempted, "
            f"{counts['error']} stopped with an error."
        )
        lines += [
            f"- line {c.line}{f' (task {c.task})' if c.task else ''}: {_cell(c.error or '')}"
            for c in run.cells
            if c.status == "error"
        ]
    return "\n\n".join(lines)


def verdicts_section(verdicts: Verdicts) -> str:
    """The grader's verdicts as a Markdown table, or the note saying why there are none."""
    if verdicts.note:
        return verdicts.note + "."
    rows = ["| task | verdict | message |", "|---|---|---|"]
    rows += [f"| {_cell(t.title)} | {t.status} | {_cell(t.message)} |" for t in verdicts.tasks]
    overall = "every task passed" if verdicts.passed else "not every task has passed yet"
    return f"Overall: {overall}.\n\n" + "\n".join(rows)


def render_report(
    lesson: Lesson, evidence: Evidence, *, written: dt.datetime, shown_file: str
) -> str:
    """The evidence template with the observed results filled in from `evidence`."""
    meta, run = lesson.meta, evidence.run
    observed = {
        "tree-diagram": _observed_trees(run),
        "hand-derived": _observed_numbers(run),
        "round-trip": _observed_round_trip(run),
        "nested-scale": _observed_nested(run, lesson),
        "missing-key": _observed_repair(run, lesson),
    }
    stamp = written.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    blocks = [
        f"# Evidence: {meta.title} ({meta.id})",
        f"Written by `lessonkit evidence {meta.id}` on {stamp} from your own run of "
        f"`{shown_file}`. The observed results below come from that run; the predictions, "
        f"the code you changed and your reasoning are yours to write where it says {WRITE_HERE}.",
        f"**Name:** {WRITE_HERE}",
        f"## Your run\n\n{_your_run(evidence, shown_file)}",
    ]
    unit = "cell" if evidence.file.suffix == ".ipynb" else "line"
    task_code = {
        "nested-scale": _task_code(run, "nested-model", unit),
        "missing-key": _task_code(run, "repair", unit),
    }
    blocks += [
        _item_block(lesson, n, item, observed[item.key], task_code.get(item.key))
        for n, item in enumerate(ITEMS, 1)
    ]
    blocks.append(f"## Grader's verdicts\n\n{verdicts_section(evidence.verdicts)}")
    return "\n\n".join(blocks) + "\n"


def report_stem(lesson: Lesson, moment: dt.datetime) -> str:
    return f"{lesson.meta.id}-{moment.astimezone(dt.UTC).strftime('%Y%m%dT%H%M%SZ')}"


def _main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m lessonkit.evidence FILE LESSON_MD", file=sys.stderr)
        return 2
    write_report(collect_in_child(Path(argv[0]), Path(argv[1])))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("MPLBACKEND", "Agg")
    raise SystemExit(_main(sys.argv[1:]))
