"""`lessonkit new`: a skeleton lesson that builds, runs, grades and verifies as it is."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from lessonkit.lesson.load import load_lesson

from conftest import REPO, invoke


@dataclass(frozen=True)
class Made:
    root: Path
    code: int
    text: str


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Made:
    root = tmp_path_factory.mktemp("new-lesson")
    (root / "phases").mkdir()
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    code, out, err = invoke(["new", "loops-01", "--phase", "04"], root=root, cwd=root)
    return Made(root, code, out + err)


def test_new_writes_a_lesson_with_its_first_record_and_site(made):
    assert made.code == 0, made.text
    folder = made.root / "phases" / "04-phase-04" / "01-loops-01"
    lesson = load_lesson(folder / "lesson.md")
    assert lesson.meta.id == "loops-01" and lesson.meta.phase.number == "04"
    assert (folder / "outputs" / "execution.json").is_file()
    assert (made.root / "build" / "site" / "loops-01" / "index.html").is_file()
    code, out, err = invoke(["verify"], root=made.root, cwd=made.root)
    assert code == 0, out + err


def test_the_skeleton_grades_right_and_wrong_answers(made, tmp_path):
    practice = made.root / "phases" / "04-phase-04" / "01-loops-01" / "exercises" / "loops-01.py"
    scaffold = practice.read_text(encoding="utf-8")
    placeholder = 'total = todo("total: the sum of every number in scaled")'
    assert placeholder in scaffold
    answers = {
        "right": "total = sum(jnp.sum(leaf) for leaf in jax.tree.leaves(scaled))",
        "hard-coded": "total = jnp.array(12.0)",
    }
    statuses = {}
    for name, answer in answers.items():
        path = tmp_path / f"{name}.py"
        path.write_text(scaffold.replace(placeholder, answer), encoding="utf-8")
        _, out, _ = invoke(["check", "loops-01", str(path), "--json"], root=made.root)
        statuses[name] = [t["status"] for t in json.loads(out)["tasks"]]
    assert statuses == {"right": ["passed"], "hard-coded": ["failed"]}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["new", "Loops", "--phase", "04"], "is not lowercase words and digits"),
        (["new", "loops-02", "--phase", "4"], "--phase '4' is not two digits"),
        (["new", "loops-01", "--phase", "05"], "lesson 'loops-01' exists already"),
    ],
)
def test_new_refuses_a_bad_or_taken_id(made, argv, message):
    code, _, err = invoke(argv, root=made.root, cwd=made.root)
    assert code == 2 and message in err
    assert not (made.root / "phases" / "05-phase-05").exists()


def _files(root: Path) -> dict[str, bytes]:
    """Every file of the course but the site and the run caches: what a command changed."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and p.relative_to(root).parts[0] not in ("build", "runs")
    }


def _changed(before: dict[str, bytes], after: dict[str, bytes]) -> set[str]:
    return {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}


def _copy(made: Made, root: Path) -> Path:
    shutil.copytree(made.root, root, ignore=shutil.ignore_patterns("build", "runs"))
    return root / "phases" / "04-phase-04"


def test_new_adds_a_lesson_after_the_last_touching_only_it_and_phase_yaml(made, tmp_path):
    """A phase with no place kept (`~`) grows by one; no other lesson.md is edited, and only
    the older lessons' generated files that say "lesson 1 of N" are renewed."""
    phase = _copy(made, tmp_path / "repo")
    before = _files(tmp_path / "repo")
    code, out, err = invoke(
        ["new", "loops-02", "--phase", "04"], root=phase.parents[1], cwd=phase.parents[1]
    )
    assert code == 0, out + err
    changed = _changed(before, _files(tmp_path / "repo"))
    # issue 52: `new` said it wrote two files and renewed twelve of the other lesson unsaid
    unsaid = sorted(name for name in changed if name not in out)
    assert not unsaid, out
    assert any(n.startswith("phases/04-phase-04/01-loops-01/") for n in changed)
    sources = {n for n in changed if not n.startswith("phases/04-phase-04/01-loops-01/")}
    assert {n for n in sources if not n.startswith("phases/04-phase-04/02-loops-02/")} == {
        "phases/04-phase-04/phase.yaml"
    }
    assert "phases/04-phase-04/01-loops-01/lesson.md" not in changed
    assert load_lesson(phase / "01-loops-01" / "lesson.md").meta.phase.lessons == (
        "loops-01",
        "loops-02",
    )
    code, out, err = invoke(["verify"], root=phase.parents[1], cwd=phase.parents[1])
    assert code == 0, out + err


def test_new_joins_an_existing_phase_at_its_first_free_place(made, tmp_path):
    """The new lesson takes the first `~` of phase.yaml: only its folder and phase.yaml change."""
    phase = _copy(made, tmp_path / "repo")
    root = phase.parents[1]
    listed = (phase / "phase.yaml").read_text(encoding="utf-8")
    (phase / "phase.yaml").write_text(
        listed.replace("  - loops-01\n", "  - loops-01\n  - ~\n  - ~\n")
    )
    invoke(["build"], root=root, cwd=root)  # the phase of three lessons, before the new one
    before = _files(root)
    argv = ["new", "loops-02", "--phase", "04", "--title", "Loops: the sequel"]
    code, out, err = invoke(argv, root=root, cwd=root)
    assert code == 0, out + err
    changed = _changed(before, _files(root))
    new = {n for n in changed if n.startswith("phases/04-phase-04/02-loops-02/")}
    assert new and changed - new == {"phases/04-phase-04/phase.yaml"}
    lesson = load_lesson(root / "phases" / "04-phase-04" / "02-loops-02" / "lesson.md")
    assert lesson.meta.phase.lessons == ("loops-01", "loops-02", None)
    assert lesson.meta.title == "Loops: the sequel"
    assert (lesson.meta.lesson_number, len(lesson.meta.phase.lessons)) == (2, 3)
    page = (root / "build" / "site" / "loops-02" / "index.html").read_text(encoding="utf-8")
    assert 'rel="prev">Loops 01</a>' in page
    assert "Lesson 3 of Phase 04, coming later" in page
    code, out, err = invoke(["verify"], root=root, cwd=root)
    assert code == 0, out + err


def test_the_documented_order_after_a_code_change_works_as_written(made, tmp_path):
    """Issue 52: after a code change, docs/authoring.md says `lessonkit build`, then
    `lessonkit run ID --script all --record`, then `lessonkit build` again; the first build
    exited 2 ("records are not current") naming `lessonkit run ID --record`, and the record
    showed a red "✗ output differs" for the change the author meant."""
    phase = _copy(made, tmp_path / "repo")
    root = phase.parents[1]
    lesson_md = phase / "01-loops-01" / "lesson.md"
    solution = 'total = sum(jnp.sum(leaf) for leaf in jax.tree.leaves(scaled))\nprint("Total:"'
    text = lesson_md.read_text(encoding="utf-8")
    assert text.count(solution) == 1
    lesson_md.write_text(text.replace(solution, solution.replace('"Total:"', '"Sum:"')), "utf-8")
    guide = (REPO / "docs" / "authoring.md").read_text(encoding="utf-8")
    documented = "`lessonkit build`, then `lessonkit run ID --script all --record`, then "
    assert documented + "`lessonkit build` again" in guide

    code, out, err = invoke(["build"], root=root, cwd=root)
    assert code == 0, err
    assert "wrote phases/04-phase-04/01-loops-01/code/main.py" in out
    assert "next: run `lessonkit run loops-01 --script all --record`" in out, out
    code, out, err = invoke(["run", "loops-01", "--script", "all", "--record"], root=root)
    assert code == 0, out + err
    assert "✗" not in out and "what this run changes in the record" in out, out
    assert "recorded:  Total: 12.0\n  this run:  Sum: 12.0" in out
    code, out, err = invoke(["build"], root=root, cwd=root)
    assert code == 0 and "site: wrote build/site" in out, out + err

    text = lesson_md.read_text(encoding="utf-8")
    lesson_md.write_text(text.replace('print("Sum:"', 'print("Sum of leaves:"', 1), "utf-8")
    code, out, err = invoke(["build", "loops-01", "--record"], root=root, cwd=root)
    assert code == 0 and "site: wrote build/site" in out, out + err
    assert "recording loops-01: lessonkit run loops-01 --script all --record" in out
    assert "run `lessonkit build" not in out, "build --record builds next: no advice to"
