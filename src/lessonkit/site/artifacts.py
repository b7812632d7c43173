"""The generated files of a lesson, declared once: where each lives and what renders it.

`build` writes them, `verify` re-renders them in memory and reports every file that drifted.
`build` keeps `outputs/build-manifest.json`, a digest of each file as written, and refuses to
overwrite a file that no longer matches it (a learner's work in code/main.py). Digests ignore
line endings, and a notebook's count only its cells' kinds and sources, so one Jupyter merely
ran and saved is still the build's own.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from lessonkit.atomic import write_atomically
from lessonkit.errors import LessonkitError
from lessonkit.lesson.files import (
    EVIDENCE_TEMPLATE,
    FIGURE_PNG,
    GOING_FURTHER,
    MAIN,
    MANIFEST,
    MANIFEST_SCHEMA,
    Producer,
    generated_files,
)
from lessonkit.lesson.model import Lesson
from lessonkit.lesson.scripts import render_exercise_script
from lessonkit.render.notebook import render_notebook, validate_notebook

Rendered = dict[str, bytes]


Render = Callable[[Lesson, Rendered], Rendered]
"""A producer: the files it renders (paths relative to the lesson folder), given those rendered
before it."""


def _figure(lesson: Lesson, _: Rendered) -> Rendered:
    from lessonkit.site.figure import render_figure  # imports JAX and matplotlib: only when needed

    return render_figure(lesson)


def _evidence_template(lesson: Lesson, _: Rendered) -> Rendered:
    from lessonkit.evidence.template import (
        render_template,  # not the package: it imports the grader
    )

    return {EVIDENCE_TEMPLATE: render_template(lesson).encode("utf-8")}


def _notebook(lesson: Lesson, done: Rendered) -> Rendered:
    from lessonkit.receipts.cells import current_outputs

    path = lesson.exercise_paths[1]
    text = render_notebook(lesson, done.get(FIGURE_PNG), current_outputs(lesson))
    return {path: text.encode("utf-8")}


SCRIPT_RENDERERS: dict[Producer, Callable[[Lesson], str]] = {
    "main-script": MAIN.render,
    "going-further-script": GOING_FURTHER.render,
    "exercise-script": render_exercise_script,
}
"""The producers of one text file each: a script."""
RENDERERS: dict[Producer, Render] = {
    "figure": _figure,
    "evidence-template": _evidence_template,
    "notebook": _notebook,
}
"""The other producers, in the order they render (the notebook shows the figure's PNG)."""


def producers(lesson: Lesson) -> tuple[tuple[Producer, Render], ...]:
    """The lesson's producers in rendering order (the scripts first), with the registry's paths."""
    paths: dict[Producer, list[str]] = {}
    for file in generated_files(lesson):
        paths.setdefault(file.producer, []).append(file.path)
    scripts = [
        (name, _one_text(paths[name][0], render))
        for name, render in SCRIPT_RENDERERS.items()
        if name in paths
    ]
    return (*scripts, *((name, r) for name, r in RENDERERS.items() if name in paths))


def _one_text(path: str, render: Callable[[Lesson], str]) -> Render:
    return lambda lesson, _: {path: render(lesson).encode("utf-8")}


def render_all(lesson: Lesson, *, figure: Rendered | None = None) -> Rendered:
    """Every generated file of the lesson, in memory.

    `figure`: the figure's files as kept on disk, when drawing again would give the same
    bytes (`figure.kept_figure`, what a build passes); `verify` passes nothing and draws.
    """
    done: Rendered = {}
    for name, render in producers(lesson):
        done.update(figure if name == "figure" and figure else render(lesson, done))
    return done


@dataclass(frozen=True)
class LessonBuild:
    """What building one lesson did: the files it wrote, those it removed (`Written`) and
    whether the lesson's code ran."""

    lesson: str
    written: tuple[Path, ...]
    ran_code: bool
    removed: tuple[Path, ...] = ()


def build_lessons(lessons: list[Lesson], *, force: bool = False) -> tuple[LessonBuild, ...]:
    """Check every lesson's numbers, then write each one's generated files.

    The numbers come first, for all lessons: a broken one stops the build before anything
    is written. Code runs only where a kept verdict or figure is not current.

    Raises:
        NumbersError: prose, declarations and code disagree.
        EditedFilesError: see `write_all`.
    """
    from lessonkit.receipts.numbers import check_numbers
    from lessonkit.site.figure import kept_figure

    checks = [check_numbers(lesson) for lesson in lessons]
    built = []
    for lesson, numbers in zip(lessons, checks, strict=True):
        kept = kept_figure(lesson)
        done = write_all(lesson, render_all(lesson, figure=kept), force=force)
        verdict = (numbers.written,) if numbers.written else ()
        built.append(
            LessonBuild(
                lesson.meta.id,
                (*verdict, *done.written),
                numbers.ran or kept is None,
                done.removed,
            )
        )
    return tuple(built)


# --------------------------------------------------------------------------- what a build wrote


def _notebook_sources(content: bytes) -> bytes:
    """A notebook as its cells' kinds and sources: what a run-and-save leaves unchanged."""
    try:
        cells = json.loads(content)["cells"]
        kept = [
            [c["cell_type"], "".join(s) if isinstance(s := c["source"], list) else s] for c in cells
        ]
    except (ValueError, KeyError, TypeError):
        return content  # not a notebook any more: compared byte for byte
    return json.dumps(kept, ensure_ascii=False).encode("utf-8")


def _unix_newlines(content: bytes) -> bytes:
    return content.replace(b"\r\n", b"\n")


_NORMALIZERS: dict[str, Callable[[bytes], bytes]] = {
    ".ipynb": _notebook_sources,
    ".png": bytes,
}


_VALIDATORS: dict[str, Callable[[bytes], None]] = {
    ".ipynb": validate_notebook,
}
"""Checks a file must pass before it is written, by suffix. Only writing pays for them: a
build with nothing to do imports no validator (nbformat's pulls in jsonschema)."""


def digest(relative: str, content: bytes) -> str:
    """The digest of a generated file's normalized content."""
    normalize = _NORMALIZERS.get(Path(relative).suffix, _unix_newlines)
    return "sha256:" + hashlib.sha256(normalize(content)).hexdigest()


def render_manifest(lesson: Lesson, rendered: Rendered) -> bytes:
    files = {path: digest(path, content) for path, content in sorted(rendered.items())}
    body = {
        "schema": MANIFEST_SCHEMA,
        "lesson": lesson.meta.id,
        "about": "Digests of the files `lessonkit build` wrote; it refuses to overwrite a "
        "file that no longer matches its digest.",
        "files": files,
    }
    return (json.dumps(body, indent=2) + "\n").encode("utf-8")


def _built_digests(lesson: Lesson) -> dict[str, str]:
    """The digests the last build recorded; none when the manifest is missing or unreadable."""
    try:
        body = json.loads((lesson.directory / MANIFEST).read_text(encoding="utf-8"))
        files = body["files"] if body.get("schema") == MANIFEST_SCHEMA else {}
    except (OSError, ValueError, KeyError, AttributeError):
        return {}
    return files if isinstance(files, dict) else {}


def edited_files(lesson: Lesson, rendered: Rendered) -> list[Path]:
    """Files a build would replace that are no longer what a build wrote."""
    built = _built_digests(lesson)
    edited = []
    for relative, content in rendered.items():
        path = lesson.directory / relative
        if not path.is_file():
            continue
        on_disk = digest(relative, path.read_bytes())
        if on_disk not in (built.get(relative), digest(relative, content)):
            edited.append(path)
    return edited


class EditedFilesError(LessonkitError):
    """`build` would overwrite files that were changed by hand since it wrote them."""


@dataclass(frozen=True)
class Drift:
    path: Path
    reason: Literal["missing", "differs", "left over"]
    """left over: a build wrote it, and lesson.md no longer makes it (going_further.py of
    a lesson whose optional experiments are gone)."""


def _left_over(lesson: Lesson, rendered: Rendered) -> list[Path]:
    """Files the last build wrote that lesson.md no longer makes, still as it wrote them
    (an edited one is someone's work now, and stays)."""
    built = _built_digests(lesson)
    left = []
    for relative in sorted(set(built) - set(rendered)):
        path = lesson.directory / relative
        if path.is_file() and digest(relative, path.read_bytes()) == built[relative]:
            left.append(path)
    return left


def find_drift(lesson: Lesson, rendered: Rendered | None = None) -> list[Drift]:
    """Generated files on disk that are missing, differ from a fresh rendering, or are no
    longer made at all."""
    rendered = render_all(lesson) if rendered is None else rendered
    drift = []
    for relative, content in rendered.items():
        path = lesson.directory / relative
        if not path.is_file():
            drift.append(Drift(path, "missing"))
        elif path.read_bytes() != content:
            drift.append(Drift(path, "differs"))
    drift += [Drift(path, "left over") for path in _left_over(lesson, rendered)]
    return drift


@dataclass(frozen=True)
class Written:
    """What `write_all` changed: the files it wrote, and those it removed as no longer made."""

    written: tuple[Path, ...]
    removed: tuple[Path, ...] = ()


def write_all(lesson: Lesson, rendered: Rendered | None = None, *, force: bool = False) -> Written:
    """Write every generated file whose content changed, and remove those lesson.md no longer
    makes (`_left_over`).

    A file is checked by its suffix's validator (`_VALIDATORS`) before any is written.

    Raises:
        EditedFilesError: a file to replace was edited since the last build (unless `force`);
            then nothing is written.
        nbformat.ValidationError: a notebook to write breaks nbformat's schema; then nothing
            is written.
    """
    rendered = render_all(lesson) if rendered is None else rendered
    edited = [] if force else edited_files(lesson, rendered)
    if edited:
        names = ", ".join(str(p.relative_to(lesson.directory)) for p in edited)
        raise EditedFilesError(
            f"{lesson.meta.id}: not overwriting {names}: changed since `lessonkit build` "
            f"wrote {'them' if len(edited) > 1 else 'it'}, and build would replace your edits",
            fix=f"keep your work in a practice copy: `lessonkit start {lesson.meta.id}` copies "
            "the practice files, edits included, to practice/; copy anything else (such as "
            f"code/main.py) there yourself. Then `lessonkit build {lesson.meta.id} --force` "
            "replaces the edited files.",
        )
    changed = []
    for relative, content in rendered.items():
        path = lesson.directory / relative
        if not path.is_file() or path.read_bytes() != content:
            changed.append((path, content))
    for path, content in changed:
        if validate := _VALIDATORS.get(path.suffix):
            validate(content)  # every one before the first write: a bad file stops them all
    written = []
    for path, content in changed:
        write_atomically(path, content)
        written.append(path)
    removed = _left_over(lesson, rendered)  # read from the manifest before it is renewed
    for path in removed:
        path.unlink()
    manifest, content = lesson.directory / MANIFEST, render_manifest(lesson, rendered)
    if not manifest.is_file() or manifest.read_bytes() != content:
        write_atomically(manifest, content)
        written.append(manifest)
    return Written(tuple(written), tuple(removed))
