"""The batch journal: one record format for `--resume`, for shard results and for merging.

A journal is JSON lines: a header naming the run, the lesson and its revision, the toolkit
version, the input seed and the shard, then one entry per graded file (its relative path,
the sha256 and base64 of the bytes graded, its modification time and its report). A batch
appends an entry the moment a file is graded, so Ctrl-C loses nothing; a sharded batch keeps
its journal as its result, and `lessonkit merge` joins those. What a journal says is read
as data: a line that does not parse, or an entry of another run, is skipped, and a header
of another schema, lesson or folder makes the whole file someone else's.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from lessonkit.grade.results import GradeReport

SCHEMA = 3


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count` (both from 1): the files whose path hash mod count is index-1."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, relative: str) -> bool:
        digest = hashlib.sha256(relative.encode("utf-8", "surrogateescape")).hexdigest()
        return int(digest, 16) % self.count == self.index - 1


@dataclass(frozen=True)
class JournalHeader:
    run: str
    lesson: str
    revision: str
    toolkit: str
    folder: str
    seed: int | None
    shard: Shard | None

    def to_json(self) -> dict[str, Any]:
        shard = (
            None if self.shard is None else {"index": self.shard.index, "count": self.shard.count}
        )
        return {
            "journal": SCHEMA,
            "run": self.run,
            "lesson": self.lesson,
            "revision": self.revision,
            "toolkit": self.toolkit,
            "folder": self.folder,
            "seed": self.seed,
            "shard": shard,
        }

    @classmethod
    def from_json(cls, data: Any) -> JournalHeader:
        """The header, or ValueError when it is not one of this schema."""
        if not isinstance(data, dict) or data.get("journal") != SCHEMA:
            raise ValueError("not a journal of this schema")
        shard = data.get("shard")
        if shard is not None:
            shard = Shard(int(shard["index"]), int(shard["count"]))
        seed = data.get("seed")
        return cls(
            run=str(data["run"]),
            lesson=str(data["lesson"]),
            revision=str(data["revision"]),
            toolkit=str(data["toolkit"]),
            folder=str(data["folder"]),
            seed=None if seed is None else int(seed),
            shard=shard,
        )


@dataclass(frozen=True)
class JournalEntry:
    run: str
    path: str
    """The file's path relative to the batch folder, POSIX style."""
    sha256: str
    mtime: float
    report: GradeReport
    data: bytes | None
    """The bytes graded (None when the batch did not keep them)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "path": self.path,
            "sha256": self.sha256,
            "mtime": self.mtime,
            "report": self.report.to_json(),
            "data": None if self.data is None else base64.b64encode(self.data).decode("ascii"),
        }

    @classmethod
    def from_json(cls, data: Any) -> JournalEntry:
        """The entry, or ValueError, KeyError or TypeError when the line is not one."""
        raw = data.get("data")
        try:
            content = None if raw is None else base64.b64decode(raw, validate=True)
        except binascii.Error:
            raise ValueError("data is not base64") from None
        entry = cls(
            run=str(data["run"]),
            path=str(data["path"]),
            sha256=str(data["sha256"]),
            mtime=float(data.get("mtime", 0.0)),
            report=GradeReport.from_json(data["report"]),
            data=content,
        )
        if content is not None and hashlib.sha256(content).hexdigest() != entry.sha256:
            raise ValueError("the bytes do not have the sha256 the entry names")
        return entry


def read_journal(text: str) -> tuple[JournalHeader, tuple[JournalEntry, ...]]:
    """The header and the entries of its run; ValueError when the header is not one."""
    lines = text.splitlines()
    try:
        header = JournalHeader.from_json(json.loads(lines[0]) if lines else None)
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(str(exc)) from None
    entries = []
    for line in lines[1:]:
        try:
            entry = JournalEntry.from_json(json.loads(line))
        except (ValueError, KeyError, TypeError, AttributeError):
            continue  # a line cut short by an interruption, or not an entry
        if entry.run == header.run:
            entries.append(entry)
    return header, tuple(entries)
