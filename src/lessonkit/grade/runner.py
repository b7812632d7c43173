"""The parent's side of the grading child: start it, send requests, read reports, stop it.

Lifecycle: `Worker()` starts the child at once (it imports JAX while the parent reads the
lesson and the file); `send` queues a request; `collect` reads that request's reports until
it is done, its deadline passes, or the child ends; `close` kills the child's whole process
group. A report line without the session's token, or more data than any honest run
produces, ends the child: learner code shares its process and could write to the pipe.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from lessonkit.errors import LessonkitError

WORKER_SCRIPT = Path(__file__).with_name("worker.py")
DEFAULT_MEMORY = 4 * 2**30
MAX_REPORT_BYTES = 64 * 2**20
GRACE = 3.0  # seconds after the child's own alarm before the parent kills it


class GradingError(LessonkitError):
    """The grader itself cannot run: the child does not start or the lesson's code fails."""


@dataclass(frozen=True)
class Outcome:
    """What one request produced: its events, and how it ended."""

    events: tuple[dict, ...]
    finished: bool  # the child said "done"
    ended: str | None = None  # why it did not finish, in words, or None
    returncode: int | None = None
    patched: tuple[str, ...] = ()
    timed_out: bool = False
    in_flight: tuple[str, int] | None = None  # (scenario, cell) running when it ended

    @property
    def clean(self) -> bool:
        """True when the child can safely run another request."""
        return self.finished and not self.timed_out and not self.patched


@dataclass
class _Reader:
    fd: int
    token: bytes
    buffer: bytes = b""
    received: int = 0
    tampered: bool = False
    eof: bool = False
    pending: list[dict] = field(default_factory=list)

    def read(self, timeout: float) -> None:
        ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        if not ready:
            return
        chunk = os.read(self.fd, 1 << 16)
        if not chunk:
            self.eof = True
            return
        self.received += len(chunk)
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        for line in lines:
            token, _, body = line.partition(b" ")
            if not secrets.compare_digest(token, self.token):
                self.tampered = True
                continue
            try:
                self.pending.append(json.loads(body))
            except ValueError:
                self.tampered = True


def _child_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "JAX_", "XLA_"))}
    env.update(
        JAX_PLATFORMS="cpu",
        MPLBACKEND="Agg",
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONHASHSEED="0",
        TF_CPP_MIN_LOG_LEVEL="3",
    )
    return env


def describe_end(returncode: int | None) -> str:
    """Why a child ended without finishing, in a learner's words."""
    if returncode is None:
        return "the run was stopped"
    if returncode >= 0:
        return (
            f"the process exited with status {returncode} before the grader finished "
            "(os._exit or a crash ends the whole run)"
        )
    number = -returncode
    reasons = {
        signal.SIGKILL: "the process was killed (it probably ran out of memory)",
        signal.SIGXCPU: "the process used up its CPU time",
        signal.SIGABRT: "the process crashed (abort), often from running out of memory",
        signal.SIGSEGV: "the process crashed (segmentation fault)",
        signal.SIGXFSZ: "the process wrote a file larger than the 64 MB limit",
    }
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    return reasons.get(number, f"the process was ended by {name}")


class Worker:
    """One grading child process."""

    def __init__(self, memory: int = DEFAULT_MEMORY):
        self._token = secrets.token_hex(16)
        self._folder = tempfile.TemporaryDirectory(prefix="lessonkit-check-")
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (kept open until close())
        read_fd, write_fd = os.pipe()
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", str(WORKER_SCRIPT), str(write_fd), str(memory)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=self._stderr,
                pass_fds=(write_fd,),
                cwd=self._folder.name,
                env=_child_environment(),
                start_new_session=True,
            )
        except OSError as exc:
            os.close(read_fd)
            self._stderr.close()
            self._folder.cleanup()
            raise GradingError(f"cannot start the grading process ({exc.strerror})") from None
        finally:
            os.close(write_fd)
        self._reader = _Reader(read_fd, self._token.encode())
        self._closed = False
        self._write({"token": self._token})

    @property
    def alive(self) -> bool:
        return not self._closed and self._process.poll() is None

    def _write(self, message: dict) -> bool:
        try:
            assert self._process.stdin is not None
            self._process.stdin.write(json.dumps(message).encode() + b"\n")
            self._process.stdin.flush()
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False

    def send(self, request: dict) -> bool:
        """Queue a request; the child runs requests in the order they are sent."""
        return self._write(request)

    def _next(self, deadline: float) -> dict | None:
        """The next report, or None at the deadline, at the end of the child, or on tampering."""
        while not self._reader.pending:
            if self._reader.tampered or self._reader.eof:
                return None
            if self._reader.received > MAX_REPORT_BYTES:
                self._reader.tampered = True
                return None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self._reader.read(min(remaining, 0.5))
        return self._reader.pending.pop(0)

    def collect(self, request_id: str, deadline: float) -> Outcome:
        """Every report of one request, until it is done or cannot finish."""
        events: list[dict] = []
        in_flight: tuple[str, int] | None = None
        self._reader.received = 0  # the data limit holds per request
        while True:
            event = self._next(deadline)
            if event is None:
                break
            if event.get("request") != request_id:
                continue
            kind = event.get("event")
            if kind == "start":
                in_flight = (event.get("scenario", ""), int(event.get("cell", -1)))
            elif kind == "cell":
                events.append(event)
                in_flight = None
            elif kind == "done":
                return Outcome(
                    tuple(events),
                    finished=True,
                    patched=tuple(event.get("patched", ())),
                    timed_out=bool(event.get("timed_out")),
                )
        ended = self._why_unfinished()
        return Outcome(tuple(events), False, ended, self._process.returncode, in_flight=in_flight)

    def _why_unfinished(self) -> str:
        if self._reader.tampered:
            self.close()
            if self._reader.received > MAX_REPORT_BYTES:
                return "the run produced more data than the grader accepts"
            return "something wrote to the grader's report channel"
        if self._reader.eof:
            try:
                self._process.wait(timeout=1)
            except subprocess.TimeoutExpired:
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
        if self._process.poll() is None:  # not yet reaped, so the group id is still ours
            # The whole group: learner code may have started processes of its own.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout=10)
        if self._process.stdin is not None:
            with contextlib.suppress(OSError):
                self._process.stdin.close()
        with contextlib.suppress(OSError):
            os.close(self._reader.fd)
        self._reader.eof = True
        self._stderr.close()
        self._folder.cleanup()
