"""A reference run's report as JSON, and back through the same strict reader as a child's reports.

The reference store (`grade/channel/reference_store.py`) keeps a finished reference run on disk.
What
it writes is each cell's report in the wire's own shapes (`grading_child/wire.py`), keyed by the
parent's scenario names, so reading it back goes through `protocol.parse_event`: a file that
was cut short, edited or written by another version fails there like any malformed report,
and the caller recomputes instead of trusting it.
"""

from __future__ import annotations

import json
from typing import Any

from lessonkit.grade.channel.child_report import ChildReport
from lessonkit.grade.channel.protocol import CellReport, ErrorInfo, RuleOutcome, parse_event
from lessonkit.grade.channel.reported import (
    Array,
    Interference,
    KeyArray,
    Mapping,
    Module,
    NoneValue,
    Number,
    Sequence,
    Text,
    Value,
)
from lessonkit.grading_child.wire import event, value


class BadChildReport(ValueError):
    """A stored report that cannot be read back exactly: ignore it and recompute."""


def encode_value(data: Value) -> dict[str, Any]:
    """One parsed value in the shape the child sent it (`wire.VALUES`)."""
    if isinstance(data, NoneValue):
        return value("none")
    if isinstance(data, Number):
        return value("number", type=data.type, value=data.value)
    if isinstance(data, Text):
        return value("str", value=data.value, length=data.length)
    if isinstance(data, Module):
        return value("module", name=data.name)
    if isinstance(data, Array | KeyArray):
        entries: dict[str, Any] = {"dtype": data.dtype, "shape": list(data.shape)}
        if isinstance(data, KeyArray):
            entries["impl"] = data.impl
        if data.data is not None:
            entries["data"] = list(data.data)
        return value("key" if isinstance(data, KeyArray) else "array", **entries)
    if isinstance(data, Mapping):
        items = [[key, encode_value(item)] for key, item in data.items]
        return value("dict", type=data.type, items=items)
    if isinstance(data, Sequence):
        entries = {"type": data.type, "items": [encode_value(item) for item in data.items]}
        if data.fields:
            entries["fields"] = list(data.fields)
        return value("seq", **entries)
    if data.kind == "big":
        return value("big", type=data.type, why=data.note or "")
    return value("other", type=data.type, **({"note": data.note} if data.note else {}))


def _encode_error(error: ErrorInfo) -> dict[str, Any]:
    out: dict[str, Any] = {
        "kind": error.kind,
        "type": error.type,
        "module": error.module,
        "message": error.message,
        "frames": [list(frame) for frame in error.frames],
    }
    if error.exit_code is not None:
        out["exit_code"] = error.exit_code
    if error.trees:
        out["trees"] = [[name, encode_value(tree)] for name, tree in error.trees]
    return out


def _encode_outcome(outcome: RuleOutcome) -> dict[str, Any]:
    out: dict[str, Any] = {"name": outcome.name, "status": outcome.status}
    if outcome.error is not None:
        out["error"] = _encode_error(outcome.error)
    return out


def encode_report(report: CellReport) -> dict[str, Any]:
    """One cell's report as the child's `cell` event."""
    entries: dict[str, Any] = {
        "request": report.request,
        "scenario": report.scenario,
        "cell": report.cell,
        "status": report.status,
        "output": report.output,
        "values": {name: encode_value(v) for name, v in report.values.items()},
    }
    if report.error is not None:
        entries["error"] = _encode_error(report.error)
    if report.checkpoint is not None:
        entries["checkpoint"] = {name: encode_value(v) for name, v in report.checkpoint.items()}
    for key, outcomes in report.rules:
        if outcomes:
            entries[key] = [_encode_outcome(outcome) for outcome in outcomes]
    if report.placeholder is not None:
        entries["placeholder"] = _encode_error(report.placeholder)
    if report.reached:
        entries["reached"] = True
    return event("cell", **entries)


def encode_child_report(child_report: ChildReport) -> dict[str, Any]:
    """A finished run's report: its cells by the parent's scenario names, in no set order.

    Only a run that finished cleanly is kept; a stopped one is never worth reusing."""
    if child_report.stop_reason is not None or child_report.interfered is not None:
        raise ValueError("only a run that finished cleanly is kept")
    cells = [
        [scenario, index, encode_report(report)]
        for (scenario, index), report in sorted(child_report.runs.items())
    ]
    return {"patched": list(child_report.patched), "cells": cells}


def decode_child_report(data: object) -> ChildReport:
    """`encode_child_report`'s output back as a report, read as strictly as a child's reports.

    Raises:
        BadChildReport: anything that is not exactly such a report.
    """
    if type(data) is not dict or set(data) != {"patched", "cells"}:
        raise BadChildReport("not a stored report")
    patched, cells = data["patched"], data["cells"]
    if type(patched) is not list or not all(type(p) is str for p in patched):
        raise BadChildReport("a stored report's patched calls are malformed")
    if type(cells) is not list:
        raise BadChildReport("a stored report's cells are malformed")
    runs: dict[tuple[str, int], CellReport] = {}
    for entry in cells:
        if type(entry) is not list or len(entry) != 3:
            raise BadChildReport("a stored cell is malformed")
        scenario, index, raw = entry
        if type(scenario) is not str or type(index) is not int or (scenario, index) in runs:
            raise BadChildReport("a stored cell is malformed or repeated")
        try:
            report = parse_event(json.dumps(raw).encode())
        except (Interference, TypeError, ValueError) as exc:
            raise BadChildReport(f"a stored cell report is malformed ({exc})") from None
        if not isinstance(report, CellReport) or report.cell != index:
            raise BadChildReport("a stored cell report does not match its cell")
        runs[(scenario, index)] = report
    return ChildReport(runs, None, None, tuple(patched))
