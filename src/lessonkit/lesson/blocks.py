"""Fenced blocks of lesson.md: the raw block, and one table of roles with their builders.

A fence whose info string is `{role} argument` is a block (a MyST directive); its options are
`:key: value` lines or a YAML mapping between `---` lines at the top of its body. `ROLES` is
the one table of block kinds: the options each accepts and the function that builds its
item. Task parts are kept raw and joined per section by `lessonkit.lesson.tasks`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

import yaml

from lessonkit.errors import LessonError
from lessonkit.lesson.evidence_block import parse_evidence
from lessonkit.lesson.grading_block import parse_grading
from lessonkit.lesson.model import (
    ATTEMPT_STATUSES,
    DEFAULT_FIGURE_NOTE,
    Box,
    Check,
    CodeNote,
    DeclaredAttempt,
    Diagram,
    EvidenceBlock,
    Experiment,
    Figure,
    Grading,
    Illustration,
    Item,
    Math,
    Number,
    Numbers,
    NumberValue,
    Pause,
    Plot,
    Quiz,
    RunCommand,
    SetupCommand,
    Step,
)

ROLE_INFO = re.compile(r"^\{(?P<role>[A-Za-z_-]+)\}\s*(?P<arg>.*)$")
OPTION_LINE = re.compile(r"^:(?P<key>[a-z_]+):\s?(?P<value>.*)$")
FENCED_CODE = re.compile(
    r"\s*(?P<fence>`{3,})[ \t]*(?:python|python3|ipython3)?[ \t]*\n(?P<code>.*?\n)?(?P=fence)\s*",
    re.S,
)


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
    body_offset: int = 0  # lines between the fence and the body: the options, in either form

    @property
    def body_line(self) -> int:
        """The lesson.md line of the body's first line, below the fence and the options."""
        return self.line + 1 + self.body_offset

    def error(self, message: str, line: int | None = None) -> LessonError:
        return LessonError(
            f"{{{self.role}}} block: {message}", where=at_line(self.where, line or self.line)
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

    def code_body(self, what: str) -> str:
        """The body as code: a body that is one fenced code block (as MyST's own `{solution}`
        needs, to show it as code) gives that block's content."""
        body = self.need_body(what)
        match = FENCED_CODE.fullmatch(body)
        if match is None:
            return body
        return match["code"]

    def need_body(self, what: str) -> str:
        if not self.body.strip():
            raise self.error(f"is empty; it needs {what}")
        return self.body


@dataclass(frozen=True)
class BlockRole:
    """One block kind: the options it accepts and the function that builds its item."""

    options: frozenset[str]
    build: Callable[[RawBlock], Item | DeclaredAttempt | RawBlock]


def at_line(path: str, line: int) -> str:
    return f"{path}:{line}"


def code_notes(block: RawBlock) -> tuple[CodeNote, ...]:
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


def yaml_mark(exc: yaml.YAMLError):
    """Where YAML trouble starts: the opening of the construct if known, else the problem."""
    return getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)


def yaml_body(b: RawBlock) -> object:
    try:
        return yaml.safe_load(b.body)
    except yaml.YAMLError as exc:
        mark = yaml_mark(exc)
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
    data = yaml_body(b)
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
        uses=code_notes(b),
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
        b.option_lines.get("expected", (b.line,))[0],
    )


def _quiz(b: RawBlock) -> Quiz:
    data = yaml_body(b)
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
    return parse_grading(yaml_body(b), b.body, b.line, b.where, b.error)


def _evidence(b: RawBlock) -> EvidenceBlock:
    return parse_evidence(yaml_body(b), b.body, b.body_line, b.line, b.error)


def _attempt(b: RawBlock) -> DeclaredAttempt:
    """An attempt `lessonkit verify` grades: its name, its task's cell as code, its verdict."""
    expect = b.one("expect")
    if expect not in ATTEMPT_STATUSES:
        raise b.error(f"':expect:' must be one of {', '.join(ATTEMPT_STATUSES)}, got {expect!r}")
    message = b.one("message", "")
    try:
        re.compile(message)
    except re.error as exc:
        raise b.error(f"':message:' is not a regular expression ({exc})") from None
    code = b.need_body("the task cell's code")
    why, instead = (" ".join(b.one(key, "").split()) for key in ("why", "instead"))
    name = b.need_arg("a name")
    task = b.one("task")
    return DeclaredAttempt(task, name, code, expect, message, b.line, why, instead)  # type: ignore[arg-type]


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
    "figure-data": BlockRole(frozenset({"prompt", "alt", "notebook_note"}), _figure),
    "plot": BlockRole(frozenset(), _plot),
    "experiment": BlockRole(frozenset({"prompt", "expected", "optional", "output"}), _experiment),
    "quiz": BlockRole(frozenset(), _quiz),
    "grading": BlockRole(frozenset(), _grading),
    "evidence": BlockRole(frozenset(), _evidence),
    "attempt": BlockRole(frozenset({"task", "expect", "message", "why", "instead"}), _attempt),
    "task": BlockRole(frozenset({"kind", "where", "plan", "title"}) | _NOTE_OPTIONS, _keep),
    "scaffold": BlockRole(frozenset(), _keep),
    "solution": BlockRole(frozenset(), _keep),
    "hint": BlockRole(frozenset({"for"}), _keep),
    "reasoning": BlockRole(frozenset(), _keep),
}
TASK_PARTS = ("scaffold", "solution", "hint", "reasoning")
OLD_NAMES: dict[str, str] = {"figure": "figure-data"}
"""Role names lessons written before lesson.md became MyST use: still loaded, under the new
name (`lessonkit migrate` rewrites them). MyST's own `{figure}` is an image."""
CODE_CELL = "code-cell"
CODE_CELL_ROLES = frozenset({"step", "experiment"})
"""Roles whose code may stand, instead of in their own body, in the MyST `{code-cell}` right
after them: what jupytext and Jupyter Book read as a notebook's code cell."""
MYST_OPTIONS = frozenset({"label", "class"})
"""MyST's options that every directive takes: accepted on every block, and not used."""


def raw_block(info: str, content: str, line: int, where: str) -> RawBlock | None:
    match = ROLE_INFO.match(info.strip())
    if match is None:
        return None  # an ordinary code fence: part of the prose
    role, arg = match["role"], match["arg"].strip()
    role = OLD_NAMES.get(role, role)
    if role not in ROLES:
        known = ", ".join(sorted(ROLES))
        raise LessonError(
            f"unknown block role {{{role}}}; choose one of: {known}", where=at_line(where, line)
        )
    lines = content.splitlines()
    if lines and lines[0].rstrip() == "---":
        options, option_lines, index = _yaml_options(role, lines, line, where)
    else:
        options, option_lines, index = _colon_options(lines, line)
    for key in options.keys() - MYST_OPTIONS:
        if key not in ROLES[role].options:
            allowed = ", ".join(sorted(ROLES[role].options)) or "none"
            raise LessonError(
                f"{{{role}}} block: unknown option ':{key}:'; allowed: {allowed}"
                f" (and MyST's {', '.join(sorted(MYST_OPTIONS))})",
                where=at_line(where, option_lines[key][0]),
            )
    body = "\n".join(lines[index:])
    frozen = {k: tuple(v) for k, v in options.items()}
    frozen_lines = {k: tuple(v) for k, v in option_lines.items()}
    return RawBlock(
        role, arg, frozen, frozen_lines, body + ("\n" if body else ""), line, where, index
    )


_Options = tuple[dict[str, list[str]], dict[str, list[int]], int]


def code_cell(info: str, content: str, line: int, where: str) -> RawBlock | None:
    """A `{code-cell}` fence, its options (Jupyter's `tags` and the like) read and not used."""
    match = ROLE_INFO.match(info.strip())
    if match is None or match["role"] != CODE_CELL:
        return None
    lines = content.splitlines()
    if lines and lines[0].rstrip() == "---":
        options, option_lines, index = _yaml_options(CODE_CELL, lines, line, where)
    else:
        options, option_lines, index = _colon_options(lines, line)
    body = "\n".join(lines[index:])
    frozen = {k: tuple(v) for k, v in options.items()}
    frozen_lines = {k: tuple(v) for k, v in option_lines.items()}
    arg = match["arg"].strip()
    return RawBlock(
        CODE_CELL, arg, frozen, frozen_lines, body + ("\n" if body else ""), line, where, index
    )


def with_code(block: RawBlock, cell: RawBlock) -> RawBlock:
    """A `{step}` or `{experiment}` given the body of the `{code-cell}` that follows it."""
    if cell.arg not in ("", "python", "python3", "ipython3"):
        raise cell.error(f"holds {cell.arg!r} code; the lesson's code cells are Python")
    return replace(block, body=cell.body, body_offset=cell.body_line - block.line - 1)


def _colon_options(lines: list[str], line: int) -> _Options:
    """`:key: value` lines; a key given on several lines takes each value in turn."""
    options: dict[str, list[str]] = {}
    option_lines: dict[str, list[int]] = {}
    index = 0
    while index < len(lines) and (opt := OPTION_LINE.match(lines[index])):
        options.setdefault(opt["key"], []).append(opt["value"].strip())
        option_lines.setdefault(opt["key"], []).append(line + 1 + index)
        index += 1
    return options, option_lines, index


def _yaml_options(role: str, lines: list[str], line: int, where: str) -> _Options:
    """A YAML mapping between `---` lines; a list value gives the option several values."""
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if end is None:
        raise LessonError(
            f"{{{role}}} block: its YAML options open with '---' and need a closing '---'",
            where=at_line(where, line + 1),
        )
    try:
        data = yaml.safe_load("\n".join(lines[1:end])) or {}
    except yaml.YAMLError as exc:
        mark = yaml_mark(exc)
        raise LessonError(
            f"{{{role}}} block: its options are not valid YAML ({getattr(exc, 'problem', exc)})",
            where=at_line(where, line + 2 + (mark.line if mark else 0)),
        ) from None
    if not isinstance(data, dict):
        raise LessonError(
            f"{{{role}}} block: its options between '---' lines must be a YAML mapping",
            where=at_line(where, line + 2),
        )
    options: dict[str, list[str]] = {}
    option_lines: dict[str, list[int]] = {}
    for key, value in data.items():
        at = next((line + 1 + i for i in range(1, end) if lines[i].startswith(f"{key}:")), line + 1)
        values = value if isinstance(value, list) else [value]
        if not OPTION_LINE.match(f":{key}:") or not all(_scalar(v) for v in values):
            raise LessonError(
                f"{{{role}}} block: option {key!r} must be a text, a number, yes/no or a list "
                "of them",
                where=at_line(where, at),
            )
        options[str(key)] = [_option_text(v) for v in values]
        option_lines[str(key)] = [at] * len(values)
    return options, option_lines, end + 1


def _scalar(value: object) -> bool:
    return isinstance(value, str | int | float | bool)


def _option_text(value: object) -> str:
    """A YAML option value as the `:key: value` form gives it (YAML's true/false are yes/no)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value).strip()
