"""Batches: one lifecycle over a folder of submissions, its journal, outputs, shards and Dask.

Other packages import from here; the modules below are this package's own.
"""

from lessonkit.grade.batches.batch_run import BatchRun
from lessonkit.grade.batches.folder import (
    SUFFIXES,
    BatchItem,
    Listing,
    read_bytes_in_folder,
    submissions_in,
)
from lessonkit.grade.batches.journal import (
    JournalEntry,
    JournalHeader,
    JournalKey,
    JournalSeal,
    NotSealed,
    NotVerified,
    OldSchema,
    Shard,
    check_seal,
    read_sealed,
)
from lessonkit.grade.batches.kind import BatchKind, OnEntry, relative_to
from lessonkit.grade.batches.lesson_kind import lesson_kind
from lessonkit.grade.batches.lifecycle import (
    BatchOutcome,
    BatchPreview,
    FolderBatch,
    KeptBytes,
    Reuse,
    grade_folder,
    grade_kept,
)
from lessonkit.grade.batches.local import grade_many
from lessonkit.grade.batches.outputs import write_results
from lessonkit.grade.batches.pool import grade_each
from lessonkit.grade.model import BatchEntry
from lessonkit.grade.provenance.fingerprint import grading_fingerprint, short
from lessonkit.grade.provenance.grading_key import grading_key

__all__ = [
    "SUFFIXES",
    "BatchEntry",
    "BatchItem",
    "BatchKind",
    "BatchOutcome",
    "BatchPreview",
    "BatchRun",
    "FolderBatch",
    "JournalEntry",
    "JournalHeader",
    "JournalKey",
    "JournalSeal",
    "KeptBytes",
    "Listing",
    "NotSealed",
    "NotVerified",
    "OldSchema",
    "OnEntry",
    "Reuse",
    "Shard",
    "check_seal",
    "grade_each",
    "grade_folder",
    "grade_kept",
    "grade_many",
    "grading_fingerprint",
    "grading_key",
    "lesson_kind",
    "read_bytes_in_folder",
    "read_sealed",
    "relative_to",
    "short",
    "submissions_in",
    "write_results",
]
