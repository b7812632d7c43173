"""What a killed grading parent leaves behind, named by its owner and removed by the next run.

A parent that is killed (SIGKILL, an OOM kill, a closed terminal) cannot run `ChildHandle.close`,
so its children's scratch folders and cgroups stay. Each is named after the process that
made it, `<pid>-<start time>-<pid namespace>`, and a later run removes only those whose owner
is provably gone: no process has that id, or the process that has it started at another time
(the id was reused). Ids mean something only in the PID namespace that gave them, so a run
judges only leftovers of its own namespace: a grader in a container or an `unshare --pid`
sandbox sees no process of the host and would otherwise remove live graders' folders and
kill their children. Anything it cannot prove stale (no /proc, another user's folder,
another namespace, an older name) it keeps.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

SCRATCH_PREFIX = "lessonkit-check-"
CGROUP_PREFIX = "lessonkit-"
_OWNED = re.compile(r"(?P<pid>\d+)-(?P<start>\d+)-ns(?P<namespace>\d+)-")


def start_time(pid: int) -> int | None:
    """When `pid` started, in clock ticks since boot (/proc), or None where it cannot be read."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
        return int(text.rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def pid_namespace() -> int:
    """The inode of this process's PID namespace (0 where /proc cannot say)."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


@functools.cache
def owner_tag() -> str:
    """`<pid>-<start time>-ns<pid namespace>-`: the head of every leftover's name."""
    return f"{os.getpid()}-{start_time(os.getpid()) or 0}-ns{pid_namespace()}-"


def scratch_folder() -> tempfile.TemporaryDirectory[str]:
    """A child's scratch folder (unsandboxed runs), named so a later run can tell its owner."""
    return tempfile.TemporaryDirectory(prefix=SCRATCH_PREFIX + owner_tag())


def detach_mounts(folder: str) -> None:
    """Lazily unmount whatever is mounted on `folder` here, where an own-root child built its
    root: an older gVisor shares a new mount namespace's mounts with its parent and keeps
    them after the child ends; elsewhere nothing is mounted there and this does nothing."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.umount2(folder.encode(), MNT_DETACH)


MNT_DETACH = 2


def owner_gone(name: str, prefix: str) -> bool:
    """Whether the process named in `name` (after `prefix`) has certainly ended."""
    match = _OWNED.match(name.removeprefix(prefix)) if name.startswith(prefix) else None
    if match is None:
        return False
    pid, start = int(match["pid"]), int(match["start"])
    namespace = int(match["namespace"])
    if pid == os.getpid() or namespace == 0 or namespace != pid_namespace():
        return False  # this run, or ids from a namespace whose processes this one cannot see
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # it exists, as another user
    now = start_time(pid)
    return start != 0 and now is not None and now != start


def _stale_entries(folder: Path, prefix: str, keep: Callable[[os.stat_result], bool]) -> list:
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if owner_gone(entry.name, prefix):
                with contextlib.suppress(OSError):
                    if keep(entry.stat(follow_symlinks=False)):
                        found.append(Path(entry.path))
    return found


def stale_scratch(folder: Path | None = None) -> list[Path]:
    """Scratch folders of ended parents: real folders of this user, never links."""
    uid = os.getuid()
    return _stale_entries(
        Path(folder or tempfile.gettempdir()),
        SCRATCH_PREFIX,
        lambda s: stat.S_ISDIR(s.st_mode) and s.st_uid == uid,
    )


def remove_stale_scratch(folder: Path | None = None) -> int:
    """Delete the scratch folders that `stale_scratch` finds; how many went."""
    found = stale_scratch(folder)
    for path in found:
        shutil.rmtree(path, ignore_errors=True)
    return len(found)


def stale_cgroups(parents: list[Path]) -> list[Path]:
    """Child cgroups of ended parents under the cgroup folders `parents`."""
    return [
        path
        for parent in parents
        for path in _stale_entries(parent, CGROUP_PREFIX, lambda s: stat.S_ISDIR(s.st_mode))
    ]
