"""Grade a learner's practice file task by task, with feedback that teaches.

Learner code runs in a sandboxed child process of its own (`lessonkit.grading_child`) that
only reports values; the lesson's reference solution runs in another, trusted child on the
same inputs; every comparison happens in this process. `docs/grading-security.md` is the
threat model, `docs/modules.md` the map of the packages below. Importing this package does
not import JAX.

Other packages import the grader from here, and the rest of grading from the front of the
package that holds it: `grade.submission`, `grade.judging`, `grade.channel`,
`grade.batches`, `grade.self_checks`.
"""

from lessonkit.grade.batches.local import grade_many
from lessonkit.grade.channel.child_handle import GradingError
from lessonkit.grade.grader import GradedRun, Grader
from lessonkit.grade.judging.results import (
    ERROR,
    FAILED,
    NOT_ATTEMPTED,
    PASSED,
    STATUSES,
    GradeReport,
    PrerequisiteResult,
    TaskResult,
)
from lessonkit.grade.model import BatchEntry
from lessonkit.grade.watching import watch

__all__ = [
    "ERROR",
    "FAILED",
    "NOT_ATTEMPTED",
    "PASSED",
    "STATUSES",
    "BatchEntry",
    "GradeReport",
    "GradedRun",
    "Grader",
    "GradingError",
    "PrerequisiteResult",
    "TaskResult",
    "grade_many",
    "watch",
]
