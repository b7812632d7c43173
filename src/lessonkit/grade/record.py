"""One request's reports, indexed by scenario and cell, and where the run stopped if it did."""

from __future__ import annotations

from dataclasses import dataclass

from lessonkit.grade.protocol import CellReport
from lessonkit.grade.worker_handle import Outcome


@dataclass(frozen=True)
class RunRecord:
    runs: dict[tuple[str, int], CellReport]
    stopped_at: tuple[str, int] | None  # (scenario, cell) where the run stopped early
    stop_reason: str | None
    patched: tuple[str, ...]
    interfered: str | None = None  # why the run's reports cannot be trusted at all

    def get(self, scenario: str, index: int) -> CellReport | None:
        return self.runs.get((scenario, index))


def record_from(outcome: Outcome, timeout: float, names: dict[str, str] | None = None) -> RunRecord:
    """The run's reports by (scenario, cell); `names` turns the names the child saw back
    into the parent's own (the child is not told which scenario is which)."""
    names = names or {}
    runs = {}
    stopped_at, reason = outcome.in_flight, outcome.ended
    if stopped_at is not None:
        stopped_at = (names.get(stopped_at[0], stopped_at[0]), stopped_at[1])
    for event in outcome.events:
        key = (names.get(event.scenario, event.scenario), event.cell)
        runs[key] = event
        if event.error and event.error.kind == "timeout":
            stopped_at, reason = key, f"the time limit of {timeout:g} s ran out"
    if not outcome.finished and reason is None:
        reason = "the run stopped"
    if not outcome.finished and reason == "the run did not finish in time":
        reason = f"the run did not finish within the time limit of {timeout:g} s"
    return RunRecord(runs, stopped_at, reason, outcome.patched, outcome.interfered)
