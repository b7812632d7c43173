"""The lesson page and the course index as HTML text: pure functions of the lesson model.

The site builder reads the few facts that live outside lesson.md (the execution records of the
lesson's scripts) and passes them in; this module reads nothing but its own templates and
static assets. Lesson text is Markdown with raw HTML switched off, so no lesson sentence can
inject markup; math becomes MathML (no script, no web font); code is highlighted by Pygments
with CSS classes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from latex2mathml.converter import convert as latex_to_mathml
from markdown_it import MarkdownIt
from markupsafe import Markup
from mdit_py_plugins.dollarmath import dollarmath_plugin
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name

from lessonkit import figure
from lessonkit.errors import LessonError
from lessonkit.model import (
    STAGES,
    Check,
    Diagram,
    Experiment,
    Figure,
    Illustration,
    Lesson,
    Math,
    Pause,
    Prose,
    Quiz,
    RunCommand,
    Section,
    SetupCommand,
    Step,
    Task,
)
from lessonkit.receipts import AcceleratorRecord, run_command
from lessonkit.render.script import render_main
from lessonkit.scripts import GOING_FURTHER, MAIN, Script, lesson_scripts
from lessonkit.study_guide import StudyGuide

if TYPE_CHECKING:
    from lessonkit.receipts import Receipt

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
ASSETS = "assets"
CSS_ASSET = f"{ASSETS}/lessonkit.css"
JS_ASSET = f"{ASSETS}/lessonkit.js"
LEARNING_JS_ASSET = f"{ASSETS}/my-learning.js"  # the "My learning" page across lessons
NOSCRIPT_ASSET = f"{ASSETS}/noscript.css"
CODE_STYLE = "xcode"  # the Pygments style whose colours all reach 4.5:1 on a white background
PORTFOLIO_SCHEMA = "lessonkit-portfolio"
PORTFOLIO_VERSION = 1  # one lesson: {schema, version, lesson, saved, entries}
COURSE_VERSION = 2  # every lesson: {schema, version, saved, lessons: {id: {saved, entries}}}
RECORD_SECTION = "record"  # the section that shows the recorded reference execution
EVIDENCE_SECTION = "evidence"  # the section that holds the save-work box and "My learning"


def storage_key(lesson: Lesson) -> str:
    """The localStorage key of a lesson's portfolio; export files name the same lesson id."""
    return f"lessonkit:{lesson.meta.id}"


def page_path(lesson: Lesson) -> str:
    """Where a lesson's page lives, relative to the site root."""
    return f"{lesson.meta.id}/index.html"


# Downloads -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Download:
    """A lesson file offered on the page: copied from `source` (relative to the lesson folder)."""

    key: str
    label: str
    source: str
    name: str

    @property
    def href(self) -> str:
        """The link from the lesson page, which sits next to its `downloads/` folder."""
        return f"downloads/{self.name}"


def lesson_downloads(lesson: Lesson) -> tuple[Download, ...]:
    """Every file the page links to, in the order the page lists them."""
    script, notebook = lesson.exercise_paths
    going_further = GOING_FURTHER in lesson_scripts(lesson)
    files = [
        ("notebook", "Notebook", notebook),
        ("main", "Python worked example", MAIN.path),
    ]
    if going_further:
        files.append(("going-further", "Optional experiments", GOING_FURTHER.path))
    files += [
        ("script", "Exercise script", script),
        ("lesson", "Lesson text (Markdown)", "lesson.md"),
        ("record", "Execution record (JSON)", MAIN.record),
    ]
    if going_further:
        files.append(
            ("going-further-record", "Optional experiments record (JSON)", GOING_FURTHER.record)
        )
    files += [
        ("figure-data", "Figure data and provenance (JSON)", figure.DATA),
        ("figure-svg", "Figure (SVG)", figure.SVG),
        ("figure-png", "Figure (PNG)", figure.PNG),
        ("evidence", "Evidence template (Markdown)", "outputs/evidence-template.md"),
    ]
    renamed = {"lesson.md": f"{lesson.meta.id}.md"}  # a lesson's text under its own name
    return tuple(
        Download(key, label, source, renamed.get(source, Path(source).name))
        for key, label, source in files
    )


# Markdown, math and code ---------------------------------------------------------------------


class _MathError(Exception):
    """latex2mathml refused a formula; re-raised with the lesson position by the caller."""


# A minus that opens a row or a cell, or follows an opening bracket, a comma or "=", is a sign
# rather than a subtraction; latex2mathml emits one flat row, so browsers would space it wide.
_SIGN_MINUS = re.compile(
    r"(<mrow>|<mtd[^>]*>|<mo[^>]*>(?:\(|\[|\{|&#x000(?:28|5B|7B|2C|3D);)</mo>)<mo>&#x02212;</mo>"
)
_PREFIX_MINUS = r'\1<mo form="prefix" lspace="0" rspace="0">&#x02212;</mo>'
_NAMESPACE = ' xmlns="http://www.w3.org/1998/Math/MathML"'  # implied in HTML; keeps pages URL-free


def _mathml(latex: str, display: bool) -> str:
    try:
        mathml = latex_to_mathml(latex.strip(), display="block" if display else "inline")
    except Exception as exc:  # latex2mathml raises many unrelated exception types
        reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        raise _MathError(f"cannot turn ${latex}$ into MathML ({reason})") from exc
    return _SIGN_MINUS.sub(_PREFIX_MINUS, mathml.replace(_NAMESPACE, "", 1))


def _external_links(md: MarkdownIt) -> None:
    """Mark links that leave the site, so they open apart from the lesson and say so."""

    def link_open(renderer, tokens, index, options, env):
        token = tokens[index]
        if str(token.attrGet("href") or "").startswith(("http://", "https://")):
            token.attrSet("class", "external")
            token.attrSet("rel", "external noopener noreferrer")
        return renderer.renderToken(tokens, index, options, env)

    md.add_render_rule("link_open", link_open)


@cache
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False})
    md.use(dollarmath_plugin, renderer=lambda latex, opts: _mathml(latex, opts["display_mode"]))
    _external_links(md)
    return md


def markdown_html(text: str, where: str = "lesson.md", *, inline: bool = False) -> Markup:
    """Lesson Markdown as HTML; raw HTML in the text is shown as text, `$...$` becomes MathML."""
    md = _markdown()
    try:
        html = md.renderInline(text) if inline else md.render(text)
    except _MathError as exc:
        raise LessonError(
            str(exc), where=where, fix="write LaTeX that latex2mathml accepts"
        ) from None
    return Markup(html)


def math_html(latex: str, where: str = "lesson.md") -> Markup:
    """A display formula as MathML."""
    try:
        return Markup(_mathml(latex, display=True))
    except _MathError as exc:
        raise LessonError(
            str(exc), where=where, fix="write LaTeX that latex2mathml accepts"
        ) from None


_FORMATTER = HtmlFormatter(nowrap=True)
_TOKEN_SPAN = re.compile(r'<span class="([\w-]+)">([^<]*)</span>')
_PLAIN = ("", "color: #000", "color: #000000")


@cache
def _coloured_classes() -> frozenset[str]:
    """Token classes the code style colours; spans for the rest (names, spaces) are dropped."""
    styles = HtmlFormatter(style=CODE_STYLE).class2style
    return frozenset(name for name, (style, _, _) in styles.items() if style not in _PLAIN)


@cache
def _lexer(language: str):
    return get_lexer_by_name(language, stripnl=False, ensurenl=False)


def code_html(code: str, language: str = "python") -> Markup:
    """Highlighted code as spans with Pygments classes, for a <pre><code> the template writes.

    Spans that would not change a colour are unwrapped: they are most of the markup, and the
    page has a weight budget.
    """
    coloured = _coloured_classes()
    html = highlight(code, _lexer(language), _FORMATTER)
    return Markup(_TOKEN_SPAN.sub(lambda m: m[0] if m[1] in coloured else m[2], html))


def code_css() -> str:
    """The Pygments rules for `.code` blocks, generated once per site build."""
    return HtmlFormatter(style=CODE_STYLE).get_style_defs(".code")


# Blocks: one template per item kind ----------------------------------------------------------


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


ITEM_TEMPLATES: dict[type, str] = {
    Prose: "prose.html",
    CommandGroup: "setup.html",
    Check: "check.html",
    Illustration: "illustration.html",
    Pause: "pause.html",
    Diagram: "diagram.html",
    Math: "math.html",
    Step: "step.html",
    RunCommand: "run.html",
    Figure: "figure.html",
    Experiment: "experiment.html",
    Task: "task.html",
    Quiz: "quiz.html",
}
"""Item kinds the page shows; Numbers (checked by tests) and Plot (inside the figure) are not."""

SAVED_KINDS: dict[type, str] = {
    Pause: "pause",
    Figure: "prediction",
    Experiment: "prediction",
    Task: "task",
    Quiz: "quiz",
}
"""Item kinds that keep something the learner writes or chooses, with their key prefix."""


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
            template = ITEM_TEMPLATES.get(type(item))
            if template is None:
                continue
            prefix = SAVED_KINDS.get(type(item))
            key = keys.claim(f"{prefix}:{_item_name(item, section)}") if prefix else ""
            shown.append(Block(template, item, key))
        shown += [Block(name) for name in extras.get(section.id, ())]
        blocks[section.id] = tuple(shown)
    return blocks


def _item_name(item: Any, section: Section) -> str:
    if isinstance(item, Task | Quiz):
        return item.id
    return section.id


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
    """The lessons of `lesson`'s phase, in order, linked to those this site builds."""
    built = {
        (other.meta.phase.number, other.meta.title): other
        for other in site_lessons
        if other.meta.phase.number == lesson.meta.phase.number
    }
    rows = []
    for number, title in enumerate(lesson.meta.phase.lessons, start=1):
        other = built.get((lesson.meta.phase.number, title))
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
            if not block.key:
                continue
            if isinstance(block.item, Task):
                labels[f"{block.key}:done"] = f"{section.title}: exercise complete"
                labels[f"{block.key}:notes"] = f"{section.title}: your notes"
            elif isinstance(block.item, Quiz):
                labels[block.key] = f"Quiz: {block.item.question}"
            elif isinstance(block.item, Pause):
                labels[block.key] = f"{section.title}: your answer"
            else:
                labels[block.key] = f"{section.title}: your prediction"
    for key, label in EVIDENCE_FIELDS:
        labels[key] = label
    labels["progress:stage"] = "Current stage"
    labels["progress:done"] = "Stages completed"
    return labels


def _page_data(lesson: Lesson, blocks: dict[str, tuple[Block, ...]]) -> dict[str, Any]:
    """What the page script needs, embedded as JSON because file:// pages cannot fetch files."""
    meta = lesson.meta
    return {
        "lesson": meta.id,
        "title": meta.title,
        "storageKey": storage_key(lesson),
        "schema": PORTFOLIO_SCHEMA,
        "version": PORTFOLIO_VERSION,
        "courseVersion": COURSE_VERSION,
        "position": f"Phase {meta.phase.number}.{meta.lesson_number:02d}",
        "stages": list(STAGES),
        "fields": portfolio_fields(lesson, blocks),
    }


# Rendering -----------------------------------------------------------------------------------


@cache
def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["code"] = code_html
    env.filters["md_inline"] = lambda text: markdown_html(text, "phase.yaml", inline=True)
    env.filters["step_source"] = step_source
    return env


def render_template(name: str, **context: Any) -> str:
    """A page of the site other than a lesson's, from its template."""
    return _environment().get_template(name).render(**context)


def _renderer(lesson: Lesson) -> dict[str, Callable[..., Markup]]:
    """Markdown and math filters that cite the lesson file when a formula cannot convert."""

    def where(item: Any = None) -> str:
        line = getattr(item, "line", None)
        return f"{lesson.path}:{line}" if line else str(lesson.path)

    def md(text: str, item: Any = None) -> Markup:
        return markdown_html(text, where(item))

    def md_inline(text: str, item: Any = None) -> Markup:
        return markdown_html(text, where(item), inline=True)

    def math(latex: str, item: Any = None) -> Markup:
        return math_html(latex, where(item))

    return {"md": md, "md_inline": md_inline, "math": math}


def _record_views(lesson: Lesson, records: Mapping[Script, Receipt]) -> dict[str, RecordView]:
    """Each script's record as the page shows it, by script name; every script needs one."""
    return {script.name: record_view(records[script]) for script in lesson_scripts(lesson)}


def render_lesson_page(
    lesson: Lesson,
    records: Mapping[Script, Receipt],
    site_lessons: Sequence[Lesson] = (),
    accelerators: Sequence[AcceleratorRecord] = (),
    setup_href: str | None = None,
) -> str:
    """The lesson page: header, setup, the five stages, the portfolio and the outline.

    `records` holds the current record of every script in `lesson_scripts(lesson)`;
    `accelerators` the GPU or TPU receipts committed beside the main one (stale ones too).
    """
    env = _environment()
    views = _record_views(lesson, records)
    blocks = section_blocks(lesson)
    downloads = {d.key: d for d in lesson_downloads(lesson)}
    context = {
        "lesson": lesson,
        "meta": lesson.meta,
        "root": "../",
        "preamble": [p for p in lesson.parts if p.stage is None],
        "stages": [p for p in lesson.parts if p.stage is not None],
        "blocks": blocks,
        "downloads": downloads,
        "download_list": list(downloads.values()),
        "record": views[MAIN.name],
        "records": views,
        "going_further_command": run_command(lesson, GOING_FURTHER),
        "main_py": render_main(lesson),
        "cumulative_build": cumulative_build(lesson),
        "phase": phase_lessons(lesson, site_lessons or (lesson,)),
        "guide_href": guide_page_path(lesson.meta.phase.number),
        "accelerators": [(a, record_view(a.receipt)) for a in accelerators],
        "setup_href": setup_href,
        "data": _page_data(lesson, blocks),
        "evidence_fields": EVIDENCE_FIELDS,
        **_renderer(lesson),
    }
    return env.get_template("lesson.html").render(context)


def render_index(site_lessons: Sequence[Lesson], setup_href: str | None = None) -> str:
    """The course overview: each phase with its lessons, linked where this site has them."""
    env = _environment()
    phases: dict[str, Lesson] = {}
    for lesson in site_lessons:
        phases.setdefault(lesson.meta.phase.number, lesson)
    overview = [(first.meta.phase, phase_lessons(first, site_lessons)) for first in phases.values()]
    tracks = sorted({lesson.meta.track for lesson in site_lessons})
    return env.get_template("index.html").render(
        root="",
        phases=overview,
        tracks=tracks,
        guide_href=guide_page_path,
        setup_href=setup_href,
    )


def guide_page_path(phase_number: str) -> str:
    """Where a phase's study guide lives, relative to the site root; every lesson links it."""
    return f"phase-{phase_number}/index.html"


def render_study_guide(
    lesson: Lesson, site_lessons: Sequence[Lesson], guide: StudyGuide | None
) -> str:
    """The study guide of `lesson`'s phase: preparation, milestones per lesson, the project."""
    return (
        _environment()
        .get_template("study-guide.html")
        .render(
            root="../",
            phase=lesson.meta.phase,
            rows=phase_lessons(lesson, site_lessons),
            guide=guide,
        )
    )


SETUP_PAGE = "accelerators/index.html"
SETUP_SOURCE = "accelerators.md"  # under phases/: the course's page on GPUs and Cloud TPU VMs


def render_markdown_page(markdown: str, where: str) -> str:
    """A course page written in Markdown (its first heading is the title), e.g. the setup page."""
    title = next((line[2:].strip() for line in markdown.splitlines() if line.startswith("# ")), "")
    return render_template(
        "course-page.html", root="../", title=title, body=markdown_html(markdown, where)
    )


def render_assets() -> dict[str, bytes]:
    """The stylesheet (code colours appended), the script, and the no-script stylesheet."""
    css = (STATIC / "lessonkit.css").read_text(encoding="utf-8")
    css += "\n/* Code colours: Pygments style '" + CODE_STYLE + "' */\n" + code_css() + "\n"
    return {
        CSS_ASSET: css.encode("utf-8"),
        JS_ASSET: (STATIC / "lessonkit.js").read_bytes(),
        LEARNING_JS_ASSET: (STATIC / "my-learning.js").read_bytes(),
        NOSCRIPT_ASSET: (STATIC / "noscript.css").read_bytes(),
    }
