"""The lesson page in a real browser: Debian's Chromium driven by Playwright.

One site build and one browser serve the whole session; every test gets a fresh browser
context (so a fresh localStorage). Each page records every request and console message, and
fails its test on a console error or on any request that leaves the site.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from threading import Thread
from urllib.parse import urlparse
from urllib.request import url2pathname

import pytest

from lessonkit.lesson.catalog import all_lessons
from lessonkit.render.downloads import lesson_downloads
from lessonkit.site.server import make_server

from conftest import REPO

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = REPO / "test-output" / "screenshots"
LESSON_ID = "state-02"
PREDICTION = "#field-prediction-verify-leaves"


def _unavailable(reason: str) -> None:
    """Skip on a workstation without Chromium; fail in CI, where it must be installed."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"browser tests cannot run in CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.is_file():
        _unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[test]')")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS
        )
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def server_url(built_site) -> Iterator[str]:
    server = make_server(built_site, 0, quiet=True)
    Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def urls(built_site, server_url) -> dict[str, str]:
    return {
        "file": (built_site / LESSON_ID / "index.html").as_uri(),
        "http": f"{server_url}{LESSON_ID}/index.html",
    }


@dataclass
class Watch:
    """Everything a page asked for or complained about."""

    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def outside(self) -> list[str]:
        # blob: is the export download, data: anything inlined: neither leaves the browser.
        local = ("file://", "http://127.0.0.1:", "blob:", "data:")
        return [url for url in self.requests if not url.startswith(local)]


@pytest.fixture
def context(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    yield context
    context.close()


def _watched(context, watch: Watch):
    page = context.new_page()
    page.set_default_timeout(5000)  # everything is local: a wait this long means a bug
    page.on("request", lambda request: watch.requests.append(request.url))
    page.on("console", lambda m: watch.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: watch.errors.append(str(error)))

    def on_dialog(dialog):
        watch.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    return page


@pytest.fixture
def watch() -> Iterator[Watch]:
    watch = Watch()
    yield watch
    assert watch.errors == [], "console errors"
    assert watch.outside() == [], "requests outside the site"
    assert watch.dialogs == [], "dialogs opened"


@pytest.fixture
def page(context, urls, watch):
    page = _watched(context, watch)
    page.goto(urls["http"])
    return page


def _stage(page, number: int) -> None:
    page.click(f"#stage-tab-{number}")


def _selected_stage(page) -> int:
    return int(page.get_attribute('.stage-tab[aria-selected="true"]', "data-stage"))


def _show_figure(page) -> None:
    """Bring the figure into view and wait for it: it loads lazily, once it comes near."""
    _stage(page, 1)
    figure = page.locator("#figure img")
    figure.scroll_into_view_if_needed()
    page.wait_for_function(
        "img => img.complete && img.naturalWidth > 0", arg=figure.element_handle()
    )


def _portfolio_file(entries: dict, **overrides) -> dict:
    data = {
        "schema": "lessonkit-portfolio",
        "version": 1,
        "lesson": LESSON_ID,
        "saved": "2030-01-01T00:00:00.000Z",
        "entries": entries,
    }
    return {**data, **overrides}


def _import(page, content: bytes | str, name: str = "portfolio.json") -> str:
    """Import a file through the page's file input; returns the message the page shows."""
    payload = content.encode() if isinstance(content, str) else content
    page.set_input_files(
        "#portfolio-import",
        files=[{"name": name, "mimeType": "application/json", "buffer": payload}],
    )
    message = page.locator("#portfolio-message")
    message.wait_for(state="visible")
    return message.inner_text()


def _stored(page) -> dict | None:
    raw = page.evaluate(f"() => localStorage.getItem('lessonkit:{LESSON_ID}')")
    return None if raw is None else json.loads(raw)


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("scheme", ["file", "http"])
def test_every_stage_opens_without_errors_or_outside_requests(context, urls, watch, scheme):
    page = _watched(context, watch)
    page.goto(urls[scheme])
    for number in range(1, 6):
        _stage(page, number)
        page.eval_on_selector_all(
            f"#stage-{number} details", "all => all.forEach(d => d.open = true)"
        )
        assert page.is_visible(f"#stage-{number} .stage-title")
    _show_figure(page)
    assert any(url.endswith("figure.svg") for url in watch.requests)


def test_stages_by_mouse_and_keyboard(page):
    assert _selected_stage(page) == 1
    assert page.is_visible("#stage-1") and page.is_hidden("#stage-3")
    _stage(page, 3)
    assert _selected_stage(page) == 3
    assert page.is_visible("#stage-3") and page.is_hidden("#stage-1")
    assert page.inner_text("#stage-status").endswith("Stage 3 of 5 · Experiment")

    page.focus("#stage-tab-3")
    page.keyboard.press("ArrowRight")
    assert _selected_stage(page) == 4
    assert page.evaluate("document.activeElement.id") == "stage-tab-4"
    page.keyboard.press("End")
    assert _selected_stage(page) == 5
    page.keyboard.press("Home")
    assert _selected_stage(page) == 1
    page.keyboard.press("ArrowLeft")
    assert _selected_stage(page) == 5
    assert page.get_attribute("#stage-tab-1", "tabindex") == "-1"
    assert page.get_attribute("#stage-tab-5", "tabindex") == "0"

    _stage(page, 2)
    page.focus("#stage-2 [data-stage-next]")
    page.keyboard.press("Enter")
    assert _selected_stage(page) == 3
    assert "is-done" in page.get_attribute("#stage-tab-2", "class")
    assert page.evaluate("document.activeElement.textContent").startswith("Stage 3 of 5")

    page.reload()
    assert _selected_stage(page) == 3
    assert "is-done" in page.get_attribute("#stage-tab-2", "class")


@pytest.mark.parametrize("scheme", ["file", "http"])
def test_the_address_names_the_stage_and_survives_a_reload(context, urls, watch, scheme):
    page = _watched(context, watch)
    page.goto(urls[scheme])
    _stage(page, 3)
    assert page.url == urls[scheme] + "#stage-3"
    page.focus("#stage-tab-3")
    page.keyboard.press("ArrowRight")
    assert page.url == urls[scheme] + "#stage-4"
    page.evaluate("localStorage.clear()")  # the address alone brings the stage back
    page.reload()
    assert _selected_stage(page) == 4
    linked = _watched(context, watch)
    linked.goto(urls[scheme] + "#stage-2")
    assert _selected_stage(linked) == 2
    linked.click('#outline a[href="#repair"]')  # a link into a stage keeps its own address
    assert _selected_stage(linked) == 4 and linked.url.endswith("#repair")


def test_the_outline_is_never_cut_off_nor_a_box_that_hides_its_entries(browser, urls, watch):
    """At 1280 x 800 on stage 5 the sticky outline was cut off at the window's edge and its
    last entries needed scrolling inside it: it now stays sticky only while it fits."""
    for height in (800, 2000):
        context = browser.new_context(viewport={"width": 1280, "height": height})
        try:
            page = _watched(context, watch)
            page.goto(urls["http"])
            _stage(page, 5)
            outline = page.locator("#outline")
            boxed = outline.evaluate("o => o.scrollHeight - o.clientHeight")
            assert boxed <= 0, f"the outline hides {boxed}px in a box of its own"
            tall = outline.evaluate("o => o.offsetHeight") > height
            sticky = outline.evaluate("o => getComputedStyle(o).position") == "sticky"
            assert sticky != tall, (height, tall, sticky)  # sticky exactly when it fits
            last = page.locator("#outline a").last
            last.scroll_into_view_if_needed()
            box = last.bounding_box()
            assert box and box["y"] >= 0 and box["y"] + box["height"] <= height, box
        finally:
            context.close()


def test_outline_links_open_the_stage_that_holds_them(page):
    page.click('#outline a[href="#repair"]')
    assert _selected_stage(page) == 4
    assert page.is_visible("#repair-title")
    page.click('#outline a[href="#setup"]')
    assert page.get_attribute("#setup", "open") is not None


def test_one_shell_choice_switches_every_setup_command(page):
    page.click("#setup summary")
    groups = page.locator("#setup .shell-group")
    assert groups.count() >= 3
    groups.first.locator('[data-shell="powershell"][role="tab"]').click()
    for index in range(groups.count()):
        group = groups.nth(index)
        assert group.locator('.shell-panel[data-shell="powershell"]').is_visible()
        assert group.locator('.shell-panel[data-shell="bash"]').is_hidden()
    page.keyboard.press("ArrowLeft")
    assert groups.last.locator('.shell-panel[data-shell="bash"]').is_visible()
    page.reload()
    page.click("#setup summary")
    assert groups.last.locator('.shell-panel[data-shell="bash"]').is_visible()


def test_reveals_hide_solutions_until_asked(page):
    _stage(page, 4)
    solution = page.locator("#make-it-yours details.solution")
    code = solution.locator("pre")
    assert not code.is_visible()
    solution.locator("summary").click()
    assert code.is_visible()
    assert "norm_squared = sum(" in code.inner_text()
    pause = page.locator("#stage-1 .pause details")
    _stage(page, 1)
    pause.locator("summary").press("Enter")
    assert pause.locator("p").first.is_visible()


def _answer(quiz, index: int) -> None:
    quiz.locator('input[type="radio"]').nth(index).check()
    quiz.locator('button[type="submit"]').click()


def test_quiz_lets_a_learner_try_again_before_it_reveals_the_answer(page):
    _stage(page, 4)
    quizzes = page.locator("form.quiz")
    assert quizzes.count() >= 1
    for index in range(quizzes.count()):
        quiz = quizzes.nth(index)
        answer = int(quiz.get_attribute("data-answer"))
        options = quiz.locator('input[type="radio"]')
        right_text = quiz.locator(f'label[for="{options.nth(answer).get_attribute("id")}"]')
        right_text = right_text.inner_text().strip()
        verdict, explanation = quiz.locator(".verdict"), quiz.locator(".explanation")
        reveal = quiz.locator(".reveal-answer")
        quiz.scroll_into_view_if_needed()
        for wrong in [i for i in range(options.count()) if i != answer]:
            _answer(quiz, wrong)
            assert "wrong" in verdict.get_attribute("class")
            assert verdict.inner_text().startswith("Not quite. Try another answer")
            assert right_text not in verdict.inner_text()
            assert explanation.is_hidden() and reveal.is_visible()
        _answer(quiz, answer)
        assert "right" in verdict.get_attribute("class")
        assert verdict.inner_text() == "Right."
        assert explanation.is_visible() and reveal.is_hidden()


def test_a_learner_may_ask_for_the_answer_and_a_reload_keeps_the_choice(page):
    _stage(page, 4)
    quiz = page.locator("form.quiz").first
    answer = int(quiz.get_attribute("data-answer"))
    wrong = (answer + 1) % quiz.locator('input[type="radio"]').count()
    quiz.scroll_into_view_if_needed()
    _answer(quiz, wrong)
    quiz.locator(".reveal-answer").click()
    verdict = quiz.locator(".verdict")
    assert verdict.inner_text().startswith("The answer is: ")
    assert quiz.locator(".explanation").is_visible()
    page.reload()
    _stage(page, 4)
    quiz = page.locator("form.quiz").first
    assert quiz.locator('input[type="radio"]').nth(wrong).is_checked()
    assert quiz.locator(".explanation").is_hidden()  # a reload is one more try, not the answer
    _answer(quiz, answer)
    assert quiz.locator(".verdict").inner_text() == "Right."
    page.reload()
    _stage(page, 4)
    assert page.locator("form.quiz").first.locator(".explanation").is_visible()


def test_predictions_notes_and_completion_survive_a_reload(page):
    _stage(page, 3)
    page.fill(PREDICTION, "weight gradient [-8, -4], bias -4, loss 0.64")
    _stage(page, 4)
    page.check("#field-task-make-it-yours-done")
    page.fill("#field-task-make-it-yours-notes", "norm is 96")
    page.keyboard.press("Tab")  # leaving the field saves at once
    page.reload()
    _stage(page, 3)
    assert page.input_value(PREDICTION) == "weight gradient [-8, -4], bias -4, loss 0.64"
    _stage(page, 4)
    assert page.is_checked("#field-task-make-it-yours-done")
    assert page.input_value("#field-task-make-it-yours-notes") == "norm is 96"


def _export(page, button: str, stem: str, folder: Path) -> tuple[Path, dict]:
    """Click an export button; the saved file, named `stem-YYYY-MM-DD.json`, and its data."""
    with page.expect_download() as download_info:
        page.click(button)
    download = download_info.value
    assert re.fullmatch(stem + r"-\d{4}-\d{2}-\d{2}\.json", download.suggested_filename)
    path = folder / download.suggested_filename
    download.save_as(path)
    return path, json.loads(path.read_text(encoding="utf-8"))


def test_export_then_import_into_a_fresh_browser(page, browser, urls, watch, tmp_path):
    _stage(page, 3)
    page.fill(PREDICTION, "all five checks pass")
    _stage(page, 5)
    path, exported = _export(page, "#portfolio-export", r"lessonkit-state-02-portfolio", tmp_path)
    assert (exported["schema"], exported["version"], exported["lesson"]) == (
        "lessonkit-portfolio",
        1,
        LESSON_ID,
    )
    assert exported["saved"].endswith("Z")
    assert exported["entries"]["prediction:verify-leaves"]["value"] == "all five checks pass"

    fresh_context = browser.new_context()
    try:
        fresh = _watched(fresh_context, watch)
        fresh.goto(urls["file"])
        assert _stored(fresh) is None
        _stage(fresh, 5)
        message = _import(fresh, path.read_bytes(), path.name)
        assert re.match(rf"Imported \d+ entr(y|ies) from {re.escape(path.name)}", message)
        _stage(fresh, 3)
        assert fresh.input_value(PREDICTION) == "all five checks pass"
        assert (
            _stored(fresh)["entries"]["prediction:verify-leaves"]["value"] == "all five checks pass"
        )
    finally:
        fresh_context.close()


def test_imported_markup_is_shown_as_text(page):
    hostile = (
        "<script>window.pwned = 1</script><img src=x onerror=\"window.pwned = 2; alert('x')\">"
    )
    entries = {
        "prediction:verify-leaves": {"value": hostile, "updated": "2030-01-01T00:00:00.000Z"},
        "evidence:explanation": hostile,
    }
    _stage(page, 5)
    _import(page, json.dumps(_portfolio_file(entries)))
    assert page.input_value("#field-evidence-explanation") == hostile
    _stage(page, 3)
    assert page.input_value(PREDICTION) == hostile
    _stage(page, 5)
    page.click("#my-learning summary")
    summary = page.locator("#portfolio-summary")
    assert hostile in summary.inner_text()
    assert summary.locator("img, script").count() == 0
    assert page.evaluate("window.pwned") is None


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{this is not json", "is not valid JSON"),
        (json.dumps({"schema": "something-else", "version": 1}), "is not a lessonkit portfolio"),
        (json.dumps(_portfolio_file({}, version=7)), "has portfolio version 7"),
        (json.dumps(_portfolio_file({}, lesson="state-99")), 'belongs to lesson "state-99"'),
        (json.dumps(_portfolio_file({"prediction:x": {"value": {"nested": 1}}})), "cannot use"),
    ],
)
def test_a_bad_import_is_refused_and_nothing_is_lost(page, content, reason):
    _stage(page, 3)
    page.fill(PREDICTION, "my own words")
    page.keyboard.press("Tab")
    _stage(page, 5)
    # The stage change is saved a moment later: let it land before taking the snapshot.
    page.wait_for_function(
        "key => JSON.parse(localStorage.getItem(key)).entries['progress:stage'].value === 5",
        arg=f"lessonkit:{LESSON_ID}",
    )
    before = _stored(page)
    message = _import(page, content, "broken.json")
    assert message.startswith("Nothing was imported: broken.json")
    assert reason in message
    assert "Your saved work is unchanged" in message
    assert page.get_attribute("#portfolio-message", "role") == "alert"
    assert page.is_hidden("#portfolio-undo")
    assert _stored(page) == before
    _stage(page, 3)
    assert page.input_value(PREDICTION) == "my own words"


def test_undo_restores_the_work_from_before_the_import(page):
    _stage(page, 3)
    page.fill(PREDICTION, "mine")
    page.keyboard.press("Tab")
    _stage(page, 5)
    later = "2999-01-01T00:00:00.000Z"
    entries = {
        "prediction:verify-leaves": {"value": "theirs", "updated": later},
        "evidence:output": {"value": "their output", "updated": later},
    }
    assert _import(page, json.dumps(_portfolio_file(entries))).startswith("Imported 2 entries")
    assert page.input_value("#field-evidence-output") == "their output"
    page.fill("#field-evidence-output", "written after the import")
    page.keyboard.press("Tab")
    page.click("#portfolio-undo")
    message = page.inner_text("#portfolio-message")
    assert message.startswith("Import undone: 1 entry is back as before the import")
    assert "kept 1 entry you changed since then" in message
    assert page.is_hidden("#portfolio-undo")
    assert page.input_value("#field-evidence-output") == "written after the import"
    _stage(page, 3)
    assert page.input_value(PREDICTION) == "mine"
    page.reload()
    _stage(page, 3)
    assert page.input_value(PREDICTION) == "mine"
    assert page.is_hidden("#portfolio-undo")


def test_a_storage_failure_is_shown(context, urls, watch):
    context.add_init_script(
        "Storage.prototype.setItem = function () {"
        " throw new DOMException('quota', 'QuotaExceededError'); };"
    )
    page = _watched(context, watch)
    page.goto(urls["file"])
    assert page.is_hidden("#storage-warning")
    _stage(page, 3)
    page.fill(PREDICTION, "this cannot be stored")
    page.keyboard.press("Tab")
    warning = page.locator("#storage-warning")
    assert warning.is_visible()
    assert "NOT being saved" in warning.inner_text()
    assert "QuotaExceededError" in warning.inner_text()
    assert page.input_value(PREDICTION) == "this cannot be stored"


def test_derivation_is_rendered_mathml(page):
    table = page.locator("#derivation math[display='block'] mtable")
    assert table.count() == 1
    assert table.locator("mtr").count() == 3
    box = table.bounding_box()
    assert box["height"] > 40 and box["width"] > 100
    assert page.locator("#derivation math[display='inline']").count() > 10


@pytest.mark.parametrize("scheme", ["file", "http"])
def test_every_download_is_the_generated_file(page, urls, scheme):
    lesson = next(lesson for lesson in all_lessons(REPO) if lesson.meta.id == LESSON_ID)
    sources = {d.key: lesson.directory / d.source for d in lesson_downloads(lesson)}
    page.goto(urls[scheme])
    links = page.eval_on_selector_all(
        "a[data-download]", "all => all.map(a => [a.dataset.download, a.href])"
    )
    assert {key for key, _ in links} == set(sources)
    for key, href in links:
        if scheme == "http":
            response = page.request.get(href)
            assert response.ok, href
            body = response.body()
        else:
            body = Path(url2pathname(urlparse(href).path)).read_bytes()
        assert body == sources[key].read_bytes(), href


def test_accessibility_basics(page):
    for landmark in ("header", "nav", "main", "footer"):
        assert page.locator(landmark).count() >= 1, landmark
    unlabelled = page.evaluate(
        """() => [...document.querySelectorAll('textarea, input, select')]
            .filter(el => el.labels.length === 0 && !el.getAttribute('aria-label'))
            .map(el => el.id || el.name)"""
    )
    assert unlabelled == []
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip-link"
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    page.focus("#stage-tab-2")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"


CONTRAST = """() => {
  const parse = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map(v => v / 255)
    .map(v => v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)
    .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
  const background = (el) => {
    for (let n = el; n; n = n.parentElement) {
      const c = parse(getComputedStyle(n).backgroundColor);
      if (c.length === 3 || c[3] > 0) return c;
    }
    return [255, 255, 255];
  };
  const poor = [];
  for (const el of document.querySelectorAll('body *')) {
    const text = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!text || !el.getClientRects().length) continue;
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || el.closest('.visually-hidden, svg')) continue;
    const [a, b] = [lum(parse(style.color)), lum(background(el))].sort((x, y) => y - x);
    const ratio = (a + 0.05) / (b + 0.05);
    if (ratio < 4.5) poor.push(`${el.tagName}.${el.className}: ${ratio.toFixed(2)}`);
  }
  return poor;
}"""


def test_text_contrast_is_at_least_4_5_to_1(page):
    for number in range(1, 6):
        _stage(page, number)
        page.eval_on_selector_all("details", "all => all.forEach(d => d.open = true)")
        assert page.evaluate(CONTRAST) == [], f"stage {number}"


def _axe_findings(page) -> list[str]:
    """What axe-core flags on the page as shown now: violations, and what it could not
    decide and so asks a person to review ("incomplete"); one line per rule and element."""
    from axe_playwright_python.sync_playwright import Axe

    options = {
        "resultTypes": ["violations", "incomplete"],
        # Measure the contrast of text made only of symbols too (MathML's − and =), instead of
        # leaving it for review: low contrast there is still reported.
        "checks": {"color-contrast": {"options": {"ignoreUnicode": False}}},
    }
    results = Axe().run(page, options=options).response
    return [
        f"{kind}: {finding['id']} ({finding['help']}) at {', '.join(map(str, node['target']))}"
        for kind in ("violations", "incomplete")
        for finding in results[kind]
        for node in finding["nodes"]
    ]


@pytest.mark.parametrize("width", [375, 1280])
def test_axe_finds_nothing_on_any_stage(browser, urls, watch, width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = _watched(context, watch)
        page.goto(urls["http"])
        _show_figure(page)
        for number in range(1, 6):
            _stage(page, number)
            page.eval_on_selector_all(
                f"#stage-{number} details", "all => all.forEach(d => d.open = true)"
            )
            assert _axe_findings(page) == [], f"stage {number} at {width}px"
    finally:
        context.close()


def test_axe_finds_nothing_on_the_index(page, server_url):
    page.goto(server_url + "index.html")
    assert _axe_findings(page) == []


@pytest.mark.parametrize("width", [375, 1280])
def test_screenshots_and_no_sideways_scrolling(browser, urls, watch, width):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = _watched(context, watch)
        page.goto(urls["http"])
        _show_figure(page)
        for number in range(1, 6):
            _stage(page, number)
            page.evaluate("window.scrollTo(0, 0)")
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, f"stage {number} scrolls sideways by {overflow}px at {width}px"
            # Drawing a full page is work, not a wait: on a busy machine it may take over 5 s.
            page.screenshot(
                path=SCREENSHOTS / f"{LESSON_ID}-{width}px-stage-{number}.png",
                full_page=True,
                timeout=30_000,
            )
    finally:
        context.close()


# --------------------------------------------------------------------------- across lessons
# The phase's lessons link each other, and "My learning" reads, exports and imports all of them.

FIRST = "state-01"


def phase_titles(number: str, lessons) -> tuple[str | None, ...]:
    """The titles of phase `number`'s lessons in its phase.yaml's order (None: a kept place)."""
    mine = [lesson for lesson in lessons if lesson.meta.phase.number == number]
    by_id = {lesson.meta.id: lesson.meta.title for lesson in mine}
    return tuple(by_id.get(i) if i else None for i in mine[0].meta.phase.lessons)


FIRST_PREDICTION = "#field-prediction-same-key-experiment"


def test_a_learner_goes_from_the_overview_through_lesson_1_to_lesson_2_and_back(page, server_url):
    page.goto(server_url + "index.html")
    page.click("text=Random keys without surprises")
    assert page.url.endswith(f"/{FIRST}/index.html")
    page.click('.nav-next a[rel="next"]')
    assert page.url.endswith(f"/{LESSON_ID}/index.html")
    lessons = all_lessons(REPO)
    third = phase_titles("03", lessons)[2]  # whatever the phase lists after lesson 2
    assert page.inner_text(".nav-next").startswith(third or "Lesson 3 of Phase 03, coming later")
    page.click('.nav-before a[rel="prev"]')
    assert page.url.endswith(f"/{FIRST}/index.html")
    page.click(".header-links a >> nth=0")
    assert page.url.endswith("/phase-03/index.html")
    for heading in ("Preparation", "Milestones"):
        assert page.is_visible(f"h2:has-text('{heading}')")
    page.click("#milestones >> text=Pytrees and structured parameters")
    assert page.url.endswith(f"/{LESSON_ID}/index.html")


def _save_in_both_lessons(page, server_url) -> None:
    page.goto(f"{server_url}{FIRST}/index.html")
    _stage(page, 3)
    page.fill(FIRST_PREDICTION, "the same three numbers twice")
    _stage(page, 4)
    quiz = page.locator("form.quiz").first
    quiz.scroll_into_view_if_needed()
    _answer(quiz, 1)
    page.check("#field-task-two-draws-done")
    page.goto(f"{server_url}{LESSON_ID}/index.html")
    _stage(page, 3)
    page.fill(PREDICTION, "gradients -8, -4 and -4")
    page.keyboard.press("Tab")


def _learning(page, server_url) -> None:
    page.goto(f"{server_url}my-learning/index.html")
    page.wait_for_function("() => document.querySelector('[data-progress]').textContent")


def _learning_import(page, content: bytes, name: str) -> str:
    page.set_input_files(
        "#learning-import",
        files=[{"name": name, "mimeType": "application/json", "buffer": content}],
    )
    message = page.locator("#learning-message")
    message.wait_for(state="visible")
    return message.inner_text()


def test_my_learning_lists_every_lesson_and_exports_them_in_one_file(
    page, browser, server_url, watch, tmp_path
):
    _save_in_both_lessons(page, server_url)
    _learning(page, server_url)
    first, second = page.locator(f"#learning-{FIRST}"), page.locator(f"#learning-{LESSON_ID}")
    assert "the same three numbers twice" in first.inner_text()
    assert "(right)" in first.inner_text()  # the quiz answer, with its verdict
    assert re.search(r"1 of 3 exercises marked complete", first.inner_text())
    assert "gradients -8, -4 and -4" in second.inner_text()
    path, exported = _export(page, "#learning-export", r"lessonkit-my-learning", tmp_path)
    assert (exported["schema"], exported["version"]) == ("lessonkit-portfolio", 2)
    assert set(exported["lessons"]) == {FIRST, LESSON_ID}
    entries = exported["lessons"][FIRST]["entries"]
    assert entries["prediction:same-key-experiment"]["value"] == "the same three numbers twice"

    fresh_context = browser.new_context()
    try:
        fresh = _watched(fresh_context, watch)
        _learning(fresh, server_url)
        assert "Nothing saved in this browser yet." in fresh.inner_text(f"#learning-{FIRST}")
        message = _learning_import(fresh, path.read_bytes(), path.name)
        assert re.match(
            rf"Imported \d+ entries into 2 lessons from {re.escape(path.name)}", message
        )
        assert "gradients -8, -4 and -4" in fresh.inner_text(f"#learning-{LESSON_ID}")
        fresh.goto(f"{server_url}{FIRST}/index.html")  # the lesson page reads what was imported
        _stage(fresh, 3)
        assert fresh.input_value(FIRST_PREDICTION) == "the same three numbers twice"
    finally:
        fresh_context.close()


# The whole phase: four lessons, each linked to the next, all of them in "My learning".

PHASE = ("state-01", "state-02", "state-03", "state-04")
PHASE_PREDICTIONS = {
    "state-01": FIRST_PREDICTION,
    "state-02": PREDICTION,
    "state-03": "#field-prediction-carry-structure",
    "state-04": "#field-prediction-both-branches",
}


def test_a_learner_walks_the_four_lessons_with_next_and_back_with_before(page, server_url):
    titles = phase_titles("03", all_lessons(REPO))
    assert len(titles) == 4 and None not in titles
    page.goto(server_url + "index.html")
    page.click(f"text={titles[0]}")
    for lesson_id, title in zip(PHASE[1:], titles[1:], strict=True):
        assert page.inner_text(".nav-next") == title
        page.click('.nav-next a[rel="next"]')
        assert page.url.endswith(f"/{lesson_id}/index.html")
    assert page.inner_text(".nav-next") == "Nothing more in this phase: this is its last lesson"
    assert "coming later" not in page.content()
    assert _axe_findings(page) == []  # the last lesson's page, as a learner reaches it
    for lesson_id, title in zip(reversed(PHASE[:-1]), reversed(titles[:-1]), strict=True):
        assert page.inner_text(".nav-before") == title
        page.click('.nav-before a[rel="prev"]')
        assert page.url.endswith(f"/{lesson_id}/index.html")
    assert page.inner_text(".nav-before").startswith("Nothing from this phase")


def test_my_learning_reads_exports_and_imports_all_four_lessons(
    page, browser, server_url, watch, tmp_path
):
    for lesson_id, field_id in PHASE_PREDICTIONS.items():
        page.goto(f"{server_url}{lesson_id}/index.html")
        _stage(page, 3)
        page.fill(field_id, f"my prediction for {lesson_id}")
        page.keyboard.press("Tab")
    _learning(page, server_url)
    for lesson_id in PHASE:
        assert f"my prediction for {lesson_id}" in page.inner_text(f"#learning-{lesson_id}")
    assert "coming later" not in page.content()
    assert _axe_findings(page) == []
    path, exported = _export(page, "#learning-export", r"lessonkit-my-learning", tmp_path)
    assert set(exported["lessons"]) == set(PHASE)

    fresh_context = browser.new_context()
    try:
        fresh = _watched(fresh_context, watch)
        _learning(fresh, server_url)
        message = _learning_import(fresh, path.read_bytes(), path.name)
        imported = rf"Imported \d+ entries into 4 lessons from {re.escape(path.name)}"
        assert re.match(imported, message)
        assert "my prediction for state-04" in fresh.inner_text("#learning-state-04")
        fresh.goto(f"{server_url}state-04/index.html")  # the page reads what was imported
        _stage(fresh, 3)
        assert fresh.input_value(PHASE_PREDICTIONS["state-04"]) == "my prediction for state-04"
    finally:
        fresh_context.close()


def test_an_old_one_lesson_export_still_imports_into_my_learning(page, server_url):
    _learning(page, server_url)
    old = _portfolio_file({"prediction:verify-leaves": "an old export"})
    message = _learning_import(page, json.dumps(old).encode(), "old.json")
    assert message.startswith("Imported 1 entry into 1 lesson from old.json")
    assert "an old export" in page.inner_text(f"#learning-{LESSON_ID}")
    page.goto(f"{server_url}{LESSON_ID}/index.html")
    _stage(page, 3)
    assert page.input_value(PREDICTION) == "an old export"


def test_a_bad_all_lessons_file_changes_nothing(page, server_url):
    _save_in_both_lessons(page, server_url)
    _learning(page, server_url)
    before = page.evaluate("() => JSON.stringify(localStorage)")
    bad = {
        "schema": "lessonkit-portfolio",
        "version": 2,
        "lessons": {FIRST: {"entries": {"ok": "fine"}}, LESSON_ID: {"entries": {"Bad Key": 1}}},
    }
    message = _learning_import(page, json.dumps(bad).encode(), "bad.json")
    assert message.startswith("Nothing was imported: bad.json (lesson state-02) has an entry")
    assert page.evaluate("() => JSON.stringify(localStorage)") == before


@pytest.mark.parametrize("entries", [{"Bad Key": 1}, {"prediction:x": {"value": {"nested": 1}}}])
def test_both_pages_refuse_a_bad_entry_for_the_same_reason(page, server_url, entries):
    """The lesson page and "My learning" check a portfolio's entries with one shared function."""
    content = json.dumps(_portfolio_file(entries))
    _stage(page, 5)
    on_the_lesson_page = _import(page, content, "bad.json")
    assert on_the_lesson_page.startswith("Nothing was imported: bad.json has an entry")
    reason = on_the_lesson_page.removeprefix("Nothing was imported: bad.json ")
    _learning(page, server_url)
    in_my_learning = _learning_import(page, content.encode(), "bad.json")
    assert in_my_learning == f"Nothing was imported: bad.json (lesson {LESSON_ID}) {reason}"


def test_a_lesson_page_imports_its_part_of_an_all_lessons_file(page):
    both = {
        "schema": "lessonkit-portfolio",
        "version": 2,
        "saved": "2030-01-01T00:00:00.000Z",
        "lessons": {
            FIRST: {"entries": {"prediction:same-key-experiment": "not this lesson"}},
            LESSON_ID: {"entries": {"prediction:verify-leaves": "from the course file"}},
        },
    }
    _stage(page, 5)
    assert _import(page, json.dumps(both)).startswith("Imported 1 entry from portfolio.json")
    _stage(page, 3)
    assert page.input_value(PREDICTION) == "from the course file"
    assert "prediction:same-key-experiment" not in _stored(page)["entries"]


def test_my_learning_keeps_the_project_self_assessment_apart_from_the_checked_properties(
    page, server_url
):
    _learning(page, server_url)
    section = page.locator("#learning-project-03")
    assert section.locator(".project-checked input").count() == 0  # the command checks these
    boxes = section.locator("input[data-project]")
    assert boxes.count() == 3
    boxes.nth(1).check()
    page.reload()
    page.wait_for_function("() => document.querySelectorAll('input[data-project]')[1].checked")
    assert [boxes.nth(i).is_checked() for i in range(3)] == [False, True, False]
    stored = page.evaluate("() => JSON.parse(localStorage.getItem('lessonkit:project-03'))")
    assert stored["ticked"] == [1]


def test_my_learning_from_a_file_says_how_storage_behaves_there(context, built_site, watch):
    page = _watched(context, watch)
    page.goto((built_site / "my-learning" / "index.html").as_uri())
    note = page.locator("#file-note")
    assert note.is_visible() and note.get_attribute("role") == "alert"
    assert "keeps storage per file" in note.inner_text()
    assert "lessonkit serve" in note.inner_text() and "`" not in note.inner_text()
    assert note.locator("code").inner_text() == "lessonkit serve"  # code, not backticks
    page.goto((built_site / FIRST / "index.html").as_uri())
    _stage(page, 3)
    page.fill(FIRST_PREDICTION, "saved from a file")
    page.keyboard.press("Tab")
    page.goto((built_site / "my-learning" / "index.html").as_uri())
    assert "saved from a file" in page.inner_text(f"#learning-{FIRST}")  # Chromium shares it
    assert "shares saved work between the site's files" in page.inner_text("#file-note")


@pytest.mark.parametrize(
    "path", ["my-learning/index.html", "phase-03/index.html", "accelerators/index.html"]
)
def test_axe_finds_nothing_on_the_course_pages(page, server_url, path):
    _save_in_both_lessons(page, server_url)
    page.goto(server_url + path)
    assert _axe_findings(page) == []


@pytest.mark.parametrize("width", [375, 1280])
@pytest.mark.parametrize("path", ["cpu-setup/index.html", "accelerators/index.html"])
def test_the_setup_pages_pass_axe_and_fit_the_window(browser, server_url, watch, path, width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = _watched(context, watch)
        page.goto(server_url + path)
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{path} scrolls sideways by {overflow}px at {width}px"
        assert _axe_findings(page) == []
        page.goto(server_url + "state-02/index.html")
        page.click("#setup > summary")  # the setup help ends with the setup pages
        page.click('#setup a[href="../cpu-setup/index.html"]')
        assert page.url.endswith("/cpu-setup/index.html")
    finally:
        context.close()


def _class_report_page(lesson, folder: Path) -> Path:
    """A class report over hand-made attempts at the lesson: one student passing, one with a
    long message about a deep key path, one not yet attempting."""
    from lessonkit.course.class_report import class_report, render_class_report
    from lessonkit.course.gradebook import Attempt, TaskGrade

    def attempt(number: int, student: str, status: str) -> Attempt:
        tasks = tuple(
            TaskGrade(
                t.id,
                t.title,
                status,
                1.0 if status == "passed" else 0.0,
                1.0,
                t.optional,
                "`grads` at `layers/0/w` is [0.1, 0.2, 0.3]; expected [0.3, 0.2, 0.1]. " * 3,
                None if status == "passed" else "lesson inputs",
                None if status == "passed" else "grads/layers/0/w",
            )
            for t in lesson.tasks
        )
        return Attempt(
            number, student, lesson.meta.id, lesson.meta.title, f"{student}.py",
            f"{number:064d}", 1,
            "2026-12-04T00:00:00Z", float(number), "0.1.0", "r1",
            sum(t.points for t in tasks), float(len(tasks)), None, tasks,
        )  # fmt: skip

    attempts = [
        attempt(1, "ann", "failed"),
        attempt(2, "ann", "passed"),
        attempt(3, "bo", "failed"),
        attempt(4, "cy", "not attempted"),
    ]
    page = folder / "report.html"
    similar, views = _alike_pairs()
    report = class_report(attempts, lesson.meta.id, "latest")
    page.write_text(render_class_report(report, similar, views))
    return page


def _alike_pairs():
    """The "Work that is alike" section: state-02 answers, one of them copied in disguise
    (`similarity_cases`), compared and shown side by side."""
    import hashlib
    import random

    import similarity_cases as cases

    from lessonkit.course.pair_view import pair_views
    from lessonkit.course.similarity import compare, work_of
    from lessonkit.lesson.catalog import find_lesson

    state02 = find_lesson(cases.LESSON, cases.REPO)
    files = {f"student-{i}": cases.independent_file(i) for i in range(3)}
    files["student-3"] = cases.disguised_file(1, random.Random(7))
    content = {hashlib.sha256(t.encode()).hexdigest(): t.encode() for t in files.values()}
    works = [
        work_of(state02, s, f"{s}.py", hashlib.sha256(t.encode()).hexdigest(), t.encode())
        for s, t in sorted(files.items())
    ]
    similar = compare(state02, works)
    return similar, pair_views(state02, similar, content.__getitem__)


@pytest.mark.parametrize("width", [375, 1280])
def test_the_class_report_passes_axe_offline_without_sideways_scrolling(
    browser, watch, lesson, tmp_path, width
):
    context = browser.new_context(viewport={"width": width, "height": 900}, offline=True)
    try:
        page = _watched(context, watch)
        page.goto(_class_report_page(lesson, tmp_path).as_uri())
        rates = page.locator("table.chart").first
        assert rates.locator("svg").count() == len(lesson.tasks)
        first = rates.locator("tr").first
        assert first.locator("td.number").text_content() == "33% (1 of 3)"
        full, bar = first.locator("rect").all()
        ratio = bar.bounding_box()["width"] / full.bounding_box()["width"]
        assert abs(ratio - 1 / 3) < 0.01, ratio
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"the report scrolls sideways by {overflow}px at {width}px"
        # Nor does any table inside it: at 375 px each row of a wide table is a card.
        hidden = page.evaluate(
            "[...document.querySelectorAll('.table-wrap')].map(w => w.scrollWidth - w.clientWidth)"
        )
        assert max(hidden) <= 1, f"a table scrolls sideways by {max(hidden)}px at {width}px"
        # The pairs alike link to their side-by-side view, shown in the closing note.
        page.get_by_role("link", name="Compare student-1 and student-3").click()
        assert page.locator("#pair-1 ~ div mark").count() > 0
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(
            path=SCREENSHOTS / f"class-report-{width}px-side-by-side.png",
            full_page=True,
            timeout=30_000,
        )
        assert _axe_findings(page) == []
    finally:
        context.close()
