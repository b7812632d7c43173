"""Write a file the way tools expect: whole or not at all, through links, with the umask's mode.

Every file lessonkit writes goes through here. Its reader (a person, a spreadsheet, a web
server, `lessonkit verify`) must never see half a file, even when the disk fills or the run
is interrupted: the bytes go to a temporary file beside the target, renamed over it in one
step; on failure the temporary file is removed and the target left as it was.

A new file gets the umask's mode, as `touch` would; only the instructor's own files are 0600
(the gradebook and a batch's journal hold every submission, the reference store the answers);
the grading key has its own writer (`grade.provenance.grading_key`), which never replaces a key.

- `write_atomically`: a file lessonkit owns in a folder it chose; a link at the path is
  replaced, never followed, as the folder may be writable by others.
- `OpenFolder`: a folder written in over a long run, opened once; every path in it is
  resolved relative to that open folder, never through a link.
- `write_named`: a file a person named (`--output FILE`), written where they meant: through a
  link, into a FIFO or device in place; a regular file keeps its permission bits.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

PRIVATE_MODE = 0o600
_NEW_MODE = 0o666  # what the umask is taken from, as open(2) does for `touch` and `>`
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC
_IN_PLACE_FLAGS = os.O_WRONLY | _CLOEXEC

Way = Literal["replace", "in_place"]
"""`replace`: a temporary file beside the target renamed over it; `in_place`: the target
opened and written (a FIFO, a device, a socket: nothing there to rename over)."""


@dataclass(frozen=True)
class Destination:
    """Where the bytes for a named path go, and how."""

    path: Path
    way: Way


def destination(path: Path) -> Destination:
    """Where `write_named` puts the bytes for `path`: a link (in any folder of the path) is
    followed to its final target, which is replaced when it is a regular file or missing and
    written in place when it is anything else but a folder.

    Raises:
        IsADirectoryError: `path` names a folder.
        OSError: `path` cannot be looked at (a link loop, a folder without permission).
    """
    try:
        info = os.stat(path)  # links followed, `/dev/stdout`'s too
    except FileNotFoundError:
        info = None  # missing, or a link to nothing: made where the link points
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if info is not None and not stat.S_ISREG(info.st_mode):
        return Destination(path, "in_place")
    return Destination(Path(os.path.realpath(path)), "replace")


def write_named(path: Path, content: str | bytes) -> None:
    """Write `content` (text as UTF-8) to the file a person named, as `destination` says: a
    link is written through and stays a link, a FIFO or device is written in place, a regular
    file is replaced whole and keeps its mode; a new file gets the umask's mode.

    Raises:
        OSError: it cannot be written (a regular file is then left unchanged).
    """
    where = destination(path)
    if where.way == "replace":
        write_atomically(where.path, content, keep_mode=True)
        return
    fd = os.open(where.path, _IN_PLACE_FLAGS)
    with os.fdopen(fd, "wb") as file:
        if stat.S_ISREG(os.fstat(fd).st_mode):  # became a regular file since it was looked at
            raise FileExistsError(errno.EEXIST, "it changed while being written", str(path))
        file.write(_encoded(content))


def write_atomically(
    path: Path, content: str | bytes, *, private: bool = False, keep_mode: bool = False
) -> None:
    """Write `content` (text as UTF-8) to a new temporary file beside `path`, then rename it
    over whatever `path` is (a link is replaced, not followed); parent folders are made if
    missing.

    The file gets the umask's mode; with `keep_mode`, a regular file replaced keeps its
    permission bits instead; with `private`, it is 0600 whatever was there, for what only
    the instructor may read (say why at the call).

    Raises:
        OSError: the folder or the file cannot be written (`path` is left unchanged).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = PRIVATE_MODE if private else _regular_mode(path) if keep_mode else None
    fd, temporary = _create_beside(path, PRIVATE_MODE if private else _NEW_MODE)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(_encoded(content))
            if mode is not None:
                os.chmod(file.fileno(), mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def make_folders(path: Path, mode: int, *, parents: int | None = None) -> None:
    """Make `path` and any missing folder above it; each made here gets exactly `mode`
    (`parents` for those above, `mode` when not given), whatever the umask: under umask 000
    `mkdir` alone would leave them 0777, writable by every account. Folders already there
    keep their modes.

    Raises:
        OSError: one cannot be made.
    """
    missing = []
    for folder in (path, *path.parents):
        if os.path.isdir(folder):
            break
        missing.append(folder)
    for folder in reversed(missing):
        bits = mode if folder == path or parents is None else parents
        try:
            os.mkdir(folder, bits)
        except FileExistsError:
            if not os.path.isdir(folder):
                raise
            continue  # made meanwhile by another process: its mode is its own
        if os.name == "posix":  # mkdir's mode went through the umask; the folder made, not a link
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC)
            try:
                os.fchmod(fd, bits)
            finally:
                os.close(fd)


def create_private(path: Path) -> bool:
    """Make `path` an empty file of mode 0600 unless something is there already (a file
    another program then fills, such as SQLite's database); whether it was made."""
    try:
        os.close(os.open(path, _FLAGS, PRIVATE_MODE))
    except FileExistsError:
        return False
    return True


def _create_beside(path: Path, mode: int) -> tuple[int, Path]:
    """A new file opened for writing in `path`'s folder, `mode` filtered by the umask."""
    while True:
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}")
        try:
            return os.open(temporary, _FLAGS, mode), temporary
        except FileExistsError:
            continue


def _regular_mode(path: Path) -> int | None:
    """The permission bits of the regular file at `path` (links not followed), else None."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None


def _encoded(content: str | bytes) -> bytes:
    return content.encode("utf-8") if isinstance(content, str) else content


_NO_LINK = getattr(os, "O_NOFOLLOW", 0)
_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NO_LINK | _CLOEXEC
_AT = os.open in os.supports_dir_fd and os.rename in os.supports_dir_fd
"""Whether files can be named relative to an open folder here (POSIX); elsewhere by path."""


class OpenFolder:
    """A folder opened once, never through a link, and what is in it named relative to it.

    Every name is one name in the folder (no `/`); what it names is never followed if a link
    (`O_NOFOLLOW`, and renames and removals act on the name itself), so whoever can write the
    folder cannot send a write, an append or a read elsewhere by planting a link, before or
    while a long run goes on. Where files cannot be named relative to an open folder
    (Windows), they are named by path. Close it (or use it as a context manager).
    """

    def __init__(self, path: Path, fd: int | None):
        self.path = path
        self.fd = fd

    @classmethod
    def open(cls, path: Path) -> OpenFolder:
        """The folder at `path`, made (with its parents) if missing.

        Raises:
            OSError: it cannot be made or opened; ELOOP or ENOTDIR where it is a link or a
                file.
        """
        path.mkdir(parents=True, exist_ok=True)
        if not _AT:
            return cls(path, None)
        return cls(path, os.open(path, _FOLDER_FLAGS))

    def __enter__(self) -> OpenFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    @contextlib.contextmanager
    def _about(self, name: str) -> Iterator[None]:
        """An OSError raised inside names `name` by its whole path, not its name alone."""
        try:
            yield
        except OSError as exc:
            if exc.filename in (None, name) or not os.path.isabs(str(exc.filename)):
                raise OSError(exc.errno, exc.strerror, str(self.path / name)) from exc
            raise

    def _name(self, name: str) -> tuple[str, dict[str, int]]:
        if "/" in name or name in ("", ".", ".."):
            raise ValueError(f"{name!r} is not one name in a folder")
        if self.fd is None:
            return str(self.path / name), {}
        return name, {"dir_fd": self.fd}

    def folder(self, name: str) -> OpenFolder:
        """The folder `name` in this one, made if missing, opened without following a link.

        Raises:
            OSError: it cannot be made or opened; ELOOP or ENOTDIR where it is a link or a
                file.
        """
        where, at = self._name(name)
        with self._about(name):
            with contextlib.suppress(FileExistsError):
                os.mkdir(where, **at)
            if self.fd is None:
                return OpenFolder(self.path / name, None)
            return OpenFolder(self.path / name, os.open(where, _FOLDER_FLAGS, **at))

    def write(self, name: str, content: str | bytes, *, private: bool = False) -> None:
        """`write_atomically` in this folder: a new temporary file in it, renamed over `name`
        (whatever is there, a link too, is replaced, never followed); the umask's mode, or
        0600 when `private`."""
        os.close(self.create(name, content, private=private))

    def create(self, name: str, content: str | bytes, *, private: bool = False) -> int:
        """`write`, and the new file kept open for writing more at its end (a journal), its
        offset after `content`: written there, lines go to this file whatever is later put
        at `name`. The caller closes it. OSError names `name`, never the temporary file."""
        with self._about(name):
            fd, temporary = self._temporary(name, PRIVATE_MODE if private else _NEW_MODE)
            try:
                data = _encoded(content)
                while data:
                    data = data[os.write(fd, data) :]
                self.rename(temporary, name)  # 0600 at most when private: a umask only clears
            except BaseException:
                os.close(fd)
                with contextlib.suppress(OSError):
                    self.unlink(temporary)
                raise
            return fd

    def read_bytes(self, name: str) -> bytes:
        """The bytes of the regular file `name`; ELOOP where it is a link."""
        where, at = self._name(name)
        with self._about(name):
            fd = os.open(where, os.O_RDONLY | os.O_NONBLOCK | _NO_LINK | _CLOEXEC, **at)
            with os.fdopen(fd, "rb") as file:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise IsADirectoryError(errno.EISDIR, "not a regular file", name)
                return file.read()

    def rename(self, old: str, new: str) -> None:
        """Rename `old` to `new` in this folder, replacing what is at `new` (a link itself)."""
        source, _ = self._name(old)
        target, _ = self._name(new)
        if self.fd is None:
            os.replace(source, target)
        else:
            os.replace(source, target, src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def unlink(self, name: str) -> None:
        """Remove `name` (a link itself, never what it points to)."""
        where, at = self._name(name)
        with self._about(name):
            os.unlink(where, **at)

    def check_writable(self) -> None:
        """Raise OSError unless a file can be made in this folder (one is made and removed)."""
        with self._about(""):
            fd, temporary = self._temporary(".probe", PRIVATE_MODE)
            os.close(fd)
            self.unlink(temporary)

    def kind(self, name: str) -> int | None:
        """The file type bits of `name` (a link's own), None where nothing is there."""
        where, at = self._name(name)
        with self._about(name):
            try:
                return stat.S_IFMT(os.stat(where, follow_symlinks=False, **at).st_mode)
            except FileNotFoundError:
                return None

    def _temporary(self, name: str, mode: int) -> tuple[int, str]:
        """A new file opened for reading and writing in this folder, `mode` filtered by the
        umask, and its name."""
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | _NO_LINK | _CLOEXEC
        while True:
            temporary = f".{name}.{secrets.token_hex(6)}"
            where, at = self._name(temporary)
            try:
                return os.open(where, flags, mode, **at), temporary
            except FileExistsError:
                continue
