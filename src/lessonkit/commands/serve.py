"""`lessonkit serve`: serve the built site on 127.0.0.1 (`site.server`), building it first
if it is missing, and rebuild it on every save of a lesson.md unless `--no-watch`.
"""

from __future__ import annotations

import argparse
import threading
from pathlib import Path

from rich.text import Text

from lessonkit.commands._common import console, quoted
from lessonkit.lesson.catalog import all_lessons, repo_root
from lessonkit.render.downloads import page_path
from lessonkit.site.build import INDEX, build, site_dir
from lessonkit.site.server import DEFAULT_PORT, HOST, BuildState, make_server, watch


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (0 to 65535)")
    return port


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--port",
        type=_port,
        default=DEFAULT_PORT,
        help=f"port on {HOST} (default {DEFAULT_PORT}; 0 picks a free one)",
    )
    parser.add_argument(
        "--no-watch",
        action="store_true",
        help="do not rebuild and reload the pages when a lesson.md is saved",
    )


def run(args: argparse.Namespace) -> int:
    out = console()
    target = site_dir(repo_root())
    if not (target / INDEX).is_file():
        out.print(f"{quoted(target)} has no site yet: building it first")
        waiting = build().waiting
        if waiting is not None:
            raise waiting
    state = None if args.no_watch else BuildState()
    server = make_server(target, args.port, state=state)
    stop = threading.Event()
    if state is not None:

        def say(message: str) -> None:
            console(stderr=True).print(Text(message, style="red" if "failed" in message else ""))

        threading.Thread(target=watch, args=(state, stop), kwargs={"say": say}, daemon=True).start()
    url = f"http://{HOST}:{server.server_address[1]}/"
    out.print(f"Serving {quoted(target)} at {url}")
    for lesson in all_lessons():
        out.print(f"  {lesson.meta.title}: {url}{Path(page_path(lesson)).parent.as_posix()}/")
    if state is not None:
        out.print("Saving a lesson.md rebuilds the site; open pages reload themselves.")
    out.print("Press Ctrl+C to stop.")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        out.print("stopped")
    finally:
        stop.set()
        server.server_close()
    return 0
