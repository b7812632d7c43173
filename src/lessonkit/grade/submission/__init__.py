"""The learner's file read: its cells, its magics, which cell is which, and what in it is
marked for review.

Other packages import from here; the modules below are this package's own.
"""

from lessonkit.grade.submission.magics import python_of_kernel_input
from lessonkit.grade.submission.sources import (
    MAX_CELLS,
    CodeCell,
    Submission,
    SubmissionError,
    decode_source,
    read_bytes,
    read_submission,
    task_of,
)

__all__ = [
    "MAX_CELLS",
    "CodeCell",
    "Submission",
    "SubmissionError",
    "decode_source",
    "python_of_kernel_input",
    "read_bytes",
    "read_submission",
    "task_of",
]
