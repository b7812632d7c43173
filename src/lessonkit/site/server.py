"""The built site served on 127.0.0.1, rebuilt and reloaded in the browser on each save.

Only the loopback address is bound: the site is for the person at this machine. The pages
work from file:// too; the server is for browsers or tools that prefer http://.

While it serves, `watch` follows every lesson.md: a save rebuilds the lesson and the site,
and open pages reload themselves, so an author previews while writing. The pages' CSP forbids
fetches, so the served HTML gets one extra same-origin script that polls a tiny
`version.js` by adding script tags; a failed build shows its message in a banner instead.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sys
import threading
from collections.abc import Callable
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

from lessonkit.defaults import SITE_POLL_S
from lessonkit.errors import LessonkitError, UsageError
from lessonkit.lesson.catalog import repo_root
from lessonkit.site.build import build

HOST = "127.0.0.1"
DEFAULT_PORT = 8000


RELOAD_PATH = "/__lessonkit/"
RELOAD_SCRIPT = """(function () {
  var seen = null;
  function banner(text) {
    var box = document.getElementById("lessonkit-build-error");
    if (!text) { if (box) box.remove(); return; }
    if (!box) {
      box = document.createElement("pre");
      box.id = "lessonkit-build-error";
      box.setAttribute("role", "alert");
      box.className = "build-error";
      document.body.prepend(box);
    }
    box.textContent = "lessonkit build failed:\\n" + text;
  }
  function poll() {
    var tag = document.createElement("script");
    tag.src = "/__lessonkit/version.js?" + Date.now();
    tag.onload = function () {
      var state = window.__lessonkitBuild || {};
      if (seen === null) seen = state.version;
      else if (state.version !== seen) { location.reload(); return; }
      banner(state.error);
      tag.remove();
    };
    tag.onerror = function () { tag.remove(); };
    document.head.appendChild(tag);
  }
  setInterval(poll, 1000);
  poll();
})();
"""


class BuildState:
    """What the watcher last built: a version that changes on every rebuild, or its error."""

    def __init__(self) -> None:
        self.version = 0
        self.error = ""
        self._lock = threading.Lock()

    def built(self) -> None:
        with self._lock:
            self.version += 1
            self.error = ""

    def failed(self, message: str) -> None:
        with self._lock:
            self.error = message

    def script(self) -> bytes:
        with self._lock:
            state = {"version": self.version, "error": self.error}
        return f"window.__lessonkitBuild = {json.dumps(state)};\n".encode()


class SiteHandler(SimpleHTTPRequestHandler):
    """Static files with the right types for lesson files, never cached across rebuilds.

    With `state` set, HTML pages get the reload script and `/__lessonkit/` serves it.
    """

    state: BuildState | None = None

    extensions_map: ClassVar[dict[str, str]] = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".md": "text/markdown; charset=utf-8",
        ".py": "text/x-python; charset=utf-8",
        ".ipynb": "application/x-ipynb+json",
        ".json": "application/json",
        ".js": "text/javascript; charset=utf-8",
        ".css": "text/css; charset=utf-8",
        ".html": "text/html; charset=utf-8",
    }

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def _send(self, body: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args) -> None:
        """A line per request, except the pages' own polling, once a second per page."""
        if not self.path.startswith(RELOAD_PATH):
            super().log_message(format, *args)

    def do_GET(self) -> None:
        state = self.state
        path = self.path.split("?", 1)[0]
        if state is not None and path.startswith(RELOAD_PATH):
            name = path[len(RELOAD_PATH) :]
            if name == "version.js":
                return self._send(state.script(), "text/javascript; charset=utf-8")
            if name == "reload.js":
                return self._send(RELOAD_SCRIPT.encode(), "text/javascript; charset=utf-8")
            return self.send_error(404)
        if state is not None and (path.endswith(".html") or path.endswith("/")):
            file = Path(self.translate_path(path))
            file = file / "index.html" if file.is_dir() else file
            if file.is_file():
                html = file.read_bytes()
                tag = f'<script src="{RELOAD_PATH}reload.js" defer></script></body>'.encode()
                return self._send(html.replace(b"</body>", tag, 1), "text/html; charset=utf-8")
        return super().do_GET()


class QuietSiteHandler(SiteHandler):
    """The same, without a log line per request: for tests and benchmarks."""

    def log_message(self, format: str, *args) -> None:
        pass


class SiteServer(ThreadingHTTPServer):
    """Serves each request in a thread; a browser that hangs up early is not an error."""

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def make_server(
    directory: Path,
    port: int = DEFAULT_PORT,
    *,
    quiet: bool = False,
    state: BuildState | None = None,
) -> SiteServer:
    """A threading HTTP server for `directory` on 127.0.0.1; port 0 picks a free port.

    With `state`, pages reload themselves when `state` says the site was rebuilt.
    """
    base = QuietSiteHandler if quiet else SiteHandler
    handler_class = type("Handler", (base,), {"state": state})
    handler = functools.partial(handler_class, directory=str(directory))
    try:
        return SiteServer((HOST, port), handler)
    except OSError as exc:
        raise UsageError(
            f"cannot listen on {HOST}:{port} ({exc.strerror or exc})",
            fix="choose another port with --port (--port 0 picks a free one)",
        ) from None


def _stamps() -> dict[Path, tuple[int, int]]:
    stamps = {}
    for path in sorted(repo_root().glob("phases/*/*/lesson.md")):
        with contextlib.suppress(OSError):
            info = path.stat()
            stamps[path] = (info.st_mtime_ns, info.st_size)
    return stamps


def rebuild(state: BuildState, say: Callable[[str], None] | None = None) -> None:
    """Run `lessonkit build` quietly; a failure is kept for the pages' banner and, through
    `say`, told to the terminal once (not again while the same error stands)."""
    try:
        waiting = build().waiting
        if waiting is not None:  # the site waits for a record: the banner says which
            raise waiting
    except LessonkitError as exc:
        message = str(exc)
        if say is not None and message != state.error:
            say(f"lessonkit build failed: {message}")
        state.failed(message)
    else:
        if say is not None and state.error:
            say("lessonkit build: the error is gone; the site is rebuilt and open pages reload.")
        state.built()


def watch(
    state: BuildState,
    stop: threading.Event,
    poll: float = SITE_POLL_S,
    say: Callable[[str], None] | None = None,
) -> None:
    """Rebuild whenever a lesson.md changes, until `stop` is set."""
    seen = _stamps()
    while not stop.wait(poll):
        now = _stamps()
        if now != seen:
            seen = now
            rebuild(state, say)
