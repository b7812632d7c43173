"""Every item kind of the model has one entry in `ITEM_KINDS`, and an item without one stops
both renderings: a new block kind never vanishes from the page or the notebook unseen."""

from __future__ import annotations

import dataclasses
from typing import get_args, get_type_hints

import pytest

from lessonkit.lesson.blocks import ROLES, RawBlock
from lessonkit.lesson.item_kinds import ITEM_KINDS, item_kind
from lessonkit.lesson.layout import lesson_cells
from lessonkit.lesson.model import DeclaredAttempt, Item, Lesson
from lessonkit.render.blocks import section_blocks
from lessonkit.render.page import TEMPLATES

ITEM_CLASSES = set(get_args(Item))


@dataclasses.dataclass(frozen=True)
class Stray:
    """An item of a kind the table does not know."""

    line: int = 1


def _with_stray(lesson: Lesson) -> Lesson:
    """The lesson with a `Stray` item at the end of its first section."""
    part, *parts = lesson.parts
    section, *sections = part.sections
    section = dataclasses.replace(section, items=(*section.items, Stray()))
    part = dataclasses.replace(part, sections=(section, *sections))
    return dataclasses.replace(lesson, parts=(part, *parts))


@pytest.mark.parametrize("kind", sorted(ITEM_CLASSES, key=lambda k: k.__name__))
def test_every_model_item_class_has_an_entry(kind):
    assert kind in ITEM_KINDS, f"{kind.__name__} has no entry in lesson/item_kinds.py ITEM_KINDS"


def test_the_table_has_only_model_item_classes():
    assert set(ITEM_KINDS) == ITEM_CLASSES


@pytest.mark.parametrize("role", sorted(ROLES))
def test_every_block_role_builds_an_item_of_the_model(role):
    """A block kind whose builder returns a class `Item` lacks is caught here too. Task parts
    stay raw (joined into their task) and an `{attempt}` joins the `{grading}` item."""
    built = get_type_hints(ROLES[role].build)["return"]
    assert set(get_args(built) or (built,)) - {RawBlock, DeclaredAttempt} <= ITEM_CLASSES


@pytest.mark.parametrize("kind", sorted(ITEM_CLASSES, key=lambda k: k.__name__))
def test_every_template_named_exists(kind):
    template = ITEM_KINDS[kind].template
    assert template is None or (TEMPLATES / template).is_file()


def test_an_item_of_an_unknown_kind_is_refused_by_name():
    with pytest.raises(TypeError, match=r"^Stray has no entry in lesson/item_kinds\.py"):
        item_kind(Stray())  # type: ignore[arg-type]


def test_neither_rendering_drops_an_unknown_item(lesson):
    stray = _with_stray(lesson)
    with pytest.raises(TypeError, match=r"^Stray has no entry"):
        lesson_cells(stray)
    with pytest.raises(TypeError, match=r"^Stray has no entry"):
        section_blocks(stray)


def test_a_section_of_known_items_renders(lesson):
    """The refusal above is for the stray item alone: the same lesson without it renders."""
    assert lesson_cells(lesson) and section_blocks(lesson)
