"""Receipts: schema, validation, staleness, comparison with tolerance, never overwriting.

Every script of the lesson (main.py, going_further.py) has a committed record; both are checked.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lessonkit.errors import LessonkitError
from lessonkit.lesson.files import GOING_FURTHER, MAIN, lesson_scripts
from lessonkit.lesson.load import load_lesson
from lessonkit.receipts import (
    SCHEMA,
    CorruptRecordError,
    MissingRecordError,
    Receipt,
    StaleRecordError,
    code_sha256,
    compare_output,
    load_record,
    read_receipt,
    record_path,
    save_run,
    script_path,
    with_device_count,
    write_new,
)

from conftest import copy_lesson_repo, invoke

BEFORE_AFTER = "Before/after: 4.0 0.6399999260902405"  # what the build steps print
RECORD_FIELDS = {
    "schema",
    "lesson",
    "script",
    "script_sha256",
    "code_sha256",
    "started_utc",
    "duration_s",
    "command",
    "exit_code",
    "stdout",
    "stderr",
    "environment",
}
ENVIRONMENT_FIELDS = {
    "python",
    "python_implementation",
    "os",
    "cpu",
    "jax",
    "jaxlib",
    "numpy",
    "matplotlib",
    "backend",
    "device_count",
    "device_kinds",
}


@pytest.fixture
def repo(tmp_path):
    """A repository copy: (root, lesson folder)."""
    return tmp_path, copy_lesson_repo(tmp_path)


# --------------------------------------------------------------------------- the committed record


def test_the_lesson_runs_two_scripts(lesson):
    assert lesson_scripts(lesson) == (MAIN, GOING_FURTHER)
    assert (GOING_FURTHER.path, GOING_FURTHER.record) == (
        "code/going_further.py",
        "outputs/going-further.json",
    )


def test_committed_record_is_current_and_complete(repo_lesson):
    lesson = repo_lesson
    for script in lesson_scripts(lesson):
        receipt = load_record(lesson, script)
        data = json.loads(record_path(lesson, script).read_text(encoding="utf-8"))
        assert set(data) == RECORD_FIELDS
        assert set(data["environment"]) == ENVIRONMENT_FIELDS
        assert receipt.schema == SCHEMA == 3 and receipt.lesson == lesson.meta.id
        assert receipt.script == script.path and receipt.exit_code == 0
        script_bytes = script_path(lesson, script).read_bytes()
        assert receipt.script_sha256 == hashlib.sha256(script_bytes).hexdigest()
        assert receipt.code_sha256 == code_sha256(script.render(lesson))
        assert "-m lessonkit.run.lesson_script phases/" in receipt.command
        assert receipt.command.endswith(f"/{lesson.directory.name}/{script.path}")
        assert receipt.started.utcoffset().total_seconds() == 0
        assert receipt.environment.device_count == 1 and receipt.environment.backend == "cpu"


def test_main_record_prints_three_lines(lesson):
    assert load_record(lesson).stdout.splitlines() == [
        BEFORE_AFTER,
        "Expected tree mismatch",
        "PASS: state-02",
    ]


def test_going_further_record_prints_every_declared_output(lesson):
    expected = [BEFORE_AFTER]
    for experiment in lesson.optional_experiments:
        expected += experiment.output
    expected.append("PASS: state-02 going further")
    assert load_record(lesson, GOING_FURTHER).stdout.splitlines() == expected


def test_receipt_survives_a_json_round_trip(repo_lesson):
    for script in lesson_scripts(repo_lesson):
        receipt = load_record(repo_lesson, script)
        again = Receipt.from_dict(json.loads(receipt.to_json()))
        assert again == receipt


# --------------------------------------------------------------------------- stale and corrupt


def _edit(path, old, new):
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


# Code that only lesson.md holds: an experiment of main.py, and one of going_further.py.
MAIN_CODE = ('assert jnp.allclose(grads["bias"], -4.)', 'assert jnp.allclose(grads["bias"], -4.0)')
GOING_FURTHER_CODE = (
    'named = {**params, "name": "tiny-linear"}',
    'named = {**params, "name": "tiny"}',
)


def test_a_prose_only_edit_keeps_every_record_current(repo):
    """Prose (even a step summary, a comment in main.py) is not what a run depends on."""
    root, folder = repo
    lesson_md = folder / "lesson.md"
    _edit(lesson_md, "The tree is nothing more than", "A tree is nothing more than")
    _edit(lesson_md, ":summary: loss reads both parameter leaves.", ":summary: loss reads both.")
    lesson = load_lesson(lesson_md)
    for script in lesson_scripts(lesson):
        load_record(lesson, script)  # raises StaleRecordError if the edit made it stale
    (folder / "lesson.md").write_text(
        lesson_md.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8"
    )
    invoke(["build", "state-02"], root=root)
    code, out, _ = invoke(["verify", "state-02"], root=root)
    assert code == 0, out


def test_a_code_edit_makes_verify_fail_and_names_build_then_record(repo):
    root, folder = repo
    _edit(folder / "lesson.md", *MAIN_CODE)
    code, out, err = invoke(["verify", "state-02"], root=root)
    assert code == 1
    stale = [line for line in out.splitlines() if line.startswith("✗") and "records" in line]
    assert len(stale) == 1 and stale[0].endswith("outputs: 2 records are not current:"), out
    assert "execution.json: stale: the code of code/main.py in lesson.md changed" in out
    # one command records main, going further and the notebook's outputs (issue 32)
    assert (
        "run `lessonkit build state-02`, then `lessonkit run state-02 --script all --record`" in out
    )
    assert "Traceback" not in out + err


def test_a_stale_going_further_record_is_named_with_the_notebook_and_one_command(repo):
    """Issue 32: the fix named `--script going-further`, then verify failed again on the
    notebook's outputs; every stale record is one problem, fixed by one command."""
    root, folder = repo
    _edit(folder / "lesson.md", *GOING_FURTHER_CODE)
    invoke(["build", "state-02"], root=root)
    code, out, _ = invoke(["verify", "state-02"], root=root)
    assert code == 1
    problems = [line for line in out.splitlines() if line.startswith("✗")]
    assert len(problems) == 1 and "2 records are not current" in problems[0], out
    assert "outputs: 2 records" in problems[0], out  # their folder, not the first record's file
    assert "going-further.json: stale: the code of code/going_further.py" in out
    assert "notebook-outputs.json: no current output for cell" in out
    assert out.count("--record") == 1
    assert "run `lessonkit run state-02 --script all --record` (it records them all)" in out


def test_a_missing_going_further_record_names_its_command(repo):
    _, folder = repo
    (folder / GOING_FURTHER.record).unlink()
    with pytest.raises(MissingRecordError, match="no execution record") as caught:
        load_record(load_lesson(folder / "lesson.md"), GOING_FURTHER)
    assert "going-further.json" in str(caught.value)
    assert "lessonkit run state-02 --script all --record" in str(caught.value)


def test_one_scripts_record_cannot_stand_in_for_another(repo):
    _, folder = repo
    (folder / GOING_FURTHER.record).write_bytes((folder / MAIN.record).read_bytes())
    wrong = r"records code/main\.py, not code/going_further\.py"
    with pytest.raises(CorruptRecordError, match=wrong):
        load_record(load_lesson(folder / "lesson.md"), GOING_FURTHER)


def test_load_record_refuses_a_stale_record(repo):
    _, folder = repo
    _edit(folder / "lesson.md", *MAIN_CODE)
    with pytest.raises(StaleRecordError, match=r"stale: the code of code/main.py") as caught:
        load_record(load_lesson(folder / "lesson.md"))
    assert isinstance(caught.value, LessonkitError)
    assert "lessonkit run state-02 --script all --record" in str(caught.value)


def test_a_hand_edited_comment_in_the_script_is_drift_not_a_stale_record(repo):
    _, folder = repo
    main = folder / MAIN.path
    main.write_text(main.read_text(encoding="utf-8") + "# a hand edit\n", encoding="utf-8")
    load_record(load_lesson(folder / "lesson.md"))  # current: `verify` reports the drift


@pytest.mark.parametrize("schema", [1, 2])
def test_a_record_from_an_older_schema_is_stale_and_names_the_refresh(repo, schema):
    _, folder = repo
    path = folder / MAIN.record
    path.write_text(
        path.read_text(encoding="utf-8").replace('"schema": 3', f'"schema": {schema}'),
        encoding="utf-8",
    )
    with pytest.raises(
        StaleRecordError, match=f"older lessonkit \\(receipt schema {schema}"
    ) as caught:
        load_record(load_lesson(folder / "lesson.md"))
    assert "lessonkit run state-02 --script all --record" in str(caught.value)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda text: text[: len(text) // 2], r"not valid JSON \(line \d+"),
        (lambda text: text.replace('"schema": 3', '"schema": 7'), r"schema is 7; this lessonkit"),
        (
            lambda text: text.replace('"code/main.py"', '"code/other.py"'),
            r"script is 'code/other.py'; expected one of code/main.py",
        ),
        (lambda text: text.replace('"stdout"', '"stdoot"'), r"missing field\(s\) stdout"),
        (lambda text: text.replace('"exit_code": 0', '"exit_code": 1'), r"a failed run"),
        (
            lambda text: text.replace('"device_count": 1', '"device_count": "one"'),
            r"environment.device_count has the wrong type",
        ),
    ],
    ids=["truncated", "schema", "script", "field", "failed-run", "environment"],
)
def test_a_corrupted_record_is_one_clear_error(repo, damage, message):
    _, folder = repo
    path = folder / "outputs" / "execution.json"
    path.write_text(damage(path.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(CorruptRecordError, match=message) as caught:
        load_record(load_lesson(folder / "lesson.md"))
    text = str(caught.value)
    assert "execution.json" in text and "lessonkit run state-02 --script all --record" in text


def test_verify_reports_a_corrupted_record_without_a_traceback(repo):
    root, folder = repo
    (folder / "outputs" / "execution.json").write_text("{not json", encoding="utf-8")
    code, out, err = invoke(["verify", "state-02"], root=root)
    assert code == 1
    assert "not valid JSON" in out and "lessonkit run state-02 --script all --record" in out
    assert "Traceback" not in out + err


def test_a_missing_record_is_reported(repo):
    _, folder = repo
    (folder / "outputs" / "execution.json").unlink()
    with pytest.raises(MissingRecordError, match="no execution record"):
        load_record(load_lesson(folder / "lesson.md"))


# --------------------------------------------------------------------------- comparing output

RECORDED = "Before/after: 4.0 0.6399999260902405\nExpected tree mismatch\nPASS: state-02\n"


def test_numbers_within_the_relative_tolerance_match():
    got = "Before/after: 4.0000001 0.64\nExpected tree mismatch\nPASS: state-02\n"
    assert compare_output(RECORDED, got).matches


def test_a_different_number_is_named():
    got = RECORDED.replace("0.6399999260902405", "0.7")
    comparison = compare_output(RECORDED, got)
    assert not comparison.matches
    (difference,) = comparison.differences
    assert difference.line == 1
    assert "0.7 differs from the recorded 0.6399999260902405" in comparison.explain()


def test_an_inserted_line_is_one_insertion_and_later_lines_still_compare():
    got = RECORDED.replace("Expected", "debug: 1.5\nExpected").replace("0.6399999260902405", "0.64")
    comparison = compare_output(RECORDED, got)
    (difference,) = comparison.differences
    assert (difference.line, difference.got, difference.detail) == (
        2,
        "debug: 1.5",
        "an extra line in this run",
    )
    lost = compare_output(RECORDED, RECORDED.replace("Expected tree mismatch\n", ""))
    assert [(d.line, d.expected) for d in lost.differences] == [(2, "Expected tree mismatch")]
    shifted = compare_output(RECORDED, "note\n" + RECORDED.replace("0.6399999260902405", "0.7"))
    assert [d.detail for d in shifted.differences] == [
        "an extra line in this run",
        "0.7 differs from the recorded 0.6399999260902405 by more than a relative 1e-06",
    ]
    assert "line 2 (recorded line 1): 0.7 differs" in shifted.explain()


def test_missing_extra_and_changed_lines():
    got = "Before/after: 4.0 0.6399999260902405\nUnexpected tree mismatch\n"
    comparison = compare_output(RECORDED, got)
    assert [d.line for d in comparison.differences] == [2, 3]
    assert "the text differs" in comparison.explain()
    assert "missing from this run" in comparison.explain()
    extra = compare_output(RECORDED, RECORDED + "debug\n")
    assert [d.detail for d in extra.differences] == ["an extra line in this run"]


@given(st.floats(min_value=-1e12, max_value=1e12, allow_nan=False), st.integers(-50, 50))
def test_float_noise_below_the_tolerance_always_matches(value, ulps):
    noisy = value * (1 + ulps * 1e-9)
    assert compare_output(f"loss: {value!r}\n", f"loss: {noisy!r}\n").matches


def test_device_count_flag_replaces_only_itself():
    flags = "--xla_cpu_enable_fast_math=false --xla_force_host_platform_device_count=2"
    assert with_device_count(flags, 8) == (
        "--xla_cpu_enable_fast_math=false --xla_force_host_platform_device_count=8"
    )
    assert with_device_count("", 1) == "--xla_force_host_platform_device_count=1"


# --------------------------------------------------------------------------- never overwriting


def test_write_new_never_replaces_a_file(tmp_path):
    mine = tmp_path / "run.json"
    mine.write_text("keep me")
    first = write_new(tmp_path, "run", ".json", "a")
    second = write_new(tmp_path, "run", ".json", "b")
    assert mine.read_text() == "keep me"
    assert (first.name, second.name) == ("run-2.json", "run-3.json")


def test_receipts_from_the_same_second_get_their_own_files(lesson, tmp_path):
    receipt = read_receipt(record_path(lesson))
    paths = {save_run(receipt, tmp_path) for _ in range(3)}
    assert len(paths) == 3
    assert all(p.parent == tmp_path / "runs" / "state-02" for p in paths)
    assert all(p.stem.split("-")[1] == "main" for p in paths)


def test_a_going_further_receipt_is_named_by_its_script(lesson, tmp_path):
    receipt = read_receipt(record_path(lesson, GOING_FURTHER))
    path = save_run(receipt, tmp_path)
    assert path.name.endswith("Z-going-further.json")


def test_the_code_hash_is_taken_over_text_so_every_python_agrees():
    """3.12 tokenizes f-strings differently from 3.11: the hash must not depend on tokens."""
    import hashlib

    from lessonkit.receipts import code_sha256

    source = 'x = 1  # a note\n\n# a whole-line comment\nprint(f"{x} leaf")   \n'
    expected = hashlib.sha256(b'x = 1\nprint(f"{x} leaf")').hexdigest()
    assert code_sha256(source) == expected
    assert code_sha256(source.replace("# a note", "# another note")) == expected
