"""`lessonkit serve`: serve the built site on 127.0.0.1, building it first if it is missing.

Only the loopback address is bound: the site is for the person at this machine. The pages
work from file:// too; the server is for browsers or tools that prefer http://.
"""

from __future__ import annotations

import argparse
import functools
import sys
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

from lessonkit.catalog import all_lessons, repo_root
from lessonkit.commands import build
from lessonkit.commands._common import console, quoted
from lessonkit.errors import UsageError
from lessonkit.render.page import page_path
from lessonkit.site import INDEX, site_dir

HOST = "127.0.0.1"
DEFAULT_PORT = 8000


class SiteHandler(SimpleHTTPRequestHandler):
    """Static files with the right types for lesson files, never cached across rebuilds."""

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


class QuietSiteHandler(SiteHandler):
    """The same, without a log line per request: for tests and benchmarks."""

    def log_message(self, format: str, *args) -> None:
        pass


class SiteServer(ThreadingHTTPServer):
    """Serves each request in a thread; a browser that hangs up early is not an error."""

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (0 to 65535)")
    return port


def make_server(directory: Path, port: int = DEFAULT_PORT, *, quiet: bool = False) -> SiteServer:
    """A threading HTTP server for `directory` on 127.0.0.1; port 0 picks a free port."""
    handler_class = QuietSiteHandler if quiet else SiteHandler
    handler = functools.partial(handler_class, directory=str(directory))
    try:
        return SiteServer((HOST, port), handler)
    except OSError as exc:
        raise UsageError(
            f"cannot listen on {HOST}:{port} ({exc.strerror or exc})",
            fix="choose another port with --port (--port 0 picks a free one)",
        ) from None


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--port",
        type=_port,
        default=DEFAULT_PORT,
        help=f"port on {HOST} (default {DEFAULT_PORT}; 0 picks a free one)",
    )


def run(args: argparse.Namespace) -> int:
    out = console()
    target = site_dir(repo_root())
    if not (target / INDEX).is_file():
        out.print(f"{quoted(target)} has no site yet: building it first")
        build.run(argparse.Namespace(lesson=None))
    server = make_server(target, args.port)
    url = f"http://{HOST}:{server.server_address[1]}/"
    out.print(f"Serving {quoted(target)} at {url}")
    for lesson in all_lessons():
        out.print(f"  {lesson.meta.title}: {url}{Path(page_path(lesson)).parent.as_posix()}/")
    out.print("Press Ctrl+C to stop.")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        out.print("stopped")
    finally:
        server.server_close()
    return 0
