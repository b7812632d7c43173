"""A project's parameter file (`.npz`, one array per leaf named `layer/leaf`), read as data.

The file comes from learner code, so it is read in bounded time and memory: size, member
count, names and expanded sizes are capped from the zip's central directory, each `.npy`
header must declare exactly the data its member holds (bool, integer or float) before
`numpy.load(..., allow_pickle=False)`, and reads stop at the declared size, so neither a zip
bomb nor a lying header costs more than the caps. Anything else is one `ParameterFileError`.
"""

from __future__ import annotations

import io
import itertools
import lzma
import math
import re
import zipfile
import zlib
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from lessonkit import treediff

MAX_FILE_BYTES = 16 * 2**20
MAX_MEMBERS = 256
MAX_ARRAY_BYTES = 64 * 2**20  # all members together, as they expand
MAX_DEPTH = 8
_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")
_KINDS = {"b": "bool", "i": "integer", "u": "integer", "f": "floating-point"}


class ParameterFileError(Exception):
    """The file is not a parameter file that can be read; the message says why."""


@dataclass(frozen=True)
class Leaf:
    """One array of the file: its key path, dtype, shape and exact bytes."""

    path: tuple[str, ...]
    dtype: str
    shape: tuple[int, ...]
    data: bytes

    @property
    def name(self) -> str:
        """The key path joined with `/`, as the file names it."""
        return "/".join(self.path)

    def entry(self) -> treediff.Entry:
        label = f"{self.dtype}[{','.join(map(str, self.shape))}]"
        return treediff.Entry(
            "leaf", "array", label, shape=self.shape, dtype=self.dtype, data=(self.data,)
        )


@dataclass(frozen=True)
class Parameters:
    """A parameter tree as a file holds it: its leaves, sorted by key path."""

    leaves: tuple[Leaf, ...]

    def tree(self) -> Node:
        """The tree for `lessonkit.treediff`: nested dicts by key path, bytes compared exactly."""
        return Node.of(self.leaves, ())

    def leaf(self, name: str) -> Leaf:
        return next(leaf for leaf in self.leaves if leaf.name == name)

    @property
    def layers(self) -> tuple[str, ...]:
        """The distinct first parts of the key paths."""
        return tuple(dict.fromkeys(leaf.path[0] for leaf in self.leaves))


@dataclass(frozen=True)
class Node:
    """A dict of the tree (or a leaf), as `treediff.Described` walks it."""

    leaf: Leaf | None
    kids: tuple[tuple[str, Node], ...] = ()

    @classmethod
    def of(cls, leaves: Sequence[Leaf], prefix: tuple[str, ...]) -> Node:
        depth = len(prefix)
        if len(leaves) == 1 and len(leaves[0].path) == depth:
            return cls(leaves[0])
        names = dict.fromkeys(leaf.path[depth] for leaf in leaves if len(leaf.path) > depth)
        return cls(
            None,
            tuple(
                (n, cls.of([x for x in leaves if x.path[depth : depth + 1] == (n,)], (*prefix, n)))
                for n in names
            ),
        )

    def entry(self) -> treediff.Entry:
        if self.leaf is not None:
            return self.leaf.entry()
        count = sum(1 for _ in self._leaves())
        keys = tuple(name for name, _ in self.kids)
        return treediff.Entry("node", "dict", "dict", keys, True, count)

    def _leaves(self):
        if self.leaf is not None:
            yield self.leaf
        for _, kid in self.kids:
            yield from kid._leaves()

    def children(self) -> Sequence[tuple[Hashable, Node]]:
        return self.kids

    def same_layout(self, other: object) -> bool:
        return False


def read_parameters(data: bytes) -> Parameters:
    """The parameter tree in `data`, the bytes of a `.npz` file.

    Raises:
        ParameterFileError: too large, not a zip of `.npy` arrays, a member name that is not
            a key path, an array that is not bool, integer or floating-point, or a key path
            that is also the prefix of another.
    """
    if len(data) > MAX_FILE_BYTES:
        raise ParameterFileError(f"the file is larger than {MAX_FILE_BYTES // 2**20} MB")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        raise ParameterFileError("it is not an .npz file (not a zip archive)") from None
    with archive:
        if not members:
            raise ParameterFileError("it holds no arrays")
        if len(members) > MAX_MEMBERS:
            raise ParameterFileError(f"it holds more than {MAX_MEMBERS} arrays")
        if sum(m.file_size for m in members) > MAX_ARRAY_BYTES:
            raise ParameterFileError(
                f"its arrays expand to more than {MAX_ARRAY_BYTES // 2**20} MB"
            )
        paths = [_key_path(m.filename) for m in members]
        if len(set(paths)) != len(paths):
            raise ParameterFileError("it names one array twice")
        leaves = [_load(archive, m, p) for m, p in zip(members, paths, strict=True)]
    leaves.sort(key=lambda leaf: leaf.path)
    for before, after in itertools.pairwise(leaves):
        if after.path[: len(before.path)] == before.path:
            raise ParameterFileError(f"{before.name} is both an array and a dict (of {after.name})")
    return Parameters(tuple(leaves))


def _key_path(filename: str) -> tuple[str, ...]:
    shown = filename[:80].encode("unicode_escape").decode("ascii")
    if not filename.endswith(".npy"):
        raise ParameterFileError(f"its member {shown!r} is not a .npy array")
    parts = tuple(filename.removesuffix(".npy").split("/"))
    if len(parts) > MAX_DEPTH or not all(_PART.fullmatch(p) for p in parts):
        raise ParameterFileError(
            f"its member {shown!r} is not a key path (names of letters, digits, '_', '.' "
            f"or '-' joined with '/', at most {MAX_DEPTH} deep)"
        )
    return parts


def _load(archive: zipfile.ZipFile, member: zipfile.ZipInfo, path: tuple[str, ...]) -> Leaf:
    """One member: its header is read first and the array it declares must fit the member,
    so `numpy.load` never allocates an array that a header merely claims."""
    name = "/".join(path)
    unreadable = ParameterFileError(f"its array {name} cannot be read as a .npy array")
    try:
        raw = archive.read(member)  # at most its declared size, which the caps bound
    except (zlib.error, lzma.LZMAError, NotImplementedError, EOFError, OSError, ValueError):
        # A damaged deflate, bzip2 or LZMA stream, or a compression zipfile does not know.
        raise ParameterFileError(
            f"its array {name} cannot be decompressed (the zip member is damaged or uses an "
            "unknown compression)"
        ) from None
    except (zipfile.BadZipFile, RuntimeError):  # a CRC that does not match; encryption
        raise unreadable from None
    try:
        header = io.BytesIO(raw)
        version = np.lib.format.read_magic(header)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(header)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(header)
        else:
            raise unreadable
        if dtype.kind not in _KINDS or dtype.fields is not None:
            raise ParameterFileError(
                f"its array {name} has dtype {dtype}, not bool, integer or floating-point"
            )
        if math.prod(shape) * dtype.itemsize != len(raw) - header.tell():
            raise unreadable
        array = np.load(io.BytesIO(raw), allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, RuntimeError, TypeError):
        raise unreadable from None
    array = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("="))
    return Leaf(path, str(array.dtype), tuple(array.shape), array.tobytes())
