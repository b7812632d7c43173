"""The grading child's entry: runs lesson and learner cells and reports what they produced.

It never judges. It runs as a plain script (`python -I grading_child/main.py FD PATHS`), started by
`run/confine.py` once its limits hold and, for a learner, once it runs as a user of its own.
It imports nothing from lessonkit: the program is this folder, `lessonkit/grading_child/`, a set
of standard-library modules with one job each (channel, encoder, guard, cells, names,
transforms, varied calls, jit watch, runner), loaded here by path as the package
`lessonkit_child`, as the sandbox binds only that folder. It talks to the parent over two
channels: requests arrive as JSON lines on a private copy of stdin, reports leave as JSON
lines on the pipe FD (see `lessonkit.grade.channel.protocol` for both). PATHS, a JSON list, names
where the parent finds packages beyond what an isolated Python finds
(`run/import_paths.py`): its PYTHONPATH and user site, put first on `sys.path` here.

A child runs either the lesson's reference code (trusted, never learner code) or one
learner's file, never both and never two learners' files. Once learner code has run, the
parent trusts nothing this process says: its reports are parsed strictly as data.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys

CHILD_FOLDER = os.path.dirname(os.path.abspath(__file__))


def load_child_package():
    """This folder as the package `lessonkit_child`, its modules importing each other."""
    package_file = os.path.join(CHILD_FOLDER, "__init__.py")
    spec = importlib.util.spec_from_file_location(
        "lessonkit_child", package_file, submodule_search_locations=[CHILD_FOLDER]
    )
    package = importlib.util.module_from_spec(spec)
    sys.modules["lessonkit_child"] = package
    spec.loader.exec_module(package)
    return package


def use_import_paths(encoded: str) -> list[str]:
    """Put the parent's import paths (a JSON list of folders) first on `sys.path`; returns
    them. Only ever given by the parent that started this process, never by a learner."""
    paths = [p for p in json.loads(encoded) if isinstance(p, str)]
    sys.path[:0] = [p for p in paths if p not in sys.path]
    return paths


if __name__ == "__main__":
    use_import_paths(sys.argv[2])
    load_child_package()
    from lessonkit_child import runner, wire

    globals()[wire.CHILD_MARK] = True  # read by check() in the learner's file: do not grade here
    runner.main()
