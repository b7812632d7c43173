"""A course from nothing with lessonkit installed as a package other courses install.

The wheel built from this repository goes, not editable, into a fresh virtual environment
under /tmp (where a grading fork's new /tmp covers it), and a new course is made there with
that environment's `lessonkit init`: its requirements name the wheel lessonkit came from
(PEP 610), and its docs/ holds the guides the wheel carries. Then the course is graded:
new, build, run --record, verify, start, check of the blank and of the solved practice file,
check --batch.

The third-party packages come from this test environment's site-packages, copied (hard
links where the file system allows) so the test needs no index. With
LESSONKIT_JOURNEY_PINNED=1 (`.ci/run` sets it for the README's test command) pip installs the
pins and the wheel from a course's own requirements-cpu.txt instead, and the new course's
README commands then run verbatim in the course (no variable of the test's own, none of
PIP_FIND_LINKS), setting up the course's own `.venv`, whose lessonkit takes the journey.
"""

from __future__ import annotations

import json
import os
import re
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
    for name in ("pyproject.toml", "README.md", "LICENSE"):
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
        if PINNED:  # a course's own requirements-cpu.txt, naming the wheel
            pins = top / "requirements-cpu.txt"
            texts = render_course("Pinned", f"lessonkit @ {wheel.as_uri()}")
            pins.write_text(texts["requirements-cpu.txt"], encoding="utf-8")
            install = [*pip, "install", "-q", "-r", str(pins)]
        else:
            _copy_dependencies(venv)
            install = [*pip, "install", "-q", "--no-deps", str(wheel)]
        done = _call(install, top, dict(os.environ))
        assert done.returncode == 0, done.stderr
        yield top
    finally:
        shutil.rmtree(top, ignore_errors=True)


def readme_commands(readme: str) -> list[str]:
    """The commands of a README's first fenced block, as `.ci/run` reads them."""
    block = re.search(r"^```[^\n]*\n(.*?)^```", readme, re.MULTILINE | re.DOTALL)
    assert block, readme
    return [line for line in block.group(1).splitlines() if line.strip()]


@pytest.fixture(scope="module")
def journey(tools: Path) -> dict[str, subprocess.CompletedProcess]:
    """Each step of the course's first day, in order, with what it printed."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("LESSONKIT_") and k not in {"PIP_FIND_LINKS", "VIRTUAL_ENV"}
    }
    env["PYTHONPATH"] = ""
    course = tools / "course"
    steps: dict[str, subprocess.CompletedProcess] = {}
    steps["init"] = _call(
        [str(tools / "venv" / "bin" / "lessonkit"), "init", str(course)], tools, env
    )
    if PINNED:  # the README's commands, verbatim, set up the course's own environment
        readme = (course / "README.md").read_text(encoding="utf-8")
        for number, command in enumerate(readme_commands(readme), 1):
            steps[f"readme-{number}"] = _call(["bash", "-c", command], course, env)
    venv = course / ".venv" if PINNED else tools / "venv"
    lessonkit = str(venv / "bin" / "lessonkit")

    def step(name: str, *argv: str) -> subprocess.CompletedProcess:
        steps[name] = done = _call([lessonkit, *argv], course, env)
        return done

    step("verify-empty", "verify")  # the new course passes its own checks before any lesson
    step("docs", "docs", "authoring")
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


def test_the_installed_lessonkit_states_its_license(tools):
    python = tools / "venv" / "bin" / "python"
    probe = "from importlib.metadata import metadata as m; d = m('lessonkit'); "
    probe += "print(d['License-Expression'], d.get_all('License-File'))"
    said = subprocess.check_output([str(python), "-I", "-c", probe], text=True)
    assert said.split() == ["Apache-2.0", "['LICENSE']"], said


def test_the_course_installs_lessonkit_from_the_wheel_it_came_from(journey, tools):
    assert journey["init"].returncode == 0, _report(journey)
    (wheel,) = (tools / "wheels").glob("lessonkit-*.whl")
    pins = (tools / "course" / "requirements-cpu.txt").read_text(encoding="utf-8")
    assert pins.splitlines()[-1] == f"lessonkit @ {wheel.as_uri()}"


@pytest.mark.skipif(not PINNED, reason="needs an index for the pins: LESSONKIT_JOURNEY_PINNED=1")
def test_the_course_readme_commands_pass_verbatim_with_the_course_own_lessonkit(journey, tools):
    course = tools / "course"
    readme = [k for k in journey if k.startswith("readme-")]
    assert len(readme) == 2, _report(journey)
    assert {k: journey[k].returncode for k in readme} == {k: 0 for k in readme}, _report(journey)
    assert "verify: no lessons yet" in journey["readme-2"].stdout, _report(journey)
    python = course / ".venv" / "bin" / "python"
    where = subprocess.check_output(
        [str(python), "-I", "-c", "import lessonkit; print(lessonkit.__file__)"], text=True
    )
    assert where.startswith(str(course / ".venv")), where


def test_the_wheel_carries_the_guides_into_the_course_and_prints_them(journey, tools):
    guide = tools / "course" / "docs" / "authoring.md"
    assert guide.is_file(), _report(journey)
    assert journey["docs"].stdout == guide.read_text(encoding="utf-8"), _report(journey)


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
