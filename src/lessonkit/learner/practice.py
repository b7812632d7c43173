"""The learner's practice copy: made by `lessonkit start`, found again by `check` and `evidence`.

`start` remembers the folder it copied into in `.lessonkit/practice.json` at the repository
root (git-ignored, one entry per lesson), so `lessonkit check state-02` grades the learner's
work rather than the lesson's blank copy. Without that record the usual places are searched.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from lessonkit.atomic import write_atomically
from lessonkit.lesson.layout import generated_note, practice_note
from lessonkit.lesson.model import Lesson

STATE_FILE = Path(".lessonkit") / "practice.json"
STATE_SCHEMA = 1

Origin = Literal["given", "practice", "lesson"]


@dataclass(frozen=True)
class PracticeFile:
    """The file a command works on, and why that one."""

    path: Path
    origin: Origin  # named by the learner, their practice copy, or the lesson's own copy
    other: Path | None = None  # the practice copy in the other format, when it was not chosen


# --------------------------------------------------------------------------- making the copy


def learner_copy(lesson: Lesson, name: str, content: bytes) -> bytes:
    """The lesson's practice file as the learner's own: the "do not edit" header replaced.

    A file whose header was already changed is copied as it is.
    """
    if name.endswith(".ipynb"):
        return _notebook_copy(lesson, content)
    text = content.decode("utf-8")
    return text.replace(generated_note(lesson, "this file"), practice_note(lesson), 1).encode()


def _notebook_copy(lesson: Lesson, content: bytes) -> bytes:
    try:
        notebook = json.loads(content)
        cell = notebook["cells"][0]
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    except (ValueError, KeyError, IndexError, TypeError):
        return content
    cell["source"] = source.replace(generated_note(lesson, "this file"), practice_note(lesson), 1)
    meta = notebook.get("metadata", {}).get("lessonkit")
    if isinstance(meta, dict) and "generated" in meta:
        del meta["generated"]
        meta["practice_copy"] = practice_note(lesson)
    return (json.dumps(notebook, indent=1, ensure_ascii=False, sort_keys=True) + "\n").encode()


def remember_folder(lesson: Lesson, folder: Path, root: Path) -> bool:
    """Record where `start` put the lesson's practice copy; False when it cannot be written."""
    state = _read_state(root)
    state[lesson.meta.id] = str(folder.resolve())
    path = root / STATE_FILE
    try:
        body = {"schema": STATE_SCHEMA, "practice": dict(sorted(state.items()))}
        write_atomically(path, json.dumps(body, indent=2) + "\n")
    except OSError:
        return False
    return True


def remembered_folder(lesson: Lesson, root: Path) -> Path | None:
    """The practice folder `start` last remembered for `lesson`, if any."""
    folder = _read_state(root).get(lesson.meta.id)
    return Path(folder) if folder else None


def _read_state(root: Path) -> dict[str, str]:
    """The remembered folders by lesson id; an unreadable or foreign file counts as none."""
    try:
        data = json.loads((root / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    practice = data.get("practice") if isinstance(data, dict) else None
    if data.get("schema") != STATE_SCHEMA or not isinstance(practice, dict):
        return {}
    return {k: v for k, v in practice.items() if isinstance(k, str) and isinstance(v, str)}


# --------------------------------------------------------------------------- finding it again


def find_practice_file(
    lesson: Lesson, given: str | None, root: Path, cwd: Path | None = None
) -> PracticeFile:
    """The file to grade: FILE if given, else the learner's practice copy, else the lesson's.

    Practice folders, first match wins: the current folder, the folder `start` remembered,
    practice/<id>/ here and at the repository root, and exercises/ here. In a folder holding
    both formats the one saved last is chosen (the .py when neither was saved since `start`).
    """
    if given:
        return PracticeFile(Path(given), "given")
    cwd = cwd or Path.cwd()
    lesson_id = lesson.meta.id
    own = (lesson.directory / "exercises").resolve()
    remembered = _read_state(root).get(lesson_id)
    folders = [
        cwd,
        *([Path(remembered)] if remembered else []),
        cwd / "practice" / lesson_id,
        root / "practice" / lesson_id,
        cwd / "exercises",
    ]
    for folder in folders:
        if folder.resolve() == own:
            continue  # the lesson's own copy is the last resort, named as such
        found = _in_folder(folder, lesson_id)
        if found is not None:
            return found
    return PracticeFile(lesson.directory / lesson.exercise_paths[0], "lesson")


def _in_folder(folder: Path, lesson_id: str) -> PracticeFile | None:
    script, notebook = folder / f"{lesson_id}.py", folder / f"{lesson_id}.ipynb"
    present = [p for p in (script, notebook) if p.is_file()]
    if not present:
        return None
    if len(present) == 1:
        return PracticeFile(present[0], "practice")
    if notebook.stat().st_mtime > script.stat().st_mtime:
        return PracticeFile(notebook, "practice", other=script)
    return PracticeFile(script, "practice", other=notebook)


def copy_times(sources: list[Path]) -> float:
    """The time fresh copies carry: older than any save the learner makes after `start`."""
    return min(os.stat(s).st_mtime for s in sources)
