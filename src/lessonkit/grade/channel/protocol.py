"""The typed protocol between the grading parent and its children.

Requests go to a child as JSON lines built from frozen dataclasses. Reports come back as
JSON lines that are *data from an untrusted process*: a child that has run learner code
may write anything to its report channel. `parse_event` therefore accepts only the exact
shapes below (every field type- and range-checked, unknown or duplicate keys rejected,
sizes capped) and raises `Interference` for anything else; the grader turns that into the
verdict "the submission interfered with the grader", never a crash and never a pass.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Literal

from lessonkit.grade.channel.reported import (
    Budget,
    Interference,
    Value,
    fields,
    integer,
    parse_value,
    text,
)
from lessonkit.grading_child.wire import (
    CELL_STATUSES,
    ERROR,
    ERROR_KINDS,
    EVENT_TAG,
    EVENTS,
    JIT,
    JIT_STATUSES,
    MAX_MESSAGE,
    MAX_OUTPUT,
)

CellRole = Literal["setup", "lesson", "task", "skip"]
CellStatus = Literal["ok", "error"]
ErrorKind = Literal["syntax", "exception", "timeout", "exit", "interrupt"]
JitStatus = Literal["ok", "error", "not called", "not defined"]

MAX_LINE = 8 * 2**20  # bytes in one report line
MAX_FRAMES = 16


# --------------------------------------------------------------------------- requests


@dataclass(frozen=True)
class CellSpec:
    index: int
    source: str
    offset: int  # added to a line of `source` to give the line shown to the learner
    role: CellRole
    report: tuple[str, ...]  # names whose values are reported after the cell
    jit: tuple[str, ...] = ()  # functions the cell defines whose calls are repeated under jit


@dataclass(frozen=True)
class ChangedCall:
    """A library call whose results a scenario changes: `transform(result, key, value)`.

    `call` is "gradients" (every derivative jax.grad, value_and_grad, vjp, jacrev and
    jacfwd return) or a `module.function` name such as "optax.apply_updates".
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
    sources: tuple[ChangedCall, ...] = ()  # the wire key the child reads: its changed calls
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

    def to_line(self) -> bytes:
        return json.dumps(asdict(self)).encode() + b"\n"


# --------------------------------------------------------------------------- reports


@dataclass(frozen=True)
class ErrorInfo:
    kind: ErrorKind
    type: str
    module: str
    message: str
    frames: tuple[tuple[int, int, int], ...]  # (cell index, line, times in a row)
    exit_code: int | str | None = None
    trees: tuple[tuple[str, Value], ...] = ()  # for a pytree mismatch: the call's trees


@dataclass(frozen=True)
class JitOutcome:
    """How a function named in a task's `jit:` rule fared when called through `jax.jit`."""

    name: str
    status: JitStatus
    error: ErrorInfo | None = None  # with "error": what jax.jit raised


@dataclass(frozen=True)
class Ready:
    jax: str
    python: str


@dataclass(frozen=True)
class Start:
    request: str
    scenario: str
    cell: int


@dataclass(frozen=True)
class CellReport:
    request: str
    scenario: str
    cell: int
    status: CellStatus
    output: str
    error: ErrorInfo | None
    values: dict[str, Value]
    checkpoint: dict[str, Value] | None
    jit: tuple[JitOutcome, ...] = ()
    placeholder: ErrorInfo | None = None  # the first `todo(...)` that ran, escaped or caught


@dataclass(frozen=True)
class Done:
    request: str
    timed_out: bool
    patched: tuple[str, ...]


Event = Ready | Start | CellReport | Done


# --------------------------------------------------------------------------- parsing


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise Interference(f"a report repeats the key {key[:40]!r}")
        out[key] = value
    return out


def _values(data: object, budget: Budget) -> dict[str, Value]:
    if type(data) is not dict or len(data) > 256:
        raise Interference("reported values are malformed")
    return {text(name): parse_value(v, budget) for name, v in data.items()}


def _error(data: object) -> ErrorInfo:
    required, optional = ERROR
    data = fields(data, required, optional)
    if type(data["kind"]) is not str or data["kind"] not in ERROR_KINDS:
        raise Interference("a reported error has an unknown kind")
    frames = data["frames"]
    if type(frames) is not list or len(frames) > MAX_FRAMES:
        raise Interference("a reported traceback is malformed")
    parsed = []
    for frame in frames:
        if type(frame) is not list or len(frame) != 3:
            raise Interference("a reported traceback frame is malformed")
        parsed.append((integer(frame[0]), integer(frame[1]), integer(frame[2], 1)))
    exit_code = data.get("exit_code")
    if exit_code is not None and type(exit_code) is not int:
        exit_code = text(exit_code, 80)
    trees = data.get("trees", [])
    if type(trees) is not list or len(trees) > 4:
        raise Interference("a reported error's trees are malformed")
    budget = Budget()
    for pair in trees:
        if type(pair) is not list or len(pair) != 2:
            raise Interference("a reported error's trees are malformed")
    return ErrorInfo(
        kind=data["kind"],
        type=text(data["type"]),
        module=text(data["module"]),
        message=text(data["message"], MAX_MESSAGE),
        frames=tuple(parsed),
        exit_code=exit_code,
        trees=tuple((text(name), parse_value(value, budget)) for name, value in trees),
    )


def _jit(data: object) -> tuple[JitOutcome, ...]:
    if type(data) is not list or len(data) > 16:
        raise Interference("a cell report's jit outcomes are malformed")
    out = []
    for entry in data:
        required, optional = JIT
        entry = fields(entry, required, optional)
        status = entry["status"]
        if type(status) is not str or status not in JIT_STATUSES:
            raise Interference("a jit outcome has an unknown status")
        if (status == "error") != ("error" in entry):
            raise Interference("a jit outcome's status and error disagree")
        error = _error(entry["error"]) if "error" in entry else None
        out.append(JitOutcome(text(entry["name"]), status, error))
    return tuple(out)


def parse_event(line: bytes) -> Event:
    """One report line as an event, or `Interference`."""
    if len(line) > MAX_LINE:
        raise Interference("a report line is larger than any honest run writes")
    try:
        data = json.loads(line, object_pairs_hook=_reject_duplicates)
    except Interference:
        raise
    except (ValueError, RecursionError, UnicodeDecodeError):
        raise Interference("a report line is not valid JSON") from None
    if type(data) is not dict:
        raise Interference("a report line is not an object")
    kind = data.get(EVENT_TAG)
    if type(kind) is not str or kind not in EVENTS:
        raise Interference("a report line has an unknown event")
    required, optional = EVENTS[kind]
    data = fields(data, {EVENT_TAG, *required}, optional)
    if kind == "ready":
        return Ready(text(data["jax"], 40), text(data["python"], 40))
    if kind == "start":
        return Start(text(data["request"]), text(data["scenario"]), integer(data["cell"]))
    if kind == "done":
        patched = data["patched"]
        if type(data["timed_out"]) is not bool or type(patched) is not list or len(patched) > 200:
            raise Interference("a 'done' report is malformed")
        return Done(text(data["request"]), data["timed_out"], tuple(text(p) for p in patched))
    if type(data["status"]) is not str or data["status"] not in CELL_STATUSES:  # "cell"
        raise Interference("a cell report has an unknown status")
    if (data["status"] == "error") != ("error" in data):
        raise Interference("a cell report's status and error disagree")
    budget = Budget()
    checkpoint = data.get("checkpoint")
    return CellReport(
        request=text(data["request"]),
        scenario=text(data["scenario"]),
        cell=integer(data["cell"]),
        status=data["status"],
        output=text(data["output"], MAX_OUTPUT),
        error=_error(data["error"]) if "error" in data else None,
        values=_values(data.get("values", {}), budget),
        checkpoint=None if checkpoint is None else _values(checkpoint, budget),
        jit=_jit(data["jit"]) if "jit" in data else (),
        placeholder=_error(data["placeholder"]) if "placeholder" in data else None,
    )
