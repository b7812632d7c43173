"""Whether a learner child can read the compile cache, said before any child runs.

A sandboxed learner child runs as a user id of its own (a privileged sandbox) and sees the
cache read-only at the path the trusted side wrote it. Files it may not read (written under
a umask of 077, or a shared folder of mode 0700) make JAX compile cold without a word, so
every child pays the full compile time. `cache_problem` finds that from the modes alone and
says it in one sentence, which the command prints once (`Isolation.note`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_ENTRIES = 4000  # entries looked at: enough to see a umask problem, cheap at every start
READ, READ_LIST = 0o4, 0o5


def _allows(info: os.stat_result, uid: int | None, gid: int | None, need: int) -> bool:
    """Whether the mode bits give `need` (READ or READ_LIST) to `uid`/`gid`; None: a user
    and group of their own, so only the bits for others count."""
    if uid is not None and info.st_uid == uid:
        bits = info.st_mode >> 6
    elif gid is not None and info.st_gid == gid:
        bits = info.st_mode >> 3
    else:
        bits = info.st_mode
    return bits & need == need


def cache_problem(folder: Path, uid: int | None = None, gid: int | None = None) -> str | None:
    """Why a child running as `uid`/`gid` (None: a fresh id) cannot use `folder`, or None.

    Looks at the folder and up to `MAX_ENTRIES` entries below it; a folder that cannot be
    listed here is not reported (nothing is known about it)."""
    fix = f"run `chmod -R a+rX {folder}`, or name a readable folder in LESSONKIT_COMPILE_CACHE"
    try:
        info = folder.stat()
    except OSError:
        return None
    if not _allows(info, uid, gid, READ_LIST):
        return (
            f"The compile cache {folder} (mode {stat.S_IMODE(info.st_mode):04o}) cannot be "
            "read by the sandboxed learner children, so each of them compiles from scratch: "
            f"{fix}."
        )
    blocked: list[tuple[str, int]] = []
    seen = 0
    pending = [folder]
    while pending and seen < MAX_ENTRIES:
        try:
            entries = list(os.scandir(pending.pop()))
        except OSError:
            continue
        for entry in entries[: MAX_ENTRIES - seen]:
            seen += 1
            try:
                entry_info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            is_folder = stat.S_ISDIR(entry_info.st_mode)
            if not _allows(entry_info, uid, gid, READ_LIST if is_folder else READ):
                blocked.append((entry.name, stat.S_IMODE(entry_info.st_mode)))
            elif is_folder:
                pending.append(Path(entry.path))
    if not blocked:
        return None
    name, mode = blocked[0]
    return (
        f"{len(blocked)} of the {seen} files in the compile cache {folder} cannot be read by "
        f"the sandboxed learner children (such as {name}, mode {mode:04o}), so they "
        f"compile from scratch: {fix}."
    )
