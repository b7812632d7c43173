"""The guides that travel with lessonkit: package data, so every install has them.

Each `NAME.md` in this folder is a guide (`lessonkit docs NAME` prints it); everything in the
folder but this module, guides and the files they name (`cluster/`), is written into every
new course's `docs/`, where messages and guides name them (`docs/authoring.md`). Nothing is
listed by hand: a file added here is a guide, and a course file, at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable

from lessonkit.errors import UsageError

COURSE_FOLDER = "docs"
"""Where a course keeps the guides: `docs/NAME.md`."""

_NOT_GUIDES = frozenset({"__init__.py", "__pycache__"})


@dataclass(frozen=True)
class GuideFile:
    """One file the guides bring to a course: its path under `docs/`, its bytes, whether
    it is a script to run (`cluster/slurm-array.sh`)."""

    path: str
    data: bytes
    executable: bool


def package_files(
    folder: Traversable, skip: frozenset[str] = frozenset()
) -> list[tuple[str, Traversable]]:
    """Every file below a folder of package data, by its path there, in name order; names in
    `skip` are left out at any depth. How a course gets what lessonkit carries for it."""
    found: list[tuple[str, Traversable]] = []

    def walk(entry: Traversable, prefix: str) -> None:
        for child in sorted(entry.iterdir(), key=lambda e: e.name):
            if child.name in skip:
                continue
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
            else:
                found.append((f"{prefix}{child.name}", child))

    walk(folder, "")
    return found


def guide_files() -> tuple[GuideFile, ...]:
    """Every file of the guides, by its path under a course's `docs/`."""
    return tuple(
        GuideFile(path, entry.read_bytes(), path.endswith(".sh"))
        for path, entry in package_files(files(__name__), _NOT_GUIDES)
    )


def guide_names() -> tuple[str, ...]:
    """The guides `lessonkit docs NAME` prints: each `NAME.md` of this folder."""
    return tuple(
        f.path[: -len(".md")] for f in guide_files() if "/" not in f.path and f.path.endswith(".md")
    )


def guide_title(text: str) -> str:
    """A guide's first heading, without its `# `."""
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    return first.lstrip("#").strip()


def guide_text(name: str) -> str:
    """The Markdown of guide `name` (`authoring`, or `authoring.md`, or `docs/authoring.md`)."""
    wanted = name.removeprefix(f"{COURSE_FOLDER}/").removesuffix(".md")
    names = guide_names()
    if wanted not in names:
        raise UsageError(
            f"there is no guide {name!r}; the guides are {', '.join(names)}",
            fix="run `lessonkit docs` to list them with their titles",
        )
    return files(__name__).joinpath(f"{wanted}.md").read_text(encoding="utf-8")
