"""Write the static site: the course index, each lesson's page, its downloads and the assets.

The whole site is rendered in memory first, so a stale execution record of any lesson script
(or any other problem) stops the build before a single file changes; the new folder then
replaces the old one in one rename. Every link inside the site is relative, so the folder
works from file:// as well as from `lessonkit serve`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lessonkit.errors import UsageError, shown
from lessonkit.lesson.catalog import repo_root
from lessonkit.lesson.model import Lesson
from lessonkit.lesson.study_guide import StudyGuide, guide_path, load_study_guide
from lessonkit.receipts import (
    AcceleratorRecord,
    MissingRecordError,
    RecordError,
    StaleRecordError,
    load_accelerator_records,
    load_records,
    verified_hardware,
)
from lessonkit.render.downloads import guide_page_path, lesson_downloads, page_path
from lessonkit.render.learning import LEARNING_PAGE, PhaseProject, render_my_learning
from lessonkit.render.page import (
    CoursePage,
    render_assets,
    render_course_page,
    render_index,
    render_lesson_page,
    render_study_guide,
)
from lessonkit.site.artifacts import LessonBuild, build_lessons
from lessonkit.site.repo_zip import ZIP_NAME, repository_zip

SITE = Path("build") / "site"
INDEX = "index.html"

SiteFiles = dict[str, bytes]


def site_dir(root: Path) -> Path:
    """Where `lessonkit build` writes the site and `lessonkit serve` serves it from."""
    return root / SITE


def _lesson_files(
    lesson: Lesson,
    site_lessons: Sequence[Lesson],
    pages: Sequence[CoursePage],
    accelerators: tuple[AcceleratorRecord, ...],
) -> SiteFiles:
    records = load_records(lesson)  # raises StaleRecordError: a stale record fails the build
    folder = Path(page_path(lesson)).parent
    page = render_lesson_page(lesson, records, site_lessons, accelerators, pages)
    files = {page_path(lesson): page.encode("utf-8")}
    for download in lesson_downloads(lesson):
        source = lesson.directory / download.source
        if not source.is_file():
            raise UsageError(
                f"{shown(source)} is missing, so the page cannot offer it",
                fix=f"run `lessonkit build {lesson.meta.id}` (and `lessonkit run "
                f"{lesson.meta.id} --script all --record` for the execution records)",
            )
        files[(folder / download.href).as_posix()] = source.read_bytes()
    return files


def course_pages(lesson: Lesson) -> tuple[CoursePage, ...]:
    """The course's own pages: every `*.md` in phases/, next to the phase folders (a guided
    CPU setup, an accelerator setup), by title."""
    phases = lesson.directory.parent.parent
    return tuple(sorted((CoursePage.of(p) for p in phases.glob("*.md")), key=lambda p: p.title))


def render_site(lessons: Sequence[Lesson]) -> SiteFiles:
    """Every file of the site, keyed by its path relative to the site root."""
    if not lessons:
        raise UsageError(
            "there are no lessons to build a site from", fix="add a lesson under phases/"
        )
    files: SiteFiles = dict(render_assets())
    pages = course_pages(lessons[0])
    accelerators = {lesson.meta.id: load_accelerator_records(lesson) for lesson in lessons}
    verified = {
        lesson.meta.id: verified_hardware(lesson, accelerators[lesson.meta.id])
        for lesson in lessons
    }
    files[INDEX] = render_index(lessons, pages, verified).encode("utf-8")
    for lesson in lessons:
        files.update(_lesson_files(lesson, lessons, pages, accelerators[lesson.meta.id]))
    guides = _phase_guides(lessons)
    files.update(_guide_files(guides, lessons, pages, verified))
    projects = [
        PhaseProject(lesson.meta.phase.number, guide.project)
        for lesson, guide in guides
        if guide is not None and guide.project.graded is not None
    ]
    files[LEARNING_PAGE] = render_my_learning(lessons, projects).encode("utf-8")
    files[ZIP_NAME] = repository_zip(repo_root(lessons[0].path))
    for page in pages:
        files[page.href] = render_course_page(page).encode("utf-8")
    return files


def _phase_guides(lessons: Sequence[Lesson]) -> list[tuple[Lesson, StudyGuide | None]]:
    """Each phase's first lesson and its study guide (None where it has no phase.yaml)."""
    found: dict[str, tuple[Lesson, StudyGuide | None]] = {}
    for lesson in lessons:
        number = lesson.meta.phase.number
        if number in found:
            continue
        path = guide_path(lesson.directory.parent)
        ids = tuple(o.meta.id for o in lessons if o.meta.phase.number == number)
        found[number] = (lesson, load_study_guide(path, ids) if path.is_file() else None)
    return list(found.values())


def _guide_files(
    guides: Sequence[tuple[Lesson, StudyGuide | None]],
    lessons: Sequence[Lesson],
    pages: Sequence[CoursePage],
    verified: Mapping[str, Sequence[str]],
) -> SiteFiles:
    """One study guide page per phase, from the phase's phase.yaml when it has one."""
    return {
        guide_page_path(lesson.meta.phase.number): render_study_guide(
            lesson, lessons, guide, pages, verified
        ).encode("utf-8")
        for lesson, guide in guides
    }


def write_site(files: SiteFiles, target: Path) -> None:
    """Make `target` hold exactly `files`: write a complete new folder, then swap it in."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-new-", dir=target.parent))
    retired = target.with_name(f".{target.name}-old-{os.getpid()}")
    try:
        for relative, content in files.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        staging.chmod(0o755)  # mkdtemp makes it private; the site is for reading
        if target.exists():
            target.rename(retired)
        try:
            staging.rename(target)
        except OSError:
            if retired.exists():
                retired.rename(target)  # put the previous site back rather than lose it
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(retired, ignore_errors=True)


@dataclass(frozen=True)
class SiteReport:
    """What a site build wrote, for the command to print."""

    target: Path
    pages: tuple[str, ...]
    file_count: int
    total_bytes: int


def build_site(lessons: Sequence[Lesson], target: Path) -> SiteReport:
    """Render the site for `lessons` and replace `target` with it."""
    files = render_site(lessons)
    write_site(files, target)
    return SiteReport(
        target,
        tuple(page_path(lesson) for lesson in lessons),
        len(files),
        sum(map(len, files.values())),
    )


@dataclass(frozen=True)
class Build:
    """What `lessonkit build` did: each lesson's files, then the site, or why the site waits.

    `waiting` is set, and `site` None, when a lesson's scripts must be recorded first (their
    code changed, or a new script was never recorded); the previous site stays as it was.
    """

    lessons: tuple[LessonBuild, ...]
    site: SiteReport | None
    waiting: RecordError | None = None


def build(lesson_id: str | None = None, *, force: bool = False) -> Build:
    """Build one lesson (or all) and the site; the site's index always lists every lesson.

    Raises:
        NumbersError, EditedFilesError, UsageError: see `build_lessons` and `find_lesson`.
        CorruptRecordError: a record the site shows cannot be read.
    """
    from lessonkit.lesson.catalog import all_lessons, find_lesson

    lessons = [find_lesson(lesson_id)] if lesson_id else all_lessons()
    built = build_lessons(lessons, force=force)
    try:
        site = build_site(all_lessons() if lesson_id else lessons, site_dir(repo_root()))
    except (StaleRecordError, MissingRecordError) as exc:
        return Build(built, None, exc)
    return Build(built, site)
