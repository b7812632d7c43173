"""The `{evidence}` block: what a learner keeps as evidence, declared in the lesson.

Its body is a YAML list of items (title, section, keep, prompt, task, show), documented in
docs/authoring.md. Every mistake is a `LessonError` at the item's line; names of sections,
tasks and numbers are checked once the whole lesson is known (`lessonkit.lesson.validate`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from lessonkit.errors import LessonError
from lessonkit.lesson.model import SHOW_KINDS, EvidenceBlock, EvidenceItem, Show

_ITEM_KEYS = frozenset({"title", "section", "keep", "prompt", "task", "show"})
_REQUIRED = ("title", "section", "keep", "show")

ErrorAt = Callable[[str, int | None], LessonError]


def _line_of(lines: list[str], first_line: int, pattern: str, start: int = 0) -> int:
    regex = re.compile(pattern)
    for offset in range(start, len(lines)):
        if regex.search(lines[offset]):
            return first_line + offset
    return first_line + start


def _text(value: object) -> str:
    return " ".join(str(value).split())


def _show(entry: object, title: str, line: int, error: ErrorAt) -> Show:
    if not isinstance(entry, dict):
        raise error(
            f"item {title!r}: each 'show' entry must be a mapping such as 'tree: NAME'", line
        )
    kinds = [k for k in entry if k in SHOW_KINDS]
    extra = set(entry) - set(SHOW_KINDS) - {"number"}
    if len(kinds) != 1 or extra:
        raise error(
            f"item {title!r}: a 'show' entry needs exactly one of {', '.join(SHOW_KINDS)} "
            f"(and 'number' with 'value'), got {', '.join(map(str, entry)) or 'nothing'}",
            line,
        )
    kind = kinds[0]
    expr = "" if kind == "numbers" else _text(entry[kind])
    if kind == "numbers" and entry[kind] != "all":
        raise error(f"item {title!r}: write 'numbers: all'", line)
    if kind != "numbers" and not expr:
        raise error(f"item {title!r}: '{kind}' needs a name or expression", line)
    number = entry.get("number")
    if number is not None and kind != "value":
        raise error(f"item {title!r}: 'number' goes with 'value' only", line)
    return Show(kind, expr, "" if number is None else _text(number), line)


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def parse_evidence(
    data: object, body: str, body_line: int, line: int, error: ErrorAt
) -> EvidenceBlock:
    """Build `EvidenceBlock` from the block's YAML; `body_line` is the body's first line."""
    if not isinstance(data, list) or not data:
        raise error("body must be a YAML list of items (title, section, keep, show)", line)
    lines = body.splitlines()
    items: list[EvidenceItem] = []
    start = 0
    for index, entry in enumerate(data):
        if not isinstance(entry, dict):
            raise error(f"item {index + 1} must be a mapping", line)
        title = _text(entry.get("title", ""))
        where = _line_of(lines, body_line, rf"title:\s*['\"]?{re.escape(title)}", start)
        start = where - body_line + 1
        unknown = set(entry) - _ITEM_KEYS
        if unknown:
            allowed = ", ".join(sorted(_ITEM_KEYS))
            raise error(
                f"item {title!r}: unknown key {sorted(unknown)[0]!r}; allowed: {allowed}", where
            )
        missing = [k for k in _REQUIRED if not entry.get(k)]
        if missing:
            raise error(
                f"item {index + 1} ({title or 'no title'}): missing {', '.join(missing)}", where
            )
        show = entry["show"]
        if not isinstance(show, list) or not show:
            raise error(f"item {title!r}: 'show' must be a list", where)
        key = _slug(title)
        if any(i.key == key for i in items):
            raise error(f"item {title!r}: two items have this title", where)
        items.append(
            EvidenceItem(
                key=key,
                title=title,
                section=_text(entry["section"]),
                keep=_text(entry["keep"]),
                prompt=_text(entry.get("prompt", "")),
                task=_text(entry.get("task", "")),
                show=tuple(_show(s, title, where, error) for s in show),
                line=where,
            )
        )
    return EvidenceBlock(tuple(items), line)
