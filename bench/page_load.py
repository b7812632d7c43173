"""How heavy the lesson page is and how fast it loads, in headless Debian Chromium.

Run with ``.venv/bin/python bench/page_load.py`` (``--loads 15`` for more samples). It builds
the site into a temporary folder, serves it from 127.0.0.1 with `lessonkit serve`'s server,
and loads each lesson page several times, each time in a fresh browser context (empty cache
and storage). It reports:

* page weight: the HTML, CSS and JS the page needs, without its figure image;
* requests per load, and how many went anywhere but 127.0.0.1;
* time from navigation start to the ``load`` event (Navigation Timing), median and range,
  beside the same measurement for an empty page served the same way (the floor: what any
  load costs on this machine, so a busy machine is visible as a high floor).

Targets: at most 200 KB, 0 outside requests, ``load`` under 300 ms on this machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from threading import Thread

from lessonkit.lesson.catalog import all_lessons
from lessonkit.render.downloads import page_path
from lessonkit.render.page import CSS_ASSET, JS_ASSET, PORTFOLIO_JS_ASSET
from lessonkit.site.build import build_site
from lessonkit.site.server import make_server

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TARGET_BYTES = 200 * 1024
TARGET_OUTSIDE = 0
TARGET_LOAD_MS = 300.0
LOAD_TIME = "() => performance.getEntriesByType('navigation')[0].loadEventStart"
FLOOR_PAGE = "floor.html"
FLOOR_HTML = (
    '<!doctype html><title>floor</title><link rel="icon" href="data:,">'
    "<p>An empty page: the cost of any load on this machine.\n"
)


def _verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def measure(url: str, loads: int) -> tuple[list[float], list[list[str]]]:
    """Load `url` `loads` times in fresh contexts: load-event times (ms) and request URLs."""
    from playwright.sync_api import sync_playwright

    times: list[float] = []
    requests: list[list[str]] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS
        )
        try:
            for index in range(loads + 1):
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                page = context.new_page()
                seen: list[str] = []
                page.on("request", lambda request, seen=seen: seen.append(request.url))
                page.goto(url, wait_until="load")
                if index:  # the first load warms the browser process, not the page
                    times.append(float(page.evaluate(LOAD_TIME)))
                    requests.append(seen)
                context.close()
        finally:
            browser.close()
    return times, requests


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=9, help="timed loads per page (default 9)")
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).is_file():
        print(f"{CHROMIUM} is missing: apt-get install chromium", file=sys.stderr)
        return 2

    lessons = all_lessons()
    with tempfile.TemporaryDirectory() as folder:
        site = Path(folder) / "site"
        build_site(lessons, site)
        (site / FLOOR_PAGE).write_text(FLOOR_HTML, encoding="utf-8")
        server = make_server(site, 0, quiet=True)
        Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        failed = False
        try:
            floor = statistics.median(measure(base + FLOOR_PAGE, args.loads)[0])
            print(f"floor (an empty page), median load event: {floor:.1f} ms")
            for lesson in lessons:
                path = page_path(lesson)
                loaded = (path, CSS_ASSET, PORTFOLIO_JS_ASSET, JS_ASSET)
                weight = sum((site / p).stat().st_size for p in loaded)
                times, requests = measure(base + path, args.loads)
                outside = max(len([u for u in r if not u.startswith(base)]) for r in requests)
                median = statistics.median(times)
                ok = (weight <= TARGET_BYTES, outside <= TARGET_OUTSIDE, median < TARGET_LOAD_MS)
                failed |= not all(ok)
                print(f"{lesson.meta.id}: {base}{path}")
                print(
                    f"  page weight (HTML+CSS+JS, no figure): {weight:>9,} bytes"
                    f"   target <= {TARGET_BYTES:,}   {_verdict(ok[0])}"
                )
                names = ", ".join(Path(url).name for url in requests[0])
                print(f"  requests per load: {len(requests[0])} ({names})")
                print(
                    f"  outside requests:                    {outside:>9}"
                    f"         target {TARGET_OUTSIDE}   {_verdict(ok[1])}"
                )
                print(
                    f"  load event, median of {len(times)}:           {median:>7.1f} ms"
                    f"   target < {TARGET_LOAD_MS:.0f} ms   {_verdict(ok[2])}"
                    f"   (min {min(times):.1f}, max {max(times):.1f}; floor {floor:.1f})"
                )
        finally:
            server.shutdown()
            server.server_close()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
