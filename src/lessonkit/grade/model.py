"""The types grade/'s layers share: what a batch keeps of a file's grading (`Report`), one
row of a batch (`BatchEntry`), and the instructor's grading key (`JournalKey`) that signs
journal lines and reference-store entries. They live below every subpackage of grade/, so
the reference store (`grade.channel`), the reports (`grade.judging`) and the batches
(`grade.batches`) name them without importing one another.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar

Kind = Literal["header", "entry", "seal", "reference"]
"""What a MAC is over: a journal's line, or a reference-store entry
(`grade.channel.reference_store`)."""


class Report(Protocol):
    """What a batch keeps of one file's grading, a lesson's or a project's: the journal, the
    batch lifecycle (`grade.batches.lifecycle`) and its outputs need no more than this."""

    @property
    def seed(self) -> int | None: ...

    @property
    def passed(self) -> bool: ...

    @property
    def not_graded(self) -> str | None:
        """Why the grader failed on the file (None: graded); a gradebook never keeps such a
        report, and `--resume` grades the file again."""
        ...

    def to_json(self) -> dict[str, Any]: ...

    def feedback_markdown(self) -> str: ...


R = TypeVar("R", bound=Report)


@dataclass(frozen=True)
class JournalKey:
    """The instructor's grading key: the secret every journal line and reference-store entry
    is signed with, and where it is kept (named in messages, never its content)."""

    secret: bytes = field(repr=False)  # never printed, in a message or a traceback
    where: str

    def mac(self, kind: Kind, fields: dict[str, Any]) -> str:
        """HMAC-SHA256 of `fields` as canonical JSON, for a line of `kind`."""
        text = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return hmac.new(self.secret, f"{kind}\n{text}".encode("ascii"), hashlib.sha256).hexdigest()

    def verifies(self, kind: Kind, fields: dict[str, Any], mac: Any) -> bool:
        return isinstance(mac, str) and hmac.compare_digest(self.mac(kind, fields), mac)


@dataclass(frozen=True)
class BatchEntry(Generic[R]):
    """One row of a batch: the file, its report, and the bytes graded."""

    path: Path
    report: R
    sha256: str | None = None  # of the bytes graded; None when the file could not be read
    data: bytes | None = None  # the bytes graded, kept for a gradebook
