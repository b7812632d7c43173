"""Judging: what each task is graded on, the checks, the verdicts and their words.

Other packages import from here; the modules below are this package's own.
"""

from lessonkit.grade.channel.values import opaque_type
from lessonkit.grade.judging.report import (
    Scoring,
    batch_table,
    report_view,
    summary_csv,
    summary_json,
)
from lessonkit.grade.judging.results import (
    CHECK_WORDS,
    ERROR,
    FAILED,
    LIMIT_CAUSES,
    NOT_ATTEMPTED,
    PASSED,
    STATUSES,
    CheckName,
    ErrorCause,
    GradeReport,
    PrerequisiteResult,
    Status,
    TaskResult,
    counts_as_passed,
    error_cause,
    stopped_at_a_limit,
)
from lessonkit.grade.preparation.inputs import MAX_SEED
from lessonkit.grade.preparation.prepared import LESSON

__all__ = [
    "CHECK_WORDS",
    "ERROR",
    "FAILED",
    "LESSON",
    "LIMIT_CAUSES",
    "MAX_SEED",
    "NOT_ATTEMPTED",
    "PASSED",
    "STATUSES",
    "CheckName",
    "ErrorCause",
    "GradeReport",
    "PrerequisiteResult",
    "Scoring",
    "Status",
    "TaskResult",
    "batch_table",
    "counts_as_passed",
    "error_cause",
    "opaque_type",
    "report_view",
    "stopped_at_a_limit",
    "summary_csv",
    "summary_json",
]
