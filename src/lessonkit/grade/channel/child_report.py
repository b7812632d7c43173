"""The one result of a grading run: a request's reports by (scenario, cell), and where the run
stopped if it did. `WorkerHandle.collect` builds it from what the child sent; the checks read it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from lessonkit.grade.channel.protocol import CellReport

Cell = tuple[str, int]  # (scenario, cell index)


@dataclass(frozen=True)
class ChildReport:
    runs: dict[Cell, CellReport]
    stopped_at: Cell | None  # (scenario, cell) where the run stopped early
    stop_reason: str | None  # None: the run finished every cell of every scenario
    patched: tuple[str, ...]
    interfered: str | None = None  # why the run's reports cannot be trusted at all

    def get(self, scenario: str, index: int) -> CellReport | None:
        return self.runs.get((scenario, index))


def child_report(
    events: Iterable[CellReport],
    *,
    finished: bool,
    timeout: float,
    ended: str | None = None,
    in_flight: Cell | None = None,
    patched: tuple[str, ...] = (),
    interfered: str | None = None,
    names: dict[str, str] | None = None,
) -> ChildReport:
    """Index one request's reports; `names` turns the scenario names the child saw back into
    the parent's own (the child is not told which scenario is which). `ended` says why an
    unfinished run stopped, `in_flight` which cell was running then."""
    names = names or {}
    runs = {}
    stopped_at, reason = in_flight, ended
    if stopped_at is not None:
        stopped_at = (names.get(stopped_at[0], stopped_at[0]), stopped_at[1])
    for event in events:
        key = (names.get(event.scenario, event.scenario), event.cell)
        runs[key] = event
        if event.error and event.error.kind == "timeout":
            stopped_at, reason = key, f"the time limit of {timeout:g} s ran out"
    if not finished and reason is None:
        reason = "the run stopped"
    if not finished and reason == "the run did not finish in time":
        reason = f"the run did not finish within the time limit of {timeout:g} s"
    return ChildReport(runs, stopped_at, reason, patched, interfered)
