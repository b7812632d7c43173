"""docs/authoring.md documents every block role and option, and its example is the skeleton."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
import yaml

from lessonkit.lesson.blocks import OLD_NAMES, ROLES, raw_block
from lessonkit.lesson.grading_block import GENERATORS, parse_grading
from lessonkit.lesson.load import parse_lesson
from lessonkit.lesson.model import Phase
from lessonkit.lesson.new_lesson import skeleton

from conftest import REPO

GUIDE = (REPO / "docs" / "authoring.md").read_text(encoding="utf-8")


def _role_rows() -> dict[str, str]:
    table = GUIDE.split("## Block roles", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([\w-]+)` \|(.*)$", table, flags=re.MULTILINE)
    return dict(rows)


@pytest.mark.parametrize("role", sorted(ROLES))
def test_every_role_and_option_is_documented(role):
    rows = _role_rows()
    assert role in rows, f"docs/authoring.md has no row for {{{role}}}"
    for option in sorted(ROLES[role].options):
        assert f"`{option}:`" in rows[role], f"{{{role}}} option :{option}: is not documented"


def test_the_guides_example_is_the_skeleton_and_loads():
    example = GUIDE.split("`````markdown\n", 1)[1].split("\n`````", 1)[0] + "\n"
    phase = Phase("04", "Phase 04", "Phase study guide", ("loops-01",))
    written = skeleton("loops-01", "Loops 01", "04", dt.date(2026, 1, 1))
    prose = re.compile(r"^# Understand\n\n\(idea\)=\n## The idea\n\n.*?\n\n\(", re.S | re.M)
    assert prose.sub("", example) == prose.sub("", written)
    lesson = parse_lesson(example, Path("lesson.md"), phase)
    assert lesson.meta.id == "loops-01" and lesson.evidence and lesson.grading


@pytest.mark.parametrize("kind", sorted(GENERATORS))
def test_every_input_generator_is_documented(kind):
    grading = GUIDE.split("## Grading", 1)[1].split("\n## ", 1)[0]
    assert f"| `{{{kind}: " in grading, f"docs/authoring.md has no row for {{{kind}: ...}}"


def test_the_guides_grading_example_loads():
    grading = GUIDE.split("## Grading", 1)[1].split("\n## ", 1)[0]
    body = grading.split("```yaml\n", 1)[1].split("\n```", 1)[0] + "\n"

    def error(message: str, line: int) -> ValueError:
        return ValueError(f"{line}: {message}")

    parsed = parse_grading(yaml.safe_load(body), body, 1, "authoring.md", error)
    kinds = {type(spec).__name__.lower() for _, spec in parsed.inputs}
    assert kinds == set(GENERATORS)
    fence = grading.split("```{attempt}", 1)[1].split("\n```", 1)[0] + "\n"
    info, content = fence.split("\n", 1)
    block = raw_block("{attempt}" + info, content, 1, "authoring.md")
    attempt = ROLES["attempt"].build(block)
    assert (attempt.task, attempt.expect, attempt.code) == ("total", "failed", "total = 96.\n")


@pytest.mark.parametrize("old", sorted(OLD_NAMES))
def test_a_block_is_called_by_one_name(old):
    """Issue 52: the guide called the figure block `{figure}` in two tables and
    `{figure-data}` in a third. A role's old name appears only beside its name of today."""
    guides = [p.read_text(encoding="utf-8") for p in sorted((REPO / "docs").glob("*.md"))]
    paragraphs = [p for text in guides for p in text.split("\n\n") if f"`{{{old}}}`" in p]
    for paragraph in paragraphs:
        assert f"`{{{old}}}` for `{{{OLD_NAMES[old]}}}`" in paragraph, paragraph
