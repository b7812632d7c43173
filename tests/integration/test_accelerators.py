"""Accelerator receipts: recorded beside the CPU reference, never replacing it; shown on the
page (or said to be absent); informational when older than the lesson, since they cannot be
re-recorded where no GPU or TPU exists. Runs here use a CPU receipt relabelled as a GPU one."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import replace
from html import unescape

import pytest

from lessonkit.lesson.files import GOING_FURTHER
from lessonkit.lesson.load import load_lesson
from lessonkit.receipts import (
    load_accelerator_records,
    load_record,
    record_path,
    save_record,
)

from conftest import REPO, copy_lesson_repo, invoke


def _gpu_receipt(lesson, **changes):
    cpu = load_record(lesson)
    environment = dataclasses.replace(
        cpu.environment, backend="gpu", device_kinds=("NVIDIA H200",), device_count=1
    )
    return dataclasses.replace(cpu, environment=environment, **changes)


def _going_further_fields(lesson):
    cpu = load_record(lesson, GOING_FURTHER)
    names = ("script", "script_sha256", "code_sha256", "command", "stdout")
    return {name: getattr(cpu, name) for name in names}


@pytest.fixture
def repo(tmp_path):
    """A copy of the lesson without the accelerator receipts committed with it."""
    folder = copy_lesson_repo(tmp_path)
    for receipt in (folder / "outputs").glob("*-[gt]pu.json"):
        receipt.unlink()
    return tmp_path, load_lesson(folder / "lesson.md")


def test_an_accelerator_record_lies_beside_the_cpu_one_and_never_replaces_it(repo):
    _, lesson = repo
    cpu_path = record_path(lesson)
    before = cpu_path.read_bytes()
    path = save_record(_gpu_receipt(lesson), lesson, "gpu")
    assert path == cpu_path.with_name("execution-gpu.json")
    assert cpu_path.read_bytes() == before
    (found,) = [r for r in load_accelerator_records(lesson) if r.platform == "gpu"]
    assert (found.platform, found.stale, found.verified) == ("gpu", False, True)
    committed = load_accelerator_records(load_lesson(REPO / lesson.path.relative_to(repo[0])))
    assert all(r.platform != "gpu" for r in committed)


def test_the_page_shows_an_accelerator_receipt_or_says_there_is_none(repo):
    root, lesson = repo
    code, _, err = invoke(["build"], root=root, cwd=root)
    assert code == 0, err
    page = root / "build" / "site" / "state-02" / "index.html"
    assert "No accelerator receipt is recorded for this lesson" in page.read_text("utf-8")
    save_record(_gpu_receipt(lesson), lesson, "gpu")
    code, _, err = invoke(["build"], root=root, cwd=root)
    html = page.read_text(encoding="utf-8")
    assert code == 0, err
    assert "NVIDIA H200 receipt of <code>code/main.py</code>" in html
    assert "matched the CPU reference: 3 lines, numbers within a relative 1e-06" in html
    assert "older than the lesson" not in html and "No accelerator receipt" not in html
    # main.py alone is recorded on the GPU: going_further.py is not, so not verified there yet
    site = root / "build" / "site"
    assert "verified on CPU." in (site / "index.html").read_text(encoding="utf-8")
    going_further = replace(_gpu_receipt(lesson), **_going_further_fields(lesson))
    save_record(going_further, lesson, "gpu")
    code, _, err = invoke(["build"], root=root, cwd=root)
    assert code == 0, err
    assert "verified on CPU and NVIDIA H200." in (site / "index.html").read_text("utf-8")
    guide = (site / "phase-03" / "index.html").read_text(encoding="utf-8")
    assert "Verified on CPU and NVIDIA H200: its recorded runs" in guide


def test_an_old_accelerator_receipt_is_said_to_be_old_and_does_not_fail_verify(repo):
    root, lesson = repo
    save_record(_gpu_receipt(lesson, code_sha256="0" * 64), lesson, "gpu")
    code, out, err = invoke(["verify"], root=root, cwd=root)
    assert code == 0, out + err
    assert "the GPU receipt is older than the lesson's code" in out
    assert "verify: state-02 up to date" in out
    invoke(["build"], root=root, cwd=root)
    html = (root / "build" / "site" / "state-02" / "index.html").read_text(encoding="utf-8")
    assert "older than the lesson</strong>" in html


def test_a_broken_accelerator_receipt_fails_verify(repo):
    root, lesson = repo
    path = record_path(lesson, platform="tpu")
    path.write_text(json.dumps({"schema": 3}), encoding="utf-8")
    code, out, _ = invoke(["verify"], root=root, cwd=root)
    assert code == 1
    assert "execution-tpu.json" in out and "--platform tpu" in out


def test_recording_on_a_missing_accelerator_writes_nothing(repo):
    root, lesson = repo
    before = record_path(lesson).read_bytes()
    code, _, err = invoke(["run", "state-02", "--platform", "gpu", "--record"], root=root)
    if code == 0:
        pytest.skip("this machine has a GPU-enabled JAX")
    assert code == 2 and "JAX found no gpu backend" in err
    assert not record_path(lesson, platform="gpu").exists()
    assert record_path(lesson).read_bytes() == before


def test_the_setup_page_comes_from_phases_and_every_lesson_links_it(built_site):
    source = (REPO / "phases" / "accelerators.md").read_text(encoding="utf-8")
    html = (built_site / "accelerators" / "index.html").read_text(encoding="utf-8")
    assert "<h1>Run a lesson on a GPU or a Cloud TPU VM</h1>" in html
    for command in ("requirements-cuda.txt", "requirements-tpu.txt", "--platform gpu --record"):
        assert command in source and command in html
    index = (built_site / "index.html").read_text(encoding="utf-8")
    assert 'href="accelerators/index.html"' in index
    for lesson in ("state-01", "state-02"):
        page = (built_site / lesson / "index.html").read_text(encoding="utf-8")
        assert '<a href="../accelerators/index.html">Run a lesson on a GPU' in page


def test_the_guided_cpu_setup_page_is_published_and_linked_where_setup_is_read(built_site):
    """The setup help said "revisit the guided CPU setup" and linked no such page."""
    html = (built_site / "cpu-setup" / "index.html").read_text(encoding="utf-8")
    assert "<h1>Guided CPU setup</h1>" in html
    for needed in (
        "python3 -m venv .venv",  # macOS / Linux
        r".\.venv\Scripts\python.exe -m pip install -r requirements-cpu.txt",  # PowerShell
        "requirements-cpu.txt",
        "jupyter lab",
        "--xla_force_host_platform_device_count=4",
    ):
        assert needed in unescape(html), needed
    link = '<a href="../cpu-setup/index.html">Guided CPU setup</a>'
    both = (link, '<a href="../accelerators/index.html">Run a lesson on a GPU')
    assert 'href="cpu-setup/index.html"' in (built_site / "index.html").read_text("utf-8")
    for lesson in ("state-01", "state-02", "state-03", "state-04"):
        page = (built_site / lesson / "index.html").read_text(encoding="utf-8")
        help_end = page[: page.index("</details>", page.index('class="preamble-section"'))]
        assert all(a in help_end for a in both), lesson  # at the end of the setup help
    guide = (built_site / "phase-03" / "index.html").read_text(encoding="utf-8")
    assert all(a in guide for a in both)


def test_without_the_setup_page_source_no_lesson_links_it(tmp_path):
    copy_lesson_repo(tmp_path)  # no phases/accelerators.md in this repository
    code, _, err = invoke(["build"], root=tmp_path, cwd=tmp_path)
    assert code == 0, err
    site = tmp_path / "build" / "site"
    assert not (site / "accelerators").exists() and not (site / "cpu-setup").exists()
    assert "Setup pages</dt>" not in (site / "state-02" / "index.html").read_text("utf-8")


def test_accelerator_requirements_pin_the_cpu_set_and_the_same_jax():
    cpu = (REPO / "requirements-cpu.txt").read_text(encoding="utf-8")
    (jax_pin,) = [line for line in cpu.splitlines() if line.startswith("jax==")]
    version = jax_pin.split("==")[1]
    for name, extra in (("requirements-cuda.txt", "cuda12"), ("requirements-tpu.txt", "tpu")):
        lines = [
            line
            for line in (REPO / name).read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#")
        ]
        assert lines == ["-r requirements-cpu.txt", f"jax[{extra}]=={version}"]
