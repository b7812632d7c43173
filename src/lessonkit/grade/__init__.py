"""Grade a learner's practice file task by task, with feedback that teaches.

Learner code runs in a sandboxed child process of its own (`lessonkit.grading_child`) that only
reports values; the lesson's reference solution runs in another, trusted child on the same
inputs; every comparison happens in this process. `docs/grading-security.md` is the threat
model. Importing this package does not import JAX.

Modules, in the order data flows through them:

- `sources`, `magics`: the learner's file (.py percent cells or .ipynb) read into code
  cells, with a notebook's IPython magics as plain Python
- `inputs`, `rubric`, `probes`, `attempts`: what each task is graded on (drawn input sets,
  names, probes as scenarios) and the attempts a lesson declares with their verdicts
- `cheats`, `literals`: the cheat set `verify` builds from each lesson (typed-in, inputs
  unchanged, zeros), written as Python literals of reported values, which every task must fail
- `plan`, `review`: the learner's cells matched to the lesson's, each given a role, and the
  code in them that reaches into the grader, marked for review
- `protocol`: the typed requests and the strict parser of reports (the wire's tags, keys and
  limits it shares with the child are `lessonkit.grading_child.wire`)
- `worker_handle`: the parent's side of a grading child (the child's program is
  `lessonkit.grading_child`); children are started, sandboxed and limited by `lessonkit.run`
  (`confined_child`, `isolation`, `limits`)
- `record`, `reported`, `values`: a run's reports as data (`RunRecord`), the values in them
  typed, compared without JAX by `lessonkit.treediff`
- `checks`, `explain`: verdicts and the words that explain them
- `requests`: what a child is sent (the lesson's scenarios, their drawn order and names);
  `grader`: the phases of one run; `watch` drives it on every save
- `batch`: the one batch lifecycle (outputs checked, `journal`, resume, the `grade_each`
  pool, outputs written by `batch_outputs`) over items read by `batch_folder`; a lesson's
  grade-one function is `lesson_batch` (a project's is `lessonkit.project.batch`), and
  `distributed` grades a lesson's items on Dask
- `results`, `report`: the verdicts as frozen values (the grade report), and that report
  rendered for people: tables, JSON and CSV
"""

from lessonkit.grade.batches.batch import BatchEntry
from lessonkit.grade.batches.lesson_batch import grade_many
from lessonkit.grade.channel.worker_handle import GradingError
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
]
