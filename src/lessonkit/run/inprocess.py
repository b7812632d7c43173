"""Run a lesson's blocks in this process, as the figure and the declared numbers need them.

Both start from the namespace the build steps leave behind, so they share this one way of
running a block: quietly (building must not echo the worked example), on JAX's CPU device
(so that machines with an accelerator compute the same values), and with any exception turned
into a `LessonError` that names the block's line in lesson.md, never a generated file.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from typing import Any

from lessonkit.errors import LessonError
from lessonkit.lesson.model import Lesson


def cpu_device() -> Any:
    """JAX's CPU device, or None when JAX was limited to another platform (use its default)."""
    import jax

    try:
        return jax.devices("cpu")[0]
    except RuntimeError:
        return None


@contextlib.contextmanager
def quiet_cpu() -> Iterator[None]:
    """Swallow the blocks' printing and place their arrays on the CPU device."""
    import jax

    device = cpu_device()
    with (
        contextlib.redirect_stdout(io.StringIO()),
        jax.default_device(device) if device is not None else contextlib.nullcontext(),
    ):
        yield


def run_block(code: str, namespace: dict[str, Any], lesson: Lesson, role: str, line: int) -> None:
    """Execute one block's code in `namespace`; raise LessonError at lesson.md:line if it fails."""
    try:
        # dont_inherit: this module's `from __future__ import annotations` is not the lesson's
        # (under it, a dataclass in a step cannot resolve its string annotations)
        where = f"{lesson.path}:{line} ({{{role}}} block)"
        exec(compile(code, where, "exec", dont_inherit=True), namespace)
    except Exception as exc:
        raise LessonError(
            f"{{{role}}} block raised {type(exc).__name__}: {exc}",
            where=f"{lesson.path}:{line}",
        ) from None


def run_steps(lesson: Lesson, namespace: dict[str, Any]) -> None:
    """Run every build step in order into `namespace` (call it inside `quiet_cpu`)."""
    for step in lesson.steps:
        run_block(step.code, namespace, lesson, "step", step.line)
