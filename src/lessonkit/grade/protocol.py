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
import re
from dataclasses import asdict, dataclass
from typing import Any, Literal

from lessonkit.text import safe_text

CellRole = Literal["setup", "lesson", "task", "skip"]
CellStatus = Literal["ok", "error"]
ErrorKind = Literal["syntax", "exception", "timeout", "exit", "interrupt"]
HookState = Literal["applied", "not applied", "failed"]

MAX_LINE = 8 * 2**20  # bytes in one report line
MAX_TEXT = 240  # characters of a reported string value
MAX_MESSAGE = 4 * MAX_TEXT
MAX_OUTPUT = 12_000  # captured output per cell (the child keeps head and tail)
MAX_NAME = 120
MAX_ELEMENTS = 4096  # array entries sent as data
MAX_NODES = 4096  # value nodes in one report
MAX_DEPTH = 32
MAX_FRAMES = 16

Value = dict[str, Any]  # a reported value, validated by `check_value`


class Interference(Exception):
    """A report that no honest child writes: the run cannot be trusted at all."""


# --------------------------------------------------------------------------- requests


@dataclass(frozen=True)
class CellSpec:
    index: int
    source: str
    offset: int  # added to a line of `source` to give the line shown to the learner
    role: CellRole
    report: tuple[str, ...]  # names whose values are reported after the cell
    answers: tuple[str, ...]  # names the cell must compute: reported when they alias


@dataclass(frozen=True)
class Hook:
    """Replace `name` by `transform(name, key, value)` whenever cell `cell` binds it."""

    cell: int
    name: str
    transform: str
    key: str
    value: float | tuple[float, ...] | None


@dataclass(frozen=True)
class ScenarioSpec:
    name: str
    inputs: dict[str, Any] | None  # replacement values for the input names, or None
    lesson_only_cells: bool = False  # also run the lesson-only cells (lesson inputs only)
    until: int | None = None  # last cell to run
    hook: Hook | None = None


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
    hook: HookState | None
    aliases: dict[str, str]  # answer name -> the name it is the same object as


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


def _keys(data: object, required: set[str], optional: frozenset[str] = frozenset()) -> dict:
    if type(data) is not dict:
        raise Interference("a report field is not an object")
    keys = set(data)
    if not required <= keys or not keys <= required | optional:
        extra = sorted(keys - required - optional) or sorted(required - keys)
        raise Interference(f"a report has unexpected or missing fields ({', '.join(extra)})")
    return data


def _str(value: object, limit: int = MAX_NAME) -> str:
    """A text field, with surrogates and control characters made harmless."""
    if type(value) is not str or len(value) > limit:
        raise Interference("a report holds a text field of the wrong type or size")
    return safe_text(value)


def _int(value: object, low: int = 0, high: int = 2**31) -> int:
    if type(value) is not int or not low <= value <= high:
        raise Interference("a report holds a number out of range")
    return value


def _finite_or_not(value: object) -> float | int | bool:
    if type(value) not in (int, float, bool):
        raise Interference("array data holds something that is not a number")
    if type(value) is int and abs(value) > 2**64:
        raise Interference("array data holds an integer out of range")
    return value


_DTYPE = re.compile(r"[a-z0-9_<>\[\]]{1,32}")


class _Budget:
    def __init__(self) -> None:
        self.nodes = 0

    def take(self) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise Interference("a report holds more values than any honest run sends")


def check_value(value: object, budget: _Budget | None = None, depth: int = 0) -> Value:
    """Validate one reported value; return it unchanged or raise `Interference`."""
    budget = budget or _Budget()
    budget.take()
    if depth > MAX_DEPTH:
        raise Interference("a reported value is nested too deeply")
    if type(value) is not dict:
        raise Interference("a reported value is not an object")
    tag = value.get("t")
    if tag == "none":
        _keys(value, {"t"})
    elif tag == "number":
        _keys(value, {"t", "type", "value"})
        kind = value["type"]
        expected = {"bool": bool, "int": int, "float": float}.get(kind)
        number = value["value"]
        big_int = kind == "int" and type(number) is float  # ints beyond 2**53 come as floats
        if expected is None or (type(number) is not expected and not big_int):
            raise Interference("a reported number does not match its type")
    elif tag == "str":
        _keys(value, {"t", "value", "length"})
        value["value"] = _str(value["value"], MAX_TEXT)
        _int(value["length"], 0, 2**40)
    elif tag in ("array", "key"):
        fields = {"t", "dtype", "shape"} | ({"impl"} if tag == "key" else set())
        _keys(value, fields, frozenset({"data"}))
        if type(value["dtype"]) is not str or not _DTYPE.fullmatch(value["dtype"]):
            raise Interference("a reported dtype is malformed")
        shape = value["shape"]
        if type(shape) is not list or len(shape) > 32:
            raise Interference("a reported shape is malformed")
        size = 1
        for d in shape:
            size *= _int(d, 0, 2**40)
        if tag == "key":
            value["impl"] = _str(value["impl"], 40)
        if "data" in value:
            data = value["data"]
            if type(data) is not list or len(data) > MAX_ELEMENTS * 4:
                raise Interference("reported array data is malformed")
            if tag == "array" and len(data) != size:
                raise Interference("reported array data does not match its shape")
            if tag == "key" and size and len(data) % size:
                raise Interference("reported key data does not match its shape")
            for item in data:
                _finite_or_not(item)
    elif tag == "module":
        _keys(value, {"t", "name"})
        value["name"] = _str(value["name"])
    elif tag == "dict":
        _keys(value, {"t", "type", "items"})
        if value["type"] != "dict" or type(value["items"]) is not list:
            raise Interference("a reported dict is malformed")
        seen = set()
        for pair in value["items"]:
            if type(pair) is not list or len(pair) != 2:
                raise Interference("a reported dict entry is malformed")
            key = pair[0]
            if type(key) not in (str, int, float, bool) or (type(key) is str and len(key) > 200):
                raise Interference("a reported dict key is malformed")
            if (type(key), key) in seen:
                raise Interference("a reported dict repeats a key")
            seen.add((type(key), key))
            if type(key) is str:
                pair[0] = safe_text(key)
            check_value(pair[1], budget, depth + 1)
    elif tag == "seq":
        _keys(value, {"t", "type", "items"})
        value["type"] = _str(value["type"])
        if type(value["items"]) is not list:
            raise Interference("a reported sequence is malformed")
        for item in value["items"]:
            check_value(item, budget, depth + 1)
    elif tag == "big":
        _keys(value, {"t", "type", "why"})
        value["type"] = _str(value["type"])
        value["why"] = _str(value["why"])
    elif tag == "other":
        _keys(value, {"t", "type"}, frozenset({"note"}))
        value["type"] = _str(value["type"])
        if "note" in value:
            value["note"] = _str(value["note"])
    else:
        raise Interference("a reported value has an unknown kind")
    return value


def _values(data: object, budget: _Budget) -> dict[str, Value]:
    if type(data) is not dict or len(data) > 256:
        raise Interference("reported values are malformed")
    return {_str(name): check_value(v, budget) for name, v in data.items()}


_ERROR_KINDS = frozenset({"syntax", "exception", "timeout", "exit", "interrupt"})


def _error(data: object) -> ErrorInfo:
    data = _keys(
        data, {"kind", "type", "module", "message", "frames"}, frozenset({"exit_code", "trees"})
    )
    if data["kind"] not in _ERROR_KINDS:
        raise Interference("a reported error has an unknown kind")
    frames = data["frames"]
    if type(frames) is not list or len(frames) > MAX_FRAMES:
        raise Interference("a reported traceback is malformed")
    parsed = []
    for frame in frames:
        if type(frame) is not list or len(frame) != 3:
            raise Interference("a reported traceback frame is malformed")
        parsed.append((_int(frame[0]), _int(frame[1]), _int(frame[2], 1)))
    exit_code = data.get("exit_code")
    if exit_code is not None and type(exit_code) is not int:
        exit_code = _str(exit_code, 80)
    trees = data.get("trees", [])
    if type(trees) is not list or len(trees) > 4:
        raise Interference("a reported error's trees are malformed")
    budget = _Budget()
    for pair in trees:
        if type(pair) is not list or len(pair) != 2:
            raise Interference("a reported error's trees are malformed")
    return ErrorInfo(
        kind=data["kind"],
        type=_str(data["type"]),
        module=_str(data["module"]),
        message=_str(data["message"], MAX_MESSAGE),
        frames=tuple(parsed),
        exit_code=exit_code,
        trees=tuple((_str(name), check_value(value, budget)) for name, value in trees),
    )


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
    kind = data.get("event")
    if kind == "ready":
        data = _keys(data, {"event", "jax", "python"})
        return Ready(_str(data["jax"], 40), _str(data["python"], 40))
    if kind == "start":
        data = _keys(data, {"event", "request", "scenario", "cell"})
        return Start(_str(data["request"]), _str(data["scenario"]), _int(data["cell"]))
    if kind == "done":
        data = _keys(data, {"event", "request", "timed_out", "patched"})
        patched = data["patched"]
        if type(data["timed_out"]) is not bool or type(patched) is not list or len(patched) > 200:
            raise Interference("a 'done' report is malformed")
        return Done(_str(data["request"]), data["timed_out"], tuple(_str(p) for p in patched))
    if kind == "cell":
        data = _keys(
            data,
            {"event", "request", "scenario", "cell", "status", "output"},
            frozenset({"error", "values", "checkpoint", "hook", "aliases"}),
        )
        if data["status"] not in ("ok", "error"):
            raise Interference("a cell report has an unknown status")
        if (data["status"] == "error") != ("error" in data):
            raise Interference("a cell report's status and error disagree")
        hook = data.get("hook")
        if hook is not None and hook not in ("applied", "not applied", "failed"):
            raise Interference("a cell report has an unknown probe state")
        budget = _Budget()
        aliases = data.get("aliases", {})
        if type(aliases) is not dict or len(aliases) > 64:
            raise Interference("a cell report's aliases are malformed")
        checkpoint = data.get("checkpoint")
        return CellReport(
            request=_str(data["request"]),
            scenario=_str(data["scenario"]),
            cell=_int(data["cell"]),
            status=data["status"],
            output=_str(data["output"], MAX_OUTPUT),
            error=_error(data["error"]) if "error" in data else None,
            values=_values(data.get("values", {}), budget),
            checkpoint=None if checkpoint is None else _values(checkpoint, budget),
            hook=hook,
            aliases={_str(k): _str(v) for k, v in aliases.items()},
        )
    raise Interference("a report line has an unknown event")
