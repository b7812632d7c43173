"""`lessonkit run` end to end: child processes, receipts, comparison, devices, failures.

Each child run costs about 2.5 s (JAX start-up), so every run happens once, in a
module-scoped fixture, and several tests read its result.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from lessonkit.lesson.files import GOING_FURTHER, MAIN
from lessonkit.lesson.load import load_lesson
from lessonkit.receipts import code_sha256, load_record, read_receipt

from conftest import copy_lesson_repo, invoke

LINES = ["Before/after: 4.0 0.6399999260902405", "Expected tree mismatch", "PASS: state-02"]


@dataclass(frozen=True)
class Outcome:
    root: Path
    folder: Path
    code: int
    out: str
    err: str

    def receipts(self) -> list[Path]:
        return sorted((self.root / "runs" / "state-02").glob("*.json"))


def _run(tmp_path_factory, name: str, *args: str, prepare=None) -> Outcome:
    root = tmp_path_factory.mktemp(name)
    folder = copy_lesson_repo(root)
    if prepare is not None:
        prepare(folder)
    code, out, err = invoke(["run", "state-02", *args], root=root)
    return Outcome(root, folder, code, out, err)


@pytest.fixture(scope="module")
def one_device(tmp_path_factory) -> Outcome:
    return _run(tmp_path_factory, "one", "--devices", "1")


@pytest.fixture(scope="module")
def every_script(tmp_path_factory) -> Outcome:
    """`--script all`: main.py, then going_further.py, each compared with its own record."""
    return _run(tmp_path_factory, "all", "--script", "all")


@pytest.fixture(scope="module")
def eight_devices_changed_record(tmp_path_factory) -> Outcome:
    def change_recorded_stdout(folder: Path) -> None:
        path = folder / "outputs" / "execution.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        data["stdout"] = data["stdout"].replace("0.6399999260902405", "0.75")
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")

    return _run(tmp_path_factory, "eight", "--devices", "8", prepare=change_recorded_stdout)


def test_a_run_shows_the_output_the_comparison_the_receipt_and_next_steps(one_device):
    assert one_device.code == 0, one_device.out + one_device.err
    out = one_device.out
    for line in LINES:
        assert line in out
    assert "output matches the recorded reference" in out
    assert "receipt: runs/state-02/" in out or "receipt: " in out
    assert "lessonkit start state-02" in out and "lessonkit check state-02" in out


def test_the_receipt_describes_the_run_from_inside_the_child(one_device):
    (path,) = one_device.receipts()
    receipt = read_receipt(path)
    assert receipt.exit_code == 0
    assert receipt.stdout.splitlines() == LINES
    assert receipt.script == "code/main.py"
    main = one_device.folder / "code" / "main.py"
    assert receipt.script_sha256 == hashlib.sha256(main.read_bytes()).hexdigest()
    assert receipt.code_sha256 == code_sha256(main.read_text(encoding="utf-8"))
    env = receipt.environment
    assert (env.backend, env.device_count, env.device_kinds) == ("cpu", 1, ("cpu",))
    assert env.jax and env.numpy and env.python
    assert receipt.command.startswith("JAX_PLATFORMS=cpu XLA_FLAGS=")
    assert receipt.command.endswith(
        "-m lessonkit.run.lesson_script "
        "phases/03-state/02-pytrees-and-structured-parameters/code/main.py"
    )


def test_script_all_runs_each_script_against_its_own_record(every_script, lesson):
    assert every_script.code == 0, every_script.out + every_script.err
    out = every_script.out
    assert out.count("output matches the recorded reference") == 2
    assert "outputs/execution.json, recorded" in out
    assert "outputs/going-further.json, recorded" in out
    assert out.index("output of code/main.py") < out.index("output of code/going_further.py")
    assert "2 of 2 scripts passed" in out and out.count("Next steps") == 1
    receipts = [read_receipt(path) for path in every_script.receipts()]
    main, going_further = sorted(receipts, key=lambda receipt: receipt.started)
    assert (main.script, going_further.script) == ("code/main.py", "code/going_further.py")
    assert going_further.stdout == load_record(lesson, GOING_FURTHER).stdout
    names = sorted(path.name.split("Z-")[1] for path in every_script.receipts())
    assert names == ["going-further.json", "main.json"]


def test_an_unknown_script_is_a_usage_error_naming_the_choices(tmp_path):
    copy_lesson_repo(tmp_path)
    code, out, err = invoke(["run", "state-02", "--script", "extras"], root=tmp_path)
    assert code == 2
    assert err == (
        "lessonkit run: state-02 has no script 'extras'\n"
        "  fix: choose one of: main, going-further, all\n"
    )
    assert out == "" and not (tmp_path / "runs").exists()


def test_eight_logical_devices_reach_the_receipt(eight_devices_changed_record):
    (path,) = eight_devices_changed_record.receipts()
    env = read_receipt(path).environment
    assert (env.backend, env.device_count) == ("cpu", 8)
    assert "8 CPU devices" in eight_devices_changed_record.out


def test_output_that_differs_from_the_record_shows_the_diff_and_fails(
    eight_devices_changed_record,
):
    outcome = eight_devices_changed_record
    assert outcome.code == 1
    assert "output differs from the record" in outcome.out
    assert "line 1: 0.6399999260902405 differs from the recorded 0.75" in outcome.out
    assert "recorded:  Before/after: 4.0 0.75" in outcome.out
    assert "Next steps" not in outcome.out


def test_record_replaces_the_reference_with_a_current_one(one_device):
    from lessonkit.receipts.cells import RECORD, current_outputs, stale_cells

    path = one_device.folder / "outputs" / "execution.json"
    before = path.read_text(encoding="utf-8")
    (one_device.folder / RECORD).unlink()  # the notebook's cell outputs are recorded too
    code, out, _ = invoke(["run", "state-02", "--record"], root=one_device.root)
    assert code == 0, out
    assert path.read_text(encoding="utf-8") != before
    lesson = load_lesson(one_device.folder / "lesson.md")
    receipt = load_record(lesson)
    assert receipt.stdout.splitlines() == LINES
    assert "recorded the new reference" in out
    assert stale_cells(lesson) == [] and current_outputs(lesson)["step-3"] == LINES[0] + "\n"


def test_a_failing_example_is_not_recorded_and_shows_its_own_traceback(tmp_path):
    folder = copy_lesson_repo(tmp_path)
    main = folder / "code" / "main.py"
    main.write_text('print("partial")\nassert 1 + 1 == 3, "arithmetic"\n', encoding="utf-8")
    record = folder / "outputs" / "execution.json"
    before = record.read_bytes()
    code, _, err = invoke(["run", "state-02", "--record"], root=tmp_path)
    assert code == 2 and "main.py is out of date with lesson.md" in err  # refused: never run
    code, out, _ = invoke(["run", "state-02"], root=tmp_path)
    assert code == 1
    assert "main.py is out of date with lesson.md" in out
    assert "failed with exit code 1" in out
    assert "AssertionError: arithmetic" in out
    assert "main.py" in out and "lessonkit/run/lesson_script.py" not in out and "runpy" not in out
    assert record.read_bytes() == before
    (path,) = (tmp_path / "runs" / "state-02").glob("*.json")
    assert read_receipt(path).exit_code == 1


def test_a_timeout_is_reported_and_still_leaves_a_receipt(tmp_path):
    copy_lesson_repo(tmp_path)
    code, out, _ = invoke(["run", "state-02", "--timeout", "0.3"], root=tmp_path)
    assert code == 1
    assert "did not finish within 0.3 s and was stopped" in out
    (path,) = (tmp_path / "runs" / "state-02").glob("*.json")
    receipt = read_receipt(path)
    assert receipt.exit_code == "timeout" and receipt.timed_out


def test_an_unavailable_platform_is_one_clear_sentence(tmp_path):
    copy_lesson_repo(tmp_path)
    code, out, err = invoke(["run", "state-02", "--platform", "gpu"], root=tmp_path)
    if code == 0:
        pytest.skip("this machine has a GPU-enabled JAX")
    assert code == 2
    assert err.strip() == (
        "lessonkit run: JAX found no gpu backend on this machine "
        "(install a GPU-enabled jax, or use --platform cpu)"
    )
    assert "Traceback" not in out + err


def test_devices_with_an_accelerator_platform_is_a_usage_error(tmp_path):
    copy_lesson_repo(tmp_path)
    code, out, err = invoke(
        ["run", "state-02", "--platform", "tpu", "--devices", "2"], root=tmp_path
    )
    assert code == 2
    assert "--devices sets logical CPU devices" in err
    assert out == ""


def test_a_failing_run_names_the_lesson_md_declaration_and_never_asks_to_re_record(tmp_path):
    folder = copy_lesson_repo(tmp_path)
    lesson_md = folder / "lesson.md"
    code_line = "updated = jax.tree.map(lambda p, g: p - 0.05 * g, params, grads)"
    text = lesson_md.read_text(encoding="utf-8")
    lesson_md.write_text(text.replace(code_line, code_line.replace("0.05", "0.1")), "utf-8")
    # main.py as a build would write it, had the build not refused the broken numbers
    main = folder / MAIN.path
    main.write_text(MAIN.render(load_lesson(lesson_md)), encoding="utf-8")
    code, out, _ = invoke(["run", "state-02"], root=tmp_path)
    assert code == 1
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.startswith("learning_rate:"))
    assert f"lesson.md:{line}: learning_rate is declared 0.05 but the code gives 0.1" in out
    assert "re-recording cannot make a failing run pass" in out
    assert "--record" not in out


def test_a_receipt_keeps_no_path_of_the_machine_it_ran_on(tmp_path):
    folder = copy_lesson_repo(tmp_path)
    (folder / "code" / "main.py").write_text(
        "import os, sys\nimport jax\n"
        "print(os.path.abspath(__file__))\n"
        "print(os.path.expanduser('~') + '/notes.txt')\n"
        "print(jax.__file__, file=sys.stderr)\n"
        "sys.exit(3)\n",
        encoding="utf-8",
    )
    code, _, _ = invoke(["run", "state-02"], root=tmp_path)
    assert code == 1
    (path,) = (tmp_path / "runs" / "state-02").glob("*.json")
    receipt = read_receipt(path)
    relative = (folder / "code" / "main.py").relative_to(tmp_path).as_posix()
    assert receipt.stdout == f"{relative}\n~/notes.txt\n"
    assert "<site-packages>/jax/__init__.py" in receipt.stderr
    text = path.read_text(encoding="utf-8")
    assert str(tmp_path) not in text and str(Path.home()) + "/" not in text
