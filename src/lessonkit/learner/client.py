"""The kernel's side of `check()`: collect what the learner ran, ask the grading server.

One server per kernel, started on the first check and kept for the session, so later
checks find its reference run done and a fresh learner child waiting. The server runs
with Python's isolated mode, in a session of its own (interrupting the kernel does not
kill it), and ends when the kernel does, since its stdin closes. Isolated mode reads no
PYTHONPATH and no user site, so the kernel hands over where it finds its packages
(`run/import_paths.py`).
"""

from __future__ import annotations

import atexit
import os
import select
import sys
import tempfile
import time
from pathlib import Path

import lessonkit
from lessonkit.defaults import FIRST_REPLY_WAIT_S, REPLY_WAIT_S
from lessonkit.grading_child.wire import CHILD_MARK
from lessonkit.learner.messages import (
    CheckReply,
    CheckRequest,
    ProtocolError,
    RunCell,
    decode_reply,
    encode_request,
)
from lessonkit.run.import_paths import encoded_import_paths
from lessonkit.run.process import child_environment, start_child

_PACKAGE_PARENT = str(Path(lessonkit.__file__).resolve().parent.parent)
_SERVER_CODE = (
    "import sys; sys.path.insert(0, sys.argv[1]); from lessonkit.run.import_paths import adopt; "
    "adopt(sys.argv[2]); from lessonkit.learner.server import main; main()"
)


class ServerProcess:
    """A running grading server; `ask` sends one request and waits for its reply."""

    def __init__(self) -> None:
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (kept until close())
        self._process = start_child(
            [sys.executable, "-I", "-c", _SERVER_CODE, _PACKAGE_PARENT, encoded_import_paths()],
            env=child_environment("inherit"),
            stdin="pipe",
            stdout="pipe",
            stderr=self._stderr,
        )
        self.answered = 0

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    def _stopped(self, what: str) -> CheckReply:
        self._stderr.seek(0)
        tail = self._stderr.read()[-2000:].decode("utf-8", "replace").strip()
        self.close()
        return CheckReply(None, f"the grading server {what}" + (f":\n{tail}" if tail else ""))

    def ask(self, request: CheckRequest) -> CheckReply:
        assert self._process.stdin is not None and self._process.stdout is not None
        try:
            self._process.stdin.write(encode_request(request))
            self._process.stdin.flush()
        except OSError:
            return self._stopped("has stopped")
        limit = FIRST_REPLY_WAIT_S if self.answered == 0 else REPLY_WAIT_S
        deadline = time.monotonic() + limit
        out = self._process.stdout
        while not select.select([out], [], [], max(0.0, deadline - time.monotonic()))[0]:
            if time.monotonic() >= deadline:
                return self._stopped(f"gave no answer in {limit:.0f} s")
        line = out.readline()
        if not line:
            return self._stopped("has stopped")
        self.answered += 1
        try:
            return decode_reply(line)
        except ProtocolError as exc:
            return self._stopped(f"answered something unreadable ({exc})")

    def close(self) -> None:
        self._process.stop(wait_s=None)
        for stream in (self._process.stdin, self._process.stdout, self._stderr):
            if stream is not None:
                stream.close()


_server: ServerProcess | None = None  # one per kernel, for the kernel's lifetime


def _close_server() -> None:
    global _server
    if _server is not None:
        _server.close()
        _server = None


atexit.register(_close_server)


def ask(request: CheckRequest) -> CheckReply:
    """The server's reply; the server is started on first use and again if it stopped."""
    global _server
    if _server is None or not _server.alive:
        _close_server()
        _server = ServerProcess()
    try:
        return _server.ask(request)
    except BaseException:  # interrupted mid-request: its reply would answer the next one
        _close_server()
        raise


def kernel_history() -> tuple[RunCell, ...] | None:
    """The inputs this IPython kernel has executed, or None outside IPython."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return None
    inputs = shell.history_manager.input_hist_parsed
    return tuple(RunCell(str(s), n) for n, s in enumerate(inputs) if n and str(s).strip())


def running_script() -> str | None:
    """The file `python FILE` is running, if this is such a run."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return os.path.abspath(path) if isinstance(path, str) else None


def inside_grader() -> bool:
    """True in a grading child running a file that calls check(): it must not grade again."""
    return getattr(sys.modules.get("__main__"), CHILD_MARK, None) is True
