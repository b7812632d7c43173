"""Shared fixtures (the lesson as loaded from the repository) and the test tiers.

A test's tier is its folder: `unit` (no child process: starting one fails the test, so the
tier runs fast and anywhere), `integration` (commands and the grader through real child
processes), `browser` (headless Chromium) and `hostile` (the red team's attacks). Each test
gets its tier as a marker, so `-m unit` or `-m "not browser"` selects by folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lessonkit.lesson.load import load_lesson, parse_lesson
from lessonkit.lesson.model import Lesson

REPO = Path(__file__).resolve().parents[1]
TIERS = ("unit", "integration", "browser", "hostile")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    tests = Path(__file__).resolve().parent
    for item in items:
        relative = Path(item.path).resolve().relative_to(tests)
        if relative.parts[0] in TIERS:
            item.add_marker(relative.parts[0])


def scope_of(nodeid: str) -> str:
    """The unit of work an xdist worker takes whole: an integration, browser or hostile
    module (its module-scoped fixtures, a batch graded once, a site built once or a week
    graded in a gVisor pod, are then made once), except the hostile suite's cases: a case
    graded alone is a unit of its own, the batch cases one unit together (they share the
    honest files' verdicts alone). Any other test is a unit of its own."""
    path = nodeid.split("::", 1)[0]
    parts = path.split("/")
    tier = parts[1] if len(parts) > 2 and parts[0] == "tests" else ""
    if tier == "hostile" and nodeid.endswith("/batch]"):
        return "hostile-batch"
    if tier == "hostile" and nodeid.endswith("/single]"):
        return nodeid
    if tier in ("integration", "browser", "hostile"):
        return path
    return nodeid


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """`-n N` (the default `--dist load`): spread tests one by one, but keep a module's
    shared fixtures on one worker (`scope_of`). xdist's own `loadgroup` cannot do this
    with pytest 9, which ignores the group suffix it writes into node ids."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SharedFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    return SharedFixtureScheduling(config, log)


def _refused(*args: object, **kwargs: object) -> None:
    raise AssertionError("a unit test started a process: move it to tests/integration")


@pytest.fixture(autouse=True)
def _no_processes_in_unit_tests(request: pytest.FixtureRequest, monkeypatch) -> None:
    """The unit tier starts no process: Popen and fork fail there."""
    if request.node.get_closest_marker("unit") is None:
        return
    monkeypatch.setattr(subprocess.Popen, "__init__", _refused)
    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, _refused)


@pytest.fixture(scope="session", autouse=True)
def _grading_key(tmp_path_factory: pytest.TempPathFactory):
    """One grading key for the session, shared by every xdist worker and never the user's
    own: batches sign their journals with it, and merge and --resume verify with it."""
    key = shared_temp(tmp_path_factory) / "grading.key"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LESSONKIT_GRADING_KEY", str(key))
        yield key


LESSON_DIR = REPO / "phases" / "03-state" / "02-pytrees-and-structured-parameters"
LESSON_MD = LESSON_DIR / "lesson.md"
# A second lesson, deliberately unlike state-02 (a tuple tree with int and bool leaves): the
# toolkit must handle it with no change to src/. Its generated files are made by the tests.
FIXTURE_ROOT = REPO / "tests" / "fixtures"
FIXTURE_MD = FIXTURE_ROOT / "phases" / "99-fixture" / "01-tuples" / "lesson.md"

# The page outline of the published lesson page, in order (spec: state-02-lesson-page.txt).
SPEC_OUTLINE = [
    "What you will be able to do",
    "The problem",
    "The idea",
    "Match leaves by meaning as well as shape",
    "Identify containers, leaves and structure",
    "Derive the matching gradient tree",
    "Apply corresponding leaves, not unrelated arrays",
    "Keep metadata separate from differentiated state",
    "A gradient tree matches parameter leaves",
    "Read the figure",
    "Connect it to the computation",
    "Prepare the inputs",
    "Build the computation",
    "Run and check the result",
    "Run the example",
    "Recorded reference execution",
    "Verify every gradient leaf",
    "Flatten and reconstruct without losing identity",
    "Make it yours",
    "Extend to a nested model",
    "Repair a mismatched update tree",
    "Check your understanding",
    "Diagnose the result",
    "Carry forward",
    "Keep your evidence",
    "Primary references",
]


# The keys of `lessonkit check --json`, in order: tools and `lessonkit evidence` rely on them.
REPORT_KEYS = [
    "schema", "lesson", "file", "passed", "tasks", "prerequisites", "seconds", "seed", "review",
    "not graded",
]  # fmt: skip


@pytest.fixture(scope="session")
def lesson() -> Lesson:
    return load_lesson(LESSON_MD)


def lesson_changed(lesson: Lesson, folder: Path, old: str, new: str) -> Lesson:
    """`lesson` with `old` (found exactly once in its lesson.md) replaced by `new`, loaded
    from a copy in `folder`: a lesson edited without a revision bump."""
    assert lesson.source.count(old) == 1, old
    path = folder / "lesson.md"
    path.write_text(lesson.source.replace(old, new), encoding="utf-8")
    return parse_lesson(path.read_text(encoding="utf-8"), path, lesson.meta.phase)


def _lesson_params() -> tuple[list, list]:
    """pytest params of the lesson.md paths, each with its lesson id as test id."""
    from lessonkit.lesson.catalog import lesson_paths

    def param(path: Path):
        return pytest.param(path, id=load_lesson(path).meta.id)

    repo = [param(path) for path in lesson_paths(REPO)]
    return repo, [*repo, param(FIXTURE_MD)]


REPO_LESSONS, EVERY_LESSON = _lesson_params()


@pytest.fixture(scope="session", params=REPO_LESSONS)
def repo_lesson(request: pytest.FixtureRequest) -> Lesson:
    """Each lesson under phases/, with its committed generated files and records."""
    return load_lesson(request.param)


@pytest.fixture(scope="session", params=EVERY_LESSON)
def any_lesson(request: pytest.FixtureRequest) -> Lesson:
    """Each lesson under phases/ and the test fixture lesson, which has no generated files
    in the repository: for tests that render or read the lesson in memory."""
    return load_lesson(request.param)


def copy_lesson_repo(root: Path) -> Path:
    """A throwaway repository at `root` with a copy of the lesson; returns the lesson folder."""
    import shutil

    target = root / LESSON_DIR.relative_to(REPO)
    shutil.copytree(LESSON_DIR, target)
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    copy_phase_file(LESSON_DIR, target)
    return target


def copy_phase_file(source: Path, target: Path) -> None:
    """The phase of lesson folder `source` beside its copy `target`, as a phase.yaml without a
    study guide that keeps the copy's place: the lessons not copied become places kept for
    later (`~`)."""
    from lessonkit.lesson.model import Phase
    from lessonkit.lesson.phase_file import phase_header

    meta = load_lesson(source / "lesson.md").meta
    kept = tuple(i if i == meta.id else None for i in meta.phase.lessons)
    phase = Phase(meta.phase.number, meta.phase.title, meta.phase.study_guide, kept)
    (target.parent / "phase.yaml").write_text(phase_header(phase), encoding="utf-8")


def imported_by(argv: list[str], root: Path, cwd: Path | None = None) -> tuple[int, set[str]]:
    """`lessonkit ARGV` in a fresh interpreter with `root` as $LESSONKIT_ROOT: its exit code
    and every module it imported (`python -X importtime` lists them on stderr)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "lessonkit", *argv],
        cwd=cwd or root,
        env={**os.environ, "LESSONKIT_ROOT": str(root)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    return done.returncode, modules


def invoke(argv: list[str], root: Path | None = None, cwd: Path | None = None):
    """Run the `lessonkit` CLI in this process: ``(exit code, stdout, stderr)``.

    `root` becomes $LESSONKIT_ROOT and `cwd` the working folder, only for this call, so
    module-scoped fixtures can share one expensive run between tests.
    """
    import contextlib
    import io

    from lessonkit.cli import main

    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        if root is not None:
            patch.setenv("LESSONKIT_ROOT", str(root))
        if cwd is not None:
            patch.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The static site, built once per session from this repository's lessons."""
    from lessonkit.lesson.catalog import all_lessons
    from lessonkit.site.build import build_site

    target = tmp_path_factory.mktemp("site") / "site"
    build_site(all_lessons(REPO), target)
    return target


# --------------------------------------------------------------------------- grading helpers
# Used by tests/test_grade*.py: attempts are the practice script with task cells replaced,
# graded many at a time through the batch API (one warm child per job).


def practice_script(lesson: Lesson) -> str:
    """The practice script exactly as `lessonkit build` writes it, rendered in memory."""
    from lessonkit.lesson.scripts import render_exercise_script

    return render_exercise_script(lesson)


def make_attempt(
    lesson: Lesson,
    bodies: dict[str, str] | None = None,
    *,
    unsolved: tuple[str, ...] = (),
    prefix: str = "",
) -> str:
    """The practice script with task cells filled in (see
    `grade.preparation.attempt_files.attempt_script`)."""
    from lessonkit.grade.preparation.attempt_files import attempt_script

    return prefix + attempt_script(lesson, bodies, unsolved=unsolved)


MK_WRONG = {"make-it-yours": "norm_squared = 96.\nmanual = 96.\n"}
"""A make-it-yours answer that hard-codes the numbers: the wrong attempt `check` tests grade."""


def write_solved_and_wrong(lesson: Lesson, folder: Path) -> Path:
    """`solved.py` (every task solved) and `wrong.py` (`MK_WRONG`) in `folder`."""
    (folder / "solved.py").write_text(make_attempt(lesson), encoding="utf-8")
    (folder / "wrong.py").write_text(make_attempt(lesson, MK_WRONG), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def sandbox():
    """A working bubblewrap (a `run.sandbox.Sandbox`); skipped where there is none, never
    on CI."""
    from lessonkit.run.sandbox import find_sandbox

    found, reason = find_sandbox()
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must grade in the sandbox: {reason}")
        pytest.skip(reason)
    return found


def one_cell_request(source: str, budget: float, cpu_seconds: float | None = None):
    """A request that runs `source` as one task cell reporting `result`, on the lesson's
    inputs only, with the CPU allowance a grader sends for `budget` (or `cpu_seconds`)."""
    from lessonkit.grade.channel.protocol import CellSpec, Request, ScenarioSpec
    from lessonkit.run.limits import cpu_allowance

    return Request(
        id="probe",
        preload=(),
        budget=budget,
        cells=(CellSpec(0, source, 0, "task", ("result",)),),
        checkpoint=None,
        checkpoint_names=(),
        scenarios=(ScenarioSpec("lesson", None),),
        cpu_seconds=cpu_allowance(budget) if cpu_seconds is None else cpu_seconds,
    )


_STARTERS: dict = {}


def session_starter(isolation, limits):
    """One grading starter per isolation and limits for the whole session, as a grader
    keeps one (None where learner children are not forks: not Linux, or a system call
    forking needs is missing)."""
    import atexit

    from lessonkit.grade.channel.child_handle import grading_starter
    from lessonkit.run.forking import forks_children

    if not forks_children():
        return None
    key = (isolation, limits)
    if key not in _STARTERS or not _STARTERS[key].alive:
        _STARTERS[key] = grading_starter(isolation, limits)
        atexit.register(_STARTERS[key].close)
    return _STARTERS[key]


def run_one_cell(
    source: str, sandbox, *, limits=None, budget: float = 20.0, while_alive=None, cpu_seconds=None
):
    """The record of `source`, one task cell reporting `result`, run in a fresh learner
    child (`sandbox`: a `run.sandbox.Sandbox` or None), forked by the session's starter as
    a grader's are; `while_alive(child)` runs before the child and everything it started
    are stopped."""
    import time

    from lessonkit.grade.channel.child_handle import ChildHandle
    from lessonkit.run.isolation import Isolation
    from lessonkit.run.limits import DEFAULT_LIMITS

    isolation, limits = Isolation(sandbox), limits or DEFAULT_LIMITS
    starter = session_starter(isolation, limits)
    child = ChildHandle(trusted=False, isolation=isolation, limits=limits, starter=starter)
    request = one_cell_request(source, budget, cpu_seconds)
    try:
        child.send(request)
        record = child.collect(request, time.monotonic() + budget + 10, timeout=budget)
        if while_alive is not None:
            while_alive(child)
    finally:
        child.close()
    return record


def grade_shared(
    tmp_path_factory: pytest.TempPathFactory,
    key: str,
    lesson: Lesson,
    files: dict[str, str | bytes],
    timeout: float = 20.0,
    jobs: int = 2,
) -> dict[str, dict]:
    """`--json` reports of many files graded in one batch, once per session.

    Under pytest-xdist every worker asks for the same batch; the first one grades it and
    writes the reports where the others wait for them, so no batch is graded twice.
    """
    import json
    import time

    from lessonkit.grade import grade_many
    from lessonkit.grade.batches.folder import read_items
    from lessonkit.run.isolation import Isolation
    from lessonkit.run.limits import Limits
    from lessonkit.run.sandbox import find_sandbox
    from lessonkit.settings import compile_cache_from, settings_around

    shared = shared_temp(tmp_path_factory)
    result, lock = shared / f"{key}.json", shared / f"{key}.lock"
    try:
        os.close(os.open(lock, os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        deadline = time.monotonic() + 600
        while not result.exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"batch {key} was not graded by another worker") from None
            time.sleep(0.2)
        data = json.loads(result.read_text(encoding="utf-8"))
        if "error" in data:
            pytest.fail(f"grading batch {key} failed in another worker: {data['error']}")
        return data
    folder = shared / key
    folder.mkdir()
    paths = []
    for name, content in files.items():
        path = folder / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        paths.append(path)
    try:
        # As `check --batch` grades: sandboxed, the learner children reading the compile
        # cache the trusted reference writes.
        isolation = Isolation(find_sandbox()[0], cache=compile_cache_from(os.environ))
        settings = settings_around(os.environ, isolation, limits=Limits(timeout=timeout))
        entries = grade_many(lesson, read_items(paths), jobs=jobs, settings=settings)
        data = {e.path.name: e.report.to_json() for e in entries}
    except BaseException as exc:
        (shared / f"{key}.tmp").write_text(json.dumps({"error": repr(exc)}), encoding="utf-8")
        os.replace(shared / f"{key}.tmp", result)
        raise
    (shared / f"{key}.tmp").write_text(json.dumps(data), encoding="utf-8")
    os.replace(shared / f"{key}.tmp", result)
    return data


# Lists of attempts at a lesson's tasks, graded in one batch by `grade_shared`:
Wrong = tuple[str, str, str, str]  # (file name, task id, task cell body, message regex)
Right = tuple[str, str, str]  # (file name, task id, task cell body)


def attempt_files(
    lesson: Lesson, wrong: list[Wrong], right: list[Right], *, unsolved: tuple[str, ...]
) -> dict[str, str]:
    """`NAME.py` per attempt (its task replaced, every other task solved), `solved.py` (the
    reference solutions) and `unsolved.py` (the scaffolds of `unsolved` left as they are)."""
    attempts = [(name, task, body) for name, task, body, _ in wrong] + list(right)
    files = {f"{name}.py": make_attempt(lesson, {task: body}) for name, task, body in attempts}
    files["solved.py"] = make_attempt(lesson)
    files["unsolved.py"] = make_attempt(lesson, unsolved=unsolved)
    return files


def task_result(report: dict, task_id: str) -> dict:
    """One task's entry in a `--json` report."""
    return next(t for t in report["tasks"] if t["id"] == task_id)


def check_wrong_attempt(report: dict, lesson: Lesson, task: str, pattern: str) -> None:
    """The attempt fails at `task` with a message matching `pattern` and that task's hint
    where it fits, while every other task, solved, still passes."""
    import re

    result = task_result(report, task)
    assert result["status"] in ("failed", "error"), result
    from lessonkit.grade.judging.hints import hint_applies
    from lessonkit.grade.judging.mistake_text import check_message
    from lessonkit.grade.judging.results import GradeReport

    verdict = next(t for t in GradeReport.from_json(report).tasks if t.id == task)
    found = check_message(verdict, lesson.grading.attempts)  # after a named mistake's words
    assert re.search(pattern, found, re.S), result["message"]
    given = lesson.task(task)  # the hint only where it fits the failure (its `:for:`)
    fits = hint_applies(given, result["status"], result["check"], result.get("mistake"))
    assert result["hint"] == (" ".join(given.hint.split()) if fits else None), result
    assert report["passed"] is False
    others = [t for t in report["tasks"] if t["id"] != task]
    assert all(t["status"] == "passed" for t in others), others


def check_right_attempt(report: dict, task: str) -> None:
    """A differently written right answer passes, and so does the whole file."""
    assert task_result(report, task)["status"] == "passed", task_result(report, task)
    assert report["passed"] is True


def check_coverage(tasks: tuple[str, ...], wrong: list[Wrong], right: list[Right]) -> None:
    """Every task has at least four wrong attempts and two other right answers."""
    for task in tasks:
        assert sum(t == task for _, t, _, _ in wrong) >= 4, task
        assert sum(t == task for _, t, _ in right) >= 2, task


def notebook_pair(lesson: Lesson, notebook: Path):
    """The practice notebook read twice: as given (scaffolds), and with every task solved."""
    import nbformat

    scaffolded = nbformat.read(notebook, as_version=4)
    solved = nbformat.read(notebook, as_version=4)
    for cell in solved.cells:
        for task in lesson.tasks:
            if f"task:{task.id}" in cell.metadata.get("tags", []):
                cell.source = task.solution
    return scaffolded, solved


def shared_temp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's temporary folder that every pytest-xdist worker shares."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def solved_notebook_output(lesson: Lesson, notebook: Path, tmp_path: Path) -> str:
    """Run the lesson's practice notebook twice, as given and with every task cell solved.

    Asserts that the solved notebook raises nothing and that the given one stops only at
    each required task's todo(...); returns the solved run's printed text.
    """
    from nbclient import NotebookClient

    scaffolded, solved = notebook_pair(lesson, notebook)
    for run in (scaffolded, solved):
        NotebookClient(
            run,
            timeout=120,
            kernel_name="python3",
            allow_errors=True,
            resources={"metadata": {"path": str(tmp_path)}},
        ).execute(env={**os.environ, "JAX_PLATFORMS": "cpu"})

    def errors(cell) -> list[str]:
        return [
            f"{o.ename}: {o.evalue}" for o in cell.get("outputs", []) if o.output_type == "error"
        ]

    code = [c for c in solved.cells if c.cell_type == "code"]
    assert [e for c in code for e in errors(c)] == []
    for cell in scaffolded.cells:
        if cell.cell_type == "code":
            found = errors(cell)
            tags = cell.metadata.get("tags", [])
            if any(f"task:{t.id}" in tags for t in lesson.optional_tasks):
                assert found == []  # an optional task's cell ends quietly at its todo(...)
            elif "task" in tags:
                assert len(found) == 1 and found[0].startswith("NotImplementedError: TODO: ")
            else:
                assert found == [], (cell.source[:60], found)
    return "".join(o.get("text", "") for c in code for o in c.outputs)
