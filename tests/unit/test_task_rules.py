"""The per-task rules of {grading} are one ordered list (`lesson.rules.RULES`, one module
each): every other list of them, the package's modules, the grader's checks, the rubric, the
words a report uses and the authoring guide, is kept equal to it here, so a new rule cannot
be written and then left unlisted, or read and then left unchecked."""

from __future__ import annotations

import pkgutil
import re

import pytest
import yaml

from lessonkit.grade.judging.checks import RULE_CHECKS, TASK_CHECKS
from lessonkit.grade.judging.results import CHECK_WORDS, CHECKS
from lessonkit.grade.preparation.rubric import rubric_for
from lessonkit.lesson import rules
from lessonkit.lesson.grading_block import parse_grading
from lessonkit.lesson.load import load_lesson
from lessonkit.lesson.rules import RULES, rule_named

from conftest import LESSON_MD, REPO

TASK_RULES = {rule.key: rule for rule in RULES}


def test_the_checks_are_keyed_by_the_rules_names():
    assert set(RULE_CHECKS) == set(TASK_RULES)


@pytest.mark.parametrize("rule", sorted(TASK_RULES))
def test_every_rule_is_applied_by_checks_the_grader_runs_and_a_report_words(rule):
    run = [name for name, _ in TASK_CHECKS]
    assert RULE_CHECKS[rule], f"no check applies the {rule!r} rule"
    for check in RULE_CHECKS[rule]:
        assert check in run and check in CHECKS and CHECK_WORDS[check]
    if rule in CHECKS:  # a rule with a check of its own gives it its name
        assert rule in RULE_CHECKS[rule]


def test_the_rubric_gives_each_rule_as_the_lesson_declares_it():
    """`rubric_for` fills each task's rules by their keys; a rule not given is its default."""
    lesson = load_lesson(LESSON_MD)
    grading = lesson.grading
    assert grading is not None and grading.rules
    for rubric in rubric_for(lesson, grading):
        given = grading.rules_for(rubric.task.id)
        for kind in RULES:
            assert rubric.rule(kind) == given.get(kind.key, kind.default)


def test_each_rule_is_found_by_its_key():
    assert [rule_named(rule.key) for rule in RULES] == list(RULES)


def test_the_rules_checks_run_in_their_order_between_attempted_and_the_values():
    """A task that breaks two rules gets the first one's verdict, as before the rules were
    modules: the method before jit, both before any value check."""
    run = [name for name, _ in TASK_CHECKS]
    assert run[: run.index("lesson inputs")] == ["cell", "attempted", "method", "jit"]


def listed_modules(package_path: list[str], listed: tuple[rules.RuleKind, ...]) -> list[str]:
    """The modules of the rules package that `listed` leaves out, and the rules listed that
    no module of it defines (`module: ...`)."""
    defined = {m.name for m in pkgutil.iter_modules(package_path)} - {"base"}
    homes = [kind.read.__module__.rpartition(".")[2] for kind in listed]
    return sorted(defined - set(homes)) + [
        f"{home}: not here" for home in homes if home not in defined
    ]


def test_every_rule_module_is_in_the_one_ordered_list_once():
    assert listed_modules(rules.__path__, RULES) == []
    assert len({kind.key for kind in RULES}) == len(RULES)


def test_a_rule_module_left_out_of_the_list_is_found(tmp_path):
    (tmp_path / "base.py").write_text("")
    for name in ("accept", "method", "jit", "shape"):
        (tmp_path / f"{name}.py").write_text("")
    assert listed_modules([str(tmp_path)], RULES) == ["shape"]
    assert listed_modules([str(tmp_path)], RULES[:2]) == ["jit", "shape"]


@pytest.mark.parametrize("rule", sorted(TASK_RULES))
def test_every_rule_is_read_by_the_one_loop_with_its_errors_at_its_line(rule):
    body = f"inputs:\n  x: {{uniform: [0, 1]}}\n{rule}: [1]\n"

    def error(message: str, line: int) -> ValueError:
        return ValueError(f"{line}: {message}")

    with pytest.raises(ValueError) as raised:
        parse_grading(yaml.safe_load(body), body, 10, "lesson.md", error)
    shape = re.escape(TASK_RULES[rule].shape)
    assert re.fullmatch(rf"13: '{rule}' must map task ids to {shape}", str(raised.value))
    body = f"inputs:\n  x: {{uniform: [0, 1]}}\n{rule}:\n  some-task: 7\n"
    with pytest.raises(ValueError, match=rf"^14: {rule} 'some-task': "):
        parse_grading(yaml.safe_load(body), body, 10, "lesson.md", error)


@pytest.mark.parametrize("rule", sorted(TASK_RULES))
def test_every_rule_is_documented(rule):
    guide = (REPO / "docs" / "authoring.md").read_text(encoding="utf-8")
    grading = guide.split("## Grading", 1)[1].split("\n## ", 1)[0]
    assert f"- **{rule}** (optional): `task-id: " in grading, f"docs/authoring.md lacks {rule}"
