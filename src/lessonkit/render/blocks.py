"""What a lesson page shows, section by section, and what the learner's portfolio keeps.

Each item kind's entry in `lesson.item_kinds.ITEM_KINDS` names the template that shows it (or
none) and what it keeps of what the learner writes or chooses; a kept item gets a portfolio
key, unique within the page and stable across builds, under which the browser saves it
(`storage_key`). The "My learning" page reads the same keys and labels (`portfolio_fields`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lessonkit.lesson.files import GOING_FURTHER, Script, lesson_scripts
from lessonkit.lesson.item_kinds import ItemKind, item_kind
from lessonkit.lesson.model import Experiment, Lesson, RunCommand, SetupCommand, Step
from lessonkit.receipts import Receipt
from lessonkit.render.downloads import page_path

PORTFOLIO_SCHEMA = "lessonkit-portfolio"
PORTFOLIO_VERSION = 1  # one lesson: {schema, version, lesson, saved, entries}
COURSE_VERSION = 2  # every lesson: {schema, version, saved, lessons: {id: {saved, entries}}}
RECORD_SECTION = "record"  # the section that shows the recorded reference execution
EVIDENCE_SECTION = "evidence"  # the section that holds the save-work box and "My learning"


def storage_key(lesson: Lesson) -> str:
    """The localStorage key of a lesson's portfolio; export files name the same lesson id."""
    return f"lessonkit:{lesson.meta.id}"


# Blocks: one template per item kind, as ITEM_KINDS says ---------------------------------------


@dataclass(frozen=True)
class CommandGroup:
    """Consecutive setup commands (one per shell), shown as tabs with one copy button each."""

    commands: tuple[SetupCommand, ...]
    line: int


@dataclass(frozen=True)
class Block:
    """One thing the page shows inside a section: a template, its item and its portfolio key."""

    template: str
    item: Any = None
    key: str = ""


def _kind(item: Any) -> ItemKind[Any]:
    """The item's entry in ITEM_KINDS; a group of setup commands shows as setup commands do."""
    return item_kind(item.commands[0] if isinstance(item, CommandGroup) else item)


class _Keys:
    """Hands out portfolio keys that are unique within the page and stable across builds."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def claim(self, base: str) -> str:
        key, n = base, 1
        while key in self.used:
            n += 1
            key = f"{base}-{n}"
        self.used.add(key)
        return key


def _grouped(items: Sequence[Any]) -> Iterator[Any]:
    """The items, with each run of setup commands joined into one `CommandGroup`."""
    run: list[SetupCommand] = []
    for item in items:
        if isinstance(item, SetupCommand):
            run.append(item)
            continue
        if run:
            yield CommandGroup(tuple(run), run[0].line)
            run = []
        yield item
    if run:
        yield CommandGroup(tuple(run), run[0].line)


def _section_extras(lesson: Lesson) -> dict[str, list[str]]:
    """Blocks that come from outside a section's items, keyed by the section they follow."""
    ids = [s.id for s in lesson.sections]
    step_sections = [s.id for s in lesson.sections if any(isinstance(i, Step) for i in s.items)]
    run_sections = [
        s.id for s in lesson.sections if any(isinstance(i, RunCommand) for i in s.items)
    ]
    record_at = RECORD_SECTION if RECORD_SECTION in ids else (run_sections or step_sections)[-1]
    evidence_at = EVIDENCE_SECTION if EVIDENCE_SECTION in ids else ids[-1]
    extras: dict[str, list[str]] = {}
    extras.setdefault(step_sections[-1], []).append("cumulative.html")
    extras.setdefault(record_at, []).append("record.html")
    if GOING_FURTHER in lesson_scripts(lesson):
        extras.setdefault(_last_optional_section(lesson), []).append("going-further-record.html")
    extras.setdefault(evidence_at, []).append("portfolio.html")
    return extras


def _last_optional_section(lesson: Lesson) -> str:
    """The section of the last optional experiment: the recorded run of all of them follows it."""
    return next(
        s.id
        for s in reversed(lesson.sections)
        if any(isinstance(i, Experiment) and i.optional for i in s.items)
    )


def section_blocks(lesson: Lesson) -> dict[str, tuple[Block, ...]]:
    """What each section shows, in order, with a portfolio key for every saved field."""
    keys = _Keys()
    extras = _section_extras(lesson)
    blocks: dict[str, tuple[Block, ...]] = {}
    for section in lesson.sections:
        shown = []
        for item in _grouped(section.items):
            kind = _kind(item)
            if kind.template is None:
                continue  # declared not shown: data, or shown inside another item's template
            saves = kind.saves
            key = keys.claim(f"{saves.prefix}:{saves.name(item, section)}") if saves else ""
            shown.append(Block(kind.template, item, key))
        shown += [Block(name) for name in extras.get(section.id, ())]
        blocks[section.id] = tuple(shown)
    return blocks


def step_source(step: Step) -> str:
    """A build block as the learner appends it: headed by the same comment as in main.py."""
    return f"# Step {step.number} — {step.title}: {step.summary}\n{step.code}"


def cumulative_build(lesson: Lesson) -> str:
    """Every build block, in order: the learner's own main.py once all steps are appended."""
    return "\n\n".join(step_source(step) for step in lesson.steps)


# Facts shown on the page ---------------------------------------------------------------------


@dataclass(frozen=True)
class RecordView:
    """The recorded reference execution as the page shows it."""

    summary: str
    command: str
    stdout: str
    exit_code: int | str


def record_view(record: Receipt) -> RecordView:
    """The line "<time> · Python x · JAX y · N CPU device(s)" and what the recorded run printed."""
    env = record.environment
    devices = "device" if env.device_count == 1 else "devices"
    summary = (
        f"{record.started_utc} · Python {env.python} · JAX {env.jax} · "
        f"{env.device_count} {env.backend.upper()} {devices}"
    )
    return RecordView(summary, record.command, record.stdout.rstrip("\n"), record.exit_code)


@dataclass(frozen=True)
class PhaseLesson:
    """One lesson of a phase on the index: linked when this site has it, listed when not."""

    number: int
    title: str | None  # None: still to be written, listed as coming later
    href: str | None
    lesson: Lesson | None


def phase_lessons(lesson: Lesson, site_lessons: Sequence[Lesson]) -> tuple[PhaseLesson, ...]:
    """The lessons of `lesson`'s phase, in its phase.yaml's order, linked to those this site
    builds; a place kept for a lesson still to be written has no title."""
    built = {
        other.meta.id: other
        for other in (lesson, *site_lessons)
        if other.meta.phase.number == lesson.meta.phase.number
    }
    rows = []
    for number, lesson_id in enumerate(lesson.meta.phase.lessons, start=1):
        other = built.get(lesson_id) if lesson_id else None
        title = other.meta.title if other else None
        rows.append(PhaseLesson(number, title, page_path(other) if other else None, other))
    return tuple(rows)


EVIDENCE_FIELDS: tuple[tuple[str, str], ...] = (
    ("evidence:code", "Your modified code"),
    ("evidence:output", "What it printed"),
    ("evidence:explanation", "Why your prediction held or failed"),
)
"""The save-work box: the three things the evidence section asks a learner to keep."""


def portfolio_fields(lesson: Lesson, blocks: dict[str, tuple[Block, ...]]) -> dict[str, str]:
    """Every key the page saves, with the label "My learning" shows for it."""
    labels: dict[str, str] = {}
    for section in lesson.sections:
        for block in blocks[section.id]:
            saves = _kind(block.item).saves if block.key else None
            if saves is None:
                continue
            for suffix, label in saves.fields(block.item, section):
                labels[f"{block.key}{suffix}"] = label
    for key, label in EVIDENCE_FIELDS:
        labels[key] = label
    labels["progress:stage"] = "Current stage"
    labels["progress:done"] = "Stages completed"
    return labels


def record_views(lesson: Lesson, records: Mapping[Script, Receipt]) -> dict[str, RecordView]:
    """Each script's record as the page shows it, by script name; every script needs one."""
    return {script.name: record_view(records[script]) for script in lesson_scripts(lesson)}
