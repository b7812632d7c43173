"""The lesson's figure, its data and their provenance, reproducible byte for byte.

The build steps, the ``{figure-data}`` block (defines ``figure_data``) and the ``{plot}`` block
(draws ``fig``) run in a fresh namespace. Everything that could make two builds differ is
pinned (default matplotlib style, SVG hash salt, no creation dates, fixed DPI, sorted JSON;
``figure.json``'s date is the lesson revision's), so ``lessonkit verify`` can compare bytes.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
from collections.abc import Iterator
from typing import Any

from lessonkit.errors import LessonError
from lessonkit.lesson.files import FIGURE_DATA, FIGURE_PNG, FIGURE_SCHEMA, FIGURE_SVG
from lessonkit.lesson.model import Lesson
from lessonkit.run.environment import package_version
from lessonkit.run.inprocess import quiet_cpu, run_block, run_steps

SCHEMA = FIGURE_SCHEMA
SVG, PNG, DATA = FIGURE_SVG, FIGURE_PNG, FIGURE_DATA
PNG_DPI = 150
PINNED_RC: dict[str, Any] = {
    "svg.hashsalt": "lessonkit-figure",  # clip-path and glyph ids derive from it
    "svg.fonttype": "path",  # glyphs as paths: no dependence on installed fonts when viewing
    "font.family": ["DejaVu Sans"],  # ships with matplotlib, so every machine draws the same
}
SVG_METADATA = {"Date": None, "Creator": "lessonkit build (matplotlib)"}
PNG_METADATA = {"Software": None}


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def canonical_json(data: Any) -> str:
    """The one serialization of `data` that its hash is taken over."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@contextlib.contextmanager
def pinned_matplotlib() -> Iterator[None]:
    """Headless Agg, matplotlib's default style (not the user's matplotlibrc) and `PINNED_RC`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.style.context("default"), matplotlib.rc_context(PINNED_RC):
        yield


def compute_figure(lesson: Lesson) -> tuple[Any, Any]:
    """Run the build steps, the figure block and the plot block; return ``(figure_data, fig)``.

    Call it inside `pinned_matplotlib`. The steps' own printing is swallowed: building must
    not echo the worked example.
    """
    import matplotlib.figure
    import matplotlib.pyplot as plt

    namespace: dict[str, Any] = {"__name__": "__lessonkit_figure__"}
    with quiet_cpu():
        run_steps(lesson, namespace)
        run_block(lesson.figure.code, namespace, lesson, "figure-data", lesson.figure.line)
        run_block(lesson.plot.code, namespace, lesson, "plot", lesson.plot.line)
    data, fig = namespace.get("figure_data"), namespace.get("fig")
    if not isinstance(fig, matplotlib.figure.Figure):
        raise LessonError(
            "{plot} block must draw a matplotlib figure named fig",
            where=f"{lesson.path}:{lesson.plot.line}",
        )
    try:
        canonical_json(data)
    except (TypeError, ValueError):
        plt.close(fig)
        raise LessonError(
            "{figure-data} block: figure_data must hold only JSON values (lists, numbers, strings)",
            where=f"{lesson.path}:{lesson.figure.line}",
        ) from None
    return data, fig


def _save(fig: Any, fmt: str, **options: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, **options)
    return buffer.getvalue()


def byte_versions() -> dict[str, str]:
    """The versions of the packages that write the figure's bytes (matplotlib, Pillow), and no more.

    Python, JAX and the machine are left out: the same data draws the same figure on each, and
    the data is in figure.json, so other numbers still show as drift. Naming them would make
    `lessonkit verify` fail where the figure does not differ.
    """
    return {"matplotlib": package_version("matplotlib"), "pillow": package_version("pillow")}


def render_figure(lesson: Lesson) -> dict[str, bytes]:
    """The SVG, the PNG and figure.json, keyed by their paths in the lesson folder."""
    import matplotlib.pyplot as plt

    with pinned_matplotlib():
        data, fig = compute_figure(lesson)
        try:
            svg = _save(fig, "svg", metadata=SVG_METADATA)
            png = _save(fig, "png", dpi=PNG_DPI, metadata=PNG_METADATA)
            width, height = (round(v * PNG_DPI) for v in fig.get_size_inches())
        finally:
            plt.close(fig)
    record = _record(lesson, data, svg, png, (width, height))
    text = json.dumps(record, indent=2, ensure_ascii=False) + "\n"
    return {SVG: svg, PNG: png, DATA: text.encode("utf-8")}


def _settled(lesson: Lesson) -> dict[str, Any]:
    """figure.json less what only drawing gives (the data and the files' digests)."""
    figure, plot, meta = lesson.figure, lesson.plot, lesson.meta
    steps_code = "\n\n".join(step.code for step in lesson.steps)
    return {
        "schema": SCHEMA,
        "lesson": meta.id,
        "title": figure.title,
        "alt": figure.alt,
        "provenance": {
            "source": f"phases/{lesson.directory.parent.name}/{lesson.directory.name}/lesson.md",
            "revision": meta.revision,
            "date": meta.date.isoformat(),
            "date_note": "the lesson revision's date, not the build time, so rebuilds are "
            "byte-identical",
            "generated_by": f"lessonkit build {meta.id}",
            "code_sha256": sha256_text(figure.code + "\n" + plot.code),
            "steps_sha256": sha256_text(steps_code),
            "data_code": figure.code,
            "plot_code": plot.code,
            "steps_code": steps_code,
            "rendered_with": byte_versions(),
        },
    }


def kept_figure(lesson: Lesson) -> dict[str, bytes] | None:
    """The figure files on disk, when drawing again would give the same bytes; else None.

    They are kept when figure.json says they were drawn from this lesson's current figure,
    plot and step code by the installed matplotlib and Pillow, the SVG and PNG are the files
    it names, and the numbers check's kept verdict is current (same steps, same JAX), so the
    data would be the same. Nothing is imported or run to find out.
    """
    from lessonkit.receipts.numbers import numbers_current

    folder = lesson.directory
    try:
        text, svg, png = ((folder / p).read_bytes() for p in (DATA, SVG, PNG))
        record = json.loads(text)
        provenance = dict(record["provenance"])
        files = record["files"]
        data_sha = provenance.pop("data_sha256")
        settled = {k: v for k, v in record.items() if k not in ("data", "files")}
        settled["provenance"] = provenance
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if (
        settled != _settled(lesson)
        or files.get("figure.svg", {}).get("sha256") != hashlib.sha256(svg).hexdigest()
        or files.get("figure.png", {}).get("sha256") != hashlib.sha256(png).hexdigest()
        or data_sha != sha256_text(canonical_json(record.get("data")))
        or not numbers_current(lesson)
    ):
        return None
    return {SVG: svg, PNG: png, DATA: text}


def _record(
    lesson: Lesson, data: Any, svg: bytes, png: bytes, pixels: tuple[int, int]
) -> dict[str, Any]:
    """figure.json: `_settled` with the data and the files' digests in their places."""
    settled = _settled(lesson)
    record = {key: settled[key] for key in ("schema", "lesson", "title", "alt")}
    record["data"] = data
    record["files"] = {
        "figure.svg": {"sha256": hashlib.sha256(svg).hexdigest(), "bytes": len(svg)},
        "figure.png": {
            "sha256": hashlib.sha256(png).hexdigest(),
            "bytes": len(png),
            "pixels": list(pixels),
            "dpi": PNG_DPI,
        },
    }
    provenance: dict[str, Any] = {}
    for key, value in settled["provenance"].items():
        provenance[key] = value
        if key == "code_sha256":
            provenance["data_sha256"] = sha256_text(canonical_json(data))
    record["provenance"] = provenance
    return record
