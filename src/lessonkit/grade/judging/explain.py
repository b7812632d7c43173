"""Learner-facing text for errors: the learner's own lines only, cited as they see them.

The child reports an exception as its type, message and the frames that lie in learner
cells (cell index, line). Library frames (JAX, NumPy, the grader) never reach the learner.
"""

from __future__ import annotations

import re

from lessonkit.grade.channel.protocol import ErrorInfo
from lessonkit.grade.channel.values import differences, explain_layout
from lessonkit.grade.submission.magics import kernel_call_in, magic_in
from lessonkit.grade.submission.plan import Plan
from lessonkit.run.limits import shown_size

MAX_MESSAGE_LINES = 3
MAX_MESSAGE_CHARS = 400
_JAX_FOOTER = "--------------------"
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")


def _short_message(message: str) -> str:
    """The first lines of an exception message, without JAX's traceback-filtering footer.

    Cut only where a line or a sentence ends, never in the middle of one.
    """
    message = message.split(_JAX_FOOTER, 1)[0].strip()
    lines = [line for line in message.splitlines() if line.strip()][:MAX_MESSAGE_LINES]
    kept: list[str] = []
    for line in lines:
        if len("\n".join([*kept, line])) <= MAX_MESSAGE_CHARS:
            kept.append(line)
            continue
        room = MAX_MESSAGE_CHARS - len("\n".join(kept)) - 1
        sentences = _SENTENCE_END.split(line)
        part = ""
        for sentence in sentences:
            if len(part) + len(sentence) + 1 > room:
                break
            part = f"{part} {sentence}".strip()
        if part:
            kept.append(part + " (…)")
        elif not kept:  # one sentence longer than the limit: end at a word
            kept.append(line[: MAX_MESSAGE_CHARS - 4].rsplit(" ", 1)[0] + " (…)")
        break
    return "\n".join(kept)


def _frame_lines(error: ErrorInfo, plan: Plan) -> list[str]:
    lines = []
    for index, line, *times in error.frames:
        if 0 <= index < len(plan.cells):
            code = plan.source_line(index, line)
            text = (
                f"  {plan.where(index, line)}: {code}" if code else f"  {plan.where(index, line)}"
            )
            if times and times[0] > 1:
                text += f"  (repeated {times[0]} times)"
            lines.append(text)
    return lines


def last_line(error: ErrorInfo, plan: Plan) -> str:
    """Where the error happened, e.g. `line 231` (or `cell 14, line 3`)."""
    frames = error.frames
    if not frames:
        return "an unknown line"
    index, line = frames[-1][:2]
    return plan.where(index, line) if 0 <= index < len(plan.cells) else f"line {line}"


def failing_statement(error: ErrorInfo, plan: Plan) -> str:
    """The source of the learner's line that raised, e.g. `assert jnp.allclose(a, 96.)`."""
    frames = error.frames
    if not frames:
        return ""
    index, line = frames[-1][:2]
    return plan.source_line(index, line) if 0 <= index < len(plan.cells) else ""


def tree_mismatch(error: ErrorInfo) -> str | None:
    """A pytree structure error in the words of the tree-difference engine, by key path."""
    if len(error.trees) < 2:
        return None
    (first, expected), *others = error.trees
    for name, got in others:
        found = [d for d in differences(expected, got) if d.kind != "value"]
        if found:
            return (
                f"the trees passed together must have one structure, but "
                f"{explain_layout(name, found)[:-1]} "
                f"(compared with `{first}`)."
            )
    return None


SHELL_CALLS = frozenset({"get_ipython().system", "get_ipython().getoutput"})


def magic_message(magic: str, notebook: bool) -> str:
    """Why a line with a Jupyter magic or shell command is an error in the grader."""
    shell = magic.startswith("!") or magic in SHELL_CALLS
    what = "shell command" if shell else "magic" if magic.startswith("%") else "kernel call"
    why = (
        "which the grader cannot run: it runs each cell as plain Python, with only %time, "
        "%timeit and %matplotlib made Python"
        if notebook
        else "which only Jupyter runs: a .py practice file is plain Python"
    )
    return f"uses a Jupyter {what}: {magic}, {why}; remove it, or write the line in Python"


def _kernel_call(error: ErrorInfo, plan: Plan) -> str | None:
    """The magic or kernel method a line asked of `get_ipython()`, which a grading child
    does not define (the magics it can run were made Python before it ran)."""
    if error.type != "NameError" or "'get_ipython'" not in error.message:
        return None
    return kernel_call_in(failing_statement(error, plan))


def out_of_memory(error: ErrorInfo) -> bool:
    """Whether the error is Python's or XLA's way of saying an allocation was refused."""
    return error.type == "MemoryError" or "RESOURCE_EXHAUSTED" in error.message


def explain_error(error: ErrorInfo, plan: Plan, timeout: float, memory: int | None = None) -> str:
    """One short explanation, then the learner's own traceback lines.

    `timeout` and `memory` are the limits the run had, named when it ran past one.
    """
    kind = error.kind
    where = last_line(error, plan)
    if kind == "syntax":
        code = failing_statement(error, plan)
        shown = f"\n  {where}: {code}" if code else ""
        magic = magic_in(code) if error.type == "SyntaxError" else None
        message = error.message if magic is None else magic_message(magic, plan.notebook)
        return f"{error.type} at {where}: {message}{shown}"
    call = _kernel_call(error, plan)
    if call is not None:
        code = failing_statement(error, plan)
        return f"{error.type} at {where}: {magic_message(call, plan.notebook)}\n  {where}: {code}"
    if kind == "exit":
        code = error.exit_code
        return (
            f"The code calls sys.exit({'' if code is None else code}) at {where}; the grader "
            "runs every cell anyway, so remove it."
        )
    if kind == "interrupt":
        return f"The code raises KeyboardInterrupt at {where}."
    if kind == "timeout":
        limit = f"the time limit of {timeout:g} s"
        return f"The cell did not finish within {limit} (it was running {where})."
    mismatch = tree_mismatch(error)
    if mismatch:
        head = f"{error.type}: {mismatch}"
    else:
        head = f"{error.type}: {_short_message(error.message)}".rstrip(": ")
    lines = [head]
    frames = _frame_lines(error, plan)
    if frames:
        lines += ["Traceback (your code only):", *frames]
    if memory is not None and out_of_memory(error):
        lines.append(
            f"The code needed more memory than the memory limit of {shown_size(memory)} "
            "that each process of a graded run has (`--memory` sets it)."
        )
    return "\n".join(lines)
