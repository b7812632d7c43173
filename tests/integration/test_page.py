"""The lesson page and the site, checked without a browser: content, order, escaping, weight."""

from __future__ import annotations

import json
import re
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from threading import Thread

import pytest
from markupsafe import escape

from lessonkit.errors import LessonError, UsageError
from lessonkit.lesson.catalog import all_lessons
from lessonkit.lesson.files import GOING_FURTHER, MAIN
from lessonkit.lesson.load import load_lesson, parse_lesson
from lessonkit.receipts import StaleRecordError, load_records
from lessonkit.render.downloads import lesson_downloads
from lessonkit.render.page import (
    CSS_ASSET,
    JS_ASSET,
    PORTFOLIO_JS_ASSET,
    render_assets,
    render_index,
    render_lesson_page,
)
from lessonkit.site.build import build_site
from lessonkit.site.server import make_server

from conftest import LESSON_MD, REPO, SPEC_OUTLINE, copy_lesson_repo, invoke

WEIGHT_LIMIT = 200 * 1024
REFERENCE = "https://docs.jax.dev/en/latest/pytrees.html"
NO_ICON = "data:,"  # an empty favicon, so the browser does not ask the server for one


# Landmarks of the published page, in the order it shows them (header to evidence).
SPEC_SEQUENCE = [
    "Core Foundation",
    "Laptop CPU",
    "Lesson 2 of 4 in Phase 03",
    "State, randomness &amp; control flow",
    "Pytrees and structured parameters",
    "Revision v0.7.0",
    "2026-10-20",
    "about 60 minutes",
    "CPU practice",
    "Represent parameters and state in a nested structure and transform its leaves.",
    "Phase study guide",
    "Before you start",
    "Random keys without surprises",
    "Hardware",
    "Download notebook",
    "Other downloads",
    "Setup help",
    "macOS / Linux terminal · repository folder",
    "PowerShell · repository folder",
    "python -m jupyter lab",
    "Check:",
    "Phase 03.02 · Stage",
    ">Understand<",
    ">Build &amp; Run<",
    ">Experiment<",
    ">Exercise &amp; Check<",
    ">Evidence<",
    "Structure travels with the leaves",
    "Pause and reason",
    "2 leaves, 3 numerical parameter values",
    'display="block"',
    "Predict before looking",
    "Open full-size figure",
    "Download data and provenance",
    "main.py · append build step 1",
    "Code building blocks in this step",
    "View the cumulative build in main.py",
    "About this command",
    "Inspect the complete assembled example",
    "Expected result:",
    "PASS: state-02",
    "Download execution record",
    "Your prediction",
    "Show a writing guide and starter scaffold",
    "Show a hint",
    "Reveal the reference solution",
    "lessonkit check state-02",
    "Check answer",
    "Download evidence template",
    "Save work for this lesson",
    "My learning",
    "Saved in this browser",
    "JAX pytrees",
    "Page outline",
]


class _Outline(HTMLParser):
    """Collects section headings (h3 with an id) and every src/href attribute."""

    def __init__(self) -> None:
        super().__init__()
        self.headings: list[str] = []
        self.links: list[str] = []
        self._in_heading = False

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        if tag == "h3" and values.get("id", "").endswith("-title"):
            self._in_heading = True
            self.headings.append("")
        for name in ("href", "src"):
            if values.get(name) is not None:
                self.links.append(values[name])

    def handle_endtag(self, tag):
        if tag == "h3":
            self._in_heading = False

    def handle_data(self, data):
        if self._in_heading:
            self.headings[-1] += data


def _outline(html: str) -> _Outline:
    parser = _Outline()
    parser.feed(html)
    return parser


@pytest.fixture(scope="module")
def records(lesson):
    return load_records(lesson)


@pytest.fixture(scope="module")
def record(records):
    return records[MAIN]


@pytest.fixture(scope="module")
def page(lesson, records) -> str:
    return render_lesson_page(lesson, records, all_lessons(REPO))


@pytest.fixture(scope="module")
def any_page(repo_lesson) -> str:
    """Each lesson's page, rendered from its committed records (for tests of any lesson)."""
    return render_lesson_page(repo_lesson, load_records(repo_lesson), [repo_lesson])


def _subsequence(wanted: list[str], got: list[str]) -> list[str]:
    """The items of `wanted` that do not appear in `got` in the same order."""
    remaining = iter(got)
    return [item for item in wanted if not any(item in have for have in remaining)]


def test_sections_follow_the_spec_outline(page, lesson):
    headings = [re.sub(r"^\d+\s+", "", h.strip()) for h in _outline(page).headings]
    assert headings == [s.title for s in lesson.sections]
    assert _subsequence(SPEC_OUTLINE, headings) == []


def test_page_shows_the_spec_in_order(page):
    positions = []
    for text in SPEC_SEQUENCE:
        start = positions[-1] + 1 if positions else 0
        found = page.find(text, start)
        assert found >= 0, (
            f"{text!r} is missing, or appears only before {SPEC_SEQUENCE[len(positions) - 1]!r}"
        )
        positions.append(found)


def test_every_item_of_the_lesson_is_on_the_page(any_page, repo_lesson):
    page, lesson, record = any_page, repo_lesson, load_records(repo_lesson)[MAIN]
    for experiment in lesson.experiments:
        assert experiment.title in page
    for task in lesson.tasks:
        assert f'data-save="task:{task.id}:done"' in page
    assert page.count('<form class="quiz"') == len(lesson.quizzes)
    assert page.count("Optional experiment</p>") == len(lesson.optional_experiments)
    env = record.environment
    assert f"Python {env.python} · JAX {env.jax} · {env.device_count} CPU device" in page
    for line in record.stdout.splitlines():
        assert str(escape(line)) in page


def test_the_going_further_record_follows_the_last_optional_experiment(page, lesson, records):
    going_further = records[GOING_FURTHER]
    block = page[page.index('<div class="going-further-record">') :]
    block = block[: block.index("</div>")]
    last_experiment = lesson.optional_experiments[-1].title
    assert page.index(last_experiment) < page.index(block) < page.index('id="quiz-title"')
    assert "Recorded run of code/going_further.py" in block
    env = going_further.environment
    assert f"{going_further.started_utc} · Python {env.python} · JAX {env.jax}" in block
    assert "<samp>Before/after:" in block and "PASS: state-02 going further</samp>" in block
    for experiment in lesson.optional_experiments:
        for line in experiment.output:
            assert line.replace("'", "&#39;") in block
    assert "lessonkit run state-02 --script going-further" in block
    assert 'href="downloads/going-further.json"' in block


def test_derivation_and_inline_math_are_mathml(page):
    derivation = page[page.index('id="derivation"') : page.index('id="apply"')]
    assert '<math display="block"><mrow><mtable>' in derivation
    assert page.count('<math display="inline">') > 20
    prose = re.sub(r"<(pre|code)[^>]*>.*?</\1>", "", page, flags=re.S)
    assert "$x=" not in prose and "$-4$" not in prose


def test_lesson_text_cannot_inject_markup(lesson, records, tmp_path):
    source = LESSON_MD.read_text(encoding="utf-8")
    hostile = "<script>alert(1)</script> <img src=x onerror=alert(2)>"
    source = source.replace("The model has two kinds", f"{hostile} The model has two kinds")
    source = source.replace(
        "question: What is the structure", "question: <b onclick=alert(3)>What</b> is the structure"
    )
    path = tmp_path / "lesson.md"
    html = render_lesson_page(parse_lesson(source, path, lesson.meta.phase), records)
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(2)&gt;" in html
    assert "<b onclick" not in html and "&lt;b onclick=alert(3)&gt;" in html


def test_bad_math_names_the_lesson_line(records, tmp_path):
    source = LESSON_MD.read_text(encoding="utf-8").replace("\\hat y &= 2(1)", "\\hat y &= {2(1)", 1)
    path = tmp_path / "lesson.md"
    lesson = parse_lesson(source, path, load_lesson(LESSON_MD).meta.phase)
    with pytest.raises(
        LessonError, match=rf"(?s){re.escape(str(path))}:\d+: cannot turn .* into MathML"
    ):
        render_lesson_page(lesson, records)


def test_page_weight_is_under_budget(any_page):
    assets = render_assets()
    scripts = len(assets[JS_ASSET]) + len(assets[PORTFOLIO_JS_ASSET])
    weight = len(any_page.encode("utf-8")) + len(assets[CSS_ASSET]) + scripts
    assert weight < WEIGHT_LIMIT, f"page, CSS and JS weigh {weight} bytes"


def test_no_outside_urls(page):
    """state-02 links one outside page, its primary reference; CSS and JS link none."""
    assets = render_assets()
    texts = {
        "page": page,
        "css": assets[CSS_ASSET].decode(),
        "js": assets[JS_ASSET].decode(),
        "portfolio-js": assets[PORTFOLIO_JS_ASSET].decode(),
    }
    for name, text in texts.items():
        assert _urls(text) == ([REFERENCE] if name == "page" else []), name


def _urls(text: str) -> list[str]:
    return re.findall(r"https?://[^\s\"'<>)]+", text)


def test_every_outside_link_is_one_the_lesson_md_gives(any_page, repo_lesson):
    """No CDN, font or script from elsewhere: the page links only what its author wrote."""
    written = set(_urls(repo_lesson.source))
    assert set(_urls(any_page)) <= written
    for link in _outline(any_page).links:
        assert link in written | {NO_ICON} or not re.match(r"^([a-z]+:|//|/)", link), link


def test_downloads_are_linked_and_copied_byte_for_byte(any_page, repo_lesson, built_site):
    page, lesson = any_page, repo_lesson
    for download in lesson_downloads(lesson):
        assert f'href="{download.href}"' in page
        copied = built_site / lesson.meta.id / download.href
        assert copied.read_bytes() == (lesson.directory / download.source).read_bytes()


def test_index_links_this_lesson_and_lists_the_rest(lesson):
    html = render_index([lesson])
    assert f'href="{lesson.meta.id}/index.html"' in html
    lessons = lesson.meta.phase.lessons
    for number, lesson_id in enumerate(lessons, start=1):  # not in this site: by number
        if lesson_id != lesson.meta.id:
            assert re.search(rf"Lesson {number}</span> <span[^>]*>— coming later", html)
    assert None not in lessons  # the phase is whole: every lesson is written
    assert "coming later" not in render_index(all_lessons(REPO))


def _fact(html: str, name: str) -> str:
    return re.search(rf'<dd class="nav-{name}">(.*?)</dd>', html, re.S)[1]


def test_the_phase_lessons_link_each_other_before_and_next(built_site):
    first = (built_site / "state-01" / "index.html").read_text(encoding="utf-8")
    second = (built_site / "state-02" / "index.html").read_text(encoding="utf-8")
    assert _fact(first, "before") == "Nothing from this phase: this is its first lesson"
    assert _fact(first, "next") == (
        '<a href="../state-02/index.html" rel="next">Pytrees and structured parameters</a>'
    )
    assert _fact(second, "before") == (
        '<a href="../state-01/index.html" rel="prev">Random keys without surprises</a>'
    )
    assert _fact(second, "next") == (
        '<a href="../state-03/index.html" rel="next">jax.lax.scan carries state</a>'
    )
    third = (built_site / "state-03" / "index.html").read_text(encoding="utf-8")
    assert _fact(third, "before") == (
        '<a href="../state-02/index.html" rel="prev">Pytrees and structured parameters</a>'
    )
    assert _fact(third, "next") == (
        '<a href="../state-04/index.html" rel="next">Control flow under jit</a>'
    )
    fourth = (built_site / "state-04" / "index.html").read_text(encoding="utf-8")
    assert _fact(fourth, "before") == (
        '<a href="../state-03/index.html" rel="prev">jax.lax.scan carries state</a>'
    )
    assert _fact(fourth, "next") == "Nothing more in this phase: this is its last lesson"
    for html in (first, second, third, fourth):
        assert "coming later" not in html and "Carrying state" not in html


def test_page_data_is_embedded_for_file_urls(any_page, repo_lesson):
    page = any_page
    data = json.loads(
        re.search(r'<script type="application/json" id="lesson-data">(.*?)</script>', page, re.S)[1]
    )
    assert data["storageKey"] == f"lessonkit:{repo_lesson.meta.id}"
    assert (data["schema"], data["version"]) == ("lessonkit-portfolio", 1)
    keys = re.findall(r'data-save="([^"]+)"', page)
    assert len(keys) == len(set(keys)), "every saved field needs its own key"
    assert set(keys) <= set(data["fields"])


# Code that only lesson.md holds: an experiment of main.py, and one of going_further.py.
MAIN_CODE = ('assert jnp.allclose(grads["bias"], -4.)', 'assert jnp.allclose(grads["bias"], -4.0)')
GOING_FURTHER_CODE = (
    'named = {**params, "name": "tiny-linear"}',
    'named = {**params, "name": "tiny"}',
)


def _edit_code(lesson_md, old: str, new: str) -> None:
    text = lesson_md.read_text(encoding="utf-8")
    assert old in text
    lesson_md.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_stale_record_fails_the_build_and_keeps_the_old_site(tmp_path):
    folder = copy_lesson_repo(tmp_path)
    lesson_md = folder / "lesson.md"
    _edit_code(lesson_md, *MAIN_CODE)
    target = tmp_path / "build" / "site"
    target.mkdir(parents=True)
    (target / "index.html").write_text("previous site", encoding="utf-8")
    with pytest.raises(StaleRecordError, match=r"stale: the code of code/main\.py"):
        build_site([load_lesson(lesson_md)], target)
    assert (target / "index.html").read_text(encoding="utf-8") == "previous site"


def test_lessonkit_build_writes_the_site_and_waits_for_a_stale_record(tmp_path):
    folder = copy_lesson_repo(tmp_path)
    code, out, err = invoke(["build"], root=tmp_path, cwd=tmp_path)
    assert code == 0, err
    assert "site: wrote build/site (1 lesson page(s)" in out
    page = tmp_path / "build" / "site" / "state-02" / "index.html"
    assert "Pytrees and structured parameters" in page.read_text(encoding="utf-8")

    lesson_md = folder / "lesson.md"
    lesson_md.write_text(lesson_md.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    code, out, err = invoke(["build"], root=tmp_path, cwd=tmp_path)
    assert code == 0, "a prose-only edit leaves the records current"
    before = page.read_bytes()
    _edit_code(lesson_md, *MAIN_CODE)
    code, out, err = invoke(["build"], root=tmp_path, cwd=tmp_path)
    assert code == 0, err  # the step between two builds that docs/authoring.md gives
    assert "wrote phases/03-state/02-pytrees-and-structured-parameters/code/main.py" in out
    assert "execution.json: stale: the code of code/main.py in lesson.md changed" in out
    assert "2 records are not current" in out  # main.py's and the notebook's outputs
    assert "next: run `lessonkit run state-02 --script all --record`" in out
    assert page.read_bytes() == before, "the previous site stays in place"


def test_a_stale_going_further_record_fails_the_build_too(tmp_path):
    folder = copy_lesson_repo(tmp_path)
    _edit_code(folder / "lesson.md", *GOING_FURTHER_CODE)
    target = tmp_path / "build" / "site"
    stale = r"stale: the code of code/going_further\.py"
    with pytest.raises(StaleRecordError, match=stale) as caught:
        build_site([load_lesson(folder / "lesson.md")], target)
    assert "going-further.json" in str(caught.value)
    assert "lessonkit run state-02 --script all --record" in str(caught.value)
    assert not target.exists()


def test_build_replaces_the_site_whole(tmp_path):
    target = tmp_path / "site"
    (target / "old").mkdir(parents=True)
    report = build_site(all_lessons(REPO), target)
    assert not (target / "old").exists()
    ids = tuple(o.meta.id for o in all_lessons(REPO))  # every lesson under phases/, in order
    assert {p.name for p in target.iterdir()} == {
        "index.html",
        "assets",
        "my-learning",
        "phase-03",
        "lessonkit-course.zip",
        "accelerators",
        "cpu-setup",
        *ids,
    }
    assert report.pages == tuple(f"{i}/index.html" for i in ids)


def test_server_serves_the_site_on_loopback(built_site):
    server = make_server(built_site, 0, quiet=True)
    thread = Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        assert host == "127.0.0.1"
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/state-02/downloads/main.py"
        ) as response:
            assert response.read() == (built_site / "state-02/downloads/main.py").read_bytes()
            assert response.headers["Content-Type"].startswith("text/x-python")
        with pytest.raises(UsageError, match=f"cannot listen on 127.0.0.1:{port}"):
            make_server(built_site, port)
    finally:
        server.shutdown()
        server.server_close()


def test_site_files_are_relative_to_each_page(built_site):
    page_html = (built_site / "state-02" / "index.html").read_text(encoding="utf-8")
    for link in _outline(page_html).links:
        if link.startswith(("#", "https://")) or link == NO_ICON:
            continue
        resolved = (built_site / "state-02" / link.split("#")[0]).resolve()
        assert resolved.is_file(), link
        assert Path(built_site).resolve() in resolved.parents


def test_the_check_box_makes_the_practice_copy_that_check_grades(any_page, repo_lesson):
    """A bare `lessonkit check` grades the copy `start` made; the box gives both commands."""
    pattern = r'<figure class="codeblock check-command">.*?</figure>'
    boxes = re.findall(pattern, any_page, flags=re.S)
    assert len(boxes) == len(repo_lesson.tasks)
    lesson_id = repo_lesson.meta.id
    for box in boxes:
        text = re.sub(r"<[^>]+>", "", box)
        start, check = f"lessonkit start {lesson_id}", f"lessonkit check {lesson_id}"
        assert text.index(start) < text.index(check)


def test_my_learning_knows_every_lessons_storage_labels_and_quiz_answers():
    from lessonkit.render.blocks import COURSE_VERSION, PORTFOLIO_VERSION
    from lessonkit.render.learning import learning_data

    lessons = all_lessons(REPO)
    data = learning_data(lessons)
    assert (data["version"], data["lessonVersion"]) == (COURSE_VERSION, PORTFOLIO_VERSION)
    assert [d["id"] for d in data["lessons"]] == [lesson.meta.id for lesson in lessons]
    for entry, lesson in zip(data["lessons"], lessons, strict=True):
        assert entry["storageKey"] == f"lessonkit:{lesson.meta.id}"
        assert entry["href"] == f"../{lesson.meta.id}/index.html"
        assert len(entry["quizzes"]) == len(lesson.quizzes)
        for quiz in lesson.quizzes:
            saved = entry["quizzes"][f"quiz:{quiz.id}"]
            assert (saved["options"], saved["answer"]) == (list(quiz.options), quiz.answer)
        assert entry["tasks"] == [f"task:{t.id}:done" for t in lesson.core_tasks]
        assert entry["fields"]["prediction:figure"].endswith("your prediction")


def test_every_page_links_my_learning_across_lessons(built_site):
    assert (built_site / "my-learning" / "index.html").is_file()
    assert (built_site / "assets" / "my-learning.js").is_file()
    assert 'href="my-learning/index.html"' in (built_site / "index.html").read_text("utf-8")
    for lesson in all_lessons(REPO):
        html = (built_site / lesson.meta.id / "index.html").read_text(encoding="utf-8")
        assert 'href="../my-learning/index.html"' in html
