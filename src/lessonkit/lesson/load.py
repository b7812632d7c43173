"""Load lesson.md (MyST Markdown with YAML front matter) into the `Lesson` model.

Top-level headings are the preamble and the five stages, second-level ones sections (id in an
`(id)=` target above; `{#id}` still loads); `{role} argument` fences carry the structured
parts. Every mistake is one `LessonError` naming `file:line`.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

from lessonkit.errors import LessonError
from lessonkit.lesson.blocks import (
    CODE_CELL_ROLES,
    ROLES,
    TASK_PARTS,
    RawBlock,
    at_line,
    code_cell,
    raw_block,
    with_code,
)
from lessonkit.lesson.front_matter import parse_front_matter
from lessonkit.lesson.model import (
    PREAMBLE,
    STAGES,
    DeclaredAttempt,
    Grading,
    Item,
    Lesson,
    Part,
    Phase,
    Prose,
    Section,
    Step,
)
from lessonkit.lesson.numbers import tie_numbers
from lessonkit.lesson.phase_file import load_phase, phase_file_of
from lessonkit.lesson.tasks import assemble_task
from lessonkit.lesson.validate import validate

_HEADING_ID = re.compile(r"^(?P<title>.*?)\s*\{#(?P<id>[a-z0-9-]+)\}\s*$")
_TARGET = re.compile(r"^\((?P<id>[^()\s]+)\)=$")


class _SectionBuilder:
    def __init__(self, title: str, section_id: str, line: int, where: str):
        self.title, self.id, self.line, self.where = title, section_id, line, where
        self.items: list[Item] = []
        self.task_parts: list[RawBlock] = []
        self.attempts: list[DeclaredAttempt] = []
        self.awaiting: RawBlock | None = None  # a step or experiment whose {code-cell} is next

    def add_prose(self, text: str, line: int) -> None:
        self._need_no_code_cell()
        self._flush_task()
        if text.strip():
            self.items.append(Prose(text.strip("\n"), line))

    def add_code_cell(self, cell: RawBlock) -> None:
        if self.awaiting is None:
            roles = " or ".join(f"{{{r}}}" for r in sorted(CODE_CELL_ROLES))
            raise cell.error(f"must follow a {roles} block without code of its own: its code")
        block, self.awaiting = self.awaiting, None
        self.add_block(with_code(block, cell))

    def _need_no_code_cell(self) -> None:
        if self.awaiting is not None:
            raise self.awaiting.error(
                "has no code: write it in the block, or in a {code-cell} right after it"
            )

    def add_block(self, block: RawBlock) -> None:
        self._need_no_code_cell()
        if block.role in CODE_CELL_ROLES and not block.body.strip():
            self.awaiting = block
        elif block.role == "task":
            self._flush_task()
            self.task_parts = [block]
        elif block.role in TASK_PARTS:
            if not self.task_parts:
                raise block.error("must follow a {task} block in the same section")
            self.task_parts.append(block)
        else:
            self._flush_task()
            built = ROLES[block.role].build(block)
            if isinstance(built, DeclaredAttempt):
                self.attempts.append(built)
            else:
                self.items.append(built)

    def _flush_task(self) -> None:
        if self.task_parts:
            task = assemble_task(self.task_parts)
            self.items.append(replace(task, title=task.title or self.title))
            self.task_parts = []

    def build(self) -> Section:
        self._need_no_code_cell()
        self._flush_task()
        return Section(self.id, self.title, tuple(self.items), self.line)


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def parse_lesson(text: str, path: Path, phase: Phase | None = None) -> Lesson:
    """Parse lesson source text; `path` is used for messages and to locate the lesson, and
    its phase folder's phase.yaml places it, unless `phase` is given."""
    where = str(path)
    phase_file = phase_file_of(path)
    tokens = MarkdownIt("commonmark").use(front_matter_plugin).parse(text)
    lines = text.splitlines()
    if not tokens or tokens[0].type != "front_matter":
        raise LessonError(
            "bad front matter: the file must start with a '---' YAML block", where=at_line(where, 1)
        )
    phase = phase or load_phase(phase_file)
    meta = parse_front_matter(tokens[0].content, where, phase, str(phase_file))

    parts: list[Part] = []
    part_title: str | None = None
    part_line = 0
    sections: list[Section] = []
    current: _SectionBuilder | None = None
    prose_start: int | None = None
    prose_end = 0
    attempts: list[DeclaredAttempt] = []
    target: tuple[str, int] | None = None  # a MyST `(id)=` line waiting for its heading

    def finish_section(builder: _SectionBuilder) -> None:
        sections.append(builder.build())
        attempts.extend(builder.attempts)

    def flush_prose() -> None:
        nonlocal prose_start
        if prose_start is not None and current is not None:
            current.add_prose("\n".join(lines[prose_start:prose_end]), prose_start + 1)
        prose_start = None

    def close_part() -> None:
        nonlocal sections
        if current is not None:
            finish_section(current)
        if part_title is not None:
            stage = STAGES.index(part_title) + 1 if part_title in STAGES else None
            parts.append(Part(part_title, stage, tuple(sections), part_line))
        sections = []

    index = 1
    while index < len(tokens):
        token = tokens[index]
        if token.level != 0 or token.map is None:
            index += 1
            continue
        start, end = token.map
        if target is not None and not (token.type == "heading_open" and token.tag == "h2"):
            raise LessonError(
                f"the MyST target ({target[0]})= must stand just above a '## ' section heading",
                where=at_line(where, target[1]),
            )
        if token.type == "paragraph_open" and (found := _target(tokens[index + 1], where)):
            flush_prose()
            target = found
            index += 3
            continue
        if token.type == "heading_open" and token.tag in ("h1", "h2"):
            flush_prose()
            title_text = tokens[index + 1].content.strip()
            if token.tag == "h1":
                close_part()
                current = None
                if title_text != PREAMBLE and title_text not in STAGES:
                    choices = ", ".join([PREAMBLE, *STAGES])
                    raise LessonError(
                        f"unknown part heading {title_text!r}; top-level headings are: {choices}",
                        where=at_line(where, start + 1),
                    )
                part_title, part_line = title_text, start + 1
            else:
                if part_title is None:
                    raise LessonError(
                        "a section must sit under a top-level part heading",
                        where=at_line(where, start + 1),
                    )
                if current is not None:
                    finish_section(current)
                match = _HEADING_ID.match(title_text)
                title, section_id = (
                    (match["title"], match["id"]) if match else (title_text, _slug(title_text))
                )
                if target is not None:
                    if match:
                        raise LessonError(
                            f"the section has two ids: the target ({target[0]})= above it and "
                            f"{{#{match['id']}}} in its heading; keep the target",
                            where=at_line(where, start + 1),
                        )
                    section_id, target = target[0], None
                current = _SectionBuilder(title, section_id, start + 1, where)
            index += 3
            continue
        fence = token.type == "fence"
        if fence and (cell := code_cell(token.info, token.content, start + 1, where)):
            flush_prose()
            if current is None:
                raise cell.error("must sit inside a section (a '## ' heading)")
            current.add_code_cell(cell)
            index += 1
            continue
        if token.type == "fence":
            block = raw_block(token.info, token.content, start + 1, where)
            if block is not None:
                flush_prose()
                if current is None:
                    raise block.error("must sit inside a section (a '## ' heading)")
                current.add_block(block)
                index += 1
                continue
        if current is None:
            if part_title is None and _is_blank(lines[start:end]):
                index += 1
                continue
            raise LessonError(
                "text must sit inside a section (a '## ' heading)", where=at_line(where, start + 1)
            )
        if prose_start is None:
            prose_start = start
        prose_end = end
        index += 1
        # skip the nested tokens of this block
        while index < len(tokens) and tokens[index].level != 0:
            index += 1
    if target is not None:
        raise LessonError(
            f"the MyST target ({target[0]})= must stand just above a '## ' section heading",
            where=at_line(where, target[1]),
        )
    flush_prose()
    close_part()
    lesson = Lesson(meta, _with_attempts(tuple(parts), attempts, where), path, text)
    validate(lesson)
    return tie_numbers(_number_steps(lesson))


def _target(inline: Token, where: str) -> tuple[str, int] | None:
    """A paragraph that is only a MyST target, `(id)=`: the id and its line."""
    match = _TARGET.match(inline.content.strip())
    if match is None or inline.map is None:
        return None
    line = inline.map[0] + 1
    if not re.fullmatch(r"[a-z0-9-]+", match["id"]):
        raise LessonError(
            f"section id {match['id']!r} in a MyST target: use lowercase letters, digits and "
            "dashes",
            where=at_line(where, line),
        )
    return match["id"], line


def _with_attempts(parts: tuple[Part, ...], attempts: list[DeclaredAttempt], where: str) -> tuple:
    """Put the `{attempt}` blocks' attempts after the `{grading}` block's own."""
    if not attempts:
        return parts
    gradings = [i for p in parts for s in p.sections for i in s.items if isinstance(i, Grading)]
    if not gradings:
        raise LessonError(
            "an {attempt} block needs the lesson's {grading} block, which grades it",
            where=at_line(where, attempts[0].line),
        )
    merged = replace(gradings[0], attempts=gradings[0].attempts + tuple(attempts))
    return tuple(
        replace(
            part,
            sections=tuple(
                replace(s, items=tuple(merged if i is gradings[0] else i for i in s.items))
                for s in part.sections
            ),
        )
        for part in parts
    )


def _is_blank(chunk: list[str]) -> bool:
    return not "".join(chunk).strip()


def _number_steps(lesson: Lesson) -> Lesson:
    counter = iter(range(1, 1000))
    parts = []
    for part in lesson.parts:
        sections = []
        for section in part.sections:
            items = tuple(
                replace(i, number=next(counter)) if isinstance(i, Step) else i
                for i in section.items
            )
            sections.append(replace(section, items=items))
        parts.append(replace(part, sections=tuple(sections)))
    return replace(lesson, parts=tuple(parts))


def load_lesson(path: str | Path) -> Lesson:
    """Read and parse a lesson.md file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LessonError("lesson file not found", where=str(path)) from None
    except UnicodeDecodeError as exc:
        raise LessonError(f"not UTF-8 text ({exc.reason})", where=str(path)) from None
    return parse_lesson(text, path)
