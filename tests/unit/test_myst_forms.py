"""lesson.md is MyST: the standard forms load, the older syntax still loads, and `migrate`
rewrites the older syntax into the MyST forms without changing the lesson."""

from __future__ import annotations

import argparse
import datetime as dt
import re
import shutil
from pathlib import Path

import pytest

from lessonkit.commands import migrate as migrate_command
from lessonkit.errors import LessonError
from lessonkit.lesson.catalog import lesson_paths
from lessonkit.lesson.load import parse_lesson
from lessonkit.lesson.migrate import _content, migrate_lesson
from lessonkit.lesson.model import Experiment, Phase, Step
from lessonkit.lesson.new_lesson import skeleton
from lessonkit.lesson.phase_file import load_phase, phase_file_of

from conftest import FIXTURE_MD, REPO

OLD = FIXTURE_MD.read_text(encoding="utf-8")  # the fixture stays in the older syntax
PHASE = load_phase(phase_file_of(FIXTURE_MD))
NEW = migrate_lesson(OLD, Path("lesson.md"), PHASE)


def _load(text: str):
    return parse_lesson(text, Path("lesson.md"), PHASE)


def _error(text: str) -> str:
    with pytest.raises(LessonError) as caught:
        _load(text)
    return str(caught.value)


def _line_of(text: str, anchor: str) -> int:
    return text[: text.index(anchor)].count("\n") + 1


def test_the_older_syntax_still_loads():
    lesson = _load(OLD)
    assert "## The idea {#idea}" in OLD and "```{figure} " in OLD and "\nattempts:\n" in OLD
    assert [s.id for p in lesson.parts for s in p.sections][:2] == ["idea", "counts"]
    assert lesson.figure.title == "Counts before and after"
    assert len(lesson.grading.attempts) == OLD.count("  - task: ")


def test_migrate_writes_the_myst_forms_and_keeps_the_lesson():
    assert "{#" not in NEW and "\nattempts:" not in NEW
    assert "(idea)=\n## The idea\n" in NEW
    assert "```{figure-data} Counts before and after" in NEW
    assert 'date: "2026-01-01"' in NEW
    assert re.search(r"^````\{solution\} twice\n:class: dropdown\n```python\n", NEW, re.M)
    assert NEW.count("```{attempt} ") == OLD.count("  - task: ")
    assert _content(_load(NEW)) == _content(_load(OLD))
    assert _load(NEW).grading.attempts[0].code == _load(OLD).grading.attempts[0].code


def test_migrate_is_idempotent():
    assert migrate_lesson(NEW, Path("lesson.md"), PHASE) == NEW


@pytest.mark.parametrize("path", lesson_paths(REPO), ids=lambda p: p.parent.name)
def test_every_lesson_is_in_the_myst_forms(path):
    text = path.read_text(encoding="utf-8")
    assert migrate_lesson(text, path) == text, f"run `lessonkit migrate {path}`"


def test_migrate_command_rewrites_and_checks(tmp_path):
    path = tmp_path / "99-fixture" / "01-tuples" / "lesson.md"
    path.parent.mkdir(parents=True)
    shutil.copy(phase_file_of(FIXTURE_MD), phase_file_of(path))
    path.write_text(OLD, encoding="utf-8")
    check = argparse.Namespace(lessons=[str(path)], check=True)
    assert migrate_command.run(check) == 1
    assert path.read_text(encoding="utf-8") == OLD
    assert migrate_command.run(argparse.Namespace(lessons=[str(path)], check=False)) == 0
    assert path.read_text(encoding="utf-8") == NEW
    assert migrate_command.run(check) == 0


def test_a_target_gives_the_section_its_id():
    lesson = _load(NEW.replace("(idea)=\n## The idea", "(the-idea)=\n## The idea", 1))
    assert lesson.parts[0].sections[0].id == "the-idea"


def test_a_target_must_stand_above_a_section_heading():
    broken = NEW.replace("(idea)=\n## The idea\n", "## The idea\n\n(idea)=\n\nSome text.\n", 1)
    text = _error(broken)
    assert text.startswith(f"lesson.md:{_line_of(broken, '(idea)=')}:"), text
    assert "must stand just above a '## ' section heading" in text


def test_a_section_with_two_ids_is_refused():
    broken = NEW.replace("## The idea\n", "## The idea {#idea}\n", 1)
    assert "the section has two ids" in _error(broken)


def test_a_target_id_is_lowercase():
    assert "use lowercase letters" in _error(NEW.replace("(idea)=", "(The_Idea)=", 1))


def test_the_date_may_be_quoted_or_not():
    assert _load(NEW).meta.date == _load(OLD).meta.date == dt.date(2026, 1, 1)
    text = _error(NEW.replace('date: "2026-01-01"', 'date: "first of January"', 1))
    assert text.startswith(f"lesson.md:{_line_of(NEW, 'date:')}: bad front matter: 'date'")


def test_label_and_class_options_are_accepted():
    marked = NEW.replace(
        "```{step} Make the state\n", "```{step} Make the state\n:label: make\n:class: wide\n", 1
    )
    assert _content(_load(marked)) == _content(_load(NEW))


def test_a_list_in_yaml_options_is_the_repeated_option():
    colon = "```{experiment} Count the leaves\n:output: Leaves: 4\n:output: Again\n"
    assert colon not in NEW
    head = re.search(r"```\{experiment\} Count the leaves\n(:.*\n)+", NEW)[0]
    options = dict(re.findall(r"^:(\w+): (.*)$", head, re.M))
    repeated = NEW.replace(head, head + ":output: one line\n:output: another line\n", 1)
    listed = NEW.replace(
        head,
        "```{experiment} Count the leaves\n---\n"
        + "".join(f"{k}: {v!r}\n" for k, v in options.items())
        + "output:\n  - one line\n  - another line\n---\n",
        1,
    )
    first, second = (_load(t).items(Experiment)[0] for t in (repeated, listed))
    assert first.output == second.output == ("one line", "another line")
    assert (first.prompt, first.expected, first.code) == (
        second.prompt,
        second.expected,
        second.code,
    )


def test_yaml_options_need_a_closing_line():
    head = "```{step} Make the state\n"
    broken = NEW.replace(head, head + "---\nintro: x\n", 1)
    text = _error(broken)
    assert "need a closing '---'" in text
    assert text.startswith(f"lesson.md:{_line_of(broken, head) + 1}:")


def test_yaml_options_give_the_body_its_line():
    head = "```{step} Make the state\n"
    step = re.search(r"```\{step\} Make the state\n((?::.*\n)+)", NEW)
    options = dict(re.findall(r"^:(\w+): (.*)$", step[1], re.M))
    yaml_head = head + "---\n" + "".join(f"{k}: {v!r}\n" for k, v in options.items()) + "---\n"
    text = NEW.replace(step[0], yaml_head, 1)
    assert _load(text).items(Step)[0].code == _load(NEW).items(Step)[0].code


def test_a_solution_names_its_own_task():
    assert "````{solution} twice\n" in NEW
    broken = NEW.replace("````{solution} twice\n", "````{solution} report-line\n", 1)
    text = _error(broken)
    assert "names task 'report-line', but it follows the {task} block of 'twice'" in text
    assert text.startswith(f"lesson.md:{_line_of(broken, '````{solution} report-line')}:")


def test_a_solution_may_hold_its_code_as_a_fenced_block():
    fenced, plain = (_load(t).task("twice").solution for t in (NEW, OLD))
    assert fenced == plain and "```" not in fenced


def test_the_old_figure_name_loads_as_figure_data():
    assert _content(_load(OLD).figure) == _content(_load(NEW).figure)


def test_an_attempt_block_is_graded_like_a_yaml_attempt():
    (attempt,) = [a for a in _load(NEW).grading.attempts if a.name == "advanced once"]
    assert (attempt.task, attempt.expect, attempt.message) == ("twice", "failed", "`twice` at `0`")
    assert attempt.line == _line_of(NEW, "```{attempt} advanced once")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (":expect: failed", ":expect: wrong", r"':expect:' must be one of passed, failed"),
        (":task: twice", ":task: thrice", r"attempt 'advanced once' names no task"),
        (":message: `twice` at `0`", ":message: (unclosed", r"not a regular expression"),
        (":task: twice\n", ":task: twice\n:points: 2\n", r"unknown option ':points:'"),
    ],
)
def test_attempt_mistakes_name_the_line(old, new, message):
    start = NEW.index("```{attempt} advanced once")
    broken = NEW[:start] + NEW[start:].replace(old, new, 1)
    text = _error(broken)
    assert re.search(message, text), text
    line = _line_of(broken, "```{attempt} advanced once")
    assert re.match(rf"lesson\.md:({line}|{line + 1}|{line + 2}|{line + 3}):", text), text


def test_an_attempt_needs_the_grading_block():
    start = NEW.index("```{grading}")
    end = NEW.index("```\n", start + 3) + 4
    text = _error(NEW[:start] + NEW[end:])
    assert "an {attempt} block needs the lesson's {grading} block" in text


def test_a_step_takes_its_code_from_the_code_cell_after_it():
    lesson = _load(NEW)
    assert "```{step} Make the state\n" in NEW and "```{code-cell} python\n" in NEW
    assert lesson.items(Step)[0].code == _load(OLD).items(Step)[0].code


def test_a_code_cell_must_follow_a_step_or_experiment():
    heading = "(evidence)=\n## Keep your evidence\n"
    broken = NEW.replace(heading, heading + "\n```{code-cell} python\nx = 1\n```\n", 1)
    text = _error(broken)
    assert "{code-cell} block: must follow a {experiment} or {step} block" in text
    assert text.startswith(
        f"lesson.md:{_line_of(broken, '```{code-cell} python' + chr(10) + 'x = 1')}:"
    )


def test_a_step_without_code_is_refused():
    head = re.search(
        r"```\{step\} Make the state\n(?:.*\n)*?```\n\n```\{code-cell\} python\n", NEW
    )[0]
    broken = NEW.replace(
        head, head.replace("```{code-cell} python\n", "Prose.\n\n```{code-cell} python\n"), 1
    )
    text = _error(broken)
    assert "{step} block: has no code" in text
    assert text.startswith(f"lesson.md:{_line_of(broken, '```{step} Make the state')}:")


def test_the_skeleton_is_in_the_myst_forms():
    phase = Phase("04", "Phase 04", "Phase study guide", ("loops-01",))
    written = skeleton("loops-01", "Loops 01", "04", dt.date(2026, 1, 1))
    assert migrate_lesson(written, Path("lesson.md"), phase) == written
