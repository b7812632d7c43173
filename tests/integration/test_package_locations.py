"""`lessonkit check` grades wherever the interpreter finds its packages: through PYTHONPATH
(`pip install --target`, an HPC module, a TPU image) or the user site (`pip install
--user`), and where the system calls that forking children needs are missing (gVisor).

The interpreters here are fresh virtual environments with no package of their own, which
find JAX, lessonkit and the rest only through this test environment's site-packages,
named by PYTHONPATH or by a `.pth` file in a user site of their own: nothing is installed.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

import lessonkit
from lessonkit.run import forking

from conftest import (
    REPO,
    check_wrong_attempt,
    invoke,
    make_attempt,
    task_result,
    write_solved_and_wrong,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX grading only")

SITE_PACKAGES = sysconfig.get_paths()["purelib"]  # this environment's packages, JAX among them
SOURCE = str(Path(lessonkit.__file__).resolve().parent.parent)  # lessonkit itself (editable)


@pytest.fixture(scope="module")
def files(lesson, tmp_path_factory) -> Path:
    return write_solved_and_wrong(lesson, tmp_path_factory.mktemp("package-locations"))


def _bare_python(folder: Path, *, system_site_packages: bool) -> Path:
    """A virtual environment without pip or any package; its python."""
    venv.create(folder, with_pip=False, system_site_packages=system_site_packages, symlinks=True)
    return folder / "bin" / "python"


def _environment(**settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    return {**env, **settings}


def _grades_solved_and_wrong(python: Path, files: Path, env: dict[str, str], lesson) -> None:
    for name, passed in (("solved.py", True), ("wrong.py", False)):
        done = subprocess.run(
            [str(python), "-m", "lessonkit", "check", "state-02", str(files / name), "--json"],
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO,
            timeout=600,
        )
        assert done.returncode == (0 if passed else 1), done.stdout + done.stderr
        report = json.loads(done.stdout)
        assert report["passed"] is passed
        if passed:
            assert {t["status"] for t in report["tasks"]} == {"passed"}
        else:
            check_wrong_attempt(report, lesson, "make-it-yours", "hard-coded")


def test_packages_found_through_pythonpath(tmp_path, files, lesson):
    python = _bare_python(tmp_path / "venv", system_site_packages=False)
    env = _environment(PYTHONPATH=os.pathsep.join([SITE_PACKAGES, SOURCE]))
    assert subprocess.run([python, "-I", "-c", "import jax"], env=env).returncode != 0
    _grades_solved_and_wrong(python, files, env, lesson)


def test_the_notebooks_check_finds_them_too(tmp_path, files, lesson):
    """check() in the learner's own Python starts the grading server, which must find
    lessonkit's packages where that Python does."""
    python = _bare_python(tmp_path / "venv", system_site_packages=False)
    env = _environment(PYTHONPATH=os.pathsep.join([SITE_PACKAGES, SOURCE]))
    script = tmp_path / "solved.py"
    script.write_text((files / "solved.py").read_text() + "\ncheck()\n", encoding="utf-8")
    done = subprocess.run(
        [str(python), str(script)], capture_output=True, text=True, env=env, timeout=600
    )
    said = [line for line in done.stdout.splitlines() if " · " in line]
    assert [line.split(" · ")[0] for line in said] == [t.id for t in lesson.tasks], done
    assert all(line.endswith(": passed") for line in said), done.stdout + done.stderr


def test_packages_found_in_the_user_site(tmp_path, files, lesson):
    # A virtual environment with the system's site-packages reads the user site too.
    python = _bare_python(tmp_path / "venv", system_site_packages=True)
    env = _environment(PYTHONUSERBASE=str(tmp_path / "user"))
    where = [python, "-c", "import site; print(site.getusersitepackages())"]
    user_site = Path(subprocess.run(where, env=env, capture_output=True, text=True).stdout.strip())
    user_site.mkdir(parents=True)
    (user_site / "packages.pth").write_text(f"{SITE_PACKAGES}\n{SOURCE}\n", encoding="utf-8")
    assert subprocess.run([python, "-I", "-c", "import jax"], env=env).returncode != 0
    _grades_solved_and_wrong(python, files, env, lesson)


@pytest.mark.skipif(not forking.FORKING, reason="children are forks on Linux only")
def test_without_pidfd_open_children_are_forks_and_grade_right(files, lesson, monkeypatch):
    """As under gVisor, where pidfd_open answers ENOSYS: forks still, stopped by the starter,
    and graded right, a time limit included (issue 51)."""

    def enosys(pid: int) -> int:
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))

    monkeypatch.setattr(os, "pidfd_open", enosys)
    forking.fork_problem.cache_clear()
    forking.pidfds.cache_clear()
    try:
        code, out, err = invoke(["check", "state-02", str(files / "solved.py")])
        assert code == 0, out + err
        assert "pidfd_open" not in err and forking.forks_children(), err
        code, out, err = invoke(["check", "state-02", str(files / "wrong.py"), "--json"])
        assert code == 1, out + err
        check_wrong_attempt(json.loads(out), lesson, "make-it-yours", "hard-coded")
        endless = files.parent / "endless.py"
        endless.write_text(make_attempt(lesson, {"make-it-yours": "while True:\n    pass\n"}))
        code, out, err = invoke(["check", "state-02", str(endless), "--timeout", "5", "--json"])
        assert code == 1 and "time limit" in out, out + err
    finally:
        forking.fork_problem.cache_clear()
        forking.pidfds.cache_clear()


def test_a_course_folder_on_pythonpath_is_never_shown_to_learner_code(tmp_path, lesson):
    """`PYTHONPATH=.` inside the course repository must not bind the repository, with every
    lesson's solutions, into the sandbox where the learner's code runs."""
    lesson_md = str(lesson.path.resolve())
    peek = f"import os\nassert not os.path.exists({lesson_md!r}), 'the course is readable'\n"
    path = tmp_path / "peek.py"
    solution = lesson.task("make-it-yours").solution
    path.write_text(make_attempt(lesson, {"make-it-yours": peek + solution}), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), SOURCE])}
    done = subprocess.run(
        [sys.executable, "-m", "lessonkit", "check", "state-02", str(path), "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=600,
    )
    if "Not sandboxed" in done.stderr:
        pytest.skip("no sandbox here: learner code can read every file anyway")
    report = json.loads(done.stdout)
    assert task_result(report, "make-it-yours")["status"] == "passed", done.stdout


def test_a_phase_project_runs_where_packages_come_through_pythonpath(tmp_path):
    """A learner's whole script (`lessonkit project`) starts without `-I`, with the parent's
    import folders as its PYTHONPATH: the reference project has every property there."""
    python = _bare_python(tmp_path / "venv", system_site_packages=False)
    env = _environment(PYTHONPATH=os.pathsep.join([SITE_PACKAGES, SOURCE]))
    script = REPO / "tests" / "fixtures" / "projects" / "reference.py"
    done = subprocess.run(
        [str(python), "-m", "lessonkit", "project", "phase-03", str(script), "--seed", "3"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ModuleNotFoundError" not in done.stdout + done.stderr


STEAL = '''
def _steal(path, marker, begin, end):
    """The text after `marker` and then `begin`, up to `end`, in a file grading reaches."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as error:
        raise AssertionError(f"cannot read {{path}}: {{error}}") from None
    return text.split(marker, 1)[1].split(begin, 1)[1].split(end, 1)[0]


exec(_steal({path!r}, {marker!r}, {begin!r}, {end!r}), globals())
'''
"""A task cell that runs what another file holds: the lesson's solution or a classmate's cell."""


def _scraping_attempt(lesson, course: Path, classmate: Path) -> str:
    """A practice file whose cells run the lesson's solutions (two tasks) and a classmate's
    cell (one), read from where grading shows them, and that solves the optional task
    with a package that lies beside them."""
    lesson_md = str(course / lesson.path.resolve().relative_to(REPO))
    from_lesson = {
        task: STEAL.format(
            path=lesson_md, marker=f"````{{solution}} {task}", begin="```python\n", end="```\n````"
        )
        for task in ("make-it-yours", "nested-model")
    }
    from_classmate = STEAL.format(
        path=str(classmate), marker="# TASK repair", begin="\n", end="# %%"
    )
    # The optional task, solved, also imports a package of the instructor's from the folder.
    adam = "import helpers\nassert helpers.ANSWER == 42\n" + lesson.task("adam-by-hand").solution
    bodies = {**from_lesson, "repair": from_classmate, "adam-by-hand": adam}
    return make_attempt(lesson, bodies)


@pytest.mark.parametrize(
    ("layout", "mode"), [("parent", "file"), ("home", "batch"), ("week", "file"), ("week", "batch")]
)
def test_a_folder_that_holds_the_course_and_the_submissions_shows_neither(
    tmp_path, lesson, layout, mode
):
    """PYTHONPATH at the folder above the course and the week's submissions (`~/src`), at
    home itself, or above the week's submissions alone (the course elsewhere), with one file
    checked or the week graded as a batch: a file that reads the lesson's solutions and a
    classmate's file at grading time passes none of those tasks, while a package of the
    instructor's in that folder still imports."""
    from conftest import copy_lesson_repo

    home = tmp_path / "home"
    course = home / ("course" if layout == "week" else "src/course")
    week = home / "src" / "week3"
    copy_lesson_repo(course)
    week.mkdir(parents=True)
    folder = home if layout == "home" else home / "src"
    (folder / "helpers").mkdir()
    (folder / "helpers" / "__init__.py").write_text("ANSWER = 42\n", encoding="utf-8")
    classmate = week / "bob.py"
    classmate.write_text(make_attempt(lesson), encoding="utf-8")
    scraper = week / "ana.py"
    scraper.write_text(_scraping_attempt(lesson, course, classmate), encoding="utf-8")
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CACHE_HOME": os.environ.get("XDG_CACHE_HOME", str(Path.home() / ".cache")),
        "PYTHONPATH": str(folder),
        "LESSONKIT_ROOT": str(course),
        "LESSONKIT_GRADING_KEY": str(home / ".config" / "lessonkit" / "grading.key"),
    }
    command = [sys.executable, "-m", "lessonkit", "check", "state-02", "--json"]
    if mode == "file":
        command.append(str(scraper))
    else:
        command += ["--batch", str(week), "--out", str(tmp_path / "out")]
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600
    )
    if "Not sandboxed" in done.stderr or "unsandboxed" in done.stderr:
        pytest.skip("no sandbox here: learner code can read every file anyway")
    said = json.loads(done.stdout)
    if mode == "batch":
        reports = {Path(r["file"]).name: r for r in said["reports"]}
        assert reports["bob.py"]["passed"] is True, reports["bob.py"]
        said = reports["ana.py"]
    statuses = {t["id"]: t["status"] for t in said["tasks"]}
    stolen = ("make-it-yours", "nested-model", "repair")
    assert not [t for t in stolen if statuses[t] == "passed"], statuses
    for task in stolen:
        assert "cannot read" in task_result(said, task)["message"], task_result(said, task)
    assert statuses["adam-by-hand"] == "passed", task_result(said, "adam-by-hand")
