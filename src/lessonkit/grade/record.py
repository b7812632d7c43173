"""One request's reports, indexed by scenario and cell, and where the run stopped if it did."""

from __future__ import annotations

from dataclasses import dataclass

from lessonkit.grade.runner import Outcome
from lessonkit.grade.values import Value


@dataclass(frozen=True)
class CellRun:
    status: str  # "ok" or "error"
    output: str
    error: dict | None
    values: dict[str, Value]
    checkpoint: dict[str, Value] | None
    hook: str | None  # for probe scenarios: "applied", "not applied" or why it failed


@dataclass(frozen=True)
class RunRecord:
    runs: dict[tuple[str, int], CellRun]
    stopped_at: tuple[str, int] | None  # (scenario, cell) where the run stopped early
    stop_reason: str | None
    patched: tuple[str, ...]

    def get(self, scenario: str, index: int) -> CellRun | None:
        return self.runs.get((scenario, index))


def record_from(outcome: Outcome, timeout: float) -> RunRecord:
    runs = {}
    stopped_at, reason = outcome.in_flight, outcome.ended
    for event in outcome.events:
        key = (event.get("scenario", ""), int(event.get("cell", -1)))
        error = event.get("error")
        runs[key] = CellRun(
            status=event.get("status", "error"),
            output=event.get("output", ""),
            error=error,
            values=event.get("values") or {},
            checkpoint=event.get("checkpoint"),
            hook=event.get("hook"),
        )
        if error and error.get("kind") == "timeout":
            stopped_at, reason = key, f"the time limit of {timeout:g} s ran out"
    if not outcome.finished and reason is None:
        reason = "the run stopped"
    if not outcome.finished and reason == "the run did not finish in time":
        reason = f"the run did not finish within the time limit of {timeout:g} s"
    return RunRecord(runs, stopped_at, reason, outcome.patched)
