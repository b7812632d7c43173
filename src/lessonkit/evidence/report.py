"""The evidence report: the template with the observed parts filled in from the learner's run."""

from __future__ import annotations

import datetime as dt
from typing import Any

from lessonkit.evidence.observe import NOT_ATTEMPTED, Evidence, Finding, ItemObserved, NumberCheck
from lessonkit.evidence.template import WRITE_HERE, fence, item_block
from lessonkit.grade import GradeReport
from lessonkit.lesson.model import Lesson
from lessonkit.lesson.text import markdown_text


def number_text(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "[" + ", ".join(number_text(v) for v in value) + "]"
    if isinstance(value, float):
        text = format(value, ".7g")
        return text if any(c in text for c in ".ein") else f"{text}.0"
    return "—" if value is None else str(value)


def _numbers_table(numbers: tuple[NumberCheck, ...]) -> str:
    if not numbers:
        return "No values were computed (see *Your run* above)."
    rows = ["| quantity | derived by hand | computed in your run | agrees |", "|---|---|---|---|"]
    for n in numbers:
        got = markdown_text(n.error, cell=True) if n.error else number_text(n.computed)
        mark = "yes" if n.agrees else "**no**"
        rows.append(f"| {n.name} | {number_text(n.derived)} | {got} | {mark} |")
    agreeing = sum(n.agrees for n in numbers)
    return f"{agreeing} of {len(numbers)} values agree.\n\n" + "\n".join(rows)


def _finding(finding: Finding) -> str:
    show = finding.show
    label = f"`{show.expr}`"
    if finding.problem:
        return f"{label}: nothing to show: {finding.problem}."
    if show.kind == "tree":
        return fence(finding.text)
    if show.kind == "round_trip":
        leaves = "\n".join(f"{path}: {number_text(value)}" for path, value in finding.leaves)
        verdict = "equals" if finding.matches else "does **not** equal"
        return (
            f"Leaves of {label} in flatten order:\n\n{fence(leaves)}\n\nTree definition: "
            f"`{finding.text}`\n\nThe tree rebuilt from these leaves and this definition "
            f"{verdict} {label} in structure and in every leaf."
        )
    line = f"{label} in your run: {number_text(finding.value)}"
    if show.number and not finding.task_passed:
        line += (
            f" (the lesson's hand derivation, {show.number}: {number_text(finding.hand)}; not "
            "confirmed: this task did not pass, so the two may not be independent)"
        )
    elif show.number:
        mark = "agrees" if finding.agrees else "does **not** agree"
        line += (
            f" (the lesson's hand derivation, {show.number}: {number_text(finding.hand)}; {mark})"
        )
    return line


def _task_line(evidence: Evidence, task_id: str) -> str:
    verdict = next((t for t in evidence.verdicts.tasks if t.id == task_id), None)
    if verdict is None:
        return f"Task {task_id}: no verdict."
    message = f": {markdown_text(verdict.message)}" if verdict.message else ""
    mistake = (
        f" Diagnosis: the answer makes the known mistake *{markdown_text(verdict.mistake)}*."
        if verdict.mistake
        else ""
    )
    return f"Task *{verdict.title}*: {verdict.status}{message}{mistake}"


def _observed(evidence: Evidence, observed: ItemObserved) -> str:
    item = observed.item
    parts = []
    if item.task:
        parts.append(_task_line(evidence, item.task))
        printed = "".join(c.output for c in evidence.task_cells(item.task))
        if printed.strip():
            parts.append(f"It printed:\n\n{fence(printed)}")
    values = [f"- {_finding(f)}" for f in observed.findings if f.show.kind == "value"]
    if values:
        parts.append("\n".join(values))
    parts += [_finding(f) for f in observed.findings if f.show.kind != "value"]
    if any(s.kind == "numbers" for s in item.show):
        parts.append(_numbers_table(observed.numbers))
    return "\n\n".join(parts)


_NO_CODE = (
    "this item is not a task cell, so your run has no code of yours to show for it. If you "
    f"changed the lesson's code to try it, paste the changed lines here; if not, write "
    f'"none".\n\n> {WRITE_HERE}'
)
"""In words, never an empty code block, which reads as code that failed to be captured."""


def _task_code(evidence: Evidence, task_id: str) -> str | None:
    cells = evidence.task_cells(task_id)
    if not cells:
        return None
    where = ", ".join(c.where for c in cells)
    code = "\n\n".join(c.source for c in cells)
    return f"your task cell ({where} of your file), as it ran.\n\n" + fence(code, "python")


def _your_run(evidence: Evidence, shown_file: str) -> str:
    env = evidence.environment
    lines = [
        f"File: `{shown_file}` (sha256 `{evidence.file_sha256[:16]}…`)",
        f"Environment: Python {env.python} ({env.python_implementation}) · JAX {env.jax} · "
        f"jaxlib {env.jaxlib} · NumPy {env.numpy} · Matplotlib {env.matplotlib} · "
        f"{env.devices_line()} · {env.os} · {env.cpu}",
        f"Your file ran once, in the grader's child process, on the lesson's inputs "
        f"(grader input seed {evidence.verdicts.seed}).",
    ]
    if evidence.problem:
        lines.append(f"**Problem:** {markdown_text(evidence.problem)}")
    if evidence.cells:
        counts = {
            s: sum(c.status == s for c in evidence.cells) for s in ("ran", NOT_ATTEMPTED, "error")
        }
        lines.append(
            f"Cells: {counts['ran']} ran, {counts[NOT_ATTEMPTED]} not attempted, "
            f"{counts['error']} stopped with an error."
        )
        lines += [
            f"- {c.where[:1].upper()}{c.where[1:]}: {markdown_text(c.error or '', cell=True)}"
            for c in evidence.cells
            if c.status == "error"
        ]
    return "\n\n".join(lines)


def verdicts_section(verdicts: GradeReport) -> str:
    """The grader's verdicts as a Markdown table."""
    rows = ["| task | verdict | message |", "|---|---|---|"]
    for task in verdicts.tasks:
        title, message = (markdown_text(x, cell=True) for x in (task.title, task.message))
        rows.append(f"| {title} | {task.status} | {message} |")
    overall = "every task passed" if verdicts.passed else "not every task has passed yet"
    return f"Overall: {overall}.\n\n" + "\n".join(rows)


def render_report(
    lesson: Lesson, evidence: Evidence, *, written: dt.datetime, shown_file: str
) -> str:
    """The evidence template with the observed results filled in from `evidence`."""
    meta = lesson.meta
    stamp = written.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    blocks = [
        f"# Evidence: {meta.title} ({meta.id})",
        f"Written by `lessonkit evidence {meta.id}` on {stamp} from your own run of "
        f"`{shown_file}`. The observed results below come from that run; the predictions, "
        f"the code you changed and your reasoning are yours to write where it says {WRITE_HERE}.",
        f"**Name:** {WRITE_HERE}",
        f"## Your run\n\n{_your_run(evidence, shown_file)}",
    ]
    observed = {o.item.key: o for o in evidence.items}
    for number, item in enumerate(lesson.evidence, 1):
        found = observed.get(item.key)
        text = _observed(evidence, found) if found else None
        code = _task_code(evidence, item.task) if item.task else None
        blocks.append(item_block(lesson, number, item, text, code or _NO_CODE))
    blocks.append(f"## Grader's verdicts\n\n{verdicts_section(evidence.verdicts)}")
    return "\n\n".join(blocks) + "\n"


def report_stem(lesson: Lesson, moment: dt.datetime) -> str:
    return f"{lesson.meta.id}-{moment.astimezone(dt.UTC).strftime('%Y%m%dT%H%M%SZ')}"
