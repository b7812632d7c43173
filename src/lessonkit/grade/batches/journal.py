"""The batch journal: one report format for `--resume`, for shard results and for merging.

A journal is JSON lines: a header naming the run, the batch, the lesson (or the project's
phase) and its revision, the grading fingerprint (`grade.provenance.fingerprint`),
the toolkit version, the input seed and the shard, then one entry per graded file (its
relative path, the sha256 and base64 of the bytes graded, its modification time and its
report). A batch appends an entry the moment a file is graded, so Ctrl-C loses nothing; a
sharded batch keeps its journal as its result, and `lessonkit merge` joins those.

The batch is an id of what was graded: the sha256 of the folder's listing (every relative
path and the sha256 of its bytes) and the seed, so two shards of one batch name the same
one and shards of another folder, or of this one after a file changed, do not.

A journal is believed only where it verifies. Each line carries an HMAC-SHA256 under the
instructor's grading key (`grade.provenance.grading_key`), which no submission and no output folder
holds: the header's over its fields, each entry's over its fields and the header's batch
(its bytes through their sha256, which the entry names and its data must have). A line
that does not parse (cut short by an interruption) or names another run is skipped; an
entry of this run that does not verify is refused (`NotVerified`), never kept: whoever
wrote it by hand, or moved it from another batch, did not have the key.

A shard's journal is its result, and a signed line can still be deleted: so a finished
shard is sealed. Its last line, signed too, binds its run, batch and shard, the number of
entries and a digest of their (path, sha256) pairs (`JournalSeal`); `check_seal` refuses a
journal without one (its batch did not finish), with two, with one of another shard, or
whose entries are not those it binds (one deleted, duplicated or added), as `NotSealed`.
`--resume` reads a journal without its seal, and a batch seals only at its end.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic

from lessonkit.grade.model import JournalKey, R

SCHEMA = 6  # 4: the batch id, and an HMAC on every line; 5: a finished shard is sealed;
# 6: the header names the grading fingerprint


class NotVerified(ValueError):
    """A journal line of this run that the key does not verify; `what` names it."""

    def __init__(self, what: str, why: str):
        self.what, self.why = what, why
        super().__init__(f"{what}: {why}")


class OldSchema(ValueError):
    """A journal of another schema (an older lessonkit's): named, so a message can say so."""

    def __init__(self, schema: object):
        self.schema = schema
        super().__init__(f"a journal of schema {schema!r}; this lessonkit reads schema {SCHEMA}")


class NotSealed(ValueError):
    """A journal whose seal is missing or does not bind its entries; `unfinished` when it
    has none (its batch was interrupted, or the seal was removed)."""

    def __init__(self, why: str, unfinished: bool):
        self.why, self.unfinished = why, unfinished
        super().__init__(why)


def batch_id(listing: Iterable[tuple[str, str]], seed: int | None) -> str:
    """The id of a batch: the folder's files (relative path, sha256 of the bytes; "" for a
    file that cannot be read) in path order, and the seed."""
    files = sorted(listing)
    text = json.dumps({"files": files, "seed": seed}, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


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


def _shard_json(shard: Shard | None) -> dict[str, int] | None:
    return None if shard is None else {"index": shard.index, "count": shard.count}


def _shard_from_json(data: Any) -> Shard | None:
    """A header's or a seal's shard; KeyError, TypeError or ValueError when malformed."""
    return None if data is None else Shard(int(data["index"]), int(data["count"]))


@dataclass(frozen=True)
class JournalHeader:
    run: str
    lesson: str
    revision: str
    toolkit: str
    folder: str
    seed: int | None
    shard: Shard | None
    batch: str
    """`batch_id` of the folder's listing and the seed."""
    fingerprint: str = ""
    """The grading fingerprint of what graded the entries (`grade.provenance.fingerprint`)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "journal": SCHEMA,
            "run": self.run,
            "batch": self.batch,
            "lesson": self.lesson,
            "revision": self.revision,
            "toolkit": self.toolkit,
            "folder": self.folder,
            "seed": self.seed,
            "shard": _shard_json(self.shard),
            "fingerprint": self.fingerprint,
        }

    def line(self, key: JournalKey) -> str:
        """The header as the journal's first line, signed."""
        fields = self.to_json()
        return json.dumps(fields | {"mac": key.mac("header", fields)})

    @classmethod
    def from_json(cls, data: Any) -> JournalHeader:
        """The header, or ValueError when it is not one of this schema."""
        if not isinstance(data, dict) or "journal" not in data:
            raise ValueError("not a journal")
        if data["journal"] != SCHEMA:
            raise OldSchema(data["journal"])
        shard = _shard_from_json(data.get("shard"))
        seed = data.get("seed")
        return cls(
            run=str(data["run"]),
            lesson=str(data["lesson"]),
            revision=str(data["revision"]),
            toolkit=str(data["toolkit"]),
            folder=str(data["folder"]),
            seed=None if seed is None else int(seed),
            shard=shard,
            batch=str(data["batch"]),
            fingerprint=str(data["fingerprint"]),
        )


@dataclass(frozen=True)
class JournalEntry(Generic[R]):
    run: str
    path: str
    """The file's path relative to the batch folder, POSIX style."""
    sha256: str
    mtime: float
    report: R
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

    def line(self, key: JournalKey, header: JournalHeader) -> str:
        """The entry as a journal line, signed with its batch (its bytes by their sha256)."""
        fields = self.to_json()
        return json.dumps(fields | {"mac": key.mac("entry", _signed(fields, header))})

    @classmethod
    def from_json(cls, data: Any, report: Callable[[Any], R]) -> JournalEntry[R]:
        """The entry (its report read by `report`), or ValueError, KeyError or TypeError
        when the line is not one."""
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
            report=report(data["report"]),
            data=content,
        )
        if content is not None and hashlib.sha256(content).hexdigest() != entry.sha256:
            raise ValueError("the bytes do not have the sha256 the entry names")
        return entry


def entries_digest(pairs: Iterable[tuple[str, str]]) -> str:
    """The sha256 of the entries' (relative path, sha256) pairs, sorted, duplicates kept:
    what a seal binds, so that no entry can be deleted, added or doubled unseen."""
    text = json.dumps(sorted(pairs), separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


@dataclass(frozen=True)
class JournalSeal:
    """A finished batch's last line: which run, batch and shard it closes, and its entries."""

    run: str
    batch: str
    shard: Shard | None
    entries: int
    digest: str
    """`entries_digest` of the entries' (path, sha256) pairs."""

    @classmethod
    def of(cls, header: JournalHeader, pairs: Sequence[tuple[str, str]]) -> JournalSeal:
        """The seal of `header`'s journal holding entries of these (path, sha256) pairs."""
        return cls(header.run, header.batch, header.shard, len(pairs), entries_digest(pairs))

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "batch": self.batch,
            "shard": _shard_json(self.shard),
            "entries": self.entries,
            "digest": self.digest,
        }

    def line(self, key: JournalKey) -> str:
        """The seal as the journal's last line, signed."""
        fields = self.to_json()
        return json.dumps({"seal": fields, "mac": key.mac("seal", fields)})

    @classmethod
    def from_json(cls, data: Any) -> JournalSeal:
        """The seal, or ValueError, KeyError or TypeError when `data` is not one."""
        return cls(
            run=str(data["run"]),
            batch=str(data["batch"]),
            shard=_shard_from_json(data["shard"]),
            entries=int(data["entries"]),
            digest=str(data["digest"]),
        )


def _signed(fields: dict[str, Any], header: JournalHeader) -> dict[str, Any]:
    """What an entry's HMAC covers: its fields but its data and HMAC, and its batch."""
    return {k: v for k, v in fields.items() if k not in ("data", "mac")} | {"batch": header.batch}


def read_journal(
    text: str, key: JournalKey, report: Callable[[Any], R]
) -> tuple[JournalHeader, tuple[JournalEntry[R], ...]]:
    """The header and the entries of its run (`read_sealed` without its seals): what
    `--resume` keeps."""
    header, entries, _ = read_sealed(text, key, report)
    return header, entries


def read_sealed(
    text: str, key: JournalKey, report: Callable[[Any], R]
) -> tuple[JournalHeader, tuple[JournalEntry[R], ...], tuple[JournalSeal, ...]]:
    """The header, the entries of its run and every seal in it (of any run: `check_seal`
    says which do not belong), each verified with `key`, each report read by `report`
    (`GradeReport.from_json`, `ProjectReport.from_json`).

    Raises:
        OldSchema: the first line is a header of another schema.
        ValueError: the first line is not a header.
        NotVerified: the header, a seal, or an entry of its run does not verify with `key`,
            or an entry's bytes do not have the sha256 it names.
    """
    lines = text.splitlines()
    try:
        raw = json.loads(lines[0]) if lines else None
        header = JournalHeader.from_json(raw)
    except OldSchema:
        raise
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(str(exc)) from None
    fields = {k: v for k, v in raw.items() if k != "mac"}
    if not key.verifies("header", fields, raw.get("mac")):
        raise NotVerified("its first line", "it is not signed with this grading key")
    entries, seals = [], []
    for number, line in enumerate(lines[1:], start=2):
        try:
            data = json.loads(line)
        except ValueError:
            continue  # a line cut short by an interruption
        if isinstance(data, dict) and "seal" in data:
            seals.append(_seal(data, key, f"its seal (line {number})"))
            continue
        if not isinstance(data, dict) or data.get("run") != header.run:
            continue  # not an entry of this run: never kept
        what = f"entry {number - 1} (line {number}, {str(data.get('path'))[:200]!r})"
        if not key.verifies("entry", _signed(data, header), data.get("mac")):
            raise NotVerified(what, "it is not signed with this grading key for this batch")
        try:
            entries.append(JournalEntry.from_json(data, report))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise NotVerified(what, f"it is signed but unreadable ({exc})") from None
    return header, tuple(entries), tuple(seals)


def _seal(data: dict[str, Any], key: JournalKey, what: str) -> JournalSeal:
    """A seal line, verified: one written without the key is refused like an entry."""
    if not key.verifies("seal", data["seal"], data.get("mac")):
        raise NotVerified(what, "it is not signed with this grading key")
    try:
        return JournalSeal.from_json(data["seal"])
    except (ValueError, KeyError, TypeError) as exc:
        raise NotVerified(what, f"it is signed but unreadable ({exc})") from None


def check_seal(
    header: JournalHeader, entries: Sequence[JournalEntry[Any]], seals: Sequence[JournalSeal]
) -> JournalSeal:
    """The one seal of this journal, binding exactly its entries; else `NotSealed`, why."""
    if not seals:
        raise NotSealed(
            "it has no seal: its batch did not finish (it was interrupted, or its last line "
            "was removed)",
            unfinished=True,
        )
    if len(seals) > 1:
        raise NotSealed(f"it has {len(seals)} seals; a finished batch seals once", False)
    seal = seals[0]
    if (seal.run, seal.batch, seal.shard) != (header.run, header.batch, header.shard):
        raise NotSealed(
            f"its seal is the seal of shard {seal.shard} (run {seal.run[:12]}, batch "
            f"{seal.batch[:12]}), not of this journal's shard {header.shard} (run "
            f"{header.run[:12]}, batch {header.batch[:12]}): it was copied from another journal",
            unfinished=False,
        )
    pairs = [(e.path, e.sha256) for e in entries]
    twice = sorted(path for path, n in Counter(p for p, _ in pairs).items() if n > 1)
    if twice:
        raise NotSealed(f"it holds the entry of {twice[0][:200]!r} twice", False)
    if len(pairs) != seal.entries:
        raise NotSealed(
            f"it holds {len(pairs)} entries and its seal {seal.entries}: entries were "
            "deleted or added after its batch finished",
            unfinished=False,
        )
    if entries_digest(pairs) != seal.digest:
        raise NotSealed(
            "its entries (their paths and sha256) are not those its seal binds: entries were "
            "replaced after its batch finished",
            unfinished=False,
        )
    return seal
