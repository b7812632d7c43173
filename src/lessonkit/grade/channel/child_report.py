"""The one result of a grading run: a request's reports by (scenario, cell), where the run
stopped if it did, and how it ended (`Ending`). `ChildHandle.collect` builds it from what the
child sent; the checks read it; `settled` decides between a run and its retry.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal

from lessonkit.grade.channel.protocol import CellReport

Cell = tuple[str, int]  # (scenario, cell index)

Ending = Literal[
    "finished",
    "interfered",
    "time limit",
    "exit status",
    "learner limit",
    "crash",
    "unstarted",
    "stopped by grader",
    "grader failure",
]
"""How a learner child's run ended. `finished`: every cell of every scenario ran. The
learner's doing, once the file's first cell began: `interfered` (a report no honest child
writes), `time limit`, `exit status` (os._exit, a crash that exits), `learner limit` (its
CPU time or file size) and `crash` (any other signal: an abort, a segmentation fault, a
kill the grader did not send), each with the cell it stopped in, wherever that is. The
grader's: `unstarted`, the child did not start or ended before the file's first cell
began; `stopped by grader`, the grader ended it (its starter ended, or the grader closed
it while it ran); and `grader failure`, a run and its retry that ended so (`settled`)."""

RETRIED: tuple[Ending, ...] = ("unstarted", "stopped by grader")
"""Endings that are the grader's: the file is run once more, in a fresh child (`settled`)."""


@dataclass(frozen=True)
class ChildReport:
    runs: dict[Cell, CellReport]
    stopped_at: Cell | None  # (scenario, cell) where the run stopped early
    stop_reason: str | None  # None: the run finished every cell of every scenario
    patched: tuple[str, ...]
    interfered: str | None = None  # why the run's reports cannot be trusted at all
    ending: Ending = "finished"

    def get(self, scenario: str, index: int) -> CellReport | None:
        return self.runs.get((scenario, index))


def child_report(
    events: Iterable[CellReport],
    *,
    finished: bool,
    timeout: float,
    ended: str | None = None,
    ending: Ending = "finished",
    in_flight: Cell | None = None,
    patched: tuple[str, ...] = (),
    interfered: str | None = None,
    names: dict[str, str] | None = None,
) -> ChildReport:
    """Index one request's reports; `names` turns the scenario names the child saw back into
    the parent's own (the child is not told which scenario is which). `ended` says why an
    unfinished run stopped and `ending` how, `in_flight` which cell was running then."""
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
            ending = "time limit"
    if not finished and reason is None:
        reason = "the run stopped"
    if not finished and reason == "the run did not finish in time":
        reason = f"the run did not finish within the time limit of {timeout:g} s"
    return ChildReport(runs, stopped_at, reason, patched, interfered, ending)


def unstarted(reason: str) -> ChildReport:
    """The report of a child that never ran a line of the file: `reason` says why."""
    return ChildReport({}, None, reason, (), ending="unstarted")


def settled(first: ChildReport, second: ChildReport) -> ChildReport:
    """The report a file keeps when its first run ended in `RETRIED` and `second` is the
    same request run again in a fresh child: the second where it ended otherwise (its
    verdicts are the learner's), else a `grader failure`, naming both causes."""
    if second.ending not in RETRIED:
        return second
    causes = [first.stop_reason or "", second.stop_reason or ""]
    cause = causes[0] if causes[0] == causes[1] else f"{causes[0]}; run again: {causes[1]}"
    return replace(second, ending="grader failure", stop_reason=cause)
