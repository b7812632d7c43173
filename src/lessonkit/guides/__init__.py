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


def _walk(folder: Traversable, prefix: str) -> list[GuideFile]:
    found: list[GuideFile] = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name in _NOT_GUIDES:
            continue
        path = f"{prefix}{entry.name}"
        if entry.is_dir():
            found.extend(_walk(entry, f"{path}/"))
        else:
            found.append(GuideFile(path, entry.read_bytes(), entry.name.endswith(".sh")))
    return found


def guide_files() -> tuple[GuideFile, ...]:
    """Every file of the guides, by its path under a course's `docs/`."""
    return tuple(_walk(files(__name__), ""))


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
