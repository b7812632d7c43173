"""Grade a learner's practice file task by task, with feedback that teaches.

Learner code runs in a child process (`worker`) that only reports values; every comparison
happens in this process, against the lesson's reference solution, which runs first in the
same child on the same inputs. Importing this package does not import JAX.

Modules, in the order data flows through them:

- `inputs`, `rubric`: what each task is graded on (input sets, names, probes)
- `plan`: the learner's cells matched to the lesson's, each given a role
- `runner` (parent) and `worker` (child): the process, its limits and its reports
- `record`, `values`: the reports as data, compared without JAX
- `checks`, `explain`, `treewords`: verdicts and the words that explain them
- `grader`: the phases of one run; `batch` and `watch` drive it for many files or saves
- `results`, `report`: the verdicts as frozen values, tables, JSON and CSV
"""

from lessonkit.grade.batch import BatchEntry, grade_many
from lessonkit.grade.grader import DEFAULT_TIMEOUT, GradedRun, Grader, grade_file
from lessonkit.grade.results import (
    ERROR,
    FAILED,
    NOT_ATTEMPTED,
    PASSED,
    STATUSES,
    GradeReport,
    PrerequisiteResult,
    TaskResult,
)
from lessonkit.grade.runner import GradingError

__all__ = [
    "DEFAULT_TIMEOUT",
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
    "grade_file",
    "grade_many",
]
