"""A cohort in shards: each shard grades its files, `merge` joins them into one batch's
outputs and the gradebook; the Slurm script and the Kubernetes manifest in docs/ select
the shard their engine names."""

from __future__ import annotations

import csv
import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from lessonkit.course.shards import choose_shard
from lessonkit.grade.batches.journal import Shard

from conftest import REPO, invoke, make_attempt

MK_WRONG = {"make-it-yours": "norm_squared = 96.\nmanual = 96.\n"}
NAMES = ("ann.py", "ben.py", "cy.py", "dee.py", "eve.py")
WRONG = {"ben.py", "eve.py"}


@pytest.fixture(scope="module")
def shards(lesson, tmp_path_factory) -> tuple[Path, list[Path], list[str]]:
    root = tmp_path_factory.mktemp("shards")
    submissions = root / "week1"
    submissions.mkdir()
    for name in NAMES:
        text = make_attempt(lesson, MK_WRONG if name in WRONG else None)
        (submissions / name).write_text(text, encoding="utf-8")
    outs, errors = [], []
    for index in (1, 2):
        out = root / f"shard-{index}"
        argv = ["check", "state-02", "--batch", str(submissions), "--shard", f"{index}/2"]
        code, _, err = invoke([*argv, "--seed", "11", "--jobs", "2", "--out", str(out)])
        assert code == 0, err
        outs.append(out)
        errors.append(err)
    return root, outs, errors


def test_each_shard_grades_only_its_files_and_names_itself(shards):
    _, outs, _ = shards
    graded = []
    for index, out in enumerate(outs, start=1):
        summary = json.loads((out / "check-state-02.json").read_text(encoding="utf-8"))
        assert (summary["shard"], summary["seed"], summary["toolkit"]) == (
            f"{index}/2",
            11,
            "0.1.0",
        )
        names = [Path(r["file"]).name for r in summary["reports"]]
        assert all(Shard(index, 2).holds(n) for n in names)
        graded += names
        journal = (out / "check-state-02.shard.jsonl").read_text(encoding="utf-8")
        seal = json.loads(journal.splitlines()[-1])["seal"]  # a finished shard is sealed
        assert (seal["shard"], seal["entries"]) == ({"index": index, "count": 2}, len(names))
    assert sorted(graded) == sorted(NAMES)


def test_merge_joins_the_shards_into_one_batch_and_the_gradebook(shards):
    root, outs, _ = shards
    merged = root / "merged"
    gradebook = root / "course.sqlite"
    argv = ["merge", *map(str, outs), "--out", str(merged), "--gradebook", str(gradebook)]
    code, out, err = invoke(argv)
    assert code == 0, err
    assert "Merged 2 shard(s): 3 of 5 files pass every task (input seed 11" in out
    rows = list(csv.DictReader((merged / "check-state-02.csv").open(encoding="utf-8")))
    assert [(Path(r["file"]).name, r["passed"]) for r in rows] == [
        (n, "no" if n in WRONG else "yes") for n in NAMES
    ]
    assert sorted(p.name for p in (merged / "feedback").iterdir()) == [f"{n}.md" for n in NAMES]
    table = json.loads(invoke(["grades", "--gradebook", str(gradebook), "--json"])[1])
    assert {s["id"]: s["total"] for s in table["students"]} == {
        n.removesuffix(".py"): 7 if n in WRONG else 9 for n in NAMES
    }


def _forged_entry(lesson, run: str, name: str) -> dict:
    """The blank practice file under a report where every task passed, optional one too."""
    import base64
    import hashlib

    from lessonkit.grade.judging.results import PASSED, GradeReport, TaskResult

    blank = (
        (REPO / "phases" / "03-state" / "02-pytrees-and-structured-parameters")
        .joinpath("exercises", "state-02.py")
        .read_bytes()
    )
    tasks = tuple(
        TaskResult(t.id, t.title, PASSED, "Right.", None, t.optional) for t in lesson.tasks
    )
    report = GradeReport("state-02", name, tasks, (), 1.0, 11)
    return {
        "run": run,
        "path": name,
        "sha256": hashlib.sha256(blank).hexdigest(),
        "mtime": 1.0,
        "report": report.to_json(),
        "data": base64.b64encode(blank).decode("ascii"),
        "mac": "0" * 64,  # whoever writes it has no key
    }


def test_d2_a_shard_result_written_by_hand_is_refused_naming_the_file_and_entry(
    shards, lesson, tmp_path
):
    """Red team D2: a hand-written shard result, the blank practice file under a passing
    report, was merged into the gradebook as a counting attempt, 9 of 8. A shard result is
    merged only where every line verifies with the grading key."""
    from lessonkit.grade.batches import journal

    _, outs, _ = shards
    name = next(f"mallory{i}.py" for i in range(99) if Shard(1, 2).holds(f"mallory{i}.py"))
    real = (outs[0] / "check-state-02.shard.jsonl").read_text(encoding="utf-8")
    header = json.loads(real.splitlines()[0])
    by_hand = tmp_path / "by-hand"
    by_hand.mkdir()
    forged_header = header | {"run": "r", "shard": {"index": 1, "count": 1}, "mac": "0" * 64}
    forged_header["journal"] = journal.SCHEMA
    lines = [forged_header, _forged_entry(lesson, "r", name)]
    (by_hand / "check-state-02.shard.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8"
    )
    line = len(real.splitlines()) + 1
    appended = tmp_path / "appended"  # a real shard 1/2 with the forged entry added
    appended.mkdir()
    (appended / "check-state-02.shard.jsonl").write_text(
        real + json.dumps(_forged_entry(lesson, header["run"], name)) + "\n", encoding="utf-8"
    )
    for given, what in (
        ([by_hand], "its first line: it is not signed with this grading key"),
        ([appended, outs[1]], f"entry {line - 1} (line {line}, '{name}'): it is not signed"),
    ):
        gradebook = tmp_path / f"{given[0].name}.sqlite"
        argv = ["merge", *map(str, given), "--out", str(tmp_path / f"{given[0].name}-out")]
        code, out, err = invoke([*argv, "--gradebook", str(gradebook)])
        assert code == 2, (out, err)
        assert f"{given[0].name}/check-state-02.shard.jsonl, {what}" in err, err
        assert "nothing in it is merged" in err and "Merged" not in out
        assert not (tmp_path / f"{given[0].name}-out").exists()


def _tampered(tmp_path: Path, out: Path, name: str, lines: list[str]) -> Path:
    """A copy of shard `out`'s --out folder whose journal is `lines`."""
    folder = tmp_path / name
    folder.mkdir()
    (folder / "check-state-02.shard.jsonl").write_text("".join(lines), encoding="utf-8")
    return folder


def _merge_refused(tmp_path: Path, given: list[Path], what: str) -> str:
    """`merge` of `given` exits 2 naming the first folder's journal and `what`; no outputs."""
    out_dir = tmp_path / f"{given[0].name}-out"
    code, out, err = invoke(["merge", *map(str, given), "--out", str(out_dir)])
    assert code == 2, (out, err)
    assert f"{given[0].name}/check-state-02.shard.jsonl" in err and what in err, err
    assert "Merged" not in out and not out_dir.exists()
    return err


def test_issue_34_an_entry_deleted_from_a_finished_shard_is_refused(shards, tmp_path):
    """Issue 34: deleting one signed entry line made a student vanish from the merge."""
    _, outs, _ = shards
    real = (outs[0] / "check-state-02.shard.jsonl").read_text(encoding="utf-8")
    lines = real.splitlines(keepends=True)
    deleted = _tampered(tmp_path, outs[0], "deleted", [lines[0], *lines[2:]])
    _merge_refused(tmp_path, [deleted, outs[1]], "entries")


def test_issue_34_a_shard_without_its_seal_is_refused_as_unfinished(shards, tmp_path):
    _, outs, _ = shards
    real = (outs[0] / "check-state-02.shard.jsonl").read_text(encoding="utf-8")
    unsealed = _tampered(tmp_path, outs[0], "unsealed", real.splitlines(keepends=True)[:-1])
    _merge_refused(tmp_path, [unsealed, outs[1]], "did not finish")


def test_issue_34_a_seal_copied_from_another_shard_is_refused(shards, tmp_path):
    _, outs, _ = shards
    one, two = ((o / "check-state-02.shard.jsonl").read_text(encoding="utf-8") for o in outs)
    moved = [*one.splitlines(keepends=True)[:-1], two.splitlines(keepends=True)[-1]]
    copied = _tampered(tmp_path, outs[0], "copied", moved)
    _merge_refused(tmp_path, [copied, outs[1]], "seal of shard 2/2")


def test_issue_34_a_shard_resumed_from_its_journal_is_sealed_anew_and_merges(shards, tmp_path):
    """--resume of a shard whose journal lost an entry (and kept an old seal) grades only
    that file again, drops the old seal and seals at its end: the merge is the whole batch."""
    root, outs, _ = shards
    real = (outs[0] / "check-state-02.shard.jsonl").read_text(encoding="utf-8")
    lines = real.splitlines(keepends=True)
    out = tmp_path / "resumed"
    out.mkdir()
    (out / ".check-state-02.journal.jsonl").write_text("".join([lines[0], *lines[2:]]))
    argv = ["check", "state-02", "--batch", str(root / "week1"), "--shard", "1/2", "--seed"]
    code, _, err = invoke([*argv, "11", "--jobs", "1", "--out", str(out), "--resume"])
    assert code == 0 and "Graded 1 file(s)" in err, err
    journal = (out / "check-state-02.shard.jsonl").read_text(encoding="utf-8").splitlines()
    assert sum('"seal"' in line for line in journal) == 1 and '"seal"' in journal[-1]
    code, stdout, err = invoke(["merge", str(out), str(outs[1]), "--out", str(tmp_path / "m")])
    assert code == 0, err
    assert "Merged 2 shard(s): 3 of 5 files pass every task (input seed 11" in stdout


def test_merge_refuses_a_missing_shard(shards):
    root, outs, _ = shards
    code, _, err = invoke(["merge", str(outs[0]), "--out", str(root / "half")])
    assert code == 2 and "shard(s) 2/2 missing" in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--shard", "1/2"], "needs --seed"),
        (["--shard", "1/2", "--seed", "3", "--gradebook", "g.sqlite"], "never to a gradebook"),
    ],
)
def test_shard_mistakes_are_one_message(tmp_path, extra, message):
    (tmp_path / "week1").mkdir()
    (tmp_path / "week1" / "a.py").write_text("x = 1\n", encoding="utf-8")
    argv = ["check", "state-02", "--batch", str(tmp_path / "week1"), *extra]
    code, _, err = invoke(argv, root=REPO, cwd=tmp_path)
    assert code == 2 and message in err


def _stub_lessonkit(folder: Path) -> dict[str, str]:
    """A `lessonkit` on PATH that prints its arguments, one per line, instead of grading."""
    stub = folder / "lessonkit"
    stub.write_text('#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n', encoding="utf-8")
    stub.chmod(0o755)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


def _option(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


def test_the_slurm_array_script_grades_the_shard_its_task_names(tmp_path):
    script = REPO / "docs" / "cluster" / "slurm-array.sh"
    subprocess.run(["bash", "-n", str(script)], check=True)
    env = {"SLURM_ARRAY_TASK_ID": "6", "SLURM_ARRAY_TASK_MIN": "4", "SLURM_ARRAY_TASK_COUNT": "3"}
    run = subprocess.run(
        ["bash", str(script), "state-02", "/class", "/results"],
        env={**os.environ, **_stub_lessonkit(tmp_path), **env},
        capture_output=True,
        text=True,
        check=True,
    )
    args = run.stdout.splitlines()
    assert args[:4] == ["check", "state-02", "--batch", "/class"]
    assert _option(args, "--out") == "/results/shard-3-of-3"
    assert choose_shard(None, None, env) == Shard(3, 3)  # what lessonkit reads agrees


def test_the_kubernetes_indexed_job_grades_the_shard_its_index_names(tmp_path):
    manifest = yaml.safe_load((REPO / "docs" / "cluster" / "k8s-indexed-job.yaml").read_text())
    spec = manifest["spec"]
    assert (manifest["kind"], spec["completionMode"]) == ("Job", "Indexed")
    container = spec["template"]["spec"]["containers"][0]
    env = {"JOB_COMPLETION_INDEX": "3"}
    run = subprocess.run(
        [*container["command"], *container["args"]],
        env={**os.environ, **_stub_lessonkit(tmp_path), **env},
        capture_output=True,
        text=True,
        check=True,
    )
    args = shlex.split(" ".join(run.stdout.splitlines()))
    count = int(_option(args, "--shard-count"))
    assert count == spec["completions"]
    assert choose_shard(None, count, env) == Shard(4, count)
    assert _option(args, "--out") == f"/results/shard-4-of-{count}"
