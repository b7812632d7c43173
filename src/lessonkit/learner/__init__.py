"""`check()` where the learner works: in a notebook, an editor's interactive window, a script.

`check("task-id")` grades one task and `check()` every task, from what the learner has run:
in an IPython kernel, the latest executed source of each `# TASK <id>` cell
(`learner.history`); in a plain `python` run, the file as a whole. Grading happens in a
separate server process (`learner.server`), so nothing the learner's code changes in the
kernel can change a verdict. Importing this package neither imports JAX nor starts anything.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lessonkit.learner.view import CheckResult


class Checker:
    """`check` for one lesson: call it with a task id, or with nothing for every task."""

    def __init__(self, lesson: str):
        self.lesson = lesson

    def __repr__(self) -> str:
        return f'<check() for {self.lesson}: check("task-id") grades one task, check() all>'

    def result(self, task: str | None = None) -> CheckResult | None:
        """The verdict as a value (None inside a grading child, which must not grade)."""
        from lessonkit.learner import client
        from lessonkit.learner.messages import CheckRequest
        from lessonkit.learner.view import CheckResult

        if task is not None and not isinstance(task, str):
            return CheckResult(None, error='give a task id as text, e.g. check("task-id")')
        if client.inside_grader():
            return None
        history = client.kernel_history()
        if history is not None:
            request, source = CheckRequest(self.lesson, task, cells=history), "kernel"
        elif (script := client.running_script()) is not None:
            request, source = CheckRequest(self.lesson, task, file=script), "script"
        else:
            return CheckResult(
                None,
                error="check() grades the cells run in Jupyter, VS Code or PyCharm, or a "
                "practice script run as a whole; in a plain Python prompt, use "
                f"`lessonkit check {self.lesson} FILE`.",
            )
        reply = client.ask(request)
        return CheckResult(reply.report, task, reply.error, reply.note, source)

    def __call__(self, task: str | None = None) -> None:
        """Grade and show the verdict under the cell (HTML in notebooks, text elsewhere)."""
        result = self.result(task)
        if result is None:
            return
        ipython = sys.modules.get("IPython")  # imported by every kernel, never here
        if ipython is not None and ipython.get_ipython() is not None:
            from IPython.display import display

            display(result)
        else:
            print(result)


def checker(lesson: str) -> Checker:
    """The `check` function of a lesson's practice file."""
    return Checker(lesson)


__all__ = ["Checker", "checker"]
