"""The typed protocol between the grading parent and its children.

Requests go to a child as JSON lines built from the frozen dataclasses that both sides
load from `lessonkit.grading_child.request` (re-exported here, the parent's front). Reports come
back as JSON lines that are *data from an untrusted process*: a child that has run learner code
may write anything to its report channel. `parse_event` therefore accepts only the exact
shapes below (every field type- and range-checked, unknown or duplicate keys rejected,
sizes capped) and raises `Interference` for anything else; the grader turns that into the
verdict "the submission interfered with the grader", never a crash and never a pass.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
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
from lessonkit.grading_child.request import (  # noqa: F401 - the request's shape, re-exported
    CellSpec,
    ChangedCall,
    Request,
    ScenarioSpec,
)
from lessonkit.grading_child.wire import (
    CELL_RULES,
    CELL_STATUSES,
    ERROR,
    ERROR_KINDS,
    EVENT_TAG,
    EVENTS,
    MAX_MESSAGE,
    MAX_OUTPUT,
    OUTCOME,
)

CellStatus = Literal["ok", "error"]
ErrorKind = Literal["syntax", "exception", "timeout", "exit", "interrupt"]

MAX_LINE = 8 * 2**20  # bytes in one report line
MAX_FRAMES = 16


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
class RuleOutcome:
    """How one name a rule the child runs watched fared (`jit:`: the function called through
    `jax.jit`); `status` is one of the rule's in `child.wire.CELL_RULES`."""

    name: str
    status: str
    error: ErrorInfo | None = None  # with "error": what the hook's repeat raised


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
    rules: tuple[tuple[str, tuple[RuleOutcome, ...]], ...] = ()  # (wire key, its outcomes)
    placeholder: ErrorInfo | None = None  # the first `todo(...)` that ran, escaped or caught
    reached: bool = False  # the scenario changed a derivative the cell took or a name it bound

    def outcomes(self, key: str) -> tuple[RuleOutcome, ...]:
        """What the hook of the rule with wire key `key` reported; none when not asked."""
        return dict(self.rules).get(key, ())


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


def _outcomes(key: str, data: object) -> tuple[RuleOutcome, ...]:
    """The outcomes a rule's hook reported under its wire key `key`."""
    if type(data) is not list or len(data) > 16:
        raise Interference(f"a cell report's {key} outcomes are malformed")
    statuses = CELL_RULES[key][1]
    out = []
    for entry in data:
        required, optional = OUTCOME
        entry = fields(entry, required, optional)
        status = entry["status"]
        if type(status) is not str or status not in statuses:
            raise Interference(f"a {key} outcome has an unknown status")
        if (status == "error") != ("error" in entry):
            raise Interference(f"a {key} outcome's status and error disagree")
        error = _error(entry["error"]) if "error" in entry else None
        out.append(RuleOutcome(text(entry["name"]), status, error))
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
    if data.get("reached", True) is not True:
        raise Interference("a cell report's 'reached' is not true")
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
        rules=tuple((key, _outcomes(key, data[key])) for key in CELL_RULES if key in data),
        placeholder=_error(data["placeholder"]) if "placeholder" in data else None,
        reached="reached" in data,
    )
