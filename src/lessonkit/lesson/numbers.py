"""Declared numbers against the prose that states them and the code that computes them.

A `{numbers}` block declares each number its covered prose states. Every number written in
that prose must be declared (or under `:not_results:`), every declared value must be written
there (or in a covered block's code), and every value must be what its expression gives;
`prose_problems` checks the first two, `lessonkit.receipts.numbers` the third (it runs code).
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

from lessonkit.defaults import PROSE_ATOL, PROSE_RTOL
from lessonkit.errors import LessonError
from lessonkit.lesson.blocks import at_line
from lessonkit.lesson.model import (
    Experiment,
    Lesson,
    Number,
    Numbers,
    Prose,
    ProseNumber,
    Section,
    Step,
    Task,
)

_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
_LINK_TARGET = re.compile(r"\]\([^)]*\)|<https?://[^>]*>|<!--.*?-->", re.S)
_SUBSCRIPT = re.compile(r"\b[A-Za-z_]\w*\[[^\]\n]*\]")  # weight[0], float32[2]: not results
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w]|\.\d)")
_MINUS = "-\u2212"


def _blank(match: re.Match[str]) -> str:
    """The match's text replaced by spaces, newlines kept, so offsets and lines still agree."""
    return re.sub(r"[^\n]", " ", match[0])


def prose_numbers(markdown: str, first_line: int) -> tuple[ProseNumber, ...]:
    """The numbers a Markdown passage writes, with their lines.

    Code (fences and spans), link targets, comments and subscripts of a name (``weight[0]``,
    ``float32[2]``) are skipped: they index or name things rather than state results.
    A minus sign belongs to the number unless it follows a word or a closing bracket
    (``-0.8`` and ``(1,-1)`` are negative, ``1-3`` is a subtraction).
    """
    lines, inside = [], False
    for text in markdown.split("\n"):
        fence = bool(_FENCE.match(text))
        lines.append("" if inside or fence else text)
        inside ^= fence
    text = "\n".join(lines)
    for pattern in (_CODE_SPAN, _LINK_TARGET, _SUBSCRIPT):
        text = pattern.sub(_blank, text)
    found = []
    for offset, line in enumerate(text.split("\n")):
        for match in _NUMBER.finditer(line):
            start = match.start()
            signed = (
                start > 0
                and line[start - 1] in _MINUS
                and (start == 1 or not re.match(r"[\w)\]}]", line[start - 2]))
            )
            written = ("-" if signed else "") + match[0]
            found.append(ProseNumber(written, float(written), first_line + offset))
    return tuple(found)


def same(a: float, b: float) -> bool:
    """Whether a written number and a declared one are the same (both as written)."""
    return math.isclose(a, b, rel_tol=PROSE_RTOL, abs_tol=PROSE_ATOL)


def lesson_line(lesson: Lesson, line: int) -> str:
    """`path:line` in lesson.md, where a numbers problem is reported."""
    return f"{lesson.path}:{line}"


def _nearby(lesson: Lesson, block: Numbers, line: int) -> str:
    """Declared numbers whose name the prose line spells out, e.g. "learning rate"."""
    text = lesson.source.splitlines()[line - 1].lower()
    named = [n for n in block.items if n.name.replace("_", " ") in text]
    return "".join(f"; {n.name} is declared {n.shown}" for n in named)


def prose_problems(lesson: Lesson) -> tuple[LessonError, ...]:
    """Prose numbers nobody declared, and declared numbers no covered sentence states."""
    problems = []
    for block in lesson.items(Numbers):
        declared = [v for n in block.items for v in n.values]
        covered = ", ".join(block.sections)
        for said in block.prose:
            if said.text in block.not_results or any(same(said.value, v) for v in declared):
                continue
            problems.append(
                LessonError(
                    f"the prose states {said.text}, which no declared number gives"
                    f"{_nearby(lesson, block, said.line)}",
                    where=lesson_line(lesson, said.line),
                    fix=f"correct the number, or declare it in the {{numbers}} block at line "
                    f"{block.line} (list it under ':not_results:' if it is a count or a year)",
                )
            )
        for number in block.items:
            written = block.prose + block.in_code
            unstated = [v for v in number.values if not any(same(v, p.value) for p in written)]
            if unstated:
                missing = ", ".join(f"{v:g}" for v in unstated)
                problems.append(
                    LessonError(
                        f"{number.name} is declared {number.shown}, but nothing in the "
                        f"sections it covers ({covered}) states {missing}",
                        where=lesson_line(lesson, number.line),
                        fix="state it in the prose, or remove the declaration",
                    )
                )
    return tuple(problems)


def unprinted_numbers(
    lesson: Lesson, runs: tuple[Experiment | Task, ...], printed: tuple[float, ...], script: str
) -> tuple[LessonError, ...]:
    """Numbers written about a script's experiments that its run does not bear out.

    The prose of each section holding one of `runs` (unless a `{numbers}` block covers it,
    which governs it more strictly) and each experiment's `:expected:` line may state only
    numbers the run printed (`printed`), numbers the section's code writes (a learning rate,
    an epsilon) and numbers the lesson declares. So an experiment whose code changes from
    `adam(0.1)` to `adam(0.2)` cannot keep saying "(1,-1,0) becomes (1.1,-0.9,0.1)".
    """
    covered = {section for block in lesson.items(Numbers) for section in block.sections}
    declared = [v for block in lesson.items(Numbers) for n in block.items for v in n.values]
    problems = []
    for section in lesson.sections:
        mine = [item for item in section.items if any(item is run for run in runs)]
        if not mine or section.id in covered:
            continue
        code = [
            said
            for item in section.items
            if isinstance(item, Step | Experiment | Task)
            for text in ((item.solution, item.scaffold) if isinstance(item, Task) else (item.code,))
            for said in prose_numbers(text, 1)
        ]
        written = [
            said
            for item in section.items
            if isinstance(item, Prose)
            for said in prose_numbers(item.markdown, item.line)
        ] + [
            said
            for item in mine
            if isinstance(item, Experiment)
            for said in prose_numbers(item.expected, item.expected_line)
        ]
        known = [*printed, *declared, *(said.value for said in code)]
        problems += [
            LessonError(
                f"the text states {said.text}, which the run of {script} does not "
                "print, its code does not write and no declared number gives",
                where=lesson_line(lesson, said.line),
                fix="if the code is right, correct the number; if the number is right, fix the "
                "code (or print the number, or declare it in a {numbers} block covering this "
                "section)",
            )
            for said in written
            if not any(same(said.value, value) for value in known)
        ]
    return tuple(problems)


def tie_numbers(lesson: Lesson) -> Lesson:
    """Give each {numbers} block the numbers its sections' prose writes, and tie each declared
    number to the lines that state it; `lessonkit.lesson.numbers` judges them."""
    by_id = {s.id: s for s in lesson.sections}

    def tie(block: Numbers, home: Section) -> Numbers:
        sections = block.sections or (home.id,)
        unknown = [s for s in sections if s not in by_id]
        if unknown:
            raise LessonError(
                f"{{numbers}} block: ':sections:' names unknown section(s) {', '.join(unknown)}",
                where=at_line(str(lesson.path), block.line),
            )
        prose = tuple(
            said
            for section_id in sections
            for item in by_id[section_id].items
            if isinstance(item, Prose)
            for said in prose_numbers(item.markdown, item.line)
        )
        in_code = tuple(
            replace(said, line=item.line)
            for section_id in sections
            for item in by_id[section_id].items
            if isinstance(item, Step | Experiment | Task)
            for said in prose_numbers(item.solution if isinstance(item, Task) else item.code, 1)
        )
        written = tuple(sorted(prose + in_code, key=lambda said: said.line))
        stated = _stated_lines(block.items, written)
        items = tuple(
            replace(n, stated=lines) for n, lines in zip(block.items, stated, strict=True)
        )
        return replace(block, items=items, sections=sections, prose=prose, in_code=in_code)

    parts = tuple(
        replace(
            part,
            sections=tuple(
                replace(
                    section,
                    items=tuple(
                        tie(i, section) if isinstance(i, Numbers) else i for i in section.items
                    ),
                )
                for section in part.sections
            ),
        )
        for part in lesson.parts
    )
    return replace(lesson, parts=parts)


def _stated_lines(
    numbers: tuple[Number, ...], written: tuple[ProseNumber, ...]
) -> tuple[tuple[int, ...], ...]:
    """The lines that state each declared number, for messages that blame a line.

    Two numbers may share a value (a weight of -0.8 and a residual of -0.8): each written
    occurrence goes to one number, the declared numbers taking the occurrences of their
    values in the order both are written, so the residual is blamed on the line that says
    the residual, not on the weight's. A value with no occurrence left keeps every line that
    writes it.
    """
    claimed: set[int] = set()
    lines = []
    for number in numbers:
        mine: set[int] = set()
        for value in number.values:
            matching = [i for i, said in enumerate(written) if same(said.value, value)]
            free = [i for i in matching if i not in claimed]
            if free:
                claimed.add(free[0])
                mine.add(written[free[0]].line)
            else:
                mine.update(written[i].line for i in matching)
        lines.append(tuple(sorted(mine)))
    return tuple(lines)
