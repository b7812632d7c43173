"""The lesson page, the course index and the study guides as HTML text: pure functions of the
lesson model.

The site builder reads the few facts that live outside lesson.md (the execution records of the
lesson's scripts) and passes them in; this module reads nothing but its own templates and
static assets. What each section shows comes from `blocks`, the text's HTML from `markup`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from lessonkit.lesson.files import GOING_FURTHER, MAIN, Script
from lessonkit.lesson.model import PREAMBLE, STAGES, Lesson
from lessonkit.lesson.scripts import render_main
from lessonkit.lesson.study_guide import StudyGuide
from lessonkit.lesson.text import html_text
from lessonkit.receipts import AcceleratorRecord, Receipt, run_command
from lessonkit.render.blocks import (
    COURSE_VERSION,
    EVIDENCE_FIELDS,
    PORTFOLIO_SCHEMA,
    PORTFOLIO_VERSION,
    Block,
    cumulative_build,
    phase_lessons,
    portfolio_fields,
    record_view,
    record_views,
    section_blocks,
    step_source,
    storage_key,
)
from lessonkit.render.downloads import guide_page_path, lesson_downloads
from lessonkit.render.markup import CODE_STYLE, code_css, code_html, markdown_html, math_html

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
ASSETS = "assets"
CSS_ASSET = f"{ASSETS}/lessonkit.css"
JS_ASSET = f"{ASSETS}/lessonkit.js"
PORTFOLIO_JS_ASSET = f"{ASSETS}/portfolio.js"  # the portfolio checks both pages share
LEARNING_JS_ASSET = f"{ASSETS}/my-learning.js"  # the "My learning" page across lessons
NOSCRIPT_ASSET = f"{ASSETS}/noscript.css"


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


def _shown(value: Any) -> Any:
    """Every text a template prints passes through `html_text`, HTML's one escaping function
    (control characters too, which autoescaping keeps); markup the renderers made stays."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return html_text(value)
    return value


@cache
def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_shown,
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


def render_lesson_page(
    lesson: Lesson,
    records: Mapping[Script, Receipt],
    site_lessons: Sequence[Lesson] = (),
    accelerators: Sequence[AcceleratorRecord] = (),
    course_pages: Sequence[CoursePage] = (),
) -> str:
    """The lesson page: header, setup, the five stages, the portfolio and the outline.

    `records` holds the current record of every script in `lesson_scripts(lesson)`;
    `accelerators` the GPU or TPU receipts committed beside the main one (stale ones too).
    """
    env = _environment()
    views = record_views(lesson, records)
    blocks = section_blocks(lesson)
    downloads = {d.key: d for d in lesson_downloads(lesson)}
    context = {
        "lesson": lesson,
        "meta": lesson.meta,
        "root": "../",
        "preamble_title": PREAMBLE,  # the only title a part outside the stages may have
        "preamble_sections": [s for p in lesson.parts if p.stage is None for s in p.sections],
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
        "course_pages": course_pages,
        "data": _page_data(lesson, blocks),
        "evidence_fields": EVIDENCE_FIELDS,
        **_renderer(lesson),
    }
    return env.get_template("lesson.html").render(context)


def render_index(
    site_lessons: Sequence[Lesson],
    course_pages: Sequence[CoursePage] = (),
    verified: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """The course overview: each phase with its lessons, linked where this site has them;
    `verified` names, by lesson id, the hardware each lesson's receipts verify it on."""
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
        course_pages=course_pages,
        verified=verified or {},
    )


def render_study_guide(
    lesson: Lesson,
    site_lessons: Sequence[Lesson],
    guide: StudyGuide | None,
    course_pages: Sequence[CoursePage] = (),
    verified: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """The study guide of `lesson`'s phase: preparation, milestones per lesson (with the
    hardware each is verified on, as `render_index`), the project."""
    return (
        _environment()
        .get_template("study-guide.html")
        .render(
            root="../",
            phase=lesson.meta.phase,
            rows=phase_lessons(lesson, site_lessons),
            guide=guide,
            course_pages=course_pages,
            verified=verified or {},
        )
    )


@dataclass(frozen=True)
class CoursePage:
    """A page about the course as a whole (setting up a CPU, an accelerator), written in
    Markdown as `phases/NAME.md` and published as `NAME/index.html`; every lesson's setup
    help, the index and each study guide link it by its title (its first heading)."""

    href: str
    title: str
    markdown: str
    source: str
    """Where the Markdown came from, for error messages."""

    @classmethod
    def of(cls, source: Path) -> CoursePage:
        markdown = source.read_text(encoding="utf-8")
        title = next((ln[2:].strip() for ln in markdown.splitlines() if ln.startswith("# ")), "")
        return cls(f"{source.stem}/index.html", title or source.stem, markdown, str(source))


def render_course_page(page: CoursePage) -> str:
    """A course page: its Markdown as HTML, under its title."""
    return render_template(
        "course-page.html",
        root="../",
        title=page.title,
        body=markdown_html(page.markdown, page.source),
    )


def render_assets() -> dict[str, bytes]:
    """The stylesheet (code colours appended), the scripts, and the no-script stylesheet."""
    css = (STATIC / "lessonkit.css").read_text(encoding="utf-8")
    css += "\n/* Code colours: Pygments style '" + CODE_STYLE + "' */\n" + code_css() + "\n"
    return {
        CSS_ASSET: css.encode("utf-8"),
        JS_ASSET: (STATIC / "lessonkit.js").read_bytes(),
        PORTFOLIO_JS_ASSET: (STATIC / "portfolio.js").read_bytes(),
        LEARNING_JS_ASSET: (STATIC / "my-learning.js").read_bytes(),
        NOSCRIPT_ASSET: (STATIC / "noscript.css").read_bytes(),
    }
