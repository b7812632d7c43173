"""The learner's repository as one ZIP on the site: what they need to set up and work.

It holds the README, packaging and requirement files, this package's source, the docs and
every phase's lessons with their generated and recorded files under one top folder, and any
local lessonkit wheel the requirements name (under `wheels/`), so the README's set-up works
on the learner's machine. Sorted entries, a fixed date and fixed permissions make the bytes
depend only on the files.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from lessonkit.lesson.requirement import local_wheel

ZIP_NAME = "lessonkit-course.zip"
TOP_FOLDER = "lessonkit-course"
TOP_FILES = ("README.md", "pyproject.toml", "LICENSE")
TOP_PATTERNS = ("requirements-*.txt",)
FOLDERS = ("src", "docs", "phases")
WHEELS = "wheels"
"""Where the ZIP puts a lessonkit wheel its requirements name (see `_carried`)."""
SKIPPED_PARTS = frozenset({"__pycache__", ".ipynb_checkpoints"})
SKIPPED_SUFFIXES = (".pyc", ".egg-info")
FIXED_DATE = (1980, 1, 1, 0, 0, 0)  # the earliest date a ZIP entry can hold


def _wanted(relative: Path) -> bool:
    return not any(
        part in SKIPPED_PARTS or part.endswith(SKIPPED_SUFFIXES) or part.startswith(".")
        for part in relative.parts
    )


def repository_files(root: Path) -> tuple[Path, ...]:
    """The files the ZIP holds, relative to `root`, in the order they are written."""
    found = {Path(name) for name in TOP_FILES if (root / name).is_file()}
    for pattern in TOP_PATTERNS:
        found |= {p.relative_to(root) for p in root.glob(pattern) if p.is_file()}
    for folder in FOLDERS:
        base = root / folder
        if base.is_dir():
            found |= {p.relative_to(root) for p in base.rglob("*") if p.is_file()}
    return tuple(sorted((p for p in found if _wanted(p)), key=lambda p: p.as_posix()))


def _carried(text: str) -> tuple[str, dict[str, bytes]]:
    """A requirements file's text with each lessonkit wheel on this machine named by its
    copy in the ZIP (`./wheels/NAME.whl`, read from the unpacked folder, where its README
    runs pip), and those copies by their paths in the ZIP."""
    wheels: dict[str, bytes] = {}
    lines = []
    for line in text.splitlines(keepends=True):
        wheel = local_wheel(line.strip())
        if wheel is None:
            lines.append(line)
            continue
        carried = f"{WHEELS}/{wheel.name}"
        wheels[carried] = wheel.read_bytes()
        lines.append(f"./{carried}{line[len(line.rstrip()) :]}")
    return "".join(lines), wheels


def repository_entries(root: Path) -> dict[str, bytes]:
    """Each file of the ZIP by its path under the top folder, requirements made portable."""
    entries: dict[str, bytes] = {}
    for relative in repository_files(root):
        data = (root / relative).read_bytes()
        if relative.parent == Path(".") and relative.match(TOP_PATTERNS[0]):
            text, wheels = _carried(data.decode("utf-8"))
            data = text.encode("utf-8")
            entries.update(wheels)
        entries[relative.as_posix()] = data
    return dict(sorted(entries.items()))


def repository_zip(root: Path) -> bytes:
    """The ZIP's bytes: the same files always give the same bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in repository_entries(root).items():
            info = zipfile.ZipInfo(f"{TOP_FOLDER}/{name}", date_time=FIXED_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, so the permission bits below are read
            info.external_attr = 0o644 << 16
            archive.writestr(info, data, compresslevel=9)
    return buffer.getvalue()
