"""A course from nothing with lessonkit installed as a package other courses install.

The wheel built from this repository goes, not editable, into a fresh virtual environment
under /tmp (where a grading fork's new /tmp covers it), and a new course is made and graded
there with that environment's `lessonkit` only: init, new, build, run --record, verify,
start, check of the blank and of the solved practice file, check --batch.

The third-party packages come from this test environment's site-packages, copied (hard
links where the file system allows) so the test needs no index; with
LESSONKIT_JOURNEY_PINNED=1 (CI's step after the README's test command) pip installs a new
course's requirements-cpu.txt (the pins, lessonkit from the wheel) instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from lessonkit.lesson.catalog import find_lesson
from lessonkit.lesson.new_course import render_course

from conftest import REPO, make_attempt

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PINNED = os.environ.get("LESSONKIT_JOURNEY_PINNED") == "1"
LESSON = "intro-01"


def _call(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def _build_wheel(into: Path) -> Path:
    """The wheel, built from a copy of the sources (setuptools writes build/ beside them)."""
    source = into / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__"))
    wheels = into / "wheels"
    argv = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels)]
    done = _call([*argv, str(source)], into, dict(os.environ))
    assert done.returncode == 0, done.stderr
    (wheel,) = wheels.glob("lessonkit-*.whl")
    return wheel


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _copy_dependencies(venv: Path) -> None:
    """This environment's third-party packages, without its editable lessonkit."""
    ours = Path(sysconfig.get_paths()["purelib"])
    theirs = Path(
        subprocess.check_output(
            [
                str(venv / "bin" / "python"),
                "-c",
                "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            ],
            text=True,
        ).strip()
    )
    skip = shutil.ignore_patterns("__pycache__", "lessonkit*", "__editable__*")
    for entry in ours.iterdir():
        if skip(str(ours), [entry.name]):
            continue
        if entry.is_dir():
            shutil.copytree(entry, theirs / entry.name, copy_function=_link_or_copy)
        else:
            _link_or_copy(str(entry), str(theirs / entry.name))


@pytest.fixture(scope="module")
def tools() -> Iterator[Path]:
    """A folder under /tmp holding the wheel and the fresh environment (its `bin/`)."""
    top = Path(tempfile.mkdtemp(prefix="lessonkit-wheel-", dir="/tmp"))
    try:
        wheel = _build_wheel(top)
        venv = top / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python")]
        if PINNED:  # a new course's own requirements-cpu.txt, lessonkit from the wheel
            pins = top / "requirements-cpu.txt"
            pins.write_text(render_course("Pinned")["requirements-cpu.txt"], encoding="utf-8")
            wheels = ["--find-links", str(wheel.parent)]
            install = [*pip, "install", "-q", *wheels, "-r", str(pins)]
        else:
            _copy_dependencies(venv)
            install = [*pip, "install", "-q", "--no-deps", str(wheel)]
        done = _call(install, top, dict(os.environ))
        assert done.returncode == 0, done.stderr
        yield top
    finally:
        shutil.rmtree(top, ignore_errors=True)


@pytest.fixture(scope="module")
def journey(tools: Path) -> dict[str, subprocess.CompletedProcess]:
    """Each step of the course's first day, in order, with what it printed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LESSONKIT_")}
    env["PYTHONPATH"] = ""
    lessonkit = str(tools / "venv" / "bin" / "lessonkit")
    course = tools / "course"
    steps: dict[str, subprocess.CompletedProcess] = {}

    def step(name: str, *argv: str) -> subprocess.CompletedProcess:
        steps[name] = done = _call([lessonkit, *argv], course, env)
        return done

    steps["init"] = _call([lessonkit, "init", str(course)], tools, env)
    step("verify-empty", "verify")  # the new course passes its own checks before any lesson
    step("new", "new", LESSON, "--phase", "01")
    step("build", "build")
    step("run", "run", LESSON, "--record")
    step("verify", "verify")
    step("start", "start", LESSON)
    lesson = find_lesson(LESSON, course)
    attempts = course / "attempts"
    attempts.mkdir()
    (attempts / "solved.py").write_text(make_attempt(lesson), encoding="utf-8")
    blank = course / "practice" / LESSON / f"{LESSON}.py"
    shutil.copy(blank, attempts / "blank.py")
    step("check-blank", "check", LESSON, "--json")
    step("check-solved", "check", LESSON, str(attempts / "solved.py"), "--json")
    step("check-batch", "check", LESSON, "--batch", str(attempts), "--out", "batch", "--json")
    return steps


def _report(steps: dict[str, subprocess.CompletedProcess]) -> str:
    return "\n".join(f"== {k} ({v.returncode})\n{v.stdout}{v.stderr}" for k, v in steps.items())


def test_the_environment_runs_lessonkit_from_the_wheel_under_tmp(tools):
    python = tools / "venv" / "bin" / "python"
    where = subprocess.check_output(
        [str(python), "-I", "-c", "import lessonkit; print(lessonkit.__file__)"], text=True
    )
    assert where.startswith(str(tools / "venv")), where


def test_a_course_from_nothing_builds_records_verifies_and_grades(journey, tools):
    failed = {k: v.returncode for k, v in journey.items() if k != "check-blank" and v.returncode}
    assert not failed, _report(journey)
    assert "verify: no lessons yet" in journey["verify-empty"].stdout
    course = tools / "course"
    blank = json.loads(journey["check-blank"].stdout)
    solved = json.loads(journey["check-solved"].stdout)
    assert blank["passed"] is False and solved["passed"] is True, _report(journey)
    batch = json.loads(journey["check-batch"].stdout)
    verdicts = {Path(r["file"]).name: r["passed"] for r in batch["reports"]}
    assert verdicts == {"blank.py": False, "solved.py": True}, _report(journey)
    assert (course / "phases" / "README.md").is_file()
    assert (course / "build" / "site" / LESSON / "index.html").is_file()
