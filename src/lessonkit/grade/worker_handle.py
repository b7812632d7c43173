"""The parent's side of a grading child: start it, send a request, read reports, stop it.

Two kinds of child share this code. The *reference* child is trusted: it runs only the
lesson's own code, unsandboxed, and may write JAX's compilation cache. A *learner* child
runs one learner's file in the OS sandbox and is never reused for anything else; whatever
it reports is parsed strictly (`protocol.parse_event`) and checked against the request it
was sent, and the first report that no honest child writes ends it with `interfered` set.

Lifecycle: `WorkerHandle(...)` starts the child at once (it imports JAX while the parent reads
the lesson and the file); `send` queues a request; `collect` reads that request's reports
until it is done, its deadline passes, or the child ends; `close` kills everything it
started (process group, cgroup, PID namespace) and is safe to call twice.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from lessonkit.errors import LessonkitError
from lessonkit.grade.protocol import (
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
from lessonkit.grade.record import RunRecord, run_record
from lessonkit.run.leftovers import scratch_folder
from lessonkit.run.process import child_environment, describe_end, start_child
from lessonkit.run.sandbox import (
    CONFINE_SCRIPT,
    Account,
    ChildCgroup,
    Sandbox,
    fresh_identity,
    process_limit,
    python_paths,
    remove_leftovers,
    sandboxed_argv,
)

WORKER_SCRIPT = Path(__file__).with_name("worker_program.py")
WIRE_SCRIPT = Path(__file__).with_name("wire.py")  # read by the worker beside it
DEFAULT_MEMORY = 2 * 2**30
MAX_REPORT_BYTES = 64 * 2**20
GRACE = 3.0  # seconds after the child's own alarm before the parent kills it


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


class WorkerHandle:
    """One grading child process: the trusted reference, or one sandboxed learner run."""

    def __init__(
        self,
        *,
        trusted: bool,
        memory: int = DEFAULT_MEMORY,
        sandbox: Sandbox | None = None,
        cache: Path | None = None,
        run_as: Account | None = None,
    ):
        """`run_as`: the account a learner child becomes when there is no sandbox (as root)."""
        self.trusted = trusted
        self._sent: Request | None = None
        self._cgroup: ChildCgroup | None = None
        remove_leftovers()
        self._folder = None if sandbox else scratch_folder()
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (kept open until close())
        read_fd, write_fd = os.pipe()
        become = fresh_identity(sandbox)  # the (uid, gid) the worker drops to
        if sandbox is None and run_as is not None and not trusted:
            become = (run_as.uid, run_as.gid)
            os.chown(self._folder.name, run_as.uid, run_as.gid)
        uid = become[0] if become else os.getuid()
        argv = [sys.executable, "-I", str(WORKER_SCRIPT), str(write_fd), str(memory)]
        argv.append(str(0 if trusted else process_limit(uid)))
        if become is not None:
            argv += [str(become[0]), str(become[1])]
        extra: dict[str, str] = {}
        if cache is not None:
            extra["JAX_COMPILATION_CACHE_DIR"] = str(cache)
            if trusted:
                extra["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
                extra["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"] = "0"
        scratch = self._folder.name if self._folder else "/tmp"  # the sandbox's tmpfs
        extra["MPLCONFIGDIR"] = f"{scratch}/.matplotlib"
        scripts = (WORKER_SCRIPT, WIRE_SCRIPT, CONFINE_SCRIPT)
        readable = (*python_paths(), *scripts, *([cache] if cache else []))
        argv, self._cgroup = sandboxed_argv(
            argv, sandbox, readable=readable, memory=memory, uid=uid
        )
        try:
            self._process = start_child(
                argv,
                env=child_environment("allow-list", extra, scratch=scratch),
                cwd=self._folder.name if self._folder else None,
                stdin="pipe",
                stdout="discard",
                stderr=self._stderr,
                pass_fds=(write_fd,),
            )
        except OSError as exc:
            os.close(read_fd)
            self._stderr.close()
            if self._folder:
                self._folder.cleanup()
            if self._cgroup:
                self._cgroup.remove()
            raise GradingError(f"cannot start the grading process ({exc.strerror})") from None
        finally:
            os.close(write_fd)
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
    ) -> RunRecord:
        """Every report of one request, until it is done or cannot finish, as its record.

        `timeout` is the limit the run was given (for the record's words), `names` maps the
        scenario names the child saw back to the parent's."""
        events: list[CellReport] = []
        seen: set[tuple[str, int]] = set()
        scenarios = {s.name for s in request.scenarios}
        in_flight: tuple[str, int] | None = None
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
                return run_record(
                    events, finished=True, timeout=timeout, patched=event.patched, names=names
                )
        ended = self._why_unfinished()
        return run_record(
            events,
            finished=False,
            timeout=timeout,
            ended=ended,
            in_flight=in_flight,
            interfered=self._reader.interfered,
            names=names,
        )

    def _why_unfinished(self) -> str:
        if self._reader.interfered:
            self.close()
            return "the submission interfered with the grader"
        if self._reader.eof:
            if self._process.wait(timeout=1) is None:
                self.close()
                return "the run closed the grader's report channel"
            return describe_end(self._process.returncode)
        self.close()
        return "the run did not finish in time"

    def diagnostics(self) -> str:
        """The child's own error output (for failures of the lesson's reference code)."""
        try:
            self._stderr.seek(0)
            return self._stderr.read()[-4000:].decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""

    def close(self) -> None:
        """Stop the child and everything it started; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self._process.stop(wait_s=10)  # the group: learner code may have started its own
        if self._cgroup is not None:
            self._cgroup.remove()  # processes that left the group with setsid()
        if self._process.stdin is not None:
            with contextlib.suppress(OSError):
                self._process.stdin.close()
        with contextlib.suppress(OSError):
            os.close(self._reader.fd)
        self._reader.eof = True
        self._stderr.close()
        if self._folder is not None:
            self._folder.cleanup()
