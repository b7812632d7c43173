"""The instructor's grading key: the secret that signs every batch journal and shard result,
and every entry of the reference store.

`check --batch` signs each line of its journal with an HMAC under this key, and `merge` and
`check --batch --resume` keep only lines that verify (`grade.batches.journal`), so a shard result
or a journal written by hand, by a student or by anyone else without the key, is refused.
The reference store (`grade.channel.reference_store`) signs each entry under the key found where
`--key` names none, and uses none that does not verify.

The key is one per instructor account, in the user's configuration folder
(`$XDG_CONFIG_HOME/lessonkit/grading.key`, by default `~/.config/lessonkit/grading.key`;
`%APPDATA%\\lessonkit\\grading.key` on Windows), made on first use: 32 random bytes, written
as hex to a file of mode 0600 in a folder of mode 0700. One place rather than one per
gradebook, because the shards of a batch are graded without a gradebook (often on other
machines) and merged into one: every command must use the key the shards signed with.
`--key FILE`, or `$LESSONKIT_GRADING_KEY`, names another (a cluster's secret, mounted on
each node; it is made there on first use too). A key inside the
submissions folder or an output folder (where it resolves, links followed: a Kubernetes
secret is a link) is refused, since anyone who can write there could have planted it; so
is one that others can read or change, one another account owns (root-owned is root's, who
can read anything anyway), and one in a folder another account can write, at any level,
the link's folders and its target's (a sticky folder such as /tmp excepted, where none can
rename what is not theirs): whoever owns the file, or can put another in its place, can
sign a shard result. The folders made for a new key are 0700 whatever the umask.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from lessonkit.atomic import make_folders
from lessonkit.errors import UsageError, shown
from lessonkit.grade.model import JournalKey

KEY_BYTES = 32
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def default_key_path(env: Mapping[str, str] = os.environ) -> Path:
    """Where the grading key is kept when `--key` names none: `$LESSONKIT_GRADING_KEY`, else
    the user's config folder."""
    if env.get("LESSONKIT_GRADING_KEY"):
        return Path(env["LESSONKIT_GRADING_KEY"])
    if os.name == "nt" and env.get("APPDATA"):
        return Path(env["APPDATA"]) / "lessonkit" / "grading.key"
    config = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "lessonkit" / "grading.key"


def grading_key(given: str | None, *, not_inside: Sequence[Path] = ()) -> JournalKey:
    """The grading key at `given` (`--key`), else at `default_key_path`; made there on first
    use. Refused when it lies inside one of `not_inside` (the submissions and output
    folders), is not a key, or others can read it."""
    path = Path(given) if given else default_key_path()
    _refuse_inside(path, not_inside)
    try:
        secret = _read(path)
    except FileNotFoundError:
        secret = _create(path)
    except OSError as exc:
        raise UsageError(
            f"cannot read the grading key {shown(path)}: {exc.strerror or exc}",
            fix="give --key a file of yours that holds the key, or move that one away",
        ) from None
    return JournalKey(secret, shown(path))


def _refuse_inside(path: Path, folders: Sequence[Path]) -> None:
    try:
        where = path.resolve()
    except (OSError, RuntimeError):
        return  # a link loop: reading it fails next, with its own message
    for folder in folders:
        try:
            inside = folder.resolve()
        except (OSError, RuntimeError):
            continue
        if where == inside or inside in where.parents:
            raise UsageError(
                f"the grading key {shown(path)} is inside {shown(folder)}, where anyone who "
                "can write there could have planted it",
                fix="keep the key in your own config folder (leave --key out) or another "
                "folder of yours",
            )


def _read(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | _CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UsageError(f"the grading key {shown(path)} is not a regular file")
        text = os.read(fd, 4 * KEY_BYTES)
    finally:
        os.close(fd)
    if os.name == "posix":
        _refuse_others(path, info)
    try:
        secret = bytes.fromhex(text.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        secret = b""
    if len(secret) < KEY_BYTES:
        raise UsageError(
            f"{shown(path)} is not a grading key ({KEY_BYTES * 2} hex digits)",
            fix="give --key the key file the batch was graded with",
        )
    return secret


def _refuse_others(path: Path, info: os.stat_result) -> None:
    """Refuse a key another account can read, change, own or put another in the place of."""
    if info.st_mode & 0o077:
        raise UsageError(
            f"the grading key {shown(path)} can be read or changed by others "
            f"(mode {stat.S_IMODE(info.st_mode):04o}); whoever reads it can sign a shard result",
            fix=f"chmod 600 {shown(path)}",
        )
    if not _ours(info.st_uid):
        raise UsageError(
            f"the grading key {shown(path)} is owned by another account (uid {info.st_uid}); "
            "its owner can read it and sign a shard result",
            fix="use a key of your own (leave --key out), or make this one yours: "
            f"chown {os.geteuid()} {shown(path)}",
        )
    _refuse_unsafe_folders(path)


def _refuse_unsafe_folders(path: Path) -> None:
    """Refuse a key in a folder (at any level) that another account owns or can write."""
    for folder in _folders_above(path):
        try:
            held = os.lstat(folder)
        except OSError:
            continue
        if not stat.S_ISDIR(held.st_mode):
            continue  # a link: the folders of its target are in the list too
        if not _ours(held.st_uid) or _others_can_write(held):
            raise UsageError(
                f"the grading key {shown(path)} is in {shown(folder)}, which another account "
                f"{'owns' if not _ours(held.st_uid) else 'can write'} (uid {held.st_uid}, mode "
                f"{stat.S_IMODE(held.st_mode):04o}): it could put its own key in its place",
                fix="keep the key in your own config folder (leave --key out) or another "
                "folder only you can write",
            )


def _ours(uid: int) -> bool:
    return uid in (os.geteuid(), 0)


def _folders_above(path: Path) -> list[Path]:
    """Every folder above `path` as named and above where it resolves (links followed)."""
    named = Path(os.path.abspath(path))
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):
        resolved = named
    return list(dict.fromkeys((*named.parents, *resolved.parents)))


def _others_can_write(info: os.stat_result) -> bool:
    """A folder another account can write: by everyone, or by a group that is not this
    account's own (a user's private group, under umask 002, is the user's), unless sticky."""
    if info.st_mode & stat.S_ISVTX:
        return False  # only an entry's owner can rename or remove it
    if info.st_mode & 0o002:
        return True
    return bool(info.st_mode & 0o020) and not _private_group(info.st_gid)


def _private_group(gid: int) -> bool:
    """Whether `gid` is this account's own group, with no other member."""
    try:
        import grp
        import pwd

        group, user = grp.getgrgid(gid), pwd.getpwuid(os.geteuid())
    except (ImportError, KeyError):
        return False
    return gid == user.pw_gid and set(group.gr_mem) <= {user.pw_name}


def _create(path: Path) -> bytes:
    """A new key at `path`, never seen half-written: written to a temporary file of mode
    0600 beside it, then linked into place, which fails if another batch made one
    meanwhile (that key is read instead)."""
    secret = secrets.token_bytes(KEY_BYTES)
    try:
        make_folders(path.parent, 0o700)  # private, as XDG asks of a config folder
        if os.name == "posix":
            _refuse_unsafe_folders(path)
        handle, temporary = tempfile.mkstemp(prefix=".grading-key.", dir=path.parent)
    except OSError as exc:
        raise UsageError(
            f"cannot make the grading key {shown(path)}: {exc.strerror or exc}",
            fix="give --key a file in a folder of yours that can be written",
        ) from None
    try:
        with os.fdopen(handle, "wb") as file:  # mkstemp makes it 0600
            file.write((secret.hex() + "\n").encode("ascii"))
            file.flush()
            os.fsync(file.fileno())
        os.link(temporary, path)
    except FileExistsError:
        return _read(path)
    except OSError as exc:
        raise UsageError(
            f"cannot make the grading key {shown(path)}: {exc.strerror or exc}",
            fix="give --key a file in a folder of yours that can be written",
        ) from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
    return secret
