"""The receipts committed with the course: every Phase 03 lesson recorded on a TPU beside
its CPU reference, the same code, the same output; and no record that names the machine
it was made on."""

from __future__ import annotations

import importlib.util
import re

import pytest

from lessonkit.lesson.catalog import all_lessons
from lessonkit.lesson.files import lesson_scripts
from lessonkit.receipts import load_accelerator_records, load_record, verified_hardware

LESSONS = all_lessons()
MACHINE_PATH = re.compile(
    r"(?<![\w.<~-])/(?:home|root|tmp|usr|opt|work|Users|var)/|(?<!<)(?:site|dist)-packages"
)


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.meta.id)
def test_each_accelerator_receipt_ran_the_cpu_records_code_and_printed_the_same(lesson):
    records = load_accelerator_records(lesson)
    assert records, f"{lesson.meta.id} has no accelerator receipt"
    for record in records:
        cpu = load_record(lesson, record.script)
        assert record.receipt.code_sha256 == cpu.code_sha256, record.script.path
        assert record.comparison is not None and record.comparison.matches, record.script.path


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.meta.id)
def test_each_lesson_is_verified_on_a_tpu_for_every_script(lesson):
    records = load_accelerator_records(lesson)
    tpu = [r for r in records if r.platform == "tpu"]
    assert {r.script for r in tpu} == set(lesson_scripts(lesson))
    assert verified_hardware(lesson, records) == ("CPU", tpu[0].hardware)
    assert tpu[0].hardware.startswith("TPU v5")


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.meta.id)
def test_no_committed_record_names_the_machine_it_was_made_on(lesson):
    for path in sorted((lesson.directory / "outputs").glob("*.json")):
        found = MACHINE_PATH.search(path.read_text(encoding="utf-8"))
        assert found is None, f"{path.name}: {found.group(0) if found else ''}"


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.meta.id)
def test_each_receipts_command_still_runs_when_pasted(lesson):
    """A receipt's command names the module that runs lesson scripts: renaming that module
    means recording the receipts again, on every platform they were recorded on."""
    receipts = [load_record(lesson, s) for s in lesson_scripts(lesson)]
    receipts += [r.receipt for r in load_accelerator_records(lesson)]
    for receipt in receipts:
        module = re.search(r" -m (\S+) ", receipt.command)
        assert module is not None, receipt.command
        assert importlib.util.find_spec(module[1]) is not None, receipt.command
