"""What the parent asks a grading child: a request's shape and the roles its cells play,
declared once for both sides.

The parent builds these records (`grade/preparation/prepared.py`) and sends each request as one JSON
line (`to_line`); the child reads the line back into the same records (`from_line`),
strictly, so a field one side adds and the other does not know is an error at once, not a
key silently ignored. Standard library only: the child loads this by path.

Roles decide where a cell runs: `setup` cells (the helper, the steps, anything the learner
added) run in every scenario and take the scenario's inputs; `lesson` cells (the core
experiments) run on the lesson's inputs only; `task` cells are graded; `skip` cells (the
figure, the optional experiments) do not run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from .codec import ShapeError, from_line, to_line
from .wire import CELL_RULES

CellRole = Literal["setup", "lesson", "task", "skip"]
ROLES: tuple[CellRole, ...] = get_args(CellRole)
SETUP, LESSON_ONLY, TASK, SKIP = ROLES


@dataclass(frozen=True)
class CellSpec:
    index: int
    source: str
    offset: int  # added to a line of `source` to give the line shown to the learner
    role: CellRole
    report: tuple[str, ...]  # names whose values are reported after the cell
    asks: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """The names each rule the child runs watches in this cell, by the rule's wire key
    (`wire.CELL_RULES`): {"jit": functions whose calls are repeated under jit}."""
    varies: tuple[str, ...] = ()
    """Names a scenario may change where this task's cell binds them (a `ChangedCall` whose
    `call` is the bare name): the runner changes one between the statement that binds it and
    the next (`cells.compile_cell`)."""

    def __post_init__(self) -> None:
        unknown = sorted(set(self.asks) - set(CELL_RULES))
        if unknown:
            raise ShapeError(f"cell {self.index}: no rule the child runs is called {unknown}")


@dataclass(frozen=True)
class ChangedCall:
    """A library call whose results a scenario changes: `transform(result, key, value)`.

    `call` is "gradients" (every derivative JAX computes, however the cell asks for it:
    `differentiation.py`), a `module.function` name such as "optax.apply_updates", a
    `module.Class.field` name of a function each instance of a named tuple carries
    ("optax.GradientTransformation.update"), or a bare name a task's cell binds ("g"), changed
    where the cell binds it (`CellSpec.varies`);
    `transform` names a row of `transforms.TRANSFORMS`.
    """

    call: str
    transform: str
    key: str
    value: float | tuple[float, ...] | None
    # A shift's bend (depth, frequency, phase): each leaf t moves by
    # value * (1 + depth * sin(frequency * t + phase)), so how far a result moves depends on
    # the result itself and a call on an answer the cell knows learns nothing of another's.
    bend: tuple[float, float, float] | None = None


@dataclass(frozen=True)
class ScenarioSpec:
    """One run of the file. Drawn input sets and probes are scenarios of the same shape:
    values for names the steps assign (`inputs`) and library calls changed (`sources`)."""

    name: str
    inputs: dict[str, Any] | None  # replacement values for names the steps assign, or None
    sources: tuple[ChangedCall, ...] = ()  # the calls this scenario changes
    lesson_only_cells: bool = False  # also run the lesson-only cells (lesson inputs only)


@dataclass(frozen=True)
class Request:
    id: str
    preload: tuple[str, ...]
    budget: float | None  # seconds for learner code, or None for the trusted reference
    cells: tuple[CellSpec, ...]
    checkpoint: int | None  # after this cell the step names are reported
    checkpoint_names: tuple[str, ...]
    scenarios: tuple[ScenarioSpec, ...]
    cpu_seconds: float | None  # CPU the request may use (`run.limits.cpu_allowance`), or None

    def to_line(self) -> bytes:
        """The request as the one JSON line the child reads."""
        return to_line(self)

    @classmethod
    def from_line(cls, line: str | bytes) -> Request:
        """A request line read back, or `codec.ShapeError`."""
        return from_line(cls, line)
