"""`lessonkit project` on real scripts: the reference has every property, and each wrong
project fails exactly the properties its bug breaks.

The scripts are graded once, in one `--batch` run shared by the module (a project costs eight
short runs of its script, each importing JAX), with a fixed seed so a failure can be replayed.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import REPO, invoke

PROJECTS = REPO / "tests" / "fixtures" / "projects"
ALL = (
    "runs",
    "reproducible",
    "seed-sensitive",
    "distinct-keys",
    "restartable",
    "device-independent",
)
MUST_FAIL = {
    "reference.py": (),
    "key_reused.py": ("distinct-keys",),
    "split_chain.py": ("restartable",),
    "device_count.py": ("device-independent",),
    "numpy_global.py": ("reproducible", "restartable", "device-independent"),
    "seed_ignored.py": ("seed-sensitive",),
}
HOSTILE = {  # red team attacks, issue 34: each must fail the property it fools
    "f7_one_stream.py": ("distinct-keys",),
    "f8_reads_xla_flags.py": ("device-independent",),
}
SEED = 20261204


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> tuple[int, dict, str, Path]:
    folder = tmp_path_factory.mktemp("projects") / "submitted"
    folder.mkdir()
    for name in (*MUST_FAIL, *HOSTILE):
        shutil.copy(PROJECTS / name, folder / name)
    (folder / "leak.py").symlink_to(REPO / "pyproject.toml")  # never read, never run
    out = folder.parent / "out"
    argv = ["project", "phase-03", "--batch", str(folder), "--out", str(out)]
    code, stdout, stderr = invoke([*argv, "--seed", str(SEED), "--json"])
    return code, json.loads(stdout) if stdout else {}, stderr, out


@pytest.mark.parametrize("name", sorted(MUST_FAIL))
def test_each_project_fails_exactly_the_properties_its_bug_breaks(batch, name):
    code, summary, stderr, _ = batch
    assert code == 0, stderr
    report = next(r for r in summary["reports"] if r["file"] == name)
    verdicts = {p["property"]: p["verdict"] for p in report["properties"]}
    assert list(verdicts) == list(ALL)
    expected = {p: "fails" if p in MUST_FAIL[name] else "holds" for p in ALL}
    assert verdicts == expected, json.dumps(report, indent=1)
    assert report["passed"] is (not MUST_FAIL[name])
    assert report["seed"] == SEED and report["sandboxed"] in (True, False)


def _verdicts(summary: dict, name: str) -> dict[str, dict]:
    report = next(r for r in summary["reports"] if r["file"] == name)
    return {p["property"]: p for p in report["properties"]}


def test_f7_one_key_for_leaves_of_different_shapes_fails_distinct_keys(batch):
    """Red team F7: one key draws all four leaves, each of its own shape, so none can be
    equal; `layer1/b` is the first four numbers of `layer1/w` and distinct-keys finds it."""
    _, summary, _, _ = batch
    verdicts = _verdicts(summary, "f7_one_stream.py")
    failed = [name for name, p in verdicts.items() if p["verdict"] != "holds"]
    assert failed == ["distinct-keys"], json.dumps(verdicts, indent=1)
    evidence = verdicts["distinct-keys"]["evidence"]
    assert "layer1/b" in evidence and "layer1/w" in evidence, evidence
    assert "one random stream" in evidence, evidence


def test_f8_a_script_that_reads_xla_flags_fails_device_independent(batch):
    """Red team F8: the script behaves only where XLA_FLAGS is set; four devices set with
    JAX_NUM_CPU_DEVICES, as the grader now also runs it, give other parameters."""
    _, summary, _, _ = batch
    verdicts = _verdicts(summary, "f8_reads_xla_flags.py")
    failed = [name for name, p in verdicts.items() if p["verdict"] != "holds"]
    assert failed == ["device-independent"], json.dumps(verdicts, indent=1)
    assert "JAX_NUM_CPU_DEVICES=4" in verdicts["device-independent"]["evidence"]


def test_evidence_names_the_leaves_and_the_batch_writes_feedback(batch):
    _, summary, _, out = batch
    reports = {r["file"]: r for r in summary["reports"]}
    reused = next(
        p for p in reports["key_reused.py"]["properties"] if p["property"] == "distinct-keys"
    )
    assert reused["paths"] == ["layer1/w", "layer2/w"]
    assert "layer1/w and layer2/w start equal" in reused["evidence"]
    chain = next(
        p for p in reports["split_chain.py"]["properties"] if p["property"] == "restartable"
    )
    assert chain["paths"] == ["layer1/b", "layer1/w", "layer2/b", "layer2/w"]
    assert [r["name"] for r in reports["reference.py"]["runs"]] == [
        "full",
        "again",
        "initial",
        "other-seed",
        "to-restart",
        "restarted",
        "devices",
        "devices-jax",
    ]
    assert json.loads((out / "project-phase-03.json").read_text())["seed"] == SEED
    feedback = (out / "feedback" / "split_chain.py.md").read_text()
    assert "restartable** (fails)" in feedback


def test_a_linked_file_in_the_batch_is_a_row_of_its_own_never_run(batch):
    _, summary, _, out = batch
    leak = next(r for r in summary["reports"] if r["file"] == "leak.py")
    assert leak["passed"] is False and leak["runs"] == []
    assert all("symbolic link" in p["evidence"] for p in leak["properties"])
    assert (out / "feedback" / "leak.py.md").is_file()


def test_a_project_batch_shows_every_batchs_progress_bar_on_a_terminal(tmp_path, monkeypatch):
    """On a terminal the project batch shows the bar the lesson batch shows (files graded of
    all, how many did not pass), not a line per script."""
    folder = tmp_path / "submitted"
    folder.mkdir()
    (folder / "leak.py").symlink_to(REPO / "pyproject.toml")  # a row of its own, never run
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # stderr is a terminal, for rich
    out = tmp_path / "out"
    argv = ["project", "phase-03", "--batch", str(folder), "--out", str(out), "--json"]
    code, _, err = invoke([*argv, "--seed", str(SEED)])
    assert code == 0, err
    assert re.search(r"grading.*1/1.*1 not passed", err, re.S), err
    assert "[1/1] leak.py" not in err


def _interrupted(batch, tmp_path: Path, keep: tuple[str, ...]) -> tuple[Path, Path, list[str]]:
    """The batch's folder and the journal of a second batch of it, to another output
    folder, with the same seed, stopped once it had graded `keep` (their reports those the
    uninterrupted batch wrote, journalled as the batch journals them), then cut short
    mid-line by Ctrl-C."""
    from lessonkit.grade.batches.batch_run import BatchRun
    from lessonkit.grade.batches.folder import read_in_folder, submissions_in
    from lessonkit.grade.model import BatchEntry
    from lessonkit.grade.provenance.grading_key import grading_key
    from lessonkit.lesson.catalog import phase_contract
    from lessonkit.project.batch import project_kind
    from lessonkit.project.report import ProjectReport
    from lessonkit.run.isolation import Isolation
    from lessonkit.run.limits import DEFAULT_LIMITS

    _, summary, _, first_out = batch
    folder = first_out.parent / "submitted"  # read, never written
    out = tmp_path / "out"
    number, contract = phase_contract("phase-03")
    kind = project_kind(
        number, contract, folder, isolation=Isolation(None), limits=DEFAULT_LIMITS, jobs=1
    )
    listing = submissions_in(folder)
    key = grading_key(None)  # the session's ($LESSONKIT_GRADING_KEY, see conftest)
    run = BatchRun(kind, folder, out, resume=False, seed=SEED, key=key, listing=listing)
    run.prepare(list(listing.entries))
    reports = {r["file"]: r for r in summary["reports"]}
    for name in keep:
        path = folder / name
        report = ProjectReport.from_json(reports[name])
        run._journal(BatchEntry(path, report, read_in_folder(folder, path)[1], path.read_bytes()))
    with run.journal.open("a", encoding="utf-8") as file:
        file.write('{"run": "' + run.run_id + '", "path": "lea')  # cut short by Ctrl-C
    return folder, out, run.journal.read_text(encoding="utf-8").splitlines()


def test_an_interrupted_project_batch_resumed_writes_what_one_whole_run_writes(batch, tmp_path):
    """--resume keeps the eight scripts the interrupted batch graded (none is run again) and
    grades the ninth row: the JSON and every feedback file are byte for byte the
    uninterrupted batch's."""
    code, summary, _, first_out = batch
    assert code == 0
    scripts = tuple(sorted((*MUST_FAIL, *HOSTILE)))
    assert len(scripts) == 8 and len(summary["reports"]) == 9  # 6 + 2 scripts, and leak.py
    folder, out, _ = _interrupted(batch, tmp_path, scripts)
    argv = ["project", "phase-03", "--batch", str(folder), "--out", str(out), "--resume"]
    code, stdout, err = invoke([*argv, "--seed", str(SEED), "--json"])
    assert code == 0, err
    assert "Kept 8 result(s) from the interrupted batch" in err
    assert "[9/9] leak.py: not every property holds" in err  # the one row graded now
    assert not [line for line in err.splitlines() if line.startswith("[1/")]
    resumed = json.loads(stdout)
    assert resumed == summary
    assert [r["seconds"] for r in resumed["reports"]] == [r["seconds"] for r in summary["reports"]]
    assert sum(r["passed"] for r in resumed["reports"]) == 1  # reference.py, by hand
    name = "project-phase-03.json"
    assert (out / name).read_bytes() == (first_out / name).read_bytes()
    feedback = sorted(p.name for p in (first_out / "feedback").iterdir())
    assert feedback == sorted(p.name for p in (out / "feedback").iterdir())
    assert len(feedback) == 9
    for page in feedback:
        assert (out / "feedback" / page).read_bytes() == (
            first_out / "feedback" / page
        ).read_bytes()
    assert not (out / ".project-phase-03.journal.jsonl").exists()  # the outputs are written


def test_a_project_journal_entry_that_does_not_verify_is_refused_before_any_run(batch, tmp_path):
    """A journalled verdict changed by hand (key_reused.py's distinct-keys made to hold) is
    refused by name, and nothing is graded or written; afresh, the journal is replaced."""
    folder, out, lines = _interrupted(batch, tmp_path, ("key_reused.py", "reference.py"))
    entry = json.loads(lines[1])
    assert entry["path"] == "key_reused.py"
    for result in entry["report"]["properties"]:
        result["verdict"] = "holds"
    lines[1] = json.dumps(entry)
    (out / ".project-phase-03.journal.jsonl").write_text("\n".join(lines), encoding="utf-8")
    argv = ["project", "phase-03", "--batch", str(folder), "--out", str(out), "--resume"]
    code, stdout, err = invoke([*argv, "--seed", str(SEED), "--json"])
    assert code == 2, (stdout, err)
    assert ".project-phase-03.journal.jsonl, entry 1 (line 2, 'key_reused.py'): it is not" in err
    assert "grade afresh without --resume" in err
    assert "/9]" not in err and not (out / "project-phase-03.json").exists()


def test_one_file_exits_1_when_a_property_fails_and_prints_its_evidence(tmp_path):
    """A script that writes no file: `runs` fails with the reason, the rest are not checked."""
    script = tmp_path / "silent.py"
    script.write_text("import sys\nprint('no file', file=sys.stderr)\n", encoding="utf-8")
    code, out, err = invoke(["project", "phase-03", str(script), "--seed", "3"])
    assert code == 1, err
    assert "runs: " in out and "it wrote no params.npz" in out
    assert "(not checked)" in out and "--seed 3" in out


def test_a_link_written_for_the_parameters_is_never_followed(tmp_path):
    script = tmp_path / "link.py"
    script.write_text(
        "import os, sys\nos.symlink('/etc/passwd', sys.argv[sys.argv.index('--out') + 1])\n",
        encoding="utf-8",
    )
    code, out, err = invoke(["project", "phase-03", str(script), "--json", "--seed", "3"])
    assert code == 1, err
    runs = json.loads(out)["properties"][0]
    assert runs["verdict"] == "fails" and "params.npz is a symbolic link" in runs["evidence"]


def _damaged_npz() -> bytes:
    """An .npz whose one member's deflate stream is damaged (its sizes and name intact)."""
    import io
    import struct
    import zipfile

    import numpy as np

    buffer = io.BytesIO()
    np.savez_compressed(buffer, **{"layer1/w": np.arange(64, dtype=np.float32)})
    data = bytearray(buffer.getvalue())
    offset = zipfile.ZipFile(io.BytesIO(bytes(data))).infolist()[0].header_offset
    name_length, extra_length = struct.unpack_from("<HH", data, offset + 26)
    data[offset + 30 + name_length + extra_length] = 0xFF  # deflate block type 3: reserved
    return bytes(data)


def test_a1_a_damaged_deflate_member_is_the_runs_clear_error(tmp_path):
    """Red team A1: the parent's zlib.error was a traceback; it is the `runs` evidence."""
    script = tmp_path / "damaged.py"
    script.write_text(
        "import sys\n"
        f"open(sys.argv[sys.argv.index('--out') + 1], 'wb').write({_damaged_npz()!r})\n",
        encoding="utf-8",
    )
    code, out, err = invoke(["project", "phase-03", str(script), "--json", "--seed", "3"])
    assert code == 1, err
    runs = json.loads(out)["properties"][0]
    assert runs["verdict"] == "fails", runs
    assert "its array layer1/w cannot be decompressed" in runs["evidence"], runs


def test_the_script_runs_sandboxed_where_the_sandbox_works(tmp_path):
    """The repository (the phase's files, other scripts) is out of the script's reach."""
    script = tmp_path / "peek.py"
    script.write_text(
        "import os, sys\n"
        f"seen = os.path.exists({str(REPO / 'pyproject.toml')!r})\n"
        "print('repository ' + ('visible' if seen else 'hidden'), file=sys.stderr)\n"
        "sys.exit(1)\n",
        encoding="utf-8",
    )
    code, out, err = invoke(["project", "phase-03", str(script), "--json", "--seed", "3"])
    report = json.loads(out)
    if not report["sandboxed"]:
        pytest.skip("no sandbox here")
    assert code == 1, err
    evidence = report["properties"][0]["evidence"]
    assert "exited with status 1" in evidence and "repository hidden" in evidence


def test_a_batch_on_the_import_path_shows_no_script_a_classmate_s(tmp_path, monkeypatch):
    """The scripts' folder lies below a folder on PYTHONPATH (`~/src`, the week's scripts in
    `~/src/week`). A batch guards what it grades as every batch does, so that folder is
    bound entry by entry, its packages only, and no script reads another's file."""
    week = tmp_path / "src" / "week"
    week.mkdir(parents=True)
    (week / "bob.py").write_text("# bob's own work\nimport sys\nsys.exit(1)\n", encoding="utf-8")
    (week / "ana.py").write_text(
        "import os, sys\n"
        f"bob = {str(week / 'bob.py')!r}\n"
        "said = open(bob).read().splitlines()[0] if os.path.exists(bob) else 'nothing of bob'\n"
        "print('saw: ' + said, file=sys.stderr)\n"
        "sys.exit(1)\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "src"))  # as Python read it at start:
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    (tmp_path / "instructor").mkdir()
    monkeypatch.chdir(tmp_path / "instructor")  # the working folder is guarded anyway
    argv = ["project", "phase-03", "--batch", str(week), "--out", str(tmp_path / "out")]
    code, out, err = invoke([*argv, "--seed", "3", "--json"])
    assert code == 0, err
    report = next(r for r in json.loads(out)["reports"] if r["file"] == "ana.py")
    if not report["sandboxed"]:
        pytest.skip("no sandbox here")
    evidence = report["properties"][0]["evidence"]
    assert "saw: nothing of bob" in evidence, evidence


@pytest.mark.parametrize(
    ("code", "timeout", "message"),
    [
        ("import time\ntime.sleep(60)\n", "1", "did not finish in 1 s"),
        (
            "import os\nfor i in range(5000):\n    open(f'f{i}', 'w').close()\n"
            "import time\ntime.sleep(60)\n",
            "30",
            "files in its folder",
        ),
        ("block = bytearray(3 * 2**30)\n", "30", "MemoryError"),
    ],
    ids=["deadline", "folder-cap", "memory-limit"],
)
def test_a_run_is_stopped_at_its_deadline_its_folder_s_cap_and_its_memory_limit(
    tmp_path, code, timeout, message
):
    script = tmp_path / "greedy.py"
    script.write_text(code, encoding="utf-8")
    argv = ["project", "phase-03", str(script), "--json", "--timeout", timeout, "--seed", "3"]
    exit_code, out, err = invoke(argv)
    assert exit_code == 1, err
    report = json.loads(out)
    assert message in report["properties"][0]["evidence"]
    assert all(r["seconds"] < 15 for r in report["runs"])  # stopped, not run to the deadline


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["project", "phase-99", "x.py"], "unknown phase 'phase-99'"),
        (["project", "phase-03", "missing.py"], "missing.py: no such file"),
        (["project", "phase-03", "notes.txt"], "expected a .py project script"),
        (["project", "phase-03", "x.py", "--out", "o"], "only apply to --batch"),
        (["project", "phase-03", "x.py", "--resume"], "only apply to --batch"),
    ],
)
def test_a_person_s_mistake_exits_2_with_one_message(tmp_path, argv, message):
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    code, _, err = invoke(argv, cwd=tmp_path)
    assert code == 2 and message in err


def test_a_phase_without_a_graded_project_exits_2(tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(REPO / "phases", root / "phases")
    (root / "pyproject.toml").write_text("", encoding="utf-8")
    guide = root / "phases" / "03-state" / "phase.yaml"
    text = guide.read_text(encoding="utf-8")
    guide.write_text(text[: text.index("  graded:\n")], encoding="utf-8")
    code, _, err = invoke(["project", "phase-03", "x.py"], root=root, cwd=tmp_path)
    assert code == 2 and "phase 03 declares no graded project" in err
