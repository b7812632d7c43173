"""The figure: computed from the lesson, byte-identical across builds, with its provenance."""

from __future__ import annotations

import hashlib
import json
import struct

import matplotlib
import pytest

from lessonkit.errors import LessonError
from lessonkit.lesson.load import parse_lesson
from lessonkit.site.figure import DATA, PNG, SVG, canonical_json, render_figure, sha256_text


@pytest.fixture(scope="module")
def rendered(lesson) -> dict[str, bytes]:
    return render_figure(lesson)


@pytest.fixture(scope="module")
def record(rendered) -> dict:
    return json.loads(rendered[DATA])


def test_two_builds_give_identical_bytes(lesson, rendered):
    assert render_figure(lesson) == rendered


def test_the_committed_files_are_this_rendering(lesson, rendered):
    for path, content in rendered.items():
        assert (lesson.directory / path).read_bytes() == content, f"{path}: run lessonkit build"


def test_the_users_matplotlib_settings_do_not_leak_in(lesson, rendered):
    noisy = {"savefig.bbox": "tight", "axes.facecolor": "#ffeeee", "font.size": 17}
    with matplotlib.rc_context(noisy):
        assert render_figure(lesson) == rendered


def test_the_data_is_the_parameter_update(record):
    data = record["data"]
    assert data["labels"] == ["weight[0]", "weight[1]", "bias"]
    assert data["before"] == [1.0, -1.0, 0.0]
    assert data["after"] == pytest.approx([1.4, -0.8, 0.2], rel=1e-6)


def test_provenance_hashes_match_the_code_data_and_files(lesson, rendered, record):
    provenance = record["provenance"]
    assert provenance["code_sha256"] == sha256_text(lesson.figure.code + "\n" + lesson.plot.code)
    assert provenance["data_sha256"] == sha256_text(canonical_json(record["data"]))
    assert provenance["data_code"] == lesson.figure.code
    assert provenance["plot_code"] == lesson.plot.code
    assert provenance["date"] == lesson.meta.date.isoformat()
    for name, path in (("figure.svg", SVG), ("figure.png", PNG)):
        assert record["files"][name]["sha256"] == hashlib.sha256(rendered[path]).hexdigest()
    assert set(provenance["rendered_with"]) == {"matplotlib", "pillow"}
    assert "environment" not in provenance  # Python, JAX and the machine do not decide the bytes


def test_the_same_files_on_another_python_and_jax(lesson, rendered, monkeypatch):
    import platform

    import lessonkit.site.figure

    real = lessonkit.site.figure.package_version
    older = {"jax": "0.7.0", "jaxlib": "0.7.0", "numpy": "1.26.4"}
    monkeypatch.setattr(platform, "python_version_tuple", lambda: ("3", "13", "0"))
    monkeypatch.setattr(platform, "python_version", lambda: "3.13.0")
    monkeypatch.setattr(lessonkit.site.figure, "package_version", lambda n: older.get(n) or real(n))
    assert render_figure(lesson) == rendered


def test_the_images_carry_no_timestamps(rendered):
    svg = rendered[SVG].decode("utf-8")
    assert "<dc:date>" not in svg and "lessonkit build" in svg
    png = rendered[PNG]
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", png[16:24])
    assert (width, height) == (960, 540)
    assert b"tIME" not in png and b"Software" not in png


def test_the_figure_is_labelled(rendered):
    svg = rendered[SVG].decode("utf-8")
    for text in ("parameter value", "before", "after one step", "weight[0]", "bias"):
        assert f"<!-- {text} -->" in svg


def test_a_failing_figure_block_names_the_lesson_line(lesson):
    broken = lesson.source.replace("figure_data = {", "figure_data = undefined_name or {")
    with pytest.raises(LessonError, match=r"lesson.md:\d+: \{figure-data\} block raised NameError"):
        render_figure(parse_lesson(broken, lesson.path))
