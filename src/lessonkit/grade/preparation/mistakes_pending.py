"""The declared mistakes' runs on their way: kept by the reference store, or sent to the
trusted reference child and collected from it, then kept (`grade/channel/reference_store.py`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from lessonkit.grade.channel.child_handle import ChildHandle
from lessonkit.grade.channel.child_report import ChildReport
from lessonkit.grade.channel.protocol import Request
from lessonkit.grade.channel.reference_store import ReferenceStore
from lessonkit.grade.preparation.mistakes import (
    MistakeRequest,
    MistakeRun,
    mistake_requests,
    mistake_runs,
)
from lessonkit.grade.preparation.prepared import PreparedLesson, stored_under


@dataclass(frozen=True)
class PendingMistakes:
    """Every mistake request, the reports the store keeps (None: sent to the child), and
    where each is stored."""

    requests: tuple[MistakeRequest, ...]
    kept: tuple[ChildReport | None, ...]
    names: dict[str, str]
    store: ReferenceStore | None
    stored_as: tuple[tuple[str, str], ...]

    def collect(
        self, ask: Callable[[Request], ChildHandle], limit: float
    ) -> tuple[MistakeRun, ...]:
        """Each request's report: the kept one, else the child's, which is then stored.

        `ask(request)` sends one request to the reference child and returns the child; each
        is sent only once the one before is collected, so neither side ever waits on a full
        pipe while the other waits on it."""
        child_reports = []
        for sent, kept, stored_as in zip(self.requests, self.kept, self.stored_as, strict=True):
            if kept is None:
                child = ask(sent.request)
                deadline = time.monotonic() + limit
                kept = child.collect(sent.request, deadline, timeout=limit, names=self.names)
                if self.store is not None and kept.stop_reason is None:
                    self.store.save(*stored_as, kept)
            child_reports.append(kept)
        return mistake_runs(self.requests, child_reports)


def pending_mistakes(prepared: PreparedLesson, prefix: str) -> PendingMistakes:
    """The lesson's mistake requests, on the reference's scenarios under its names and kept
    in its store, with what the store already keeps of them."""
    run, seed = prepared.reference_run, prepared.inputs.seed
    requests = mistake_requests(prepared, run.names, prefix)
    stored = tuple(
        stored_under(prepared.lesson, seed, run.store, r.request, run.names) for r in requests
    )
    kept = tuple(None if run.store is None else run.store.load(*key) for key in stored)
    return PendingMistakes(requests, kept, run.names, run.store, stored)
