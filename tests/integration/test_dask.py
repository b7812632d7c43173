"""`check --batch --dask`: a Dask LocalCluster of two worker processes grades four files
with the verdicts a local batch gives on the same seed."""

from __future__ import annotations

import json

import pytest

from conftest import REPO, invoke, make_attempt

distributed = pytest.importorskip("distributed", reason="Dask is in the test extra")

MK_WRONG = {"make-it-yours": "norm_squared = 96.\nmanual = 96.\n"}


def _verdicts(summary: dict) -> dict[str, list[tuple[str, str]]]:
    """Each file's (status, message) per task: a pass names the seed of its drawn inputs."""
    return {
        r["file"].rsplit("/", 1)[-1]: [(t["status"], t["message"]) for t in r["tasks"]]
        for r in summary["reports"]
    }


def test_a_dask_cluster_grades_like_a_local_batch(lesson, tmp_path, monkeypatch):
    submissions = tmp_path / "week1"
    submissions.mkdir()
    for name, wrong in (("ann.py", False), ("ben.py", True), ("cy.py", False), ("dee.py", True)):
        text = make_attempt(lesson, MK_WRONG if wrong else None)
        (submissions / name).write_text(text, encoding="utf-8")
    (submissions / "eve.py").symlink_to(submissions / "ann.py")  # read by the parent: refused
    monkeypatch.setenv("LESSONKIT_ROOT", str(REPO))  # the workers find the same lesson
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    try:
        argv = ["check", "state-02", "--batch", str(submissions), "--seed", "5", "--json"]
        code, out, err = invoke(
            [*argv, "--dask", cluster.scheduler_address, "--out", str(tmp_path / "d")]
        )
    finally:
        cluster.close()
    assert code == 0, err
    on_dask = json.loads(out)
    code, out, err = invoke([*argv, "--jobs", "2", "--out", str(tmp_path / "local")])
    assert code == 0, err
    local = json.loads(out)
    assert _verdicts(on_dask) == _verdicts(local)
    statuses = {name: [s for s, _ in tasks] for name, tasks in _verdicts(on_dask).items()}
    assert statuses["ben.py"][0] == "failed" and statuses["ann.py"][0] == "passed"
    assert statuses["eve.py"] == ["error"] * len(lesson.tasks)
    assert "(seed 5)" in _verdicts(on_dask)["ann.py"][0][1], _verdicts(on_dask)["ann.py"]
    assert on_dask["seed"] == local["seed"] == 5


def test_an_unreachable_scheduler_is_one_message(tmp_path, monkeypatch):
    monkeypatch.setattr("lessonkit.grade.batches.distributed.CONNECT_TIMEOUT_S", 2.0)
    (tmp_path / "week1").mkdir()
    (tmp_path / "week1" / "a.py").write_text("x = 1\n", encoding="utf-8")
    argv = ["check", "state-02", "--batch", str(tmp_path / "week1"), "--out", str(tmp_path / "o")]
    code, _, err = invoke([*argv, "--dask", "tcp://127.0.0.1:9"], root=REPO, cwd=tmp_path)
    assert code == 2 and "cannot reach the Dask scheduler" in err
