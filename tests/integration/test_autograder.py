"""The Gradescope autograder: the bundle, then `run_autograder` under a temporary
`$AUTOGRADER_ROOT` (without `setup.sh`) on right, wrong, hostile, not-attempted and missing
submissions, and the unprivileged-account confinement used where bubblewrap cannot start."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from lessonkit.course import autograder
from lessonkit.run import isolation
from lessonkit.run.limits import Limits
from lessonkit.run.sandbox import find_sandbox
from lessonkit.settings import GradingSettings, grading_settings

from conftest import invoke, make_attempt

MK_WRONG = {"make-it-yours": "norm_squared = 96.\nmanual = 96.\n"}
HOSTILE_CELL = """import ast as _ast, glob as _glob, re as _re
_found = sorted(_glob.glob("{root}/source/phases/*/*/lesson.md"))
_text = open(_found[0], encoding="utf-8").read()
_pattern = r"\\{{solution\\}} nested-model\\n.*?```python\\n(.*?)```"
_block = _re.search(_pattern, _text, _re.S).group(1)
for _statement in [_ast.unparse(n) for n in _ast.parse(_block).body]:
    exec(_statement, globals())
"""
FORGE = """try:
    open("{root}/results/results.json", "w").write('{{"score": 100, "tests": []}}')
except OSError:
    pass
"""


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> bytes:
    out = tmp_path_factory.mktemp("bundle") / "autograder.zip"
    code, _, err = invoke(["autograder", "state-02", "--output", str(out)])
    assert code == 0, err
    return out.read_bytes()


def _root(bundle: bytes, folder: Path) -> Path:
    """Gradescope's layout: the bundle unpacked into source/, an empty submission/."""
    with zipfile.ZipFile(io.BytesIO(bundle)) as archive:
        archive.extractall(folder / "source")
    for name in ("setup.sh", "run_autograder"):
        (folder / "source" / name).chmod(0o755)
    (folder / "submission").mkdir()
    return folder


def _run(root: Path, files: dict[str, str]) -> dict:
    for name, text in files.items():
        (root / "submission" / name).write_text(text, encoding="utf-8")
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "LESSONKIT_PYTHON": sys.executable}
    script = root / "source" / "run_autograder"
    result = subprocess.run(
        ["bash", str(script)], env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    return json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))


def _statuses(results: dict) -> dict[str, str]:
    return {t["name"]: t["status"] for t in results["tests"]}


def test_the_bundle_holds_the_toolkit_the_lesson_and_two_working_scripts(bundle, lesson):
    with zipfile.ZipFile(io.BytesIO(bundle)) as archive:
        names = set(archive.namelist())
        modes = {i.filename: i.external_attr >> 16 for i in archive.infolist()}
        requirements = archive.read("requirements.txt").decode()
        scripts = {n: archive.read(n).decode() for n in ("setup.sh", "run_autograder")}
        readme = archive.read("README.md").decode()
    lesson_md = lesson.path.relative_to(lesson.directory.parents[2]).as_posix()
    assert {"pyproject.toml", "src/lessonkit/course/autograder.py", lesson_md} <= names
    assert not any("__pycache__" in n for n in names)
    assert modes["run_autograder"] == modes["setup.sh"] == 0o755
    assert "jax==" in requirements and "-e ." not in requirements
    for name, text in scripts.items():
        check = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True)
        assert check.returncode == 0, (name, check.stderr)
    assert "chmod -R go-rwx ." in scripts["setup.sh"]
    # The bundle's own README, with the local try-out `_run` below follows word for word.
    assert readme.startswith("# Gradescope autograder for state-02")
    assert (
        "AUTOGRADER_ROOT=DIR LESSONKIT_PYTHON=/path/to/python bash DIR/source/run_autograder"
        in (readme)
    )
    assert "lessonkit autograder state-02 --run --root DIR" in readme
    assert autograder.bundle_zip(lesson, lesson.directory.parents[2]) == bundle  # reproducible


def test_right_wrong_and_not_attempted_submissions(bundle, lesson, tmp_path):
    right = _run(_root(bundle, tmp_path / "right"), {"state-02.py": make_attempt(lesson)})
    assert right["score"] == 9 and set(_statuses(right).values()) == {"passed"}
    assert "Isolation: bubblewrap" in right["output"] or find_sandbox()[0] is None
    wrong = _run(_root(bundle, tmp_path / "wrong"), {"attempt.py": make_attempt(lesson, MK_WRONG)})
    assert wrong["score"] == 7
    (mk,) = [t for t in wrong["tests"] if t["name"] == "Make it yours"]
    assert (mk["status"], mk["score"], mk["max_score"]) == ("failed", 0, 2)
    assert "norm_squared" in mk["output"] and "Hint:" in mk["output"]
    solution = lesson.task("make-it-yours").solution.strip()
    assert solution not in json.dumps(wrong)
    ids = tuple(t.id for t in lesson.tasks)
    empty = _run(
        _root(bundle, tmp_path / "todo"),
        {"a.ipynb": "", "state-02.py": make_attempt(lesson, unsolved=ids)},
    )
    assert empty["score"] == 0 and "todo(...)" in empty["tests"][0]["output"]


def test_a_submission_without_a_practice_file_scores_zero_and_says_why(bundle, tmp_path):
    results = _run(_root(bundle, tmp_path), {"notes.txt": "hello"})
    assert results["score"] == 0 and results["tests"] == []  # one message, not one per task
    assert "has no .py or .ipynb file" in results["output"]
    assert "Isolation" not in results["output"]  # no code ran


@pytest.mark.skipif(find_sandbox()[0] is None, reason="bubblewrap cannot start here")
def test_a_submission_cannot_read_the_lesson_or_write_the_results(bundle, lesson, tmp_path):
    root = _root(bundle, tmp_path)
    hostile = make_attempt(
        lesson, {"nested-model": HOSTILE_CELL.format(root=root)}, prefix=FORGE.format(root=root)
    )
    results = _run(root, {"state-02.py": hostile})
    assert _statuses(results)["Extend to a nested model"] == "failed"
    assert results["score"] == 9 - 3 and len(results["tests"]) == len(lesson.tasks)


def _in_process(root: Path, lesson, monkeypatch, kind: str) -> dict:
    """`--run` here, as if bubblewrap could not start and the kernel allowed the root
    grader's children `kind` of isolation (`namespaces`, or `user` alone)."""
    monkeypatch.setattr(isolation, "find_sandbox", lambda: (None, "no user namespaces"))
    monkeypatch.setattr(isolation, "root_isolation", lambda: kind)
    return autograder.run_autograder(lesson, root, _autograder_settings)


def _autograder_settings() -> GradingSettings:
    """What `lessonkit autograder --run --timeout 60` grades with."""
    return grading_settings(os.environ, limits=Limits(timeout=60), compile_cache=False)


def _readable_by_anyone(path: Path) -> bool:
    """Whether a user with no rights of its own can read `path` (each folder on the way
    must let others in): a child with only a user id of its own must import the standard
    library."""
    folders = [path, *path.parents]
    return all(os.stat(f).st_mode & 0o005 == 0o005 for f in folders if f.exists())


ROOT_KINDS = {
    "namespaces": "the submission's own namespaces, files and user id",
    "user": "a user id of the submission's own",
}
"""What results.json says of each isolation a root grader without bubblewrap can have."""


@pytest.mark.skipif(os.geteuid() != 0, reason="a root grader's isolation is what root does")
@pytest.mark.parametrize("kind", sorted(ROOT_KINDS))
def test_without_bubblewrap_the_learner_child_reads_nothing_of_the_bundle(
    kind, bundle, lesson, tmp_path, monkeypatch
):
    """Root without bubblewrap: a child of its own namespaces, root and user id sees none of
    the bundle, whatever its modes; one of its own user id alone (no namespaces) is kept
    out by the modes setup.sh leaves."""
    if kind == "namespaces" and isolation.root_isolation() != "namespaces":
        pytest.skip("the kernel refuses namespaces here")
    if kind == "user" and not _readable_by_anyone(Path(sys.base_prefix)):
        pytest.skip(
            f"this Python ({sys.base_prefix}) lies in a folder only root may enter, so an "
            "unprivileged user cannot run it (Gradescope's system Python has no such folder)"
        )
    root = _root(bundle, tmp_path / kind)
    (root / "source").chmod(0o700)  # as setup.sh leaves it
    hostile = make_attempt(lesson, {"nested-model": HOSTILE_CELL.format(root=root)})
    (root / "submission" / "state-02.py").write_text(hostile, encoding="utf-8")
    results = _in_process(root, lesson, monkeypatch, kind)
    assert ROOT_KINDS[kind] in results["output"]
    assert _statuses(results)["Extend to a nested model"] == "failed"
    assert results["score"] == 6, results


@pytest.mark.skipif(os.geteuid() != 0, reason="shows what root without confinement allows")
def test_the_hostile_submission_is_a_real_attack_when_nothing_confines_it(
    bundle, lesson, tmp_path, monkeypatch
):
    """The same file passes when its child runs as root, unsandboxed: the two tests above
    hold because of the confinement, not because the attack is broken."""
    root = _root(bundle, tmp_path)
    hostile = make_attempt(lesson, {"nested-model": HOSTILE_CELL.format(root=root)})
    (root / "submission" / "state-02.py").write_text(hostile, encoding="utf-8")
    unconfined = isolation.Isolation(reason="none (this test only)")
    settings = GradingSettings(Limits(timeout=60), unconfined)
    results = autograder.run_autograder(lesson, root, lambda: settings)
    assert _statuses(results)["Extend to a nested model"] == "passed"
