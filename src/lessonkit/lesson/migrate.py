"""Rewrite a lesson.md in the pre-MyST forms into MyST, keeping prose, code and YAML bodies.

It quotes the front matter's date, moves `{#id}` from a heading to an `(id)=` target, renames
`{figure}` to `{figure-data}`, gives a step's code in a `{code-cell}`, makes `{solution}`
name its task and fence its code, writes repeated options as YAML, and turns `attempts:`
into `{attempt}` blocks. The result must load into the same lesson, else `migrate_lesson`
raises.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import yaml
from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from lessonkit.errors import LessonError
from lessonkit.lesson.blocks import (
    CODE_CELL,
    CODE_CELL_ROLES,
    FENCED_CODE,
    OLD_NAMES,
    OPTION_LINE,
    ROLE_INFO,
    code_cell,
    raw_block,
)
from lessonkit.lesson.load import parse_lesson
from lessonkit.lesson.model import Phase

_DATE = re.compile(r"^date:\s*(?P<date>\d{4}-\d{2}-\d{2})\s*(?P<comment>#.*)?$")
_HEADING_ID = re.compile(r"^(?P<heading>##\s+.*?)\s*\{#(?P<id>[a-z0-9-]+)\}\s*$")
_TOP_KEY = re.compile(r"^[A-Za-z_][\w-]*:")
_ATTEMPT_OPTIONS = ("task", "expect", "message", "why", "instead")
_POSITIONS = frozenset({"line", "expected_line", "stated", "source", "path"})


def migrate_lesson(text: str, path: Path, phase: Phase | None = None) -> str:
    """The lesson in the MyST forms; `text` itself when it already uses them. `phase` places
    it, as for `parse_lesson`."""
    before = parse_lesson(text, path, phase)
    lines = text.split("\n")
    tokens = MarkdownIt("commonmark").use(front_matter_plugin).parse(text)
    edits: dict[int, tuple[int, list[str]]] = {}  # first line -> (end line, new lines)
    front = tokens[0].map
    if front is not None:
        for number in range(front[0], front[1]):
            if match := _DATE.match(lines[number]):
                comment = f"  {match['comment']}" if match["comment"] else ""
                edits[number] = (number + 1, [f'date: "{match["date"]}"{comment}'])
    task = ""
    for token in tokens:
        if token.level != 0 or token.map is None:
            continue
        start, end = token.map
        if token.type == "heading_open" and token.tag == "h2":
            if match := _HEADING_ID.match(lines[start]):
                edits[start] = (start + 1, [f"({match['id']})=", match["heading"]])
        elif token.type == "fence" and code_cell(token.info, token.content, 1, ""):
            continue
        elif token.type == "fence" and (block := raw_block(token.info, token.content, 1, "")):
            if block.role == "task":
                task = block.arg
            new = _fence(token.markup, token.info, token.content, block, task)
            if new is not None:
                edits[start] = (end, new)
    out: list[str] = []
    number = 0
    while number < len(lines):
        if number in edits:
            stop, new = edits[number]
            out.extend(new)
            number = stop
        else:
            out.append(lines[number])
            number += 1
    migrated = "\n".join(out)
    after = parse_lesson(migrated, path, phase)
    if _content(before) != _content(after):
        raise LessonError(
            "migrate: the rewritten lesson does not load into the same lesson; nothing written "
            "(a bug in lessonkit: please report it with this lesson.md)",
            where=str(path),
        )
    return migrated


def _fence(markup: str, info: str, content: str, block, task: str) -> list[str] | None:
    """The block rewritten, or None when it is already in the MyST forms."""
    match = ROLE_INFO.match(info.strip())
    assert match is not None
    role, arg = match["role"], match["arg"].strip()
    changed = False
    if role in OLD_NAMES:
        role, changed = OLD_NAMES[role], True
    if role == "solution" and not arg and task:
        arg, changed = task, True
    body_lines = content.split("\n")[block.body_offset :]
    options = [(k, list(v)) for k, v in block.options.items()]
    if any(len(v) > 1 for _, v in options):
        changed = True
    after: list[str] = []
    if role in ("solution", "hint") and "class" not in block.options:
        options.append(("class", ["dropdown"]))  # MyST shows them collapsed
        changed = True
    if role == "solution" and FENCED_CODE.fullmatch(block.body) is None:
        code = "\n".join(body_lines).rstrip("\n")
        inner = "````" if "```" in code else "```"
        body_lines = [f"{inner}python", code, inner]
        markup = "`" * max(len(markup), len(inner) + 1)
        changed = True
    if role in CODE_CELL_ROLES and block.body.strip():
        code = "\n".join(body_lines).rstrip("\n")
        cell_markup = "````" if "```" in code else "```"
        after.extend(["", f"{cell_markup}{{{CODE_CELL}}} python", code, cell_markup])
        body_lines, changed = [], True
    if role == "grading":
        body_lines, attempts = _take_attempts(block.body)
        if attempts:
            changed = True
            for attempt in attempts:
                after.extend(["", *_attempt_fence(attempt)])
    if not changed:
        return None
    head = f"{markup}{{{role}}}" + (f" {arg}" if arg else "")
    body = "\n".join(body_lines).rstrip("\n")
    return [head, *_option_lines(options), *([body] if body else []), markup, *after]


def _option_lines(options: list[tuple[str, list[str]]]) -> list[str]:
    """`:key: value` lines, or a YAML mapping between `---` lines when a value needs it."""
    plain = all(
        len(values) == 1 and values[0] and "\n" not in values[0] and values[0] == values[0].strip()
        for _, values in options
    )
    if plain:
        return [f":{key}: {values[0]}" for key, values in options]
    out = ["---"]
    for key, values in options:
        if len(values) == 1:
            out.append(f"{key}: {_scalar(values[0])}")
        else:
            out.append(f"{key}:")
            out.extend(f"  - {_scalar(value)}" for value in values)
    return [*out, "---"]


def _scalar(value: str) -> str:
    """One YAML scalar that reads back as `value`, on one line."""
    dumped = yaml.safe_dump(value, allow_unicode=True, width=1 << 30, default_flow_style=True)
    dumped = dumped.removesuffix("\n").removesuffix("\n...")
    if "\n" in dumped or yaml.safe_load(dumped) != value:
        raise ValueError(f"cannot write {value!r} as one YAML line")
    return dumped


def _take_attempts(body: str) -> tuple[list[str], list[dict]]:
    """The grading YAML without its top-level `attempts:` key, and the attempts it held."""
    lines = body.rstrip("\n").split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith("attempts:")), None)
    if start is None:
        return lines, []
    end = next((i for i in range(start + 1, len(lines)) if _TOP_KEY.match(lines[i])), len(lines))
    kept = lines[:start] + lines[end:]
    data = yaml.safe_load(body)
    rest = yaml.safe_load("\n".join(kept)) or {}
    attempts = data.get("attempts") or []
    if {k: v for k, v in data.items() if k != "attempts"} != rest or not isinstance(attempts, list):
        raise LessonError("migrate: cannot take the attempts out of this {grading} block")
    return kept, attempts


def _attempt_fence(attempt: dict) -> list[str]:
    code = str(attempt["code"]).rstrip("\n")
    first = code.split("\n", 1)[0]
    if OPTION_LINE.match(first) or first.rstrip() == "---":
        raise LessonError(f"migrate: attempt {attempt['name']!r}: its code starts like an option")
    markup = "````" if "```" in code else "```"
    options = [(k, [str(attempt[k])]) for k in _ATTEMPT_OPTIONS if str(attempt.get(k, ""))]
    return [f"{markup}{{attempt}} {attempt['name']}", *_option_lines(options), code, markup]


def _content(value: object) -> object:
    """A lesson model with every source position left out, to compare two sources."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = [f.name for f in dataclasses.fields(value)]
    elif isinstance(value, tuple) and hasattr(value, "_fields"):  # a NamedTuple
        names = list(value._fields)
    else:
        names = None
    if names is not None:
        return tuple((n, _content(getattr(value, n))) for n in names if n not in _POSITIONS)
    if isinstance(value, tuple | list):
        return tuple(_content(v) for v in value)
    return value
