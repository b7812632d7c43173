"""Make a grading child forked from the starter a process of its own, before learner code.

The starter (`starter_main.py`) imported JAX once; each learner's child is a fork of it, and this
module takes the fork from "a copy of a trusted process" to "as confined as a child started
from scratch" (see `run/sandbox.py` and `run/confine.py` for that child). The steps, in the
order the kernel allows them:

1. limits (`confine.limit_resources`: memory, file size, tasks) while still privileged;
2. new namespaces: mount, PID, IPC, UTS and network; as root in a privileged sandbox directly, as a
   user otherwise inside a new user namespace that maps only that user;
3. a fork, so that the learner's process is PID 1 of the new PID namespace: it sees no
   other process, and when it ends the kernel ends everything it started;
4. in that process a private `/tmp` (a tmpfs of the scratch size) and, where the kernel
   allows it (as root), a `/proc` of its own namespace;
5. its own user id (`confine.drop_privileges`), or none where it was one already; then no
   way back: `PR_SET_NO_NEW_PRIVS`, and not dumpable, so nothing of its user can read or
   trace it, nor it them.

Where bubblewrap cannot start but the grader is root (a gVisor pod, a container, an
autograder), the fork is its own sandbox (mode `own-root`): step 2 as root, and in step 4 it
builds a view of the files of its own, as bubblewrap would have (`own_root`): an empty tmpfs
on a folder of the parent's, only the paths the parent names bound into it (the system's
programs and libraries, the Python installation, the child's program, the compile cache),
read-only where the kernel allows it, a `/dev` of the harmless devices, its own `/tmp` and
`/proc`, and then `chroot` into it. Every mount is made without `MS_REC`, which gVisor
refuses. Without a sandbox as an ordinary user only steps 1 and 5 apply, as for a child
started from scratch. What each fork becomes is the parent's `Confinement` record
(`lessonkit/grading_child/confinement.py`). Standard library only: this runs in the starter, in the
sandbox.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # loaded by path in the starter, which reads the record itself
    from lessonkit.grading_child.confinement import Confinement

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND = 0x20, 0x1000
MS_REC, MS_PRIVATE = 0x4000, 0x40000
MNT_DETACH = 2
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
_CAPABILITY_VERSION_3 = 0x20080522


_libc = ctypes.CDLL(None, use_errno=True)


def _call(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")


def _mount(source: str, target: str, kind: str | None, flags: int, data: str | None) -> None:
    _call(
        _libc.mount(
            source.encode(),
            target.encode(),
            kind.encode() if kind else None,
            ctypes.c_ulong(flags),
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def _prctl(option: int, value: int) -> None:
    _call(_libc.prctl(option, value, 0, 0, 0), f"prctl {option}")


def _map_own_user() -> None:
    """In a new user namespace: map our own user and group to themselves, nothing else."""
    uid, gid = os.getuid(), os.getgid()
    with open("/proc/self/setgroups", "w") as file:
        file.write("deny")
    with open("/proc/self/uid_map", "w") as file:
        file.write(f"{uid} {uid} 1")
    with open("/proc/self/gid_map", "w") as file:
        file.write(f"{gid} {gid} 1")


def enter_namespaces(confinement: Confinement) -> None:
    """Step 2, in the forked child before its own fork (the namespaces are for its child)."""
    # A network namespace of its own too: the starter's is shared by every fork, and its
    # loopback and abstract Unix sockets would let two files graded at once meet.
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET
    if confinement.mode == "userns":
        _prctl(PR_SET_DUMPABLE, 1)  # its /proc/self files must be its own to write the maps
        _call(_libc.unshare(flags | CLONE_NEWUSER), "unshare")
        _map_own_user()
        set_dumpable(False)  # the maps are written: no process of this user may trace it
    elif confinement.mode in ("privileged", "own-root"):
        _call(_libc.unshare(flags), "unshare")


def private_mounts(confinement: Confinement) -> None:
    """Step 4, as PID 1 of the new namespace: a /tmp of its own and, as root, a /proc."""
    if confinement.mode == "none":
        return
    _private_propagation()
    if confinement.mode == "own-root":
        own_root(confinement)
        return
    # What the sandbox binds under /tmp (a virtual environment or checkout there: CI's
    # clones) is held open, so it can be bound again on top of the new /tmp.
    held = [(path, os.open(path, os.O_PATH)) for path in outermost(confinement.keep)]
    size = f"size={confinement.scratch_bytes},mode=1777"
    _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, size)
    for path, handle in held:
        _bind_again(f"/proc/self/fd/{handle}", path, path not in confinement.writable)
        os.close(handle)
    if confinement.cache and not confinement.writable:
        _read_only(confinement.cache)  # a learner's fork: nothing it does reaches the cache
    if confinement.mode == "privileged":
        # In a user namespace the kernel refuses a new /proc under the sandbox's covered one;
        # there the old /proc stays, and names only processes this child cannot signal.
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)


def _private_propagation() -> None:
    """Nothing this namespace mounts reaches the grader's (gVisor refuses `MS_REC` here, and
    has no shared mounts to keep apart)."""
    try:
        _mount("none", "/", None, MS_REC | MS_PRIVATE, None)
    except OSError:
        _mount("none", "/", None, MS_PRIVATE, None)


DEVICES = ("null", "zero", "full", "random", "urandom")
"""The devices a learner child sees, as bubblewrap's `--dev` gives them."""


def own_root(confinement: Confinement) -> None:
    """Step 4 for a fork that is its own sandbox: a new `/` holding only `keep`, then chroot.

    The root is a tmpfs on `confinement.stage` (an empty folder the parent made), so the
    grader's files stay where they are and nothing of this view outlives the namespace.
    """
    root = confinement.stage
    if not root:
        raise OSError("own-root confinement without a folder for the root")
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=0755")
    size = f"size={confinement.scratch_bytes},mode=1777"
    os.makedirs(root + "/tmp")  # first: what is kept under /tmp (CI's clones) goes on top
    _mount("tmpfs", root + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, size)
    for path in sorted(set(confinement.keep), key=lambda kept: (kept.count("/"), kept)):
        _place(path, root + path, read_only=path not in confinement.writable)
    if confinement.home != "/tmp":  # a child started from scratch: its folder, writable
        _place(confinement.home, root + confinement.home, read_only=False)
    os.makedirs(root + "/dev", exist_ok=True)
    for device in DEVICES:
        _place(f"/dev/{device}", f"{root}/dev/{device}", read_only=False)
    os.makedirs(root + "/proc", exist_ok=True)
    _mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)
    os.chroot(root)
    os.chdir("/")


def _place(source: str, target: str, *, read_only: bool) -> None:
    """`source` of the grader's at `target` in the new root: a link as the same link, a
    folder or file bound (read-only where the kernel allows); nothing where it is missing
    or where a link placed earlier already leads."""
    if os.path.islink(source):
        if not os.path.lexists(target):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.symlink(os.readlink(source), target)
        return
    if not os.path.exists(source) or (os.path.lexists(target) and os.path.islink(target)):
        return
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
    try:
        _mount(source, target, None, MS_BIND | MS_REC, None)
    except OSError:
        _mount(source, target, None, MS_BIND, None)  # gVisor: no recursive binds
    if read_only:  # an older gVisor cannot remount a bind: its modes keep the child out
        with contextlib.suppress(OSError):
            _read_only(target)


def try_namespaces(folder: str) -> None:
    """Take the namespaces and mount a tmpfs on `folder` (empty, the caller's), as an
    own-root fork does; raises OSError where the kernel refuses. Run as `python -I isolate.py
    --try FOLDER`, in a process of its own; the mount is undone here, since an older gVisor
    shares a new mount namespace's mounts with its parent."""
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET
    _call(_libc.unshare(flags), "unshare")
    _private_propagation()
    _mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k")
    _call(_libc.umount2(folder.encode(), MNT_DETACH), f"umount {folder}")


def outermost(paths: tuple[str, ...]) -> tuple[str, ...]:
    """The kept paths to bind again, parents first: those inside no other kept folder.

    A bind is recursive, so binding a folder again brings what the sandbox bound inside it,
    as the sandbox bound it (the writable compile cache included); binding a path inside an
    already read-only folder would have to create its mount point there, which fails.
    """
    ordered = sorted(set(paths), key=lambda path: (path.count("/"), path))
    kept: list[str] = []
    for path in ordered:
        if not any(path.startswith(parent.rstrip("/") + "/") for parent in kept):
            kept.append(path)
    return tuple(kept)


def _bind_again(source: str, target: str, read_only: bool) -> None:
    """Bind `source` (a folder or a file) at `target` on the new /tmp."""
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
    _mount(source, target, None, MS_BIND | MS_REC, None)
    if read_only:
        _read_only(target)


def _read_only(target: str) -> None:
    """Make the mount at `target` read-only in this namespace; once this fork has no
    capability left, neither it nor a namespace it makes can undo that."""
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV
    _mount("none", target, None, flags, None)


def set_dumpable(dumpable: bool) -> None:
    """Whether processes of the same user may trace this one or read its memory."""
    _prctl(PR_SET_DUMPABLE, int(dumpable))


def _drop_capabilities() -> None:
    """No capability left, in any namespace (`capset` with everything zero)."""
    header = (ctypes.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    _call(_libc.capset(header, data), "capset")


def no_way_back() -> None:
    """Step 5's end: no capability, no privilege gained by exec, and nothing of its user
    may trace it or read its memory."""
    _drop_capabilities()
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    set_dumpable(False)


if __name__ == "__main__" and sys.argv[1:2] == ["--try"]:
    try:
        try_namespaces(sys.argv[2])
    except OSError as exc:
        raise SystemExit(str(exc)) from None
