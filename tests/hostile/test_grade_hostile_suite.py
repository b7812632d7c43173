"""The hostile suite (issue 10): every attack in tests/hostile/ run through the CLI, confined.

Each case is one `lessonkit check` (or `--batch` beside two honest submissions) in a fresh PID
namespace under prlimit and, where possible, pids and memory cgroups (see
tests/hostile/harness.py), with a HOME and a copy of the lesson of its own. The cases share what
one instructor's checks share: the cache folder, the grading key (copied into each HOME) and,
through `--seed`, one input seed per test run, so the reference store answers every case after
the first and the cases' cost is the submission's own run. A case passes when the outcome is
safe: a bounded run, the right exit status, parseable JSON, no task whose answer is wrong
reported "passed", no traceback, nothing left running or written outside the scratch folder, and
in a batch the honest submissions' verdicts, files and the outputs unchanged. Select a class
with `-k CLASS`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import shared_temp
from hostile.cases import CASES, Case
from hostile.harness import SharedGrading, can_confine, grade_alone, make_shared_grading, run_case

pytestmark = [pytest.mark.slow, pytest.mark.hostile]

if shutil.which("unshare") is None or shutil.which("prlimit") is None:
    pytest.skip("the hostile suite needs unshare and prlimit (util-linux)", allow_module_level=True)


@pytest.fixture(scope="module")
def cache_home(tmp_path_factory) -> Path:
    """One $XDG_CACHE_HOME for every case (and xdist worker), as a learner's machine keeps one:
    JAX's compile cache there is written by the trusted reference and only read by the
    sandboxed submissions, so an attack that could poison it would show in other cases."""
    folder = shared_temp(tmp_path_factory) / "hostile-cache"
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def grading(tmp_path_factory, testrun_uid) -> SharedGrading:
    """One grading key and one input seed for every case (and xdist worker) of this run."""
    return make_shared_grading(shared_temp(tmp_path_factory), testrun_uid)


@pytest.fixture(scope="module")
def alone(lesson, tmp_path_factory, grading, cache_home) -> dict[str, dict[str, str]]:
    return grade_alone(lesson, tmp_path_factory.mktemp("honest-alone"), grading, cache_home)


def test_every_class_has_at_least_three_cases():
    counts: dict[str, int] = {}
    for case in CASES:
        counts[case.klass] = counts.get(case.klass, 0) + 1
    assert len(counts) == 8 and min(counts.values()) >= 3, counts


@pytest.mark.parametrize("case", CASES, ids=[f"{c.klass}/{c.name}/{c.mode}" for c in CASES])
def test_hostile_case_outcome_is_safe(case: Case, lesson, request, tmp_path, grading, cache_home):
    missing = [need for need in case.needs if not can_confine(need)]
    if missing:
        pytest.skip(f"cannot confine this attack here: needs {missing}")
    # Only a batch case compares with the honest files graded alone (conftest.scope_of keeps
    # the batch cases on one xdist worker, so they are graded alone once).
    alone = request.getfixturevalue("alone") if case.mode == "batch" else None
    observation = run_case(case, lesson, tmp_path, grading, alone, cache_home)
    assert not observation.violations, "\n".join(
        [observation.command, *observation.violations, *observation.evidence]
    )
