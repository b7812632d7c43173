"""The per-task rules of {grading} are one table (`TASK_RULES`): every other list of them,
the grader's checks, the rubric's fields, the words a report uses and the authoring guide,
is kept equal to it here, so a new rule cannot be read and then left unchecked."""

from __future__ import annotations

import dataclasses
import re

import pytest
import yaml

from lessonkit.grade.judging.checks import RULE_CHECKS, TASK_CHECKS
from lessonkit.grade.judging.results import CHECK_WORDS, CHECKS
from lessonkit.grade.judging.rubric import TaskRubric
from lessonkit.lesson.grading_block import parse_grading
from lessonkit.lesson.task_rules import TASK_RULES

from conftest import REPO


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


def test_the_rubric_has_a_field_for_each_rule():
    """`rubric_for` fills these fields by the rules' names."""
    fields = {f.name for f in dataclasses.fields(TaskRubric)} - {"task", "names", "probes"}
    assert fields == set(TASK_RULES)


@pytest.mark.parametrize("rule", sorted(TASK_RULES))
def test_a_rule_that_checks_the_solution_says_what_to_do(rule):
    kind = TASK_RULES[rule]
    assert kind.gap is None or kind.fix


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
