"""The generated files of a lesson, declared once: where each lives and what renders it.

`build` writes them, `verify` re-renders them in memory and reports every file that drifted.
A producer may read what earlier producers rendered (the notebook shows the figure PNG).

`build` also keeps `outputs/build-manifest.json`: a digest of every file as the build wrote
it (bookkeeping, not a rendering of lesson.md, so `verify` leaves it alone). `build`
overwrites a file only while it still matches its digest: a file someone edited (a
learner's work in code/main.py, say) is refused, never silently replaced. Digests are of
normalized content: line endings are ignored, and a notebook counts only its cells' kinds
and sources, so one that Jupyter merely ran and saved (outputs, execution counts, metadata)
is still the build's own.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lessonkit.errors import LessonkitError
from lessonkit.lesson.model import Lesson
from lessonkit.render.notebook import render_notebook
from lessonkit.render.script import render_exercise_script
from lessonkit.lesson.files import SCRIPTS

Rendered = dict[str, bytes]

MANIFEST = "outputs/build-manifest.json"
MANIFEST_SCHEMA = 1


@dataclass(frozen=True)
class Producer:
    """Renders one or more files (paths relative to the lesson folder) from the lesson."""

    name: str
    paths: tuple[str, ...]
    render: Callable[[Lesson, Rendered], Rendered]


def _text(path: str, render: Callable[[Lesson], str]) -> Producer:
    return Producer(path, (path,), lambda lesson, _: {path: render(lesson).encode("utf-8")})


def _figure(lesson: Lesson, _: Rendered) -> Rendered:
    from lessonkit.site.figure import render_figure  # imports JAX and matplotlib: only when needed

    return render_figure(lesson)


def _evidence_template(lesson: Lesson, _: Rendered) -> Rendered:
    from lessonkit.evidence import render_template

    return {"outputs/evidence-template.md": render_template(lesson).encode("utf-8")}


def _notebook(lesson: Lesson, done: Rendered) -> Rendered:
    from lessonkit.receipts.cells import current_outputs

    path = lesson.exercise_paths[1]
    text = render_notebook(lesson, done.get("outputs/figure.png"), current_outputs(lesson))
    return {path: text.encode("utf-8")}


def producers(lesson: Lesson) -> tuple[Producer, ...]:
    script, notebook = lesson.exercise_paths
    return (
        *(_text(s.path, s.render) for s in SCRIPTS),
        _text(script, render_exercise_script),
        Producer(
            "figure",
            ("outputs/figure.svg", "outputs/figure.png", "outputs/figure.json"),
            _figure,
        ),
        Producer("evidence template", ("outputs/evidence-template.md",), _evidence_template),
        Producer(notebook, (notebook,), _notebook),
    )


def render_all(lesson: Lesson) -> Rendered:
    """Every generated file of the lesson, in memory."""
    done: Rendered = {}
    for producer in producers(lesson):
        done.update(producer.render(lesson, done))
    return done


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
    reason: str  # "missing" or "differs"


def find_drift(lesson: Lesson, rendered: Rendered | None = None) -> list[Drift]:
    """Generated files on disk that are missing or differ from a fresh rendering."""
    rendered = render_all(lesson) if rendered is None else rendered
    drift = []
    for relative, content in rendered.items():
        path = lesson.directory / relative
        if not path.is_file():
            drift.append(Drift(path, "missing"))
        elif path.read_bytes() != content:
            drift.append(Drift(path, "differs"))
    return drift


def write_all(
    lesson: Lesson, rendered: Rendered | None = None, *, force: bool = False
) -> list[Path]:
    """Write every generated file whose content changed; return the paths written.

    Raises:
        EditedFilesError: a file to replace was edited since the last build (unless `force`);
            then nothing is written.
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
    written = []
    for relative, content in rendered.items():
        path = lesson.directory / relative
        if path.is_file() and path.read_bytes() == content:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        written.append(path)
    manifest, content = lesson.directory / MANIFEST, render_manifest(lesson, rendered)
    if not manifest.is_file() or manifest.read_bytes() != content:
        manifest.parent.mkdir(parents=True, exist_ok=True)
        manifest.write_bytes(content)
        written.append(manifest)
    return written
