"""A trusted process that imported JAX once, and forks each learner's grading child from it.

Starting Python and importing JAX costs a grading child about 1.1 CPU-s, as much as running
every scenario; a fork of a process that imported JAX, but ran no array op, starts in a few
milliseconds. So a grader starts one `Starter` (per `check`, batch, Dask chunk or
notebook server) and asks it for a fresh child for each file. What keeps the children apart:

- the starter is started as a learner child is (`run/confined_child.py`: the sandbox, its
  cgroup, memory and file limits), but keeps its user and, in a privileged sandbox, the
  capabilities to confine its forks; it runs no learner code and reads no report;
- each fork confines itself before any learner code (`run/isolate.py`): limits,
  new mount, PID, IPC and UTS namespaces, a private `/tmp` and `/proc`, a user id of its
  own, no capability and no way back; as root it is also moved into a cgroup of its own
  (memory, tasks, CPU share), as a child started from scratch is;
- the parent learns the fork's process ids from the kernel (`SO_PASSCRED`), not from the
  fork, and stops it through process descriptors, which never reach a reused id.

`docs/grading-security.md` gives the threat model.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import select
import signal
import socket
import struct
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from lessonkit.defaults import GREETING_WAIT_S, START_WAIT_S, STOP_WAIT_S
from lessonkit.grading_child.confinement import Confinement
from lessonkit.run.confined_child import (
    ConfinedChild,
    bound_paths,
    child_identity,
    fork_mode,
    own_root_paths,
    start_confined,
)
from lessonkit.run.forking import pidfds
from lessonkit.run.import_paths import encoded_import_paths
from lessonkit.run.isolation import Isolation
from lessonkit.run.leftovers import scratch_folder
from lessonkit.run.limits import Limits
from lessonkit.run.sandbox import child_cgroup, process_limit

FORK_SERVER = Path(__file__).with_name("starter_main.py")  # the starter, run by path
ISOLATE_SCRIPT = Path(__file__).with_name("isolate.py")  # what each fork does to itself
_CREDENTIALS = struct.Struct("3i")  # struct ucred: pid, uid, gid


class StarterError(OSError):
    """The starter did not start, or could not fork a child."""


class ForkedProcess:
    """One fork of the starter, seen from the parent: `run.process.Process`."""

    def __init__(
        self, starter: Starter, ident: int, stdin: IO[bytes], pids: list[int], group: bool
    ):
        """`pids`: the fork's ids here (the kernel's), the first its process group's;
        `group`: stop that group too (a fork without a PID namespace of its own)."""
        self._group = group
        self._starter = starter
        self._ident = ident
        self._stdin = stdin
        self._pids = pids
        self._handles = [os.pidfd_open(pid) for pid in pids] if pidfds() else []
        self._returncode: int | None = None

    @property
    def pid(self) -> int:
        return self._pids[0]

    @property
    def returncode(self) -> int | None:
        return self._returncode

    @property
    def stdin(self) -> IO[bytes] | None:
        return self._stdin

    def poll(self) -> int | None:
        return self.wait(0)

    def wait(self, timeout: float | None = None) -> int | None:
        """The exit status, or None when the fork still runs after `timeout` seconds."""
        if self._returncode is None:
            self._returncode = self._starter.ended(self._ident, timeout)
        return self._returncode

    def stop(self, wait_s: float | None = STOP_WAIT_S) -> None:
        """Kill the fork (and, as PID 1 of its namespace, all it started); safe twice."""
        if self._returncode is None and not self._handles:
            self._starter.stop(self._ident)  # no process descriptors: the fork's parent does
        if self._returncode is None:
            for handle in self._handles:
                with contextlib.suppress(OSError):
                    if self._group:  # its group, while its id is certainly still its own
                        signal.pidfd_send_signal(handle, 0)
                        os.killpg(self._pids[0], signal.SIGKILL)
                    signal.pidfd_send_signal(handle, signal.SIGKILL)
        self.wait(wait_s)
        for handle in self._handles:
            with contextlib.suppress(OSError):
                os.close(handle)
        self._handles = []


class Starter:
    """The trusted starter process, started at once; `fork` waits until JAX is imported."""

    def __init__(
        self,
        child_folder: Path,
        *,
        isolation: Isolation,
        limits: Limits,
        preload: Sequence[str] = (),
    ):
        """`child_folder` holds the grading child's program (`lessonkit/grading_child/`); `preload`
        names modules the starter imports before any fork (a lesson's own imports)."""
        self.isolation = isolation
        readable = (child_folder, FORK_SERVER, ISOLATE_SCRIPT)
        self._mode = fork_mode(isolation)
        if self._mode == "own-root":  # each fork's own root holds what bubblewrap would bind
            self._keep = own_root_paths(isolation, readable)
        else:
            under_tmp = (p for p in bound_paths(isolation, readable=readable) if _under_tmp(p))
            self._keep = tuple(sorted({str(p) for p in under_tmp}, key=len))
        self._control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        command = [sys.executable, "-I", str(FORK_SERVER), str(theirs.fileno())]
        try:
            self._child = start_confined(
                [*command, str(child_folder), encoded_import_paths(), *preload],
                isolation=isolation,
                limits=limits,
                forks=True,
                readable=readable,
                pass_fds=(theirs.fileno(),),
            )
        except OSError:
            self._control.close()
            raise
        finally:
            theirs.close()
        self._lock = threading.Lock()  # one reader of the control socket at a time
        self._fork_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._ended: dict[int, int] = {}
        self._ready = False
        self._gone = False

    @property
    def alive(self) -> bool:
        return not self._gone and self._child.process.poll() is None

    def _pump(self, timeout: float) -> None:
        """Read what the starter said, waiting at most `timeout`; call with `_lock` held."""
        try:
            ready, _, _ = select.select([self._control], [], [], max(0.0, timeout))
        except (OSError, ValueError):  # closed meanwhile by `close`
            self._gone = True
            return
        while ready and not self._gone:
            try:
                data = self._control.recv(1 << 16, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self._gone = True
                return
            message = json.loads(data)
            if "ready" in message:
                self._ready = True
            elif "ended" in message:
                self._ended[int(message["ended"])] = int(message["returncode"])

    def ended(self, ident: int, timeout: float | None) -> int | None:
        """Fork `ident`'s exit status, waiting at most `timeout` (None: without end)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                if ident in self._ended:
                    return self._ended[ident]
                if self._gone or self._child.process.poll() is not None:
                    self._gone = True
                    return -signal.SIGKILL  # the starter ended, and its forks with it
                left = 0.2 if deadline is None else min(0.2, deadline - time.monotonic())
                if left <= 0:
                    return None
                self._pump(left)

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_WAIT_S
        while not self._ready:
            with self._lock:
                if self._gone or self._child.process.poll() is not None:
                    self._gone = True
                    tail = self._child.error_tail().strip().splitlines()
                    raise StarterError(f"the grading starter ended ({tail[-1] if tail else ''})")
                if time.monotonic() > deadline:
                    raise StarterError("the grading starter did not import JAX in time")
                self._pump(0.2)

    def fork(self, report_fd: int, limits: Limits, *, trusted: bool = False) -> ConfinedChild:
        """A fresh grading child, confined, reporting on `report_fd` (a pipe's write end,
        which the caller closes afterwards); requests go to the returned child's stdin.

        `trusted`: the reference fork, which runs the lesson's own code only. It is confined
        as a learner's fork is (its namespaces, /tmp, limits, no capability), so no sibling
        can reach it, but it keeps the starter's user, needs no cgroup, and writes the
        compile cache that the other forks only read."""
        self._wait_ready()
        sandbox = self.isolation.sandbox
        become = None if trusted else child_identity(sandbox, self.isolation)
        uid = become[0] if become else os.getuid()
        mode = self._mode
        # without a sandbox: the child's folder, or the empty folder its own root is built on
        scratch = scratch_folder() if sandbox is None else None
        home = "/tmp" if scratch is None or mode == "own-root" else scratch.name
        if scratch is not None and become is not None and mode == "none":
            os.chown(scratch.name, *become)
        cache = self.isolation.cache
        confinement = Confinement(
            mode=mode,
            memory=limits.memory,
            file_bytes=limits.file_bytes,
            processes=0 if trusted else process_limit(uid, limits),
            scratch_bytes=limits.scratch_bytes,
            uid=become[0] if become else None,
            gid=become[1] if become else None,
            keep=self._keep if mode != "none" else (),
            stage=scratch.name if mode == "own-root" and scratch is not None else None,
            home=home,
            cache=str(cache) if cache is not None else None,
            trusted=trusted,
        )
        cgroup = None if trusted else child_cgroup(sandbox, limits, uid)
        stderr = tempfile.TemporaryFile()  # noqa: SIM115 (kept open until close())
        request_read, request_write = os.pipe()
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        mine.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        ident = next(self._ids)
        handed: list[int] = [request_read]  # ours until handed to the starter
        try:
            fork = {
                "fork": ident,
                "confinement": confinement.to_message(),
                "greeting_wait": GREETING_WAIT_S,
            }
            message = json.dumps(fork).encode()
            with self._fork_lock:
                socket.send_fds(
                    self._control,
                    [message],
                    [request_read, report_fd, stderr.fileno(), theirs.fileno()],
                )
            os.close(handed.pop())
            theirs.close()
            pids = [_greeted(mine)]  # the fork, still trusted: into its cgroup first
            if cgroup is not None:
                cgroup.add(pids[0])
            mine.send(b"go")
            if mode != "none":
                pids.append(_greeted(mine))  # PID 1 of its namespace, about to confine itself
                mine.send(b"go")
            stdin = os.fdopen(request_write, "wb")
            process = ForkedProcess(self, ident, stdin, pids, group=mode == "none")
        except (OSError, ValueError) as exc:
            for closing in (stderr, mine, theirs):
                closing.close()
            with contextlib.suppress(OSError):
                os.close(request_write)
            if cgroup is not None:
                cgroup.remove()
            if scratch is not None:
                scratch.cleanup()
            for fd in handed:
                os.close(fd)
            raise StarterError(f"the grading starter could not fork a child ({exc})") from exc
        mine.close()
        user = become[0] if become is not None and sandbox is None else None
        if mode == "own-root":  # the folder its root was built on, not a folder of its own
            return ConfinedChild(process, stderr, cgroup, None, stage=scratch, user=user)
        return ConfinedChild(process, stderr, cgroup, scratch, user=user)

    def stop(self, ident: int) -> None:
        """Have the starter kill fork `ident` and all it started (a fork's own id cannot be
        reused while the starter, its parent, has not reaped it)."""
        with self._fork_lock, contextlib.suppress(OSError):
            self._control.send(json.dumps({"stop": ident}).encode())

    def close(self) -> None:
        """End the starter and, with it, every fork still running; safe twice."""
        self._gone = True
        with contextlib.suppress(OSError):
            self._control.close()
        self._child.close()


def _under_tmp(path: Path) -> bool:
    """Whether `path` lies under /tmp, where a fork's own /tmp would hide it."""
    return Path("/tmp") in Path(path).parents


def _greeted(greetings: socket.socket) -> int:
    """The process id the kernel gives for the next greeting on `greetings`."""
    ready, _, _ = select.select([greetings], [], [], GREETING_WAIT_S)
    if not ready:
        raise StarterError("a grading child did not start in time")
    space = socket.CMSG_SPACE(_CREDENTIALS.size)
    data, ancillary, _, _ = greetings.recvmsg(16, space)
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
            pid, _, _ = _CREDENTIALS.unpack(payload[: _CREDENTIALS.size])
            if data == b"hello" and pid > 0:
                return pid
    raise StarterError("a grading child ended before it started")
