"""A check's verdict as the learner sees it: an HTML table in a notebook, text elsewhere.

Jupyter, JupyterLab and VS Code show `_repr_html_`; a terminal, PyCharm's console or a
plain `python` run prints `str()`. Everything shown is escaped: messages quote learner code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lessonkit.grade.judging import ERROR, FAILED, PASSED, GradeReport, TaskResult
from lessonkit.lesson.text import html_text, safe_text

Source = Literal["kernel", "script"]
"""What `check()` graded: the cells run in a kernel, or the practice script run whole."""

_COLOURS = {PASSED: "#1a7f37", FAILED: "#cf222e", ERROR: "#cf222e"}
_CELL = "text-align:left;vertical-align:top;padding:2px 8px"


@dataclass(frozen=True)
class CheckResult:
    """One `check()` call's outcome: a report to show (one task or all), or an error."""

    report: GradeReport | None
    task: str | None = None
    error: str | None = None
    note: str | None = None
    source: Source = "kernel"

    @property
    def tasks(self) -> tuple[TaskResult, ...]:
        if self.report is None:
            return ()
        return tuple(t for t in self.report.tasks if self.task in (None, t.id))

    @property
    def passed(self) -> bool:
        return bool(self.tasks) and all(t.counts_as_passed for t in self.tasks)

    def _footer(self) -> list[str]:
        lines = []
        report = self.report
        if report is not None:
            failing = [p for p in report.prerequisites if p.status != PASSED]
            lines += [f"{p.name}: {p.status}. {p.message}".strip() for p in failing]
            seed = f", inputs drawn with seed {report.seed}" if report.seed is not None else ""
            what = (
                "Graded outside this kernel, in a fresh process"
                if self.source == "kernel"
                else "Graded this script as a whole, in a separate process"
            )
            lines.append(f"{what}, in {report.seconds:.2f} s{seed}.")
        if self.note:
            lines.append(self.note)
        return lines

    def __str__(self) -> str:
        if self.report is None:
            return safe_text(f"check(): {self.error}")
        lines = []
        for task in self.tasks:
            title = f"{task.title} (optional)" if task.optional else task.title
            lines.append(f"{task.id} · {title}: {task.status}")
            lines += [f"  {line}" for line in task.message.splitlines()]
            if task.hint and task.status != PASSED:
                lines.append(f"  hint: {task.hint}")
        return safe_text("\n".join(lines + self._footer()))  # printed to a terminal

    __repr__ = __str__

    def _repr_html_(self) -> str:
        if self.report is None:
            return f'<p class="lessonkit-check-error">check(): {html_text(self.error or "")}</p>'
        rows = []
        for task in self.tasks:
            colour = _COLOURS.get(task.status, "#6e7781")
            title = html_text(task.title + (" (optional)" if task.optional else ""))
            message = str(html_text(task.message)).replace("\n", "<br>")
            rows.append(
                f'<tr data-task="{html_text(task.id)}" data-status="{html_text(task.status)}">'
                f'<td style="{_CELL}">{title}</td>'
                f'<td style="{_CELL};color:{colour};font-weight:bold">{task.status}</td>'
                f'<td style="{_CELL}">{message}</td></tr>'
            )
            if task.hint and task.status != PASSED:
                rows.append(
                    f'<tr class="hint"><td></td><td style="{_CELL}">hint</td>'
                    f'<td style="{_CELL}">{html_text(task.hint)}</td></tr>'
                )
        footer = "".join(f"<p><small>{html_text(line)}</small></p>" for line in self._footer())
        return (
            '<table class="lessonkit-check">'
            f'<thead><tr><th style="{_CELL}">Task</th><th style="{_CELL}">Status</th>'
            f'<th style="{_CELL}">Message</th></tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>{footer}"
        )
