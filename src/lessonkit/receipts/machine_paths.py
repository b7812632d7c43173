"""Paths in what a run printed, written so that a receipt says nothing about the machine.

A receipt is committed and shared, so repository paths become relative and package,
standard-library, home and temporary folders become ``<site-packages>``, ``<stdlib>``, ``~``
and ``<tmp>``. Only whole path prefixes are replaced, so what the lesson printed is kept.
"""

from __future__ import annotations

import os
import re
import sysconfig
import tempfile
from pathlib import Path

from lessonkit.run.import_paths import import_paths

SITE_PACKAGES = "<site-packages>"
STDLIB = "<stdlib>"
TMP = "<tmp>"
HOME = "~"

_PACKAGES_FOLDER = re.compile(
    r"(?<![\w.<~-])/(?:[^\s'\"<>:;,()\[\]]*/)?(?:site|dist)-packages(?![\w.-])"
)
"""An absolute path that ends in a site-packages or dist-packages folder: a virtual
environment's, the system's, a `pip install --target` folder named so, another machine's."""
_STDLIB_FOLDER = re.compile(r"(?<![\w.<~-])/(?:[^\s'\"<>:;,()\[\]]*/)?lib/python3\.\d+(?![\w.-])")
"""An absolute path that ends in a Python's standard library folder (`.../lib/python3.11`)."""


def _folders(root: Path) -> list[tuple[str, str]]:
    """(folder, what it is shown as), the longest first, so a nested folder wins."""
    named: dict[str, str] = {}

    def add(folder: str | os.PathLike[str] | None, shown_as: str) -> None:
        if not folder:
            return
        for form in {os.path.abspath(folder), os.path.realpath(folder)}:
            if form != "/":
                named.setdefault(form.rstrip("/"), shown_as)

    add(root, "")
    add(sysconfig.get_paths().get("stdlib"), STDLIB)
    inside = os.path.realpath(root)
    for folder in import_paths():  # where this interpreter imports from beyond its install
        real = os.path.realpath(folder)
        if real != inside and not real.startswith(inside + os.sep):
            add(folder, SITE_PACKAGES)
    add(tempfile.gettempdir(), TMP)
    add(os.path.expanduser("~"), HOME)
    return sorted(named.items(), key=lambda item: len(item[0]), reverse=True)


def _replace_folder(text: str, folder: str, shown_as: str) -> str:
    """`folder` and the paths below it, as whole path prefixes, written as `shown_as`."""
    prefix = re.compile(r"(?<![\w.~-])" + re.escape(folder) + r"(?![\w.-])(/?)")
    if shown_as:
        return prefix.sub(lambda m: shown_as + m.group(1), text)
    return prefix.sub(lambda m: "." if not m.group(1) else "", text)


def without_machine_paths(text: str, root: Path) -> str:
    """`text` with every path on this machine written relative to `root` or shortened."""
    text = _STDLIB_FOLDER.sub(STDLIB, _PACKAGES_FOLDER.sub(SITE_PACKAGES, text))
    for folder, shown_as in _folders(root):
        text = _replace_folder(text, folder, shown_as)
    return text
