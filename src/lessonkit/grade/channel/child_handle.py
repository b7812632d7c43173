"""The parent's side of a grading child: start it, send a request, read reports, stop it.

Two kinds of child share this code. The *reference* child is trusted: it runs only the
lesson's own code, unsandboxed, and may write JAX's compilation cache. A *learner* child
runs one learner's file in the OS sandbox and is never reused for anything else; whatever
it reports is parsed strictly (`protocol.parse_event`) and checked against the request it
was sent, and the first report that no honest child writes ends it with `interfered` set.

Lifecycle: `ChildHandle(...)` starts the child at once, through `run/confined_child.py` as
every confined child is (it imports JAX while the parent reads the lesson and the file);
`send` queues a request; `collect` reads that request's reports until it is done, its
deadline passes, or the child ends; `close` kills everything it started (process group,
cgroup, PID namespace) and is safe to call twice.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lessonkit.defaults import CHILD_EXIT_WAIT_S
from lessonkit.errors import LessonkitError
from lessonkit.grade.channel.child_report import ChildReport, Ending, child_report
from lessonkit.grade.channel.protocol import (
    MAX_LINE,
    CellReport,
    Done,
    Event,
    Interference,
    Ready,
    Request,
    Start,
    parse_event,
)
from lessonkit.run.confined_child import start_confined
from lessonkit.run.import_paths import encoded_import_paths
from lessonkit.run.isolation import UNSANDBOXED, Isolation
from lessonkit.run.limits import DEFAULT_LIMITS, Limits
from lessonkit.run.process import describe_end, end_kind
from lessonkit.run.starter import Starter

CHILD_FOLDER = Path(__file__).resolve().parents[2] / "grading_child"  # the grading child's program
CHILD_SCRIPT = CHILD_FOLDER / "main.py"  # run by path; it loads the rest of the folder
MAX_REPORT_BYTES = 64 * 2**20


def grading_starter(isolation: Isolation, limits: Limits, preload: Sequence[str] = ()) -> Starter:
    """The starter that forks this grader's children (see `run/starter.py`), with the
    modules in `preload` imported once for all of them."""
    return Starter(CHILD_FOLDER, isolation=isolation, limits=limits, preload=preload)


class GradingError(LessonkitError):
    """The grader itself cannot run: the child does not start or the lesson's code fails."""


@dataclass
class _Reader:
    """Report lines from the child, parsed strictly; the first bad one stops reading."""

    fd: int
    buffer: bytes = b""
    received: int = 0
    interfered: str | None = None
    eof: bool = False
    pending: list[Event] = field(default_factory=list)

    def read(self, timeout: float) -> None:
        ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        if not ready:
            return
        chunk = os.read(self.fd, 1 << 16)
        if not chunk:
            self.eof = True
            return
        self.received += len(chunk)
        if self.received > MAX_REPORT_BYTES:
            self.interfered = "the run wrote more report data than any honest run does"
            return
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        if len(self.buffer) > MAX_LINE:
            self.interfered = "a report line is larger than any honest run writes"
            return
        for line in lines:
            try:
                self.pending.append(parse_event(line))
            except Interference as exc:
                self.interfered = str(exc)
                return


class ChildHandle:
    """One grading child process: the trusted reference, or one sandboxed learner run."""

    def __init__(
        self,
        *,
        trusted: bool,
        isolation: Isolation = UNSANDBOXED,
        limits: Limits = DEFAULT_LIMITS,
        starter: Starter | None = None,
    ):
        """`isolation` applies to a learner child (the trusted one alone may write the
        compile cache); `limits` to both. Both are forked by `starter` where there is one
        (`grading_starter`: the trusted one as its reference fork), else started from
        scratch (the trusted one then unsandboxed)."""
        self.trusted = trusted
        self._sent: Request | None = None
        read_fd, write_fd = os.pipe()
        paths = encoded_import_paths()
        try:
            if starter is not None:
                self._child = starter.fork(write_fd, limits, trusted=trusted)
            else:
                self._child = start_confined(
                    [sys.executable, "-I", str(CHILD_SCRIPT), str(write_fd), paths],
                    isolation=isolation,
                    limits=limits,
                    trusted=trusted,
                    readable=(CHILD_FOLDER,),
                    stdin="pipe",
                    pass_fds=(write_fd,),
                )
        except OSError as exc:
            os.close(read_fd)
            reason = exc.strerror or str(exc)
            raise GradingError(f"cannot start the grading process ({reason})") from None
        finally:
            os.close(write_fd)
        self._starter = starter  # the grader's: a fork ends with it
        self._process = self._child.process
        self._folder = self._child.scratch
        self._reader = _Reader(read_fd)
        self._closed = False
        self._ready = False

    @property
    def alive(self) -> bool:
        return not self._closed and self._process.poll() is None

    @property
    def pid(self) -> int:
        return self._process.pid

    def send(self, request: Request) -> bool:
        """Send the child its request; a learner child gets exactly one."""
        if not self.trusted and self._sent is not None:
            raise RuntimeError("a learner child runs one request only")
        self._sent = request
        try:
            assert self._process.stdin is not None
            self._process.stdin.write(request.to_line())
            self._process.stdin.flush()
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False

    def warm(self, request: Request, timeout: float) -> None:
        """Run `request` ahead and drop its reports: trusted code only (the lesson's
        practice file as given, on the lesson's inputs; see `Grader.warm_up`), so that
        the learner's run finds JAX's programs compiled. The child still runs one
        learner file only, after this."""
        if self._sent is not None:
            raise RuntimeError("a child is warmed before its learner request only")
        self.send(request)
        self.collect(request, time.monotonic() + timeout, timeout=timeout)
        self._sent = None

    def _next(self, deadline: float) -> Event | None:
        """The next report, or None at the deadline, at the end of the child, or on interference."""
        while not self._reader.pending:
            if self._reader.interfered or self._reader.eof:
                return None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self._reader.read(min(remaining, 0.5))
        return self._reader.pending.pop(0)

    def collect(
        self,
        request: Request,
        deadline: float,
        *,
        timeout: float,
        names: dict[str, str] | None = None,
    ) -> ChildReport:
        """Every report of one request, until it is done or cannot finish, as its report.

        `timeout` is the limit the run was given (for the report's words), `names` maps the
        scenario names the child saw back to the parent's."""
        events: list[CellReport] = []
        seen: set[tuple[str, int]] = set()
        scenarios = {s.name for s in request.scenarios}
        in_flight: tuple[str, int] | None = None
        began = False  # a cell of the request began: the file's own code ran
        while True:
            event = self._next(deadline)
            if event is None:
                break
            if isinstance(event, Ready):
                if self._ready:
                    self._reader.interfered = "the run announced itself twice"
                    break
                self._ready = True
                continue
            if event.request != request.id:
                if self.trusted:
                    continue  # an earlier request's leftovers
                self._reader.interfered = "a report names a request that was never sent"
                break
            if isinstance(event, Start | CellReport) and (
                event.scenario not in scenarios or not 0 <= event.cell < len(request.cells)
            ):
                self._reader.interfered = "a report names a cell that was never sent"
                break
            began = True
            if isinstance(event, Start):
                in_flight = (event.scenario, event.cell)
            elif isinstance(event, CellReport):
                key = (event.scenario, event.cell)
                if key in seen:
                    self._reader.interfered = "a cell was reported twice"
                    break
                seen.add(key)
                events.append(event)
                in_flight = None
            elif isinstance(event, Done):
                return child_report(
                    events, finished=True, timeout=timeout, patched=event.patched, names=names
                )
        ended, ending = self._why_unfinished()
        if not began and ending != "interfered":
            ended, ending = (
                f"the grading process ended before the file's first cell ({ended})",
                ("unstarted"),
            )
        return child_report(
            events,
            finished=False,
            timeout=timeout,
            ended=ended,
            ending=ending,
            in_flight=in_flight,
            interfered=self._reader.interfered,
            names=names,
        )

    def _why_unfinished(self) -> tuple[str, Ending]:
        """Why the run stopped, in a learner's words, and how (`Ending`)."""
        if self._reader.interfered:
            self.close()
            return "the submission interfered with the grader", "interfered"
        if self._reader.eof:
            code = self._process.wait(timeout=CHILD_EXIT_WAIT_S)
            if self._starter is not None and not self._starter.alive:
                self.close()  # the starter's forks end with it: the grader's doing
                return "the grading starter ended, and the run with it", "stopped by grader"
            if code is None:
                self.close()
                return "the run closed the grader's report channel", "exit status"
            return describe_end(code), end_kind(code)
        self.close()
        return "the run did not finish in time", "time limit"

    def diagnostics(self) -> str:
        """The child's own error output (for failures of the lesson's reference code)."""
        return self._child.error_tail()

    def close(self) -> None:
        """Stop the child and everything it started; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self._child.stop()
        if self._process.stdin is not None:
            with contextlib.suppress(OSError):
                self._process.stdin.close()
        with contextlib.suppress(OSError):
            os.close(self._reader.fd)
        self._reader.eof = True
        self._child.close()
