"""Evidence: the template from the lesson, and reports filled from a learner's own run."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from lessonkit.evidence.report import verdicts_section
from lessonkit.evidence.template import render_template
from lessonkit.grade import GradeReport, TaskResult

from conftest import LESSON_DIR, invoke

PARTS = ("**Prediction**", "**Modified code**", "**Observed results**", "**Reasoning**")


@dataclass(frozen=True)
class Written:
    code: int
    out: str
    err: str
    folder: Path
    report: str
    kept: str  # what the learner's own file at the colliding name holds afterwards
    started: tuple[str, ...]  # the command line of every child process started


def _notebook_with_solutions(lesson, task_ids: set[str]) -> str:
    """The practice notebook with these tasks' scaffolds replaced by their reference solutions."""
    notebook = nbformat.read(LESSON_DIR / "exercises" / "state-02.ipynb", as_version=4)
    for task in lesson.tasks:
        if task.id in task_ids:
            (cell,) = [c for c in notebook.cells if f"# TASK {task.id}" in c.source]
            assert task.scaffold in cell.source
            cell.source = cell.source.replace(task.scaffold, task.solution)
    return nbformat.writes(notebook)


@pytest.fixture(scope="module")
def written(tmp_path_factory, lesson) -> Written:
    """One evidence run (the grader's children) on a notebook where `repair` is not attempted."""
    cwd = tmp_path_factory.mktemp("evidence")
    content = _notebook_with_solutions(lesson, {"make-it-yours", "nested-model"})
    (cwd / "mine.ipynb").write_text(content, encoding="utf-8")
    folder = cwd / "evidence"
    folder.mkdir()
    mine = folder / "state-02-fixed.md"
    mine.write_text("my own notes\n", encoding="utf-8")
    started: list[str] = []

    class Recorded(subprocess.Popen):
        def __init__(self, args, *rest, **options):
            started.append(" ".join(map(str, args)))
            super().__init__(args, *rest, **options)

    with pytest.MonkeyPatch.context() as patch:
        # The report's name would be this one: it must not replace the learner's file.
        patch.setattr("lessonkit.commands.evidence.report_stem", lambda *_: "state-02-fixed")
        patch.setattr(subprocess, "Popen", Recorded)
        code, out, err = invoke(["evidence", "state-02", "mine.ipynb"], cwd=cwd)
    report = folder / "state-02-fixed-2.md"
    text = report.read_text(encoding="utf-8") if report.is_file() else ""
    kept = mine.read_text(encoding="utf-8")
    return Written(code, out, err, folder, text, kept, tuple(started))


def test_the_template_has_every_item_with_its_four_parts(any_lesson):
    lesson = any_lesson
    template = render_template(lesson)
    headings = re.findall(r"^## (\d+)\. (.+)$", template, flags=re.MULTILINE)
    assert lesson.evidence
    assert headings == [(str(n), item.title) for n, item in enumerate(lesson.evidence, 1)]
    for part in PARTS:
        assert template.count(part) == len(lesson.evidence)


def test_the_committed_template_is_this_rendering(repo_lesson):
    committed = repo_lesson.directory / "outputs" / "evidence-template.md"
    assert committed.read_text(encoding="utf-8") == render_template(repo_lesson)


def test_evidence_never_overwrites(written):
    assert written.code == 0, written.out + written.err
    assert written.kept == "my own notes\n"
    assert sorted(p.name for p in written.folder.iterdir()) == [
        "state-02-fixed-2.md",
        "state-02-fixed.md",
    ]
    assert "wrote evidence/state-02-fixed-2.md" in written.out


def test_a_report_is_filled_from_the_learners_run(written, lesson):
    report = written.report
    assert "params\n├── weight: float32[2]\n└── bias: float32[]" in report
    assert "grads\n├── bias: float32[]\n└── weight: float32[2]" in report
    assert f"{len(lesson.numbers)} of {len(lesson.numbers)} values agree" in report
    assert "| updated_weight | [1.4, -0.8] | [1.4, -0.8] | yes |" in report
    assert "Tree definition: `PyTreeDef({'bias': *, 'weight': *})`" in report
    assert '`g["scale"]` in your run: -4.0' in report
    assert "`scale_by_hand` in your run: -4.0 (the lesson's hand derivation" in report
    assert "g\n├── layer\n│   ├── bias: float32[]" in report
    assert "your task cell (cell " in report
    assert "Python 3." in report and "1 CPU device" in report
    assert "## Grader's verdicts" in report


def test_predictions_and_reasoning_are_left_to_the_learner(written, lesson):
    assert written.report.count("_(write yours here)_") >= 2 * len(lesson.evidence)
    for part in PARTS:
        assert written.report.count(part) == len(lesson.evidence)


def test_no_code_block_is_left_empty(written, lesson):
    """Items that are not task cells said "Modified code" over an empty block."""
    report = written.report
    assert not re.search(r"```python\n\s*```", report)
    without_task = [i for i in lesson.evidence if not i.task]
    assert without_task
    assert report.count("this item is not a task cell") == len(without_task)


def test_an_unattempted_task_says_so(written):
    assert "Task *Repair a mismatched update tree*: not attempted: todo(...)" in written.report
    assert "2 not attempted" in written.report  # repair, and the optional adam-by-hand
    assert "`loss(fixed)`: nothing to show: your run reported no value" in written.report


def test_a_missing_file_is_one_clear_message(tmp_path):
    code, _, err = invoke(["evidence", "state-02", "nowhere.py"], cwd=tmp_path)
    assert code == 2
    assert "nowhere.py: no such file" in err
    assert not (tmp_path / "evidence").exists()


def test_the_graders_verdicts_become_a_table():
    report = GradeReport(
        "state-02",
        "mine.py",
        (
            TaskResult("make-it-yours", "Make it yours", "passed", ""),
            TaskResult(
                "repair", "Repair a mismatched update tree", "failed", "fixed['bias'] | differs"
            ),
        ),
        (),
        2.5,
    )
    table = verdicts_section(report)
    assert table.startswith("Overall: not every task has passed yet.")
    # The learner's message is escaped for a table cell: no link or pipe of it is markup.
    assert "| Repair a mismatched update tree | failed | fixed\\['bias'\\] \\| differs |" in table


def test_evidence_runs_learner_code_only_in_the_graders_children(written):
    """One runner: no child of evidence's own, no `lessonkit check --json` shelled out."""
    assert written.started, "the grader's children were not seen"
    programs = ("lessonkit/grading_child/main.py", "lessonkit/run/starter_main.py")  # the grader's
    workers = [a for a in written.started if any(p in a for p in programs)]
    others = [a for a in written.started if "-m lessonkit" in a]
    assert workers and not others, "\n".join(others)
    assert "Your file ran once, in the grader's child process" in written.report


def test_without_file_the_report_is_of_the_practice_copy_start_made(tmp_path):
    from conftest import copy_lesson_repo

    root = tmp_path / "repo"
    copy_lesson_repo(root)
    code, _, err = invoke(["start", "state-02", str(tmp_path / "mine")], root=root, cwd=root)
    assert code == 0, err
    code, out, err = invoke(["evidence", "state-02"], root=root, cwd=root)
    assert code == 0, out + err
    assert "your practice copy" in err
    (report,) = (root / "evidence").iterdir()
    text = report.read_text(encoding="utf-8")
    assert "mine/state-02.py" in text
    assert "02-pytrees-and-structured-parameters/exercises" not in text


def test_reported_key_arrays_come_back_as_the_same_keys():
    """A typed PRNG key the learner's run reported is data: evidence can show and use it."""
    import jax
    import numpy as np

    from lessonkit.evidence.observe import NotData, live
    from lessonkit.grade.channel.reported import KeyArray, parse_value
    from lessonkit.grading_child.encoder import Encoder

    encoder = Encoder(np, jax)
    for original in (jax.random.split(jax.random.key(3), 2), jax.random.key(0, impl="rbg")):
        back = live(parse_value(encoder.encode(original)))
        assert back.dtype == original.dtype and back.shape == original.shape
        assert np.array_equal(jax.random.key_data(back), jax.random.key_data(original))
    tree = live(
        parse_value(encoder.encode({"bias": jax.random.key(1), "weight": jax.random.key(2)}))
    )
    assert jax.tree.structure(tree) == jax.tree.structure({"bias": 0, "weight": 0})
    with pytest.raises(NotData, match="key<nosuch>"):
        live(KeyArray("nosuch", "key", (), (0, 0)))


def test_a_dict_of_arrays_reads_like_an_array_does():
    """Evidence shows arrays as plain numbers, whether they stand alone or sit in a dict."""
    import jax.numpy as jnp

    from lessonkit.evidence.observe import _plain

    assert _plain(jnp.array([1.5, 2.0])) == [1.5, 2.0]
    state = {"position": jnp.array(34.5), "velocity": (jnp.array(1.0), 2)}
    assert _plain(state) == {"position": 34.5, "velocity": [1.0, 2]}
