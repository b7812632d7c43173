"""Load lesson.md into the `Lesson` model.

lesson.md is Markdown with YAML front matter. Top-level headings are the preamble and the
five stages; second-level headings are sections (`## Title {#id}`); fenced blocks whose info
string is `{role} argument` carry the structured parts. Every mistake is reported as one
`LessonError` naming `file:line`.
"""

from __future__ import annotations

import ast
import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import yaml
from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from lessonkit.errors import LessonError
from lessonkit.lesson.evidence_block import parse_evidence
from lessonkit.lesson.grading_block import parse_grading
from lessonkit.lesson.model import (
    DEFAULT_FIGURE_NOTE,
    PREAMBLE,
    STAGES,
    TASK_KINDS,
    Box,
    Check,
    CodeNote,
    Diagram,
    EvidenceBlock,
    EvidenceItem,
    Experiment,
    Figure,
    Grading,
    Illustration,
    Item,
    Lesson,
    Math,
    Meta,
    Number,
    Numbers,
    NumberValue,
    Part,
    Pause,
    Phase,
    Plot,
    Prose,
    ProseNumber,
    Quiz,
    RunCommand,
    Section,
    SetupCommand,
    Step,
    Task,
)
from lessonkit.lesson.numbers import prose_numbers, same

_ROLE = re.compile(r"^\{(?P<role>[A-Za-z_-]+)\}\s*(?P<arg>.*)$")
_OPTION = re.compile(r"^:(?P<key>[a-z_]+):\s?(?P<value>.*)$")
_HEADING_ID = re.compile(r"^(?P<title>.*?)\s*\{#(?P<id>[a-z0-9-]+)\}\s*$")


@dataclass(frozen=True)
class RawBlock:
    """A fenced block before its role gives it meaning."""

    role: str
    arg: str
    options: dict[str, tuple[str, ...]]
    option_lines: dict[str, tuple[int, ...]]
    body: str
    line: int
    where: str

    @property
    def body_line(self) -> int:
        """The lesson.md line of the body's first line, below the fence and the options."""
        return self.line + 1 + sum(len(v) for v in self.options.values())

    def error(self, message: str, line: int | None = None) -> LessonError:
        return LessonError(
            f"{{{self.role}}} block: {message}", where=_at(self.where, line or self.line)
        )

    def one(self, key: str, default: str | None = None) -> str:
        values = self.options.get(key)
        if values is None:
            if default is None:
                raise self.error(f"missing option ':{key}:'")
            return default
        if len(values) > 1:
            raise self.error(f"option ':{key}:' given {len(values)} times; it takes one value")
        return values[0]

    def many(self, key: str) -> tuple[str, ...]:
        return self.options.get(key, ())

    def many_with_lines(self, key: str) -> tuple[tuple[str, int], ...]:
        return tuple(zip(self.many(key), self.option_lines.get(key, ()), strict=True))

    def need_arg(self, what: str) -> str:
        if not self.arg:
            raise self.error(f"needs {what} after the role, as in ```{{{self.role}}} {what}")
        return self.arg

    def need_body(self, what: str) -> str:
        if not self.body.strip():
            raise self.error(f"is empty; it needs {what}")
        return self.body


@dataclass(frozen=True)
class BlockRole:
    """One block kind: the options it accepts and the function that builds its item."""

    options: frozenset[str]
    build: Callable[[RawBlock], Item | RawBlock]


def _at(path: str, line: int) -> str:
    return f"{path}:{line}"


def _code_notes(block: RawBlock) -> tuple[CodeNote, ...]:
    notes = []
    for value, line in block.many_with_lines("uses"):
        signature, sep, meaning = value.partition(" | ")
        if not sep or not meaning.strip():
            raise block.error(f"':uses:' must read 'signature | meaning', got {value!r}", line)
        notes.append(CodeNote(signature.strip(), meaning.strip()))
    return tuple(notes)


def _setup(b: RawBlock) -> SetupCommand:
    shell = b.one("shell")
    if shell not in ("bash", "powershell"):
        raise b.error(f"':shell:' must be bash or powershell, got {shell!r}")
    return SetupCommand(b.need_arg("a label"), shell, b.need_body("commands").strip(), b.line)


def _illustration(b: RawBlock) -> Illustration:
    boxes = []
    for value, line in b.many_with_lines("box"):
        parts = [p.strip() for p in value.split(" | ")]
        if len(parts) != 3:
            raise b.error(f"':box:' must read 'title | formula | caption', got {value!r}", line)
        boxes.append(Box(*parts))
    if not boxes:
        raise b.error("needs at least one ':box:' option")
    return Illustration(b.need_arg("a title"), tuple(boxes), b.body.strip(), b.line)


def _pause(b: RawBlock) -> Pause:
    return Pause(b.need_arg("the question"), b.need_body("the answer").strip(), b.line)


def _diagram(b: RawBlock) -> Diagram:
    return Diagram(b.one("tree"), b.need_body("the diagram").rstrip("\n"), b.line)


def _math(b: RawBlock) -> Math:
    return Math(b.need_body("LaTeX").strip(), b.line)


def _yaml_mark(exc: yaml.YAMLError):
    """Where YAML trouble starts: the opening of the construct if known, else the problem."""
    return getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)


def _yaml_body(b: RawBlock) -> object:
    try:
        return yaml.safe_load(b.body)
    except yaml.YAMLError as exc:
        mark = _yaml_mark(exc)
        line = b.body_line + (mark.line if mark else 0)
        raise b.error(f"body is not valid YAML ({getattr(exc, 'problem', exc)})", line) from None


def _number_value(b: RawBlock, name: str, value: object, line: int) -> NumberValue:
    def plain(v: object) -> bool:
        return isinstance(v, int | float) and not isinstance(v, bool)

    if plain(value):
        return value  # type: ignore[return-value]
    if isinstance(value, list) and value and all(plain(v) for v in value):
        return tuple(value)
    raise b.error(f"number {name!r}: 'value' must be a number or a list of numbers", line)


def _numbers(b: RawBlock) -> Numbers:
    data = _yaml_body(b)
    if not isinstance(data, dict) or not data:
        raise b.error("body must be a YAML mapping of name: {value: ..., expr: ...}")
    items = []
    body_lines = b.body.splitlines()
    for name, entry in data.items():
        offset = next((i for i, t in enumerate(body_lines) if t.startswith(f"{name}:")), 0)
        line = b.body_line + offset
        if not isinstance(entry, dict) or set(entry) != {"value", "expr"}:
            raise b.error(f"number {name!r} needs exactly 'value' and 'expr'", line)
        value = _number_value(b, str(name), entry["value"], line)
        items.append(Number(str(name), value, str(entry["expr"]), line))
    sections = tuple(" ".join(b.many("sections")).split())
    not_results = tuple(" ".join(b.many("not_results")).split())
    return Numbers(tuple(items), sections, not_results, (), (), b.line)


def _step(b: RawBlock) -> Step:
    return Step(
        number=0,  # numbered in lesson order once all steps are known
        title=b.need_arg("a title"),
        intro=b.one("intro"),
        summary=b.one("summary"),
        uses=_code_notes(b),
        code=b.need_body("code").rstrip("\n"),
        line=b.line,
    )


def _run(b: RawBlock) -> RunCommand:
    return RunCommand(b.need_arg("the command"), b.one("expected"), b.one("about"), b.line)


def _check(b: RawBlock) -> Check:
    return Check(b.one("expected"), b.line)


def _figure(b: RawBlock) -> Figure:
    code = b.need_body("the code that computes figure_data").rstrip("\n")
    if "figure_data" not in code:
        raise b.error("code must define figure_data")
    note = b.one("notebook_note", DEFAULT_FIGURE_NOTE)
    return Figure(b.need_arg("a title"), b.one("prompt"), b.one("alt"), code, b.line, note)


def _plot(b: RawBlock) -> Plot:
    return Plot(b.need_body("plotting code").rstrip("\n"), b.line)


def _experiment(b: RawBlock) -> Experiment:
    optional = b.one("optional", "no")
    if optional not in ("yes", "no"):
        raise b.error(f"':optional:' must be yes or no, got {optional!r}")
    return Experiment(
        b.need_arg("a title"),
        b.one("prompt"),
        b.one("expected"),
        b.need_body("code").rstrip("\n"),
        b.line,
        optional == "yes",
        b.many("output"),
    )


def _quiz(b: RawBlock) -> Quiz:
    data = _yaml_body(b)
    if not isinstance(data, dict):
        raise b.error("body must be a YAML mapping with question, options, answer, explanation")
    missing = {"question", "options", "answer", "explanation"} - set(data)
    if missing:
        raise b.error(f"missing {', '.join(sorted(missing))}")
    options = data["options"]
    if not isinstance(options, list) or len(options) < 2:
        raise b.error("'options' must be a list of at least two answers")
    answer = data["answer"]
    if not isinstance(answer, int) or isinstance(answer, bool) or not 0 <= answer < len(options):
        raise b.error(
            f"quiz answer {answer!r} is out of range: give the index of the right option, "
            f"0 to {len(options) - 1}"
        )
    quiz_id = b.arg or "quiz"
    return Quiz(
        quiz_id,
        str(data["question"]),
        tuple(map(str, options)),
        answer,
        str(data["explanation"]),
        b.line,
    )


def _grading(b: RawBlock) -> Grading:
    return parse_grading(_yaml_body(b), b.body, b.line, b.where, b.error)


def _evidence(b: RawBlock) -> EvidenceBlock:
    return parse_evidence(_yaml_body(b), b.body, b.body_line, b.line, b.error)


def _keep(b: RawBlock) -> RawBlock:
    """Task parts (task, scaffold, solution, hint, reasoning) are joined per section later."""
    return b


_NOTE_OPTIONS = frozenset({"uses"})
ROLES: dict[str, BlockRole] = {
    "setup": BlockRole(frozenset({"shell"}), _setup),
    "check": BlockRole(frozenset({"expected"}), _check),
    "illustration": BlockRole(frozenset({"box"}), _illustration),
    "pause": BlockRole(frozenset(), _pause),
    "diagram": BlockRole(frozenset({"tree"}), _diagram),
    "math": BlockRole(frozenset(), _math),
    "numbers": BlockRole(frozenset({"sections", "not_results"}), _numbers),
    "step": BlockRole(frozenset({"intro", "summary"}) | _NOTE_OPTIONS, _step),
    "run": BlockRole(frozenset({"expected", "about"}), _run),
    "figure": BlockRole(frozenset({"prompt", "alt", "notebook_note"}), _figure),
    "plot": BlockRole(frozenset(), _plot),
    "experiment": BlockRole(frozenset({"prompt", "expected", "optional", "output"}), _experiment),
    "quiz": BlockRole(frozenset(), _quiz),
    "grading": BlockRole(frozenset(), _grading),
    "evidence": BlockRole(frozenset(), _evidence),
    "task": BlockRole(frozenset({"kind", "where", "plan", "title"}) | _NOTE_OPTIONS, _keep),
    "scaffold": BlockRole(frozenset(), _keep),
    "solution": BlockRole(frozenset(), _keep),
    "hint": BlockRole(frozenset(), _keep),
    "reasoning": BlockRole(frozenset(), _keep),
}
_TASK_PARTS = ("scaffold", "solution", "hint", "reasoning")


def _raw_block(info: str, content: str, line: int, where: str) -> RawBlock | None:
    match = _ROLE.match(info.strip())
    if match is None:
        return None  # an ordinary code fence: part of the prose
    role, arg = match["role"], match["arg"].strip()
    if role not in ROLES:
        known = ", ".join(sorted(ROLES))
        raise LessonError(
            f"unknown block role {{{role}}}; choose one of: {known}", where=_at(where, line)
        )
    options: dict[str, list[str]] = {}
    option_lines: dict[str, list[int]] = {}
    lines = content.splitlines()
    index = 0
    while index < len(lines) and (opt := _OPTION.match(lines[index])):
        key = opt["key"]
        if key not in ROLES[role].options:
            allowed = ", ".join(sorted(ROLES[role].options)) or "none"
            raise LessonError(
                f"{{{role}}} block: unknown option ':{key}:'; allowed: {allowed}",
                where=_at(where, line + 1 + index),
            )
        options.setdefault(key, []).append(opt["value"].strip())
        option_lines.setdefault(key, []).append(line + 1 + index)
        index += 1
    body = "\n".join(lines[index:])
    frozen = {k: tuple(v) for k, v in options.items()}
    frozen_lines = {k: tuple(v) for k, v in option_lines.items()}
    return RawBlock(role, arg, frozen, frozen_lines, body + ("\n" if body else ""), line, where)


def _check_placeholders(scaffold: RawBlock) -> None:
    """Every `todo(...)` outside a function must be the whole value of an assignment.

    The grader grades the names a scaffold assigns from `todo(...)` (in `try`, `if` or loop
    blocks too); one inside an expression names nothing, so the task would go ungraded.
    Inside a function a placeholder is fine: the names that call the function are graded.
    """
    try:
        tree = ast.parse(scaffold.body)
    except SyntaxError as exc:
        line = scaffold.line + (exc.lineno or 1)
        raise scaffold.error(f"is not valid Python ({exc.msg})", line) from None
    outside: list[ast.AST] = []  # every node outside a function body
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        outside.append(node)
        pending.extend(ast.iter_child_nodes(node))
    graded = {
        id(node.value)
        for node in outside
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None
    }
    for node in outside:
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "todo"
            and id(node) not in graded
        ):
            raise scaffold.error(
                "todo(...) outside a function must be the whole value of an assignment "
                "(`name = todo(...)`), so the grader knows which name to grade",
                scaffold.line + node.lineno,
            )


def _assemble_task(parts: list[RawBlock]) -> Task:
    head = parts[0]
    found: dict[str, RawBlock] = {}
    for part in parts[1:]:
        if part.role in found:
            raise part.error(f"task {head.arg!r} already has a {{{part.role}}} block")
        found[part.role] = part
    for needed in ("scaffold", "solution", "hint"):
        if needed not in found:
            raise head.error(f"task {head.arg!r} has no {{{needed}}} block after it")
    kind = head.one("kind")
    if kind not in TASK_KINDS:
        raise head.error(f"':kind:' must be one of {', '.join(TASK_KINDS)}, got {kind!r}")
    if not re.fullmatch(r"[a-z0-9-]+", head.arg or ""):
        raise head.error("needs a task id of lowercase letters, digits and dashes")
    reasoning = found.get("reasoning")
    _check_placeholders(found["scaffold"])
    return Task(
        id=head.arg,
        kind=kind,
        title=head.one("title", ""),  # empty: the section title, filled in by the caller
        where=head.one("where"),
        uses=_code_notes(head),
        plan=head.many("plan"),
        prompt=head.need_body("the task prompt").strip(),
        scaffold=found["scaffold"].need_body("scaffold code").rstrip("\n"),
        solution=found["solution"].need_body("solution code").rstrip("\n"),
        hint=found["hint"].need_body("a hint").strip(),
        reasoning=reasoning.body.strip() if reasoning else "",
        line=head.line,
    )


class _SectionBuilder:
    def __init__(self, title: str, section_id: str, line: int, where: str):
        self.title, self.id, self.line, self.where = title, section_id, line, where
        self.items: list[Item] = []
        self.task_parts: list[RawBlock] = []

    def add_prose(self, text: str, line: int) -> None:
        self._flush_task()
        if text.strip():
            self.items.append(Prose(text.strip("\n"), line))

    def add_block(self, block: RawBlock) -> None:
        if block.role == "task":
            self._flush_task()
            self.task_parts = [block]
        elif block.role in _TASK_PARTS:
            if not self.task_parts:
                raise block.error("must follow a {task} block in the same section")
            self.task_parts.append(block)
        else:
            self._flush_task()
            self.items.append(ROLES[block.role].build(block))

    def _flush_task(self) -> None:
        if self.task_parts:
            task = _assemble_task(self.task_parts)
            self.items.append(replace(task, title=task.title or self.title))
            self.task_parts = []

    def build(self) -> Section:
        self._flush_task()
        return Section(self.id, self.title, tuple(self.items), self.line)


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


_META_TYPES: dict[str, type | tuple[type, ...]] = {
    "id": str,
    "title": str,
    "goal": str,
    "track": str,
    "hardware_labels": list,
    "phase": dict,
    "lesson_number": int,
    "lesson_count": int,
    "revision": str,
    "date": dt.date,
    "minutes": int,
    "hardware": str,
    "practice": str,
    "previous": str,
}
_PHASE_KEYS = ("number", "title", "study_guide", "lessons")


def _meta(text: str, where: str) -> Meta:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = _yaml_mark(exc)
        line = 2 + (mark.line if mark else 0)
        problem = getattr(exc, "problem", None) or exc
        raise LessonError(
            f"bad front matter: not valid YAML ({problem})", where=_at(where, line)
        ) from None
    if not isinstance(data, dict):
        raise LessonError("bad front matter: expected key: value lines", where=_at(where, 1))

    def line_of(key: str) -> int:
        for number, raw in enumerate(text.splitlines(), start=2):
            if raw.lstrip().startswith(f"{key}:"):  # the first line with the key, nested too
                return number
        return 1

    for key, kind in _META_TYPES.items():
        if key not in data:
            raise LessonError(f"bad front matter: missing '{key}'", where=_at(where, 1))
        if not isinstance(data[key], kind) or isinstance(data[key], bool):
            expected = kind.__name__ if isinstance(kind, type) else kind
            raise LessonError(
                f"bad front matter: '{key}' should be a {expected}, got {data[key]!r}",
                where=_at(where, line_of(key)),
            )
    unknown = set(data) - set(_META_TYPES)
    if unknown:
        raise LessonError(
            f"bad front matter: unknown key(s) {', '.join(sorted(unknown))}",
            where=_at(where, line_of(sorted(unknown)[0])),
        )
    phase = data["phase"]
    if set(phase) != set(_PHASE_KEYS) or not isinstance(phase["lessons"], list):
        raise LessonError(
            f"bad front matter: 'phase' needs exactly {', '.join(_PHASE_KEYS)} (lessons a list)",
            where=_at(where, line_of("phase")),
        )
    if not 1 <= data["lesson_number"] <= data["lesson_count"] == len(phase["lessons"]):
        raise LessonError(
            "bad front matter: lesson_number must lie in 1..lesson_count, and lesson_count "
            "must equal the number of phase lessons",
            where=_at(where, line_of("lesson_number")),
        )
    lessons = phase["lessons"]
    if not all(entry is None or isinstance(entry, str) for entry in lessons):
        raise LessonError(
            "bad front matter: each of the phase's lessons is a title, or ~ for a lesson "
            "still to be written (shown as coming later)",
            where=_at(where, line_of("lessons")),
        )
    number = data["lesson_number"]
    if lessons[number - 1] != data["title"]:
        raise LessonError(
            f"bad front matter: entry {number} of the phase's lessons is "
            f"{lessons[number - 1]!r}, but this lesson's title is {data['title']!r}",
            where=_at(where, line_of("lessons")),
        )
    before = lessons[number - 2] if number > 1 else None
    if before is not None and data["previous"] != before:
        raise LessonError(
            f"bad front matter: 'previous' is {data['previous']!r}, but the phase lists "
            f"{before!r} before this lesson",
            where=_at(where, line_of("previous")),
        )
    return Meta(
        id=data["id"],
        title=data["title"],
        goal=data["goal"],
        track=data["track"],
        hardware_labels=tuple(map(str, data["hardware_labels"])),
        phase=Phase(
            str(phase["number"]), phase["title"], phase["study_guide"], tuple(phase["lessons"])
        ),
        lesson_number=data["lesson_number"],
        lesson_count=data["lesson_count"],
        revision=data["revision"],
        date=data["date"],
        minutes=data["minutes"],
        hardware=data["hardware"],
        practice=data["practice"],
        previous=data["previous"],
    )


def parse_lesson(text: str, path: Path) -> Lesson:
    """Parse lesson source text; `path` is used for messages and to locate the lesson."""
    where = str(path)
    tokens = MarkdownIt("commonmark").use(front_matter_plugin).parse(text)
    lines = text.splitlines()
    if not tokens or tokens[0].type != "front_matter":
        raise LessonError(
            "bad front matter: the file must start with a '---' YAML block", where=_at(where, 1)
        )
    meta = _meta(tokens[0].content, where)

    parts: list[Part] = []
    part_title: str | None = None
    part_line = 0
    sections: list[Section] = []
    current: _SectionBuilder | None = None
    prose_start: int | None = None
    prose_end = 0

    def flush_prose() -> None:
        nonlocal prose_start
        if prose_start is not None and current is not None:
            current.add_prose("\n".join(lines[prose_start:prose_end]), prose_start + 1)
        prose_start = None

    def close_part() -> None:
        nonlocal sections
        if current is not None:
            sections.append(current.build())
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
                        where=_at(where, start + 1),
                    )
                part_title, part_line = title_text, start + 1
            else:
                if part_title is None:
                    raise LessonError(
                        "a section must sit under a top-level part heading",
                        where=_at(where, start + 1),
                    )
                if current is not None:
                    sections.append(current.build())
                match = _HEADING_ID.match(title_text)
                title, section_id = (
                    (match["title"], match["id"]) if match else (title_text, _slug(title_text))
                )
                current = _SectionBuilder(title, section_id, start + 1, where)
            index += 3
            continue
        if token.type == "fence":
            block = _raw_block(token.info, token.content, start + 1, where)
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
                "text must sit inside a section (a '## ' heading)", where=_at(where, start + 1)
            )
        if prose_start is None:
            prose_start = start
        prose_end = end
        index += 1
        # skip the nested tokens of this block
        while index < len(tokens) and tokens[index].level != 0:
            index += 1
    flush_prose()
    close_part()
    lesson = Lesson(meta, tuple(parts), path, text)
    _validate(lesson)
    return _tie_numbers(_number_steps(lesson))


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


def _tie_numbers(lesson: Lesson) -> Lesson:
    """Give each {numbers} block the numbers its sections' prose writes, and tie each declared
    number to the lines that state it; `lessonkit.lesson.numbers` judges them."""
    by_id = {s.id: s for s in lesson.sections}

    def tie(block: Numbers, home: Section) -> Numbers:
        sections = block.sections or (home.id,)
        unknown = [s for s in sections if s not in by_id]
        if unknown:
            raise LessonError(
                f"{{numbers}} block: ':sections:' names unknown section(s) {', '.join(unknown)}",
                where=_at(str(lesson.path), block.line),
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
        items = tuple(
            replace(n, stated=tuple(sorted({p.line for p in prose + in_code if _states(p, n)})))
            for n in block.items
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


def _states(said: ProseNumber, number: Number) -> bool:
    return any(same(said.value, v) for v in number.values)


def _validate(lesson: Lesson) -> None:
    where = str(lesson.path)
    seen: dict[str, int] = {}
    for section in lesson.sections:
        if section.id in seen:
            raise LessonError(
                f"section id {section.id!r} is used twice (first at line {seen[section.id]})",
                where=_at(where, section.line),
            )
        seen[section.id] = section.line
    titles = [p.title for p in lesson.parts if p.stage is not None]
    if titles != list(STAGES):
        raise LessonError(
            f"the stages must appear once each, in order: {', '.join(STAGES)}; "
            f"found {', '.join(titles)}",
            where=_at(where, 1),
        )
    for kind, what in ((Figure, "{figure}"), (Plot, "{plot}")):
        if len(lesson.items(kind)) != 1:
            raise LessonError(f"the lesson needs exactly one {what} block", where=_at(where, 1))
    if not lesson.steps:
        raise LessonError("the lesson needs at least one {step} block", where=_at(where, 1))
    for kind, what in ((Task, "task"), (Quiz, "quiz")):
        seen_ids: dict[str, int] = {}
        for item in lesson.items(kind):
            if item.id in seen_ids:
                raise LessonError(
                    f"{what} id {item.id!r} is used twice (first at line {seen_ids[item.id]})",
                    where=_at(where, item.line),
                )
            seen_ids[item.id] = item.line
    _validate_grading(lesson)
    _validate_evidence(lesson)


def _validate_evidence(lesson: Lesson) -> None:
    """At most one {evidence} block, naming only sections, tasks and numbers that exist."""
    where = str(lesson.path)
    blocks = lesson.items(EvidenceBlock)
    if len(blocks) > 1:
        raise LessonError(
            "the lesson has more than one {evidence} block", where=_at(where, blocks[1].line)
        )
    sections = {s.id: s for s in lesson.sections}
    tasks = {t.id for t in lesson.tasks}
    numbers = {n.name for n in lesson.numbers}
    for item in lesson.evidence:
        _validate_evidence_item(item, lesson, sections, tasks, numbers)


def _validate_evidence_item(
    item: EvidenceItem, lesson: Lesson, sections: dict, tasks: set[str], numbers: set[str]
) -> None:
    def fail(message: str, line: int = item.line) -> LessonError:
        where = _at(str(lesson.path), line)
        return LessonError(f"{{evidence}} block: item {item.title!r}: {message}", where=where)

    section = sections.get(item.section)
    if section is None:
        raise fail(f"'section' names no section of this lesson: {item.section!r}")
    if not item.prompt and not any(isinstance(i, Experiment) for i in section.items):
        raise fail(f"give a 'prompt': section {item.section!r} has no experiment to take it from")
    if item.task and item.task not in tasks:
        raise fail(f"'task' names no task of this lesson: {item.task!r}")
    for show in item.show:
        if show.number and show.number not in numbers:
            raise fail(f"'number' names no entry of the {{numbers}} block: {show.number!r}")
        if show.kind == "numbers" and not numbers:
            raise fail("'numbers: all' needs a {numbers} block")


def _validate_grading(lesson: Lesson) -> None:
    """At most one {grading} block, naming only tasks the lesson has."""
    where = str(lesson.path)
    blocks = lesson.items(Grading)
    if len(blocks) > 1:
        raise LessonError(
            "the lesson has more than one {grading} block", where=_at(where, blocks[1].line)
        )
    if not blocks:
        return
    grading, task_ids = blocks[0], {t.id for t in lesson.tasks}
    for task_id, _ in grading.points:
        if task_id not in task_ids:
            raise LessonError(
                f"{{grading}} block: 'points' names no task of this lesson: {task_id!r}",
                where=_at(where, grading.line),
            )
    for task_id, rule in grading.accept:
        if task_id not in task_ids:
            raise LessonError(
                f"{{grading}} block: 'accept' names no task of this lesson: {task_id!r}",
                where=_at(where, rule.line or grading.line),
            )
    entries = [("attempt", a) for a in grading.attempts] + [("probe", p) for p in grading.probes]
    for kind, entry in entries:
        if entry.task not in task_ids:
            raise LessonError(
                f"{{grading}} block: {kind} {entry.name!r} names no task of this lesson: "
                f"{entry.task!r}",
                where=_at(where, entry.line),
            )
    step_names = {n for step in lesson.steps for n in _assigned(step.code)}
    for probe in grading.probes:
        if probe.source == "step" and probe.target not in step_names:
            raise LessonError(
                f"{{grading}} block: probe {probe.name!r} varies {probe.target!r}, which no step "
                "assigns: a probe varies a value at its source, before the task's cell runs",
                where=_at(where, probe.line),
                fix="vary an input the generators draw, a name a step assigns (with 'replace'), "
                "'gradients', or a library function such as optax.apply_updates",
            )


def _assigned(code: str) -> list[str]:
    """Names a step's top-level assignments bind (`value, grads = ...` binds both)."""
    names = []
    for statement in ast.parse(code).body:
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        for target in targets:
            elements = target.elts if isinstance(target, ast.Tuple) else [target]
            names.extend(t.id for t in elements if isinstance(t, ast.Name))
    return names


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
