"""The phase study guide: data in phases/NN-name/phase.yaml, one page per phase on the site,
linked from every lesson of the phase. No course content lives in src/."""

from __future__ import annotations

import dataclasses
import re
from html import unescape

import pytest

from lessonkit.errors import LessonError
from lessonkit.lesson.catalog import all_lessons
from lessonkit.lesson.study_guide import guide_path, load_study_guide
from lessonkit.render.page import render_study_guide

from conftest import REPO, copy_lesson_repo, invoke

PHASE = REPO / "phases" / "03-state"
IDS = tuple(o.meta.id for o in all_lessons(REPO) if o.directory.parent == PHASE)


def test_the_phase_file_is_read_into_a_guide():
    guide = load_study_guide(guide_path(PHASE), IDS)
    assert guide.know and guide.install and guide.project.checklist
    assert [m.lesson_id for m in guide.milestones] == list(IDS)
    assert all(m.can_do and m.keep for m in guide.milestones)


@pytest.mark.parametrize(
    ("old", "new", "line_text", "message"),
    [
        ("  state-02:\n", "  state-09:\n", "  state-09:", r"milestone 'state-09' names no lesson"),
        ("  install:\n", "  setup:\n", "preparation:", r"'preparation' must have exactly .*know"),
        ("  checklist:\n", "  checklist: []\n  steps:\n", "project:", r"'project' must have"),
    ],
)
def test_a_mistake_in_the_phase_file_names_its_line(tmp_path, old, new, line_text, message):
    text = guide_path(PHASE).read_text(encoding="utf-8")
    assert old in text
    broken = text.replace(old, new, 1)
    path = tmp_path / "phase.yaml"
    path.write_text(broken, encoding="utf-8")
    with pytest.raises(LessonError, match=message) as caught:
        load_study_guide(path, IDS)
    line = next(n for n, raw in enumerate(broken.splitlines(), 1) if raw.startswith(line_text))
    assert str(caught.value).startswith(f"{path}:{line}:"), str(caught.value)


def _text(html: str) -> str:
    """The page's words with tags and all whitespace gone (inline code splits words)."""
    return re.sub(r"\s+", "", unescape(re.sub(r"<[^>]+>", "", html)))


def test_every_lesson_links_the_guide_page_which_the_site_holds(built_site):
    page = built_site / "phase-03" / "index.html"
    assert page.is_file()
    for lesson in all_lessons(REPO):
        html = (built_site / lesson.meta.id / "index.html").read_text(encoding="utf-8")
        link = re.search(r'<p class="header-links"><a href="([^"]+)">([^<]+)</a>', html)
        assert link[1] == "../phase-03/index.html"
        assert (built_site / lesson.meta.id / link[1]).resolve() == page.resolve()
    index = (built_site / "index.html").read_text(encoding="utf-8")
    assert 'href="phase-03/index.html"' in index


def test_the_guide_page_shows_preparation_milestones_and_the_project(built_site):
    html = (built_site / "phase-03" / "index.html").read_text(encoding="utf-8")
    guide = load_study_guide(guide_path(PHASE), IDS)
    text = _text(html)
    for heading in ("Preparation", "Milestones", "Phase project: " + guide.project.title):
        assert _text(heading) in text
    for sentence in (*guide.know, *guide.project.checklist, guide.milestones[0].keep[1]):
        assert _text(sentence.replace("`", "")) in text
    lessons = {o.meta.id: o for o in all_lessons(REPO)}
    titles = lessons[IDS[0]].meta.phase.lessons
    for lesson_id in IDS:
        assert f'href="../{lesson_id}/index.html"' in html
    assert IDS == ("state-01", "state-02", "state-03", "state-04") and None not in titles
    assert "coming later" not in html  # every lesson of the phase is written
    for lesson_id, milestone in zip(IDS, guide.milestones, strict=True):
        assert milestone.can_do and _text(milestone.can_do[0].replace("`", "")) in text, lesson_id


def test_a_phase_without_a_study_guide_still_gets_its_lesson_list(tmp_path):
    copy_lesson_repo(tmp_path)  # state-02 alone, and a phase.yaml without a study guide
    code, _, err = invoke(["build"], root=tmp_path, cwd=tmp_path)
    assert code == 0, err
    html = (tmp_path / "build" / "site" / "phase-03" / "index.html").read_text(encoding="utf-8")
    assert "No study guide has been written for this phase yet" in html
    assert 'href="../state-02/index.html"' in html


def test_the_toolkit_holds_no_guide_content():
    guide = load_study_guide(guide_path(PHASE), IDS)
    sources = "".join(
        p.read_text(encoding="utf-8") for p in (REPO / "src" / "lessonkit").rglob("*.py")
    )
    assert guide.project.title not in sources
    assert guide.milestones[0].can_do[0] not in sources


def test_the_guide_page_shows_the_project_contract_escaped(built_site):
    html = (built_site / "phase-03" / "index.html").read_text(encoding="utf-8")
    graded = load_study_guide(guide_path(PHASE), IDS).project.graded
    assert f"<code>{graded.command('run')}</code>" in html
    assert f"<code>{graded.command('resume')}</code>" in html
    assert "python project.py --seed S --steps N --out params.npz" in html
    text = _text(html)
    for name, sentence in graded.properties:
        assert _text(f"{name}: {sentence.replace('`', '')}") in text
    lessons = [o for o in all_lessons(REPO) if o.meta.id == IDS[0]]
    guide = load_study_guide(guide_path(PHASE), IDS)
    hostile = dataclasses.replace(
        graded,
        run=("--seed", "{seed}", "<script>x</script>", "{steps}", "--out", "{output}"),
        properties=(("runs", "Writes <b>bold</b> arrays."),),
    )
    page = render_study_guide(
        lessons[0],
        lessons,
        dataclasses.replace(guide, project=dataclasses.replace(guide.project, graded=hostile)),
    )
    assert "<script>x</script>" not in page and "&lt;script&gt;x&lt;/script&gt;" in page
    assert "<b>bold</b>" not in page


def test_my_learning_lists_checked_properties_and_a_self_assessment(built_site):
    html = (built_site / "my-learning" / "index.html").read_text(encoding="utf-8")
    project = load_study_guide(guide_path(PHASE), IDS).project
    section = html[html.index('id="learning-project-03"') :]
    assert "lessonkit project phase-03 FILE" in section
    checked = section[: section.index("Your self-assessment")]
    for name, _ in project.graded.properties:
        assert f"<strong>{name}</strong>" in checked
    assert 'type="checkbox"' not in checked  # the command checks these, nobody ticks them
    boxes = re.findall(r'data-project="lessonkit:project-03" data-item="(\d+)"', section)
    assert boxes == [str(i) for i in range(len(project.checklist))]
