"""The generated files of a lesson, declared once: where each lives and what renders it.

`build` writes them, `verify` re-renders them in memory and reports every file that drifted.
A producer may read what earlier producers rendered (the notebook shows the figure PNG).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lessonkit.model import Lesson
from lessonkit.render.notebook import render_notebook
from lessonkit.render.script import render_exercise_script
from lessonkit.scripts import SCRIPTS

Rendered = dict[str, bytes]


@dataclass(frozen=True)
class Producer:
    """Renders one or more files (paths relative to the lesson folder) from the lesson."""

    name: str
    paths: tuple[str, ...]
    render: Callable[[Lesson, Rendered], Rendered]


def _text(path: str, render: Callable[[Lesson], str]) -> Producer:
    return Producer(path, (path,), lambda lesson, _: {path: render(lesson).encode("utf-8")})


def _figure(lesson: Lesson, _: Rendered) -> Rendered:
    from lessonkit.figure import render_figure  # imports JAX and matplotlib: only when needed

    return render_figure(lesson)


def _evidence_template(lesson: Lesson, _: Rendered) -> Rendered:
    from lessonkit.evidence import render_template

    return {"outputs/evidence-template.md": render_template(lesson).encode("utf-8")}


def _notebook(lesson: Lesson, done: Rendered) -> Rendered:
    path = lesson.exercise_paths[1]
    return {path: render_notebook(lesson, done.get("outputs/figure.png")).encode("utf-8")}


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


def write_all(lesson: Lesson, rendered: Rendered | None = None) -> list[Path]:
    """Write every generated file whose content changed; return the paths written."""
    rendered = render_all(lesson) if rendered is None else rendered
    written = []
    for relative, content in rendered.items():
        path = lesson.directory / relative
        if path.is_file() and path.read_bytes() == content:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        written.append(path)
    return written
