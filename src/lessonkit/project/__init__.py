"""Grading a phase project: a learner's whole script, run confined, judged by its properties.

A phase declares its project's contract in phase.yaml (`lessonkit.lesson.project`); this
package runs the script as the contract says (`runs`), reads each parameter file in the parent
(`parameters`), decides each property from the trees (`properties`) and reports (`report`).
"""

from lessonkit.project.grade import grade_project
from lessonkit.project.parameters import (
    Leaf,
    ParameterFileError,
    Parameters,
    read_parameters,
)
from lessonkit.project.properties import PropertyResult, RunProblem, Verdict
from lessonkit.project.report import ProjectReport, failed_to_read
from lessonkit.project.runs import MAX_SEED, FinishedRun, other_seed, plan_runs

__all__ = [
    "MAX_SEED",
    "FinishedRun",
    "Leaf",
    "ParameterFileError",
    "Parameters",
    "ProjectReport",
    "PropertyResult",
    "RunProblem",
    "Verdict",
    "failed_to_read",
    "grade_project",
    "other_seed",
    "plan_runs",
    "read_parameters",
]
