"""check() in JupyterLab, in a real browser: run all, then read the verdict's table on the page.

JupyterLab serves a practice notebook with one task solved and a `check("make-it-yours")`
cell; Debian's Chromium, driven by Playwright, opens it, runs every cell from the menu and
waits for the HTML table that `check()` displays under its cell.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from lessonkit.lesson.cell import task_cell_source
from lessonkit.lesson.model import Lesson

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = Path("/usr/bin/chromium")
TOKEN = "lessonkit-test"


def _unavailable(reason: str) -> None:
    """Skip on a workstation without the tools; fail in CI, where they must be installed."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"the JupyterLab test cannot run in CI: {reason}")
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _notebook(lesson: Lesson, folder: Path) -> str:
    import nbformat

    notebook = nbformat.read(
        lesson.directory / "exercises" / f"{lesson.meta.id}.ipynb", as_version=4
    )
    task = lesson.task("make-it-yours")
    cells = [
        c
        for c in notebook.cells
        if c.cell_type == "code" and not {"task", "figure"} & set(c.metadata.get("tags", []))
    ]
    added = [task_cell_source(task, task.solution), 'check("make-it-yours")']
    notebook.cells = cells + [nbformat.v4.new_code_cell(s) for s in added]
    nbformat.write(notebook, folder / "check.ipynb")
    return "check.ipynb"


@pytest.fixture
def jupyterlab(tmp_path: Path):
    """A JupyterLab server on a free port, its state kept under tmp_path; yields its URL."""
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        _unavailable("jupyterlab is not installed (pip install -e '.[test]')")
    port = _free_port()
    state = tmp_path / "jupyter"
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(state / "config"),
        "JUPYTER_DATA_DIR": str(state / "data"),
        "JUPYTER_RUNTIME_DIR": str(state / "runtime"),
        "JUPYTERLAB_WORKSPACES_DIR": str(state / "workspaces"),
    }
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",
            f"--port={port}",
            "--ServerApp.ip=127.0.0.1",
            f"--IdentityProvider.token={TOKEN}",
            f"--ServerApp.root_dir={notebooks}",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail("JupyterLab did not start within 120 s")
                time.sleep(0.5)
        yield url, notebooks
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def test_check_shows_its_verdict_table_in_jupyterlab(lesson: Lesson, jupyterlab) -> None:
    if not CHROMIUM.is_file():
        _unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    url, folder = jupyterlab
    name = _notebook(lesson, folder)
    # Playwright's sync API refuses a thread with a running asyncio loop, which an earlier
    # test in this worker may leave behind (nbclient's kernels): drive it from a fresh thread.
    failures: list[BaseException] = []

    def drive() -> None:
        try:
            _read_verdict_in_jupyterlab(url, folder, name)
        except BaseException as exc:
            failures.append(exc)

    thread = threading.Thread(target=drive)
    thread.start()
    thread.join()
    if failures:
        raise failures[0]


def _menu(page, menu: str, item: str) -> None:
    """Choose `item` (the start of its label) from the menu bar's `menu`."""
    page.keyboard.press("Escape")
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{menu}$")).click(timeout=5000)
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{item}")).click(timeout=5000)


KERNEL_WORKING = ("Busy", "Starting", "Restarting", "Autorestarting", "Initializing", "Connecting")
"""The kernel statuses (as JupyterLab's status bar words them) of a kernel that is running
cells or on its way to: a restart then interrupts what it runs."""
KERNEL_GONE = ("Disconnected", "Dead")
"""The statuses of a page whose kernel connection is lost, or whose kernel died."""
PATIENCE_WHILE_WORKING = 180
"""Seconds a working kernel is left alone before the next step, however the cells look: its
first cell imports JAX and lessonkit, which on a loaded machine took longer than a minute."""


def _kernel_status(page) -> str:
    """The kernel's status in the status bar ("Python 3 (ipykernel) | Busy": "Busy"), or ""."""
    item = page.locator(".jp-StatusBar-TextItem", has_text=re.compile(r"\| \w+\s*$"))
    if not item.count():
        return ""
    return item.first.inner_text(timeout=2000).rsplit("|", 1)[-1].strip()


def _run_all_until_visible(page, target, timeout: float) -> None:
    """Run all cells from the menu until `target` shows, as a learner would.

    "Run All Cells" does nothing while the kernel is still starting, so while no cell has
    run it tries again every 20 s, escalating as a learner would: run all, then restart the
    kernel and run all, then reload the page. A page whose kernel connection is lost
    ("Disconnected" in the status bar, as a loaded machine left one in CI) is reloaded at once;
    a dead kernel is restarted. Cells queued (`[*]`) with none of them run for 60 s while the
    kernel is idle are met the same way: a kernel that never answers leaves them queued.
    A dialog JupyterLab opens (a kernel to choose after a slow start, a kernel that
    restarted) takes the clicks and may have cost the kernel what it ran: accept its
    default, then restart the kernel and run all, so the kernel's history is whole again.
    A `NameError` under a cell (a restart that landed while cells were queued, so a later
    cell ran in a fresh kernel) is met the same way: the notebook itself raises none. So is
    a check() that answered with an error instead of its table (its words go into the failure
    message, should the table never show). Both are met only once no cell is queued.
    A kernel the status bar shows working (busy, starting, restarting) while cells are queued
    is left alone for PATIENCE_WHILE_WORKING s: a restart interrupts its imports, and two CI
    runs restarted such a kernel again and again until 480 s had passed.
    Each round waits longer than the one before (20 s more, up to 120 s), so a loaded
    machine's slow kernel is given the time it needs.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    ran = page.locator(".jp-InputPrompt", has_text=re.compile(r"\[(\d+|\*)\]"))
    numbered = page.locator(".jp-InputPrompt", has_text=re.compile(r"\[\d+\]"))
    queued = page.locator(".jp-InputPrompt", has_text="[*]")
    accept = page.locator(".jp-Dialog .jp-mod-accept")
    lost = page.locator(".jp-OutputArea-output", has_text="NameError")
    refused = page.locator(".lessonkit-check-error")
    deadline = time.monotonic() + timeout
    last_try, tries, accepted, said, statuses = -1e9, 0, 0, "", []
    while not target.is_visible():
        now = time.monotonic()
        if now > deadline:
            shown = f"; check() said: {said}" if said else ""
            raise PlaywrightTimeout(
                f"{target} did not show within {timeout:.0f} s{shown}; {tries} tries, "
                f"{accepted} dialogs accepted; kernel statuses {statuses}; "
                f"the page: {_notebook_state(page)}"
            )
        try:
            waited = now - last_try
            status = _kernel_status(page)
            if not statuses or statuses[-1] != status:
                statuses.append(status)  # for the failure message
            pause = min(20 * (tries + 1), 120)
            working = status in KERNEL_WORKING and queued.count() > 0  # running our cells
            patience = max(pause, PATIENCE_WHILE_WORKING) if working else pause
            dialog = accept.count() > 0
            if dialog:  # a dialog takes every click: accept its default first
                accept.first.click(timeout=5000)
                accepted += 1
                due = waited > patience  # it may have cost the kernel what it ran
            else:
                idle = not queued.count()
                due = waited > patience and (
                    status in KERNEL_GONE
                    or (idle and bool(refused.count() or lost.count()))
                    or not ran.count()
                    or (not numbered.count() and waited > max(patience, 60))
                )
            if due:
                # Counted before acting, so a step that times out is tried again in 20 s,
                # escalated, never repeated at once nor left waiting.
                tries, last_try = tries + 1, now
                if refused.count():
                    said = refused.first.inner_text(timeout=5000)  # for the failure message
                restart = dialog or refused.count() or lost.count() or status == "Dead"
                if status != "Disconnected" and (restart or tries % 3 == 2):
                    _restart_and_run_all(page, accept)
                elif status != "Disconnected" and tries % 3 == 1:
                    _menu(page, "Run", "Run All Cells")
                else:  # a lost kernel connection, or the third step: reload the page
                    page.reload(timeout=120_000)
                    page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=120_000)
        except PlaywrightTimeout:
            pass  # a dialog opened meanwhile: the next round accepts it
        page.wait_for_timeout(1000)


def _notebook_state(page) -> str:
    """Each cell's prompt and the end of its output, for a failure message."""
    cells = page.locator(".jp-Notebook .jp-Cell")
    shown = []
    for index in range(cells.count()):
        cell = cells.nth(index)
        prompt = cell.locator(".jp-InputPrompt").first.inner_text(timeout=2000).strip()
        output = " ".join(cell.locator(".jp-OutputArea").all_inner_texts()).strip()
        shown.append(f"{prompt or '[ ]'} {output[-300:]!r}" if output else prompt or "[ ]")
    dialogs = page.locator(".jp-Dialog").all_inner_texts()
    return " | ".join(shown) + (f"; dialogs: {dialogs}" if dialogs else "")


def _restart_and_run_all(page, accept) -> None:
    _menu(page, "Kernel", "Restart Kernel and Run All Cells")
    accept.first.click(timeout=10_000)  # "Restart Kernel?": restart


def _read_verdict_in_jupyterlab(url: str, folder: Path, name: str) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_page()
            page.goto(f"{url}/lab/tree/{name}?token={TOKEN}", timeout=120_000)
            page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=120_000)
            row = page.locator("table.lessonkit-check tr[data-task='make-it-yours']")
            try:
                # longer than check()'s first reply limit (learner/client.py, 420 s), so a
                # server that never answers is seen by the words check() shows instead
                _run_all_until_visible(page, row, timeout=480)
            except PlaywrightTimeout:
                page.screenshot(path=str(folder.parent / "jupyterlab.png"), full_page=True)
                raise
            assert row.get_attribute("data-status") == "passed", row.inner_text()
            cells = row.locator("td")
            assert cells.nth(1).inner_text() == "passed"
            assert "Right on the lesson's inputs" in cells.nth(2).inner_text()
        finally:
            browser.close()
