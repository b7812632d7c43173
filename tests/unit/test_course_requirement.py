"""A new course installs lessonkit as lessonkit was installed: from an index by its version, or
from the wheel, VCS commit or folder that pip recorded in `direct_url.json` (PEP 610); `init
--lessonkit SPEC` names another source."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lessonkit.errors import UsageError
from lessonkit.lesson import requirement
from lessonkit.lesson.requirement import (
    installed_requirement,
    requirement_from_record,
    requirement_from_spec,
)

WHEEL_URL = "file:///tmp/dist/lessonkit-0.1.0-py3-none-any.whl"


@pytest.mark.parametrize(
    ("record", "line"),
    [
        ({}, "lessonkit==0.1.0"),
        (
            {"url": WHEEL_URL, "archive_info": {"hashes": {"sha256": "ab"}}},
            f"lessonkit @ {WHEEL_URL}",
        ),
        (
            {"url": "https://example.org/lessonkit-0.1.0.tar.gz", "archive_info": {}},
            "lessonkit @ https://example.org/lessonkit-0.1.0.tar.gz",
        ),
        (
            {
                "url": "https://example.org/lk.git",
                "vcs_info": {"vcs": "git", "commit_id": "c0ffee", "requested_revision": "main"},
            },
            "lessonkit @ git+https://example.org/lk.git@c0ffee",
        ),
        (
            {
                "url": "https://example.org/lk.git",
                "vcs_info": {"vcs": "git", "commit_id": "c0ffee"},
                "subdirectory": "tools/lessonkit",
            },
            "lessonkit @ git+https://example.org/lk.git@c0ffee#subdirectory=tools/lessonkit",
        ),
        (
            {"url": "file:///src/lessonkit", "dir_info": {"editable": True}},
            "-e file:///src/lessonkit",
        ),
        ({"url": "file:///src/lessonkit", "dir_info": {}}, "lessonkit @ file:///src/lessonkit"),
    ],
    ids=["index", "wheel", "archive", "vcs", "vcs-subdirectory", "editable", "folder"],
)
def test_each_pep610_record_gives_the_requirement_that_installs_the_same(record, line):
    assert requirement_from_record(record, "0.1.0") == line


@given(st.lists(st.text("abxy_-.% #é09", min_size=1), min_size=1, max_size=4))
def test_an_editable_folder_is_named_by_a_url_pip_reads_back_as_the_same_folder(parts):
    """One word on the line after `-e` (a space would split it), which names the folder."""
    folder = Path("/", *parts)
    record = {"url": folder.as_uri(), "dir_info": {"editable": True}}
    line = requirement_from_record(record, "0.1.0")
    flag, url = line.split(" ")
    assert flag == "-e" and Path(unquote(urlsplit(url).path)) == folder


class _Installed:
    """A distribution as importlib.metadata gives it, with or without a direct_url.json."""

    version = "0.3.1"

    def __init__(self, direct_url: dict | None):
        self._text = None if direct_url is None else json.dumps(direct_url)

    def read_text(self, name: str) -> str | None:
        return self._text if name == "direct_url.json" else None


@pytest.mark.parametrize(
    ("direct_url", "line"),
    [
        (None, "lessonkit==0.3.1"),
        ({"url": WHEEL_URL, "archive_info": {}}, f"lessonkit @ {WHEEL_URL}"),
    ],
)
def test_the_installed_distribution_is_read(monkeypatch, direct_url, line):
    asked = []

    def distribution(name: str) -> _Installed:
        asked.append(name)
        return _Installed(direct_url)

    monkeypatch.setattr(requirement.metadata, "distribution", distribution)
    assert installed_requirement() == line
    assert asked == ["lessonkit"]


def test_a_lessonkit_that_is_not_installed_asks_for_a_spec(monkeypatch):
    def distribution(name: str):
        raise requirement.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(requirement.metadata, "distribution", distribution)
    with pytest.raises(UsageError, match="--lessonkit SPEC"):
        installed_requirement()


def test_this_checkout_installed_editable_is_named_by_its_folder():
    """The test environment is set up with `-e .` (README), so a course made here installs
    this checkout, as an editable folder."""
    from conftest import REPO

    assert installed_requirement() == f"-e {REPO.as_uri()}"


def test_a_spec_on_disk_becomes_an_absolute_file_url_since_pip_runs_in_the_course(tmp_path):
    wheel = tmp_path / "dist" / "lessonkit-0.1.0-py3-none-any.whl"
    wheel.parent.mkdir()
    wheel.write_bytes(b"PK")
    assert requirement_from_spec("dist/lessonkit-0.1.0-py3-none-any.whl", tmp_path) == (
        f"lessonkit @ {wheel.as_uri()}"
    )
    editable = requirement_from_spec(f"-e {tmp_path.name}", tmp_path.parent)
    assert editable == f"-e {tmp_path.as_uri()}"


@pytest.mark.parametrize(
    ("spec", "line"),
    [
        ("lessonkit==0.2.0", "lessonkit==0.2.0"),
        (
            "lessonkit @ git+https://example.org/lk.git@v1",
            "lessonkit @ git+https://example.org/lk.git@v1",
        ),
        ("git+https://example.org/lk.git@v1", "lessonkit @ git+https://example.org/lk.git@v1"),
        ("lessonkit[cluster]>=0.1", "lessonkit[cluster]>=0.1"),
    ],
)
def test_a_requirement_or_url_spec_names_lessonkit(spec, line, tmp_path):
    assert requirement_from_spec(spec, tmp_path) == line


@pytest.mark.parametrize("spec", ["numpy==2.0", "lessonkitten", "./not-there.whl"])
def test_a_spec_that_is_not_lessonkit_is_refused_by_name(spec, tmp_path):
    with pytest.raises(UsageError, match="--lessonkit"):
        requirement_from_spec(spec, tmp_path)
