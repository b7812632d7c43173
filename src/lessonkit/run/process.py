"""The one way lessonkit starts a process: its own group, a chosen environment, a clean stop.

Every child (a lesson script for a receipt, the notebook cells for their recorded outputs, a
grading child, the notebook's grading server) starts through `start_child`, in a process
group of its own so that `Child.stop` also ends whatever the child started, and with its
whole environment from `child_environment` under one of two policies:

- ``"inherit"``: the caller's environment with a few settings changed, for code the person
  running lessonkit chose to run (`lessonkit run` of the lesson's own scripts);
- ``"allow-list"``: nothing inherited, for learner code being graded: the instructor's shell
  holds tokens and paths that learner code must not read back into a message or a CSV.

A sandbox (`run.sandbox`) is an option of the same call: it wraps the argv, nothing else.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Literal, Protocol

from lessonkit.defaults import STOP_WAIT_S
from lessonkit.run.limits import DEFAULT_LIMITS

EnvPolicy = Literal["inherit", "allow-list"]
Stream = Literal["pipe", "discard"] | IO[bytes]

GRADER_SETTINGS = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONIOENCODING": "utf-8",
    "JAX_PLATFORMS": "cpu",
    "MPLBACKEND": "Agg",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",
    "TF_CPP_MIN_LOG_LEVEL": "3",
}
"""What every grading child gets, whatever the parent has (HOME and TMPDIR: its scratch)."""

CHILD_SETTINGS = frozenset(
    {
        "JAX_COMPILATION_CACHE_DIR",
        "JAX_NUM_CPU_DEVICES",
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
        "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES",
        "MPLCONFIGDIR",
        "PYTHONPATH",
        "XLA_FLAGS",
    }
)
"""What the grader may add under the allow-list: the compile cache, matplotlib's scratch,
JAX's device settings, and (for a learner's whole script, which Python starts without `-I`)
the parent's own import folders as PYTHONPATH (`run/import_paths.py`), never the parent's
variable as it is."""


def child_environment(
    policy: EnvPolicy,
    settings: Mapping[str, str | None] | None = None,
    *,
    scratch: str | None = None,
) -> dict[str, str]:
    """A child's whole environment under `policy`.

    ``"inherit"``: this process's environment with `settings` applied (a None value removes
    the variable), output encoded as UTF-8. ``"allow-list"``: `GRADER_SETTINGS`, `scratch` as
    HOME and TMPDIR, and `settings`, each of which must be one of `CHILD_SETTINGS`.
    """
    settings = dict(settings or {})
    if policy == "inherit":
        env = dict(os.environ)
        for key, value in settings.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        env["PYTHONIOENCODING"] = "utf-8"
        return env
    unknown = sorted(set(settings) - CHILD_SETTINGS)
    if unknown:
        raise ValueError(f"not a grading child's setting: {', '.join(unknown)}")
    if scratch is None:
        raise ValueError("a grading child needs its scratch folder")
    given = {key: value for key, value in settings.items() if value is not None}
    return {**GRADER_SETTINGS, "HOME": scratch, "TMPDIR": scratch, **given}


EndKind = Literal["exit status", "learner limit", "crash"]
"""How a child ended: an exit status, a signal of the learner's own limits (CPU time, file
size), or any other signal (an abort, a segmentation fault, a kill). Once the learner's code
began, each is the code's, unless the grader itself ended the child
(`grade/channel/child_report.py` `Ending`)."""

LEARNER_LIMIT_SIGNALS = frozenset({signal.SIGXCPU, signal.SIGXFSZ})


def end_kind(returncode: int) -> EndKind:
    """`EndKind` of a child that ended with `returncode` (negative: the signal)."""
    if returncode >= 0:
        return "exit status"
    return "learner limit" if -returncode in LEARNER_LIMIT_SIGNALS else "crash"


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
        signal.SIGXFSZ: "the process wrote a file larger than the "
        f"{DEFAULT_LIMITS.file_bytes // 2**20} MB limit",
    }
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    return reasons.get(number, f"the process was ended by {name}")


def _stream(stream: Stream) -> int | IO[bytes]:
    if stream == "pipe":
        return subprocess.PIPE
    if stream == "discard":
        return subprocess.DEVNULL
    return stream


class Process(Protocol):
    """What a parent uses of a started child: a `Child` it started, or a fork of the
    starter (`run/starter.ForkedProcess`)."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    @property
    def stdin(self) -> IO[bytes] | None: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int | None: ...

    def stop(self, wait_s: float | None = STOP_WAIT_S) -> None: ...


class Child:
    """A started child process, the leader of its own process group."""

    def __init__(self, process: subprocess.Popen[bytes]):
        self._process = process

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    @property
    def stdin(self) -> IO[bytes] | None:
        return self._process.stdin

    @property
    def stdout(self) -> IO[bytes] | None:
        return self._process.stdout

    def poll(self) -> int | None:
        return self._process.poll()

    def wait(self, timeout: float | None = None) -> int | None:
        """The exit status, or None when the child still runs after `timeout` seconds."""
        try:
            return self._process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def communicate(self, timeout: float | None = None) -> tuple[bytes, bytes] | None:
        """Everything the child printed once it ends; None when `timeout` passes first."""
        try:
            stdout, stderr = self._process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        return stdout or b"", stderr or b""

    def stop(self, wait_s: float | None = STOP_WAIT_S) -> None:
        """Kill the child and everything in its group, then reap it; safe to call twice.

        The group is signalled only while the child is not yet reaped: until then its id,
        and so the group's, cannot belong to anyone else.
        """
        if self._process.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if os.name == "posix":
                    os.killpg(self._process.pid, signal.SIGKILL)
                else:
                    self._process.kill()
        self.wait(wait_s)


def start_child(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path | str | None = None,
    stdin: Stream = "discard",
    stdout: Stream = "pipe",
    stderr: Stream = "pipe",
    pass_fds: tuple[int, ...] = (),
) -> Child:
    """Start `argv` in a new process group (session on POSIX); raises OSError if it cannot."""
    group = (
        {"start_new_session": True}
        if os.name == "posix"
        else {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}  # type: ignore[attr-defined]
    )
    process = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env),
        stdin=_stream(stdin),
        stdout=_stream(stdout),
        stderr=_stream(stderr),
        pass_fds=pass_fds,
        **group,
    )
    return Child(process)
