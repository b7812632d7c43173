"""MyST tools read lesson.md as it is: jupytext makes a notebook of it, and mystmd (Jupyter Book
2) builds every lesson as a book with lessonkit's plugin (`myst/lessonkit.mjs`, mystmd pinned
in `myst/package.json`), with no error or warning and no answer shown uncollapsed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lessonkit.lesson.blocks import MYST_OPTIONS, ROLES
from lessonkit.lesson.catalog import lesson_paths
from lessonkit.lesson.load import load_lesson
from lessonkit.lesson.model import Experiment, Step

from conftest import REPO

LESSONS = lesson_paths(REPO)
MYST = REPO / "myst" / "node_modules" / ".bin" / "myst"
MYST_OWN = {"math", "solution", "hint"}  # MyST's own directives, which the plugin leaves alone


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.parent.name)
def test_jupytext_reads_steps_and_experiments_as_code_cells(path):
    """`jupytext --from md:myst` makes a notebook whose code cells are the lesson's steps and
    experiments, in order; writing it back as MyST and reading it again keeps every cell."""
    jupytext = pytest.importorskip("jupytext")
    lesson = load_lesson(path)
    notebook = jupytext.reads(path.read_text(encoding="utf-8"), fmt="md:myst")
    code = [c.source for c in notebook.cells if c.cell_type == "code"]
    kinds = (Step, Experiment)
    items = [i for p in lesson.parts for s in p.sections for i in s.items if type(i) in kinds]
    assert code == [i.code for i in items] and len(code) >= 3
    again = jupytext.reads(jupytext.writes(notebook, fmt="md:myst"), fmt="md:myst")
    cells = [(c.cell_type, c.source) for c in notebook.cells]
    assert [(c.cell_type, c.source) for c in again.cells] == cells
    assert notebook.metadata["id"] == lesson.meta.id


def test_the_plugin_renders_every_block_kind():
    plugin = (REPO / "myst" / "lessonkit.mjs").read_text(encoding="utf-8")
    named = set(re.findall(r"name: '([a-z-]+)',\n\s+doc:", plugin))
    named |= set(re.findall(r"hidden\('([a-z-]+)'", plugin))
    assert named == set(ROLES) - MYST_OWN


def _need_mystmd() -> None:
    if not MYST.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("mystmd is not installed: run `npm ci --prefix myst` (.ci/run does)")
        pytest.skip("mystmd is not installed here (`npm ci --prefix myst`)")


def test_the_plugin_knows_every_option_lessonkit_takes():
    """Issue 52: lessons gained `:why:` and `:instead:` on `{attempt}`, and mystmd warned
    102 times. Each of the plugin's directives takes exactly the options lessonkit's block
    of that name takes, and MyST's `:label:` and `:class:`."""
    _need_mystmd()
    listing = (
        "import plugin from './myst/lessonkit.mjs';"
        "console.log(JSON.stringify(Object.fromEntries(plugin.directives.map("
        "(d) => [d.name, Object.keys(d.options ?? {})]))));"
    )
    done = subprocess.run(
        ["node", "--input-type=module", "-e", listing],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    declared = {name: set(options) for name, options in json.loads(done.stdout).items()}
    assert declared == {
        role: set(ROLES[role].options) | MYST_OPTIONS for role in set(ROLES) - MYST_OWN
    }


def _book_copy(tmp_path_factory) -> Path:
    """A copy of the repository's book (myst.yml, the plugin, every lesson.md)."""
    _need_mystmd()
    root = tmp_path_factory.mktemp("book")
    shutil.copy(REPO / "myst.yml", root / "myst.yml")
    (root / "myst").mkdir()
    shutil.copy(REPO / "myst" / "lessonkit.mjs", root / "myst" / "lessonkit.mjs")
    (root / "myst" / "node_modules").symlink_to(REPO / "myst" / "node_modules")
    for path in LESSONS:
        copy = root / path.relative_to(REPO)
        copy.parent.mkdir(parents=True)
        shutil.copy(path, copy)
    return root


def _offline() -> list[str]:
    """A prefix that runs a command with no network (a new user and network namespace), or
    nothing where this machine cannot make one."""
    probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True, check=False)
    return ["unshare", "-rn"] if probe.returncode == 0 else []


@pytest.fixture(scope="module")
def myst_offline_book(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    """docs/authoring.md's offline book: Markdown exports of every lesson, no network."""
    root = _book_copy(tmp_path_factory)
    lessons = [str(p.relative_to(REPO)) for p in LESSONS]
    done = subprocess.run(
        [*_offline(), str(MYST), "build", "--md", "--force", *lessons],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_COLOR": "1"},
    )
    return done, root / "_build" / "exports"


def test_the_offline_book_has_every_lesson_with_no_download(myst_offline_book):
    done, exports = myst_offline_book
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Querying template" not in output and "Error:" not in output, output
    # Every lesson.md reads without an error or warning (issue 52: 102 went unseen here).
    # The Markdown writer's own complaints about the page it writes (index.md: "Unsupported
    # node type: exercise", under _build/exports/) are its exporter's, not the lessons'.
    said = [line for line in output.splitlines() if line.startswith(("⛔", "⚠"))]
    problems = [line for line in said if "_build/exports/" not in line]
    assert problems == [], "\n".join(problems)
    texts = [p.read_text(encoding="utf-8") for p in sorted(exports.glob("*.md"))]
    assert len(texts) == len(LESSONS), output
    for path in LESSONS:
        lesson = load_lesson(path)
        # Each section keeps its MyST target, the lesson's id in front (the plugin's).
        targets = [f"({lesson.meta.id}-{s.id})=" for part in lesson.parts for s in part.sections]
        found = [t for t in texts if all(target in t for target in targets)]
        assert len(found) == 1 and lesson.meta.title in found[0], lesson.meta.id


@pytest.fixture(scope="module")
def myst_site(tmp_path_factory) -> tuple[str, dict[str, dict]]:
    """`myst build --site` of a copy of the repository's book: its output and its pages."""
    root = _book_copy(tmp_path_factory)
    done = subprocess.run(
        [str(MYST), "build", "--site"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_COLOR": "1"},
    )
    output = done.stdout + done.stderr
    pages = {}
    for page in (root / "_build" / "site" / "content").glob("*.json"):
        data = json.loads(page.read_text(encoding="utf-8"))
        pages[data["frontmatter"]["title"]] = data["mdast"]
    return output, pages


def test_myst_builds_every_lesson_without_errors_or_warnings(myst_site):
    output, pages = myst_site
    # The site's theme is downloaded last (not reachable offline); everything before it counts.
    before_theme = output.split("Querying template metadata", 1)[0]
    assert "lessonkit (myst/lessonkit.mjs) loaded" in before_theme, output
    problems = [line for line in before_theme.splitlines() if line.startswith(("⛔", "⚠"))]
    assert problems == [], "\n".join(problems)
    assert f"Built {len(LESSONS)} pages for project" in before_theme, output
    assert sorted(pages) == sorted(load_lesson(p).meta.title for p in LESSONS)


def _nodes(node: dict, collapsed: bool = False):
    """Every node with whether it sits in a collapsed element (a dropdown, a details)."""
    yield node, collapsed
    folded = node.get("type") == "details" or "dropdown" in str(node.get("class", ""))
    for child in node.get("children") or []:
        yield from _nodes(child, collapsed or folded)


def _text(node: dict) -> str:
    return str(node.get("value", "")) + "".join(_text(c) for c in node.get("children") or [])


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.parent.name)
def test_the_book_shows_lessons_as_readers_need_them(myst_site, path):
    lesson = load_lesson(path)
    mdast = myst_site[1][lesson.meta.title]
    nodes = list(_nodes(mdast))
    shown = "\n".join(str(n.get("value", "")) for n, folded in nodes if not folded)
    everything = "\n".join(str(n.get("value", "")) for n, _ in nodes)
    for task in lesson.tasks:
        assert task.solution not in shown, f"{task.id}: the solution shows uncollapsed"
        assert task.solution in everything, f"{task.id}: the solution is missing"
        assert task.scaffold in shown, f"{task.id}: the scaffold is not shown"
    for attempt in lesson.grading.attempts:
        assert attempt.code.strip() not in everything, f"attempt {attempt.name!r} is shown"
    assert "expr:" not in everything and "input_sets:" not in everything  # {numbers}, {grading}
    for item in lesson.evidence:
        assert item.keep not in everything, f"evidence {item.title!r} is shown"
    kinds = [n["type"] for n, _ in nodes]
    assert kinds.count("exercise") == len(lesson.tasks)
    assert kinds.count("tabSet") >= 1 and "tabItem" in kinds
    codes = [n.get("value") for n, _ in nodes if n.get("type") == "code"]
    assert all(step.code in codes for step in lesson.steps)

    def words(text: str) -> str:
        return " ".join(re.findall(r"[A-Za-z0-9]+", text))

    answers = [words(_text(n)) for n, _ in nodes if n.get("type") == "details"]
    for quiz in lesson.quizzes:  # the explanation, as text, in a collapsed answer
        start = words(quiz.explanation)[:40]
        assert any(start in answer for answer in answers), quiz.id


def test_declared_attempts_pass_ruff_in_the_file_the_grader_grades(tmp_path):
    """An `{attempt}` is Python an editor highlights, and ruff lints it as the grader runs it:
    the practice script with the attempt in its task's cell (`attempt_script`)."""
    from lessonkit.grade.preparation.attempt_files import attempt_script

    count = 0
    for path in LESSONS:
        lesson = load_lesson(path)
        for number, attempt in enumerate(lesson.grading.attempts):
            script = attempt_script(lesson, {attempt.task: attempt.code})
            (tmp_path / f"{lesson.meta.id}_{number}.py").write_text(script, encoding="utf-8")
            count += 1
    assert count >= len(LESSONS)
    lint = [sys.executable, "-m", "ruff", "check", "--no-cache", "--isolated", "--select", "E9,F"]
    done = subprocess.run([*lint, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
