"""The recording policy of `lessonkit run`, from fabricated runs: no script is started here."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from lessonkit.errors import UsageError
from lessonkit.lesson.files import GOING_FURTHER, MAIN
from lessonkit.receipts import compare_output, load_record, script_path
from lessonkit.receipts.lesson_runs import (
    RunOptions,
    ScriptRun,
    cell_outputs_due,
    refuse_stale_recording,
)


def _run(lesson, *, stdout_change: str = "", failure: str | None = None, recording=False):
    record = load_record(lesson, MAIN)
    receipt = dataclasses.replace(record, stdout=record.stdout + stdout_change)
    return ScriptRun(
        script=MAIN,
        path=script_path(lesson, MAIN),
        current=True,
        receipt=receipt,
        reference=record,
        warning=None,
        comparison=compare_output(record.stdout, receipt.stdout),
        failure=failure,
        contradictions=(),
        recording=recording,
        kept=Path("runs/x.json"),
        recorded=recording and failure is None,
    )


def test_a_run_passes_when_it_matches_its_record_or_is_being_recorded(lesson):
    assert _run(lesson).passed
    assert not _run(lesson, stdout_change="an extra line\n").passed
    assert _run(lesson, stdout_change="an extra line\n", recording=True).passed
    assert not _run(lesson, failure="exit code 1").passed
    assert not _run(lesson, failure="exit code 1", recording=True).passed  # never recorded


def test_cell_outputs_are_recorded_only_with_a_passing_recording_of_main(lesson):
    good, bad = _run(lesson, recording=True), _run(lesson, failure="timeout", recording=True)
    recording = RunOptions(record=True)
    assert cell_outputs_due(recording, (good,))
    assert not cell_outputs_due(RunOptions(), (_run(lesson),))
    assert not cell_outputs_due(recording, (good, bad))
    other = dataclasses.replace(good, script=GOING_FURTHER)
    assert not cell_outputs_due(recording, (other,))


@pytest.mark.parametrize("platform", ["gpu", "tpu"])
def test_an_accelerator_recording_never_rewrites_the_cpu_cell_outputs(lesson, platform):
    good = _run(lesson, recording=True)
    assert not cell_outputs_due(RunOptions(record=True, platform=platform), (good,))


def test_a_script_out_of_date_with_lesson_md_cannot_be_recorded(lesson):
    changed = dataclasses.replace(MAIN, render=lambda lesson: "# changed since the build\n")
    with pytest.raises(UsageError, match=r"out of date with lesson\.md"):
        refuse_stale_recording(lesson, (changed,))
