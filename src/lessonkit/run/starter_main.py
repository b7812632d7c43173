"""The starter: a trusted process that imported JAX once and forks each learner's child.

Run by path, never imported from lessonkit, as `python -I starter_main.py CONTROL_FD
CHILD_FOLDER PATHS [MODULE...]` (see `run/starter.py` for the parent's side); it loads
`confine.py` and `isolate.py` beside it, and the grading child's program from CHILD_FOLDER,
by path, as the sandbox binds only those. PATHS (a JSON list) are where the parent finds
packages beyond an isolated Python's own (`run/import_paths.py`), put first on `sys.path`
before anything is imported. It imports JAX, jax.numpy and NumPy, then each
MODULE (the lesson's own imports, so no fork pays for them), runs no array op (a fork after
the backend started would deadlock) and no learner code, and then serves the parent on a
Unix socket, one JSON message per datagram:

- `{"fork": ID, "confinement": {...}, "greeting_wait": S}` with four descriptors (the
  request pipe, the report pipe, the child's error output, and a socket of the child's own
  for its greetings): fork one grading child (`_become_child`), which waits S seconds for
  each of the parent's answers;
- `{"stop": ID}`: kill that child and all it started (for a parent without process
  descriptors): its process group where it takes no namespaces, else its first process,
  which kills the learner's process it waits for (PID 1 of its namespace) as it ends;
- the starter answers `{"ready": JAX_VERSION}` once, and `{"ended": ID, "returncode": RC}`
  when a child it forked has ended (negative: the signal that ended it).

A child greets the parent twice on its own socket (once where it takes no namespaces),
once as soon as it is forked and once as the process that will run learner code; each
greeting carries its process id through the kernel (`SO_PASSCRED`), so the parent knows
both without trusting anything the child says, moves the first into the child's cgroup
and waits before answering `go`. The starter never reads what a child reports; when its
socket closes (the parent ended), it ends every child and itself.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import resource
import select
import signal
import socket
import sys
import traceback
from typing import NamedTuple

HERE = os.path.dirname(os.path.abspath(__file__))
HIGH_FD = 100  # descriptors received are moved above the ones the child puts in place
REPORT_FD, GREETING_FD = 3, 4


def _load(name: str, path: str):
    """A module of the standard library only, loaded by path (nothing of lessonkit is on
    the sandbox's path)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # a dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


class _Programs(NamedTuple):
    """What a fork runs: `run/confine.py` (limits, user drop), `run/isolate.py` and the
    grading child's runner, and the record that says how it is confined."""

    confine: object
    isolate: object
    runner: object
    confinement: (
        type  # `lessonkit/grading_child/confinement.py`'s record, read from each fork request
    )


def _greet(greeting: socket.socket, wait: float) -> None:
    """Send a greeting (the kernel adds our process id) and wait `wait` seconds for the
    parent's `go` (the parent's own wait, sent with each fork)."""
    greeting.send(b"hello")
    greeting.settimeout(wait)
    if greeting.recv(16) != b"go":
        raise SystemExit("lessonkit starter: the parent did not answer")


def _descriptors(fds: list[int]) -> socket.socket:
    """Put the request pipe on 0, nothing on 1, the error output on 2, the report pipe on 3
    and the greeting socket on 4, and close everything else (the starter's socket first)."""
    high = [os.dup2(fd, HIGH_FD + i) for i, fd in enumerate(fds)]
    devnull = os.open(os.devnull, os.O_WRONLY)
    for target, source in ((0, high[0]), (1, devnull), (2, high[2]), (3, high[1]), (4, high[3])):
        os.dup2(source, target)
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    os.closerange(GREETING_FD + 1, max(soft, HIGH_FD + len(fds)))
    return socket.socket(fileno=GREETING_FD)


def _become_child(programs: _Programs, confinement, fds: list[int], wait: float) -> None:
    """In the fork: confine this process, then serve its requests (a learner's one file, or
    the reference's runs of the lesson's own code)."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    starter = os.getppid()
    programs.confine.die_with_parent(starter)  # a fork does not inherit it
    os.setsid()
    greeting = _descriptors(fds)
    _greet(greeting, wait)  # the parent moves us into the child's cgroup before it answers
    confine, isolate = programs.confine, programs.isolate
    confine.limit_to(confinement)
    if confinement.mode != "none":
        isolate.enter_namespaces(confinement)
        confine.die_with_parent(starter)  # again: new credentials may have cleared it
        forked: list[int] = []  # the starter's stop (SIGTERM) kills the learner's process
        signal.signal(signal.SIGTERM, lambda *_: [os.kill(pid, signal.SIGKILL) for pid in forked])
        waiter_alive, waiter_holds = os.pipe()  # EOF once the waiting process has ended
        learner = os.fork()  # PID 1 of the new namespace
        if learner == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            confine.die_with_parent(None)  # at once: the waiter may be killed while we start
            os.close(waiter_holds)
        else:
            os.close(waiter_alive)
            forked.append(learner)
            for fd in range(5):
                os.close(fd)
            _, status = os.waitpid(learner, 0)
            confine.end_like(status)
        _greet(greeting, wait)  # now as the process that will run learner code
    greeting.close()
    isolate.private_mounts(confinement)
    if confinement.uid is not None and os.getuid() != confinement.uid:
        confine.drop_privileges(confinement.uid, confinement.gid)
    # with the starter (no namespace), or with the process that waits for it (PID 1 of its
    # namespace, whose parent's id it cannot see)
    confine.die_with_parent(starter if confinement.mode == "none" else None)
    if confinement.mode != "none":
        if select.select([waiter_alive], [], [], 0)[0]:
            os._exit(1)  # the waiter ended before the drop's cleared death signal was set again
        os.close(waiter_alive)
    isolate.no_way_back()
    if confinement.trusted and confinement.cache:
        _write_compile_cache(confinement.cache)
    os.chdir(confinement.home)
    for key in ("HOME", "TMPDIR"):
        os.environ[key] = confinement.home
    os.environ["MPLCONFIGDIR"] = os.path.join(confinement.home, ".matplotlib")
    programs.runner.serve(REPORT_FD)


def _write_compile_cache(folder: str) -> None:
    """The reference fork keeps every program it compiles in JAX's cache, for the learner
    forks to read (no compile has run in the starter, so the settings still apply)."""
    import jax

    jax.config.update("jax_compilation_cache_dir", folder)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


def _fork(programs: _Programs, message: dict, fds: list[int]) -> int:
    """Fork one grading child; returns its process id (here) once the fds are handed over."""
    confinement = programs.confinement.from_message(message["confinement"])
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            _become_child(programs, confinement, fds, float(message["greeting_wait"]))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            code = 70  # first: the middle process has closed stderr, so printing may fail
            traceback.print_exc()
        finally:
            os._exit(code)
    for fd in fds:
        os.close(fd)
    return pid


def _reap(control: socket.socket, children: dict[int, tuple[object, bool]]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        ident, _ = children.pop(pid, (None, None))
        if ident is not None:
            code = os.waitstatus_to_exitcode(status)
            control.send(json.dumps({"ended": ident, "returncode": code}).encode())


def _stop(children: dict[int, tuple[object, bool]], ident: object) -> None:
    """Kill the child `ident`, not yet reaped (so its id and group are still its own): its
    group where it took no namespace, else its first process, whose SIGTERM kills PID 1."""
    for pid, (known, alone) in children.items():
        if known == ident:
            with contextlib.suppress(OSError):
                if alone:
                    os.killpg(pid, signal.SIGKILL)
                os.kill(pid, signal.SIGKILL if alone else signal.SIGTERM)


def _preload(modules: list[str], argv: list[str]) -> None:
    """Import the lesson's own modules ahead of every fork. One that starts JAX's backend as
    it is imported would deadlock every fork: the starter then begins again without them
    (`exec`, same descriptors and confinement), and each fork imports them itself."""
    import importlib

    from jax._src import xla_bridge

    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # the fork that imports it again reports the error
            continue
        if xla_bridge.backends_are_initialized():
            os.execv(sys.executable, [sys.executable, "-I", __file__, *argv[:3]])


def serve(control_fd: int, programs: _Programs) -> None:
    """Fork a grading child for each request until the parent goes (JAX imported)."""
    import jax
    from jax._src import xla_bridge

    if xla_bridge.backends_are_initialized():
        raise SystemExit("lessonkit starter: JAX's backend started before any fork")
    programs.isolate.set_dumpable(False)  # nothing of this user may trace or read the starter
    control = socket.socket(fileno=control_fd)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: dict[int, tuple[object, bool]] = {}
    control.send(json.dumps({"ready": jax.__version__}).encode())
    while True:
        ready, _, _ = select.select([control, wake_read], [], [])
        if wake_read in ready:
            os.read(wake_read, 512)
            _reap(control, children)
        if control not in ready:
            continue
        data, fds, _, _ = socket.recv_fds(control, 1 << 16, 4)
        if not data:
            break
        message = json.loads(data)
        if "fork" in message and len(fds) == 4:
            alone = message["confinement"].get("mode") == "none"
            children[_fork(programs, message, fds)] = (message["fork"], alone)
        elif "stop" in message:
            _stop(children, message["stop"])
        else:
            for fd in fds:
                os.close(fd)
    for pid in children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    sys.exit(0)


def main(argv: list[str]) -> None:
    """Load the programs a fork runs, mark this process a grading child, then serve."""
    control_fd, child_folder = int(argv[0]), argv[1]
    confine = _load("lessonkit_confine", os.path.join(HERE, "confine.py"))
    isolate = _load("lessonkit_isolate", os.path.join(HERE, "isolate.py"))
    start = _load("lessonkit_child_main", os.path.join(child_folder, "main.py"))
    start.use_import_paths(argv[2])
    start.load_child_package()
    from lessonkit_child import runner, wire
    from lessonkit_child.confinement import Confinement

    globals()[wire.CHILD_MARK] = True  # read by check() in the learner's file: do not grade here
    import jax.numpy  # noqa: F401 - imported once here, for every fork
    import numpy  # noqa: F401

    _preload(argv[3:], argv)
    serve(control_fd, _Programs(confine, isolate, runner, Confinement))


if __name__ == "__main__":
    main(sys.argv[1:])
