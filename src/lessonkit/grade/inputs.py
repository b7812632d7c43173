"""The input sets each task is graded on: the lesson's own, and others that expose constants.

A value that is right only on the lesson's inputs was typed in, not computed. Each set is a
complete replacement for the names the lesson's steps define as inputs (`params` and `x`),
and every set keeps the lesson's step-3 assertion true (the update lowers the loss).
"""

from __future__ import annotations

from dataclasses import dataclass

from lessonkit.errors import UsageError

Tree = dict[str, "Tree"] | list[float] | float


@dataclass(frozen=True)
class InputSet:
    """Values for the input names, as nested lists and floats (float32 in the child)."""

    name: str
    values: dict[str, Tree]

    def describe(self) -> str:
        """e.g. `weight [0.5, 2.0], bias 1.0, x [-1.0, 3.0]`."""
        parts: list[str] = []

        def walk(prefix: str, value: Tree) -> None:
            if isinstance(value, dict):
                for key, child in value.items():
                    walk(key, child)
            else:
                parts.append(f"{prefix} {value}")

        for name, value in self.values.items():
            walk(name, value)
        return ", ".join(parts)


@dataclass(frozen=True)
class LessonInputs:
    """The lesson's inputs and the other sets, for one lesson."""

    names: tuple[str, ...]
    lesson: InputSet
    others: tuple[InputSet, ...]


_STATE_02 = LessonInputs(
    names=("params", "x"),
    lesson=InputSet("lesson", {"params": {"weight": [1.0, -1.0], "bias": 0.0}, "x": [2.0, 1.0]}),
    others=(
        InputSet("other-1", {"params": {"weight": [0.5, 2.0], "bias": 1.0}, "x": [-1.0, 3.0]}),
        InputSet("other-2", {"params": {"weight": [-0.3, 0.8], "bias": -0.5}, "x": [1.5, -0.5]}),
    ),
)

INPUTS: dict[str, LessonInputs] = {"state-02": _STATE_02}


def inputs_for(lesson_id: str) -> LessonInputs:
    """The input sets of a gradable lesson."""
    try:
        return INPUTS[lesson_id]
    except KeyError:
        known = ", ".join(sorted(INPUTS))
        raise UsageError(
            f"lesson {lesson_id!r} has no grading inputs", fix=f"lessonkit check grades: {known}"
        ) from None
