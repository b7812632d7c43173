"""The site's ZIP of a course from `lessonkit init`: its requirements install on a learner's
machine (a lessonkit wheel named on the author's disk travels inside the ZIP), and the page
says what it holds."""

from __future__ import annotations

import io
import re
import zipfile

from lessonkit.lesson.new_course import write_course
from lessonkit.site.repo_zip import TOP_FOLDER, repository_entries, repository_zip

from conftest import REPO

TEMPLATE = REPO / "src" / "lessonkit" / "render" / "templates" / "lesson.html"


def _course(tmp_path, lessonkit: str):
    course = tmp_path / "course"
    write_course(course, "T", lessonkit)
    return course


def test_a_wheel_on_the_author_disk_travels_in_the_zip_and_its_requirements_name_it(tmp_path):
    wheel = tmp_path / "dist" / "lessonkit-0.1.0-py3-none-any.whl"
    wheel.parent.mkdir()
    wheel.write_bytes(b"PK wheel bytes")
    course = _course(tmp_path, f"lessonkit @ {wheel.as_uri()}")
    with zipfile.ZipFile(io.BytesIO(repository_zip(course))) as archive:
        pins = archive.read(f"{TOP_FOLDER}/requirements-cpu.txt").decode()
        carried = archive.read(f"{TOP_FOLDER}/wheels/{wheel.name}")
    assert pins.splitlines()[-1] == f"./wheels/{wheel.name}"
    assert str(tmp_path) not in pins and carried == wheel.read_bytes()


def test_an_index_or_url_requirement_is_kept_and_nothing_is_added(tmp_path):
    for line in ("lessonkit==0.1.0", "lessonkit @ git+https://example.org/lk.git@c0ffee"):
        course = _course(tmp_path / line[:12], line)
        entries = repository_entries(course)
        assert entries["requirements-cpu.txt"].decode().splitlines()[-1] == line
        assert not [name for name in entries if name.startswith("wheels/")]


def test_the_page_says_only_what_the_zip_of_any_course_holds(tmp_path):
    """A course from init has no toolkit in its ZIP, so the page never promises one."""
    said = re.search(r"Download the repository ZIP</a> <span[^>]*>([^<]*)<", TEMPLATE.read_text())
    assert said, "the lesson page no longer describes the ZIP"
    names = set(repository_entries(_course(tmp_path, "lessonkit==0.1.0")))
    assert not [n for n in names if n.startswith("src/")]
    assert "toolkit" not in said.group(1), said.group(1)
    assert "docs/authoring.md" in names and "guides" in said.group(1)
