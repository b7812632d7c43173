"""Which cell is which: the learner's cells matched to the lesson's, each given a role.

Roles (`setup`, `lesson`, `task`, `skip`) decide where a cell runs; they are declared with
the request the child reads (`lessonkit.grading_child.request`).
Task cells are found by their `# TASK <id>` line; the others are matched to the lesson's
code cells by their syntax tree, then by similarity, so an edited step is still a step.
"""

from __future__ import annotations

import ast
import collections
import difflib
import functools
import itertools
import re
from dataclasses import dataclass, field

from lessonkit.grade.submission.sources import Submission
from lessonkit.grading_child.request import LESSON_ONLY, SETUP, SKIP, TASK, CellRole
from lessonkit.lesson.layout import lesson_cells
from lessonkit.lesson.mistakes import declared_mistakes
from lessonkit.lesson.model import Experiment, Lesson
from lessonkit.lesson.syntax import LessonCode, parse_python, read_cells

_SIMILAR = 0.6
MAX_COMPARISONS = 4_000
MAX_PARSED = 100_000  # characters of learner code parsed to match cells (a practice file: 25k)
MAX_PARSED_CELLS = 500  # cells parsed to match (a practice file: 40)
MAX_DIFF_WORK = 10_000_000  # characters squared given to difflib (a practice file: < 6M)


@dataclass(frozen=True)
class LessonCell:
    """A code cell of the lesson's practice file: what it is and the role it plays."""

    label: str  # "step-2", "verify-leaves", "figure-data", "todo-helper"
    title: str  # "Step 2 · Build the computation", "Experiment · Verify every gradient leaf"
    role: CellRole
    source: str


@dataclass(frozen=True)
class PlannedCell:
    index: int
    source: str
    line: int  # first line in the file (.py), or the cell's number (.ipynb): see `Plan.place`
    offset: int  # added to a line of `source` to give the line shown to the learner
    role: CellRole
    task: str | None
    label: str | None  # the lesson cell it matches, if any
    task_title: str | None = None  # the task's title, for a task cell


@dataclass(frozen=True)
class Plan:
    """A file's cells, in order, ready to run; `notebook` changes how lines are shown."""

    name: str
    notebook: bool
    cells: tuple[PlannedCell, ...]
    checkpoint: int | None  # the cell after which the steps' names are reported

    def task_cell(self, task_id: str) -> PlannedCell | None:
        return next((c for c in self.cells if c.task == task_id), None)

    def labelled(self, label: str) -> PlannedCell | None:
        return next((c for c in self.cells if c.label == label), None)

    def cell(self, index: int) -> PlannedCell:
        return self.cells[index]

    def place(self, index: int) -> str:
        """The one way every message names a learner's cell, in every tool.

        In a notebook, `cell [14]`: the number Jupyter shows beside it (its execution count
        in a kernel; in a file, its place among the code cells, which is that count after
        running all from the top), then the task it holds: `cell [14] ("A task title")`. In a
        script, `the cell at line 231`, with the task likewise.
        """
        cell = self.cells[index]
        task = f' ("{cell.task_title}")' if cell.task_title else ""
        return (
            f"cell [{cell.line}]{task}" if self.notebook else f"the cell at line {cell.line}{task}"
        )

    def where(self, index: int, line: int) -> str:
        """`cell [14] ("A task title"), line 3` in a notebook (the line within the cell),
        `line 231` in a script (the file's own line, which every editor shows)."""
        return f"{self.place(index)}, line {line}" if self.notebook else f"line {line}"

    def source_line(self, index: int, line: int) -> str:
        cell = self.cells[index]
        lines = cell.source.splitlines()
        position = line - cell.offset - 1
        return lines[position].strip() if 0 <= position < len(lines) else ""


def practice_cells(lesson: Lesson) -> tuple[LessonCell, ...]:
    """The lesson's non-task code cells in practice-file order, with titles and roles."""
    steps = {f"step-{s.number}": f"Step {s.number} · {s.title}" for s in lesson.steps}
    experiments = {
        section.id: item
        for section in lesson.sections
        for item in section.items
        if isinstance(item, Experiment)
    }
    out = []
    for cell in lesson_cells(lesson):
        if cell.kind != "code" or cell.solution or "task" in cell.tags:
            continue
        if "experiment" in cell.tags and cell.id in experiments:
            experiment = experiments[cell.id]
            title = f"Experiment · {experiment.title}"
            role = SKIP if experiment.optional else LESSON_ONLY
        elif "figure" in cell.tags:
            title, role = "Figure", SKIP
        else:
            title, role = steps.get(cell.id, "Helper"), SETUP
        out.append(LessonCell(cell.id, title, role, cell.source))
    return tuple(out)


def _key(source: str, code: LessonCode) -> str:
    """Cells compare equal when their syntax trees do (comments and spacing ignored); a
    lesson cell's tree, and a learner's cell left as the lesson gives it, are read once per
    lesson (`code`)."""
    known = code.cells.get(source)
    if known is not None:
        return known.key
    try:
        return ast.dump(parse_python(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _text_key(source)


def _text_key(source: str) -> str:
    """The key of a cell that is not parsed: its words, whatever the spacing."""
    return re.sub(r"\s+", " ", source).strip()


_TOKEN = re.compile(r"\w+|[^\w\s]")


@functools.lru_cache(maxsize=1024)
def _tokens(text: str) -> collections.Counter[str]:
    """A cell's words and symbols, counted: a cheap first look before difflib.

    Only texts within `_comparable`'s length bound of a lesson cell come here, so the cache
    holds a few megabytes at most.
    """
    return collections.Counter(_TOKEN.findall(text))


def _comparable(a: str, b: str) -> bool:
    """Whether difflib's ratio could reach the threshold: similar lengths, shared tokens.

    Both tests are linear; they turn away a junk cell before the quadratic difflib, and an
    edited copy of a lesson cell (a number changed, a line added) passes both.
    """
    if max(len(a), len(b)) > 3 * min(len(a), len(b)) + 200:
        return False
    ta, tb = _tokens(a), _tokens(b)
    total = ta.total() + tb.total()
    return total > 0 and 2 * (ta & tb).total() >= _SIMILAR * total


def _similarity(a: str, b: str) -> float:
    """difflib's ratio, skipped for texts that `_comparable` turns away (it is quadratic)."""
    if not _comparable(a, b):
        return 0.0
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return matcher.ratio() if matcher.quick_ratio() >= _SIMILAR else 0.0


def _keys(sources: list[str], code: LessonCode) -> list[str]:
    """Each cell's key; past MAX_PARSED characters or MAX_PARSED_CELLS, the text key.

    Parsing is the parent's own work on the learner's file, so it is bounded: a practice
    file is a few tens of kilobytes, and a cell past the bound is still matched by
    similarity.
    """
    keys, parsed = [], 0
    for number, source in enumerate(sources):
        parsed += len(source)
        within = parsed <= MAX_PARSED and number < MAX_PARSED_CELLS
        keys.append(_key(source, code) if within else _text_key(source))
    return keys


def match_cells(
    learner: list[str], lesson: list[str], code: LessonCode | None = None
) -> dict[int, int]:
    """learner index -> lesson index: identical cells first, then similar ones between them;
    `code` is the lesson cells' reading, made here when not given.

    The work is bounded whatever the file: MAX_PARSED characters (MAX_PARSED_CELLS cells)
    parsed, MAX_COMPARISONS cheap comparisons, and MAX_DIFF_WORK characters squared given
    to difflib, so a file at the size caps costs the parent well under a second.
    """
    code = read_cells(lesson) if code is None else code
    keys_l, keys_s = _keys(learner, code), [_key(s, code) for s in lesson]
    matcher = difflib.SequenceMatcher(None, keys_l, keys_s, autojunk=False)
    matched: dict[int, int] = {}
    for block in matcher.get_matching_blocks():
        for offset in range(block.size):
            matched[block.a + offset] = block.b + offset
    anchors = sorted(matched.items())
    bounds = [(-1, -1), *anchors, (len(learner), len(lesson))]
    budget = MAX_COMPARISONS  # a file of shuffled cells must not stall
    work = MAX_DIFF_WORK
    for (a0, b0), (a1, b1) in itertools.pairwise(bounds):
        free_s = list(range(b0 + 1, b1))
        for i in range(a0 + 1, a1):
            budget -= len(free_s)
            work -= sum(
                len(learner[i]) * len(lesson[j])
                for j in free_s
                if _comparable(learner[i], lesson[j])
            )
            if budget < 0 or work < 0:
                return matched
            scored = [(_similarity(learner[i], lesson[j]), j) for j in free_s]
            best = max(scored, default=(0.0, -1))
            if best[0] >= _SIMILAR:
                matched[i] = best[1]
                free_s = [j for j in free_s if j > best[1]]
    return matched


@dataclass(frozen=True)
class PracticeLayout:
    """What matching a learner's file to its lesson needs, worked out once per lesson: the
    practice file's own cells, the tasks' titles, the label of the last step, and the
    lesson's code read once (these cells, the steps, the scaffolds, the solutions and the
    declared mistakes), which the rubric, the reference's names and imports, every file's
    plan and the diagnosis read."""

    cells: tuple[LessonCell, ...]
    task_titles: tuple[tuple[str, str], ...]  # (task id, title)
    last_step: str
    code: LessonCode = field(compare=False, repr=False)


def practice_layout(lesson: Lesson) -> PracticeLayout:
    titles = tuple((task.id, task.title) for task in lesson.tasks)
    cells = practice_cells(lesson)
    sources = [cell.source for cell in cells] + [step.code for step in lesson.steps]
    sources += [code for task in lesson.tasks for code in (task.scaffold, task.solution)]
    sources += [attempt.code for attempt in declared_mistakes(lesson)]
    last_step = f"step-{lesson.steps[-1].number}"
    return PracticeLayout(cells, titles, last_step, read_cells(sources))


def plan_submission(submission: Submission, lesson: Lesson) -> Plan:
    """The learner's cells with roles and labels (`plan_cells` with the lesson's layout)."""
    return plan_cells(submission, practice_layout(lesson))


def plan_cells(submission: Submission, layout: PracticeLayout) -> Plan:
    """The learner's cells with roles and labels, matched to a lesson's `layout`."""
    notebook = submission.path.suffix == ".ipynb"
    known = layout.cells
    others = [c for c in submission.cells if c.task is None]
    matches = match_cells([c.source for c in others], [c.source for c in known], layout.code)
    label_of = {id(cell): known[matches[i]] for i, cell in enumerate(others) if i in matches}
    cells = []
    titles = dict(layout.task_titles)
    for index, cell in enumerate(submission.cells):
        offset = 0 if notebook else cell.line - 1
        lesson_cell = label_of.get(id(cell))
        if cell.task is not None:
            role, label = TASK, None
        elif lesson_cell is not None:
            role, label = lesson_cell.role, lesson_cell.label
        else:
            role, label = SETUP, None
        cells.append(
            PlannedCell(
                index=index,
                source=cell.source,
                line=cell.line,
                offset=offset,
                role=role,
                task=cell.task,
                label=label,
                task_title=titles.get(cell.task) if cell.task else None,
            )
        )
    checkpoint = _checkpoint(cells, layout.last_step)
    return Plan(str(submission.path), notebook, tuple(cells), checkpoint)


def _checkpoint(cells: list[PlannedCell], last_step: str) -> int | None:
    """After the last step; failing that, after the last set-up cell before the first task."""
    for cell in cells:
        if cell.label == last_step:
            return cell.index
    first_task = next((c.index for c in cells if c.role == TASK), len(cells))
    setup = [c.index for c in cells if c.role == SETUP and c.index < first_task]
    return setup[-1] if setup else None


def reference_plan(lesson: Lesson) -> Plan:
    """The lesson's own steps and reference solutions, as the grader's yardstick."""
    cells = []
    for step in lesson.steps:
        offset = _code_offset(lesson, step.line, step.code)
        label = f"step-{step.number}"
        cells.append(PlannedCell(len(cells), step.code, offset + 1, offset, SETUP, None, label))
    for task in lesson.tasks:
        offset = _code_offset(lesson, task.line, task.solution)
        cells.append(
            PlannedCell(len(cells), task.solution, offset + 1, offset, TASK, task.id, None)
        )
    checkpoint = len(lesson.steps) - 1
    return Plan(str(lesson.path), False, tuple(cells), checkpoint)


def _code_offset(lesson: Lesson, after: int, code: str) -> int:
    """Lines before `code` in lesson.md, so errors in reference code cite lesson.md lines."""
    first = code.splitlines()[0]
    lines = lesson.source.splitlines()
    for number in range(after, len(lines)):
        if lines[number] == first:
            return number
    return after


def step_names(lesson: Lesson, code: LessonCode) -> tuple[str, ...]:
    """Names the lesson's steps bind at the top level: assignments and imports, not
    functions (the names a child reports at the checkpoint)."""
    return tuple(n for step in lesson.steps for n in code.of(step.code).bound)


def imported_modules(layout: PracticeLayout, lesson: Lesson) -> tuple[str, ...]:
    """Modules the practice file imports, in its cells and its tasks' scaffolds, so the
    grading starter imports them once instead of every forked child (under gVisor each
    child paid again for the import's hundreds of file opens and stats)."""
    sources = [cell.source for cell in layout.cells if cell.role != SKIP]
    sources += [task.scaffold for task in lesson.tasks]
    return tuple(dict.fromkeys(m for s in sources for m in layout.code.of(s).imported))
