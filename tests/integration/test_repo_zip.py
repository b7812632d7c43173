"""The repository ZIP the site offers: the files a learner needs, the same bytes on every
rebuild, and a folder in which the README's commands work once it is unpacked."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import zipfile

from lessonkit.lesson.catalog import all_lessons
from lessonkit.site.repo_zip import TOP_FOLDER, ZIP_NAME, repository_files, repository_zip

from conftest import REPO


def test_the_zip_holds_what_the_readme_set_up_needs_and_nothing_built():
    names = {p.as_posix() for p in repository_files(REPO)}
    for needed in ("README.md", "pyproject.toml", "requirements-cpu.txt", "src/lessonkit/cli.py"):
        assert needed in names
    assert any(n.startswith("src/lessonkit/render/templates/") for n in names)
    for lesson in ("01-random-keys-without-surprises", "02-pytrees-and-structured-parameters"):
        for part in ("lesson.md", "code/main.py", "outputs/execution.json"):
            assert f"phases/03-state/{lesson}/{part}" in names
    assert "phases/03-state/phase.yaml" in names
    assert not [n for n in names if "__pycache__" in n or ".egg-info" in n or n.endswith(".pyc")]
    assert not [n for n in names if n.startswith(("tests/", "build/", "runs/", "practice/"))]


def test_rebuilding_gives_the_same_bytes_whatever_the_file_times(tmp_path):
    first = repository_zip(REPO)
    readme = REPO / "README.md"
    stat = readme.stat()
    os.utime(readme, (stat.st_atime, stat.st_mtime + 3600))
    try:
        assert repository_zip(REPO) == first
    finally:
        os.utime(readme, (stat.st_atime, stat.st_mtime))
    with zipfile.ZipFile(io.BytesIO(first)) as archive:
        infos = archive.infolist()
    assert [i.filename for i in infos] == sorted(i.filename for i in infos)
    assert {i.date_time for i in infos} == {(1980, 1, 1, 0, 0, 0)}
    assert all(i.filename.startswith(f"{TOP_FOLDER}/") for i in infos)


def test_the_site_offers_the_zip_and_every_page_links_it(built_site):
    assert (built_site / ZIP_NAME).read_bytes() == repository_zip(REPO)
    assert f'href="{ZIP_NAME}"' in (built_site / "index.html").read_text(encoding="utf-8")
    for lesson in ("state-01", "state-02", "state-03", "state-04"):
        html = (built_site / lesson / "index.html").read_text(encoding="utf-8")
        assert f'href="../{ZIP_NAME}" download>Download the repository ZIP' in html


def test_the_zip_holds_every_lesson_with_its_code_and_records():
    with zipfile.ZipFile(io.BytesIO(repository_zip(REPO))) as archive:
        names = set(archive.namelist())
    lessons = all_lessons(REPO)
    assert [lesson.meta.id for lesson in lessons] == [
        "state-01",
        "state-02",
        "state-03",
        "state-04",
    ]
    for lesson in lessons:
        folder = f"{TOP_FOLDER}/{lesson.directory.relative_to(REPO).as_posix()}"
        for part in ("lesson.md", "code/main.py", "outputs/execution.json"):
            assert f"{folder}/{part}" in names, (lesson.meta.id, part)


def test_the_unpacked_folder_runs_and_verifies(tmp_path):
    with zipfile.ZipFile(io.BytesIO(repository_zip(REPO))) as archive:
        archive.extractall(tmp_path)
    folder = tmp_path / TOP_FOLDER
    env = {k: v for k, v in os.environ.items() if k != "LESSONKIT_ROOT"}
    env |= {"PYTHONPATH": str(folder / "src"), "JAX_PLATFORMS": "cpu"}
    main = "phases/03-state/01-random-keys-without-surprises/code/main.py"
    for argv in ([main], ["-m", "lessonkit", "verify"]):
        done = subprocess.run(
            [sys.executable, *argv],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,  # verify grades every lesson's declared attempts and cheat set
        )
        assert done.returncode == 0, done.stdout + done.stderr
    ids = ", ".join(lesson.meta.id for lesson in all_lessons(REPO))
    assert f"verify: {ids} up to date" in done.stdout
