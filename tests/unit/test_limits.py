"""The grading child's limits live in one place (`run/limits.py`), documented, and the
instructor's `--memory` and `--timeout` are parsed into them (issue 33, item 5)."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

from lessonkit.cli import parse
from lessonkit.commands._common import limits_from
from lessonkit.run import limits as limits_module
from lessonkit.run.limits import DEFAULT_LIMITS, GiB, Limits, MiB, parse_size, shown_size

from conftest import REPO

SOURCE = REPO / "src" / "lessonkit"


def _field_docs() -> dict[str, str | None]:
    """Each field of `Limits` and the docstring under it (None where there is none)."""
    tree = ast.parse(Path(limits_module.__file__).read_text(encoding="utf-8"))
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Limits"]
    docs: dict[str, str | None] = {}
    body = cls.body
    for node, after in zip(body, [*body[1:], None], strict=True):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            said = (
                after.value.value
                if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                else None
            )
            docs[node.target.id] = said
    return docs


def test_every_limit_has_a_default_and_says_what_it_is():
    docs = _field_docs()
    assert set(docs) == set(Limits.__dataclass_fields__)
    assert not [name for name, said in docs.items() if not said], docs


def test_the_security_page_names_the_one_place_and_its_defaults():
    page = " ".join((REPO / "docs" / "grading-security.md").read_text(encoding="utf-8").split())
    assert "src/lessonkit/run/limits.py" in page and "--memory" in page
    stated = {
        "data memory 2 GiB per process": DEFAULT_LIMITS.memory == 2 * GiB,
        "files 64 MiB": DEFAULT_LIMITS.file_bytes == 64 * MiB,
        "a tmpfs capped at 64 MiB": DEFAULT_LIMITS.scratch_bytes == 64 * MiB,
        "a 512 MiB margin": DEFAULT_LIMITS.cgroup_margin == 512 * MiB,
        "128 and 4 per CPU": (DEFAULT_LIMITS.tasks, DEFAULT_LIMITS.tasks_per_cpu) == (128, 4),
        "`cpu.shares` 1024": DEFAULT_LIMITS.cpu_shares == 1024,
        "256 MiB or 1,000 entries": (DEFAULT_LIMITS.folder_bytes, DEFAULT_LIMITS.folder_entries)
        == (256 * MiB, 1_000),
    }
    assert {phrase: holds for phrase, holds in stated.items() if phrase not in page} == {}
    assert all(stated.values()), stated
    guide = " ".join((REPO / "docs" / "instructor.md").read_text(encoding="utf-8").split())
    assert "Each file gets 60 seconds and 2 GiB" in guide and DEFAULT_LIMITS.timeout == 60


# What each limit used to be, defined again in the module that used it.
_REDEFINED = re.compile(
    r"^(?:DEFAULT_MEMORY|DEFAULT_TIMEOUT|GRACE|REFERENCE_LIMIT|SCRATCH_BYTES|FILE_BYTES"
    r"|MAX_FOLDER_BYTES|MAX_FOLDER_ENTRIES)\s*=|2\s*\*\*\s*29\b",
    re.MULTILINE,
)


def test_no_module_but_limits_defines_a_limit_of_the_child():
    found = [
        f"{path.relative_to(SOURCE)}: {match.group(0)}"
        for path in sorted(SOURCE.rglob("*.py"))
        if path.name != "limits.py"
        for match in _REDEFINED.finditer(path.read_text(encoding="utf-8"))
    ]
    assert found == []


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("2G", 2 * GiB),
        ("512M", 512 * MiB),
        ("512m", 512 * MiB),
        ("1.5GiB", 3 * GiB // 2),
        ("4096MB", 4 * GiB),
        ("1073741824", GiB),
    ],
)
def test_sizes_are_read_in_powers_of_1024(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "lots", "2 X", "-1G", "G"])
def test_what_is_not_a_size_says_what_is(text):
    with pytest.raises(ValueError, match="not a size: give a number with K, M, G or T"):
        parse_size(text)


def test_sizes_are_shown_as_an_instructor_types_them():
    assert [shown_size(s) for s in (2 * GiB, 512 * MiB, 1536 * MiB, 1000)] == [
        "2G",
        "512M",
        "1536M",
        "1000",
    ]


@pytest.mark.parametrize("command", [["check", "state-02", "x.py"], ["project", "phase-03"]])
def test_memory_and_timeout_become_the_childs_limits(command):
    args = parse([*command, "--memory", "768M", "--timeout", "2"])
    assert limits_from(args) == Limits(memory=768 * MiB, timeout=2.0)
    assert limits_from(parse(command)) == DEFAULT_LIMITS
    batch = parse(["check", "state-02", "--batch", "class", "--memory", "4G"])
    assert limits_from(batch).memory == 4 * GiB


@pytest.mark.parametrize(
    ("value", "said"),
    [("100M", "give at least 512M"), ("plenty", "is not a size"), ("0", "give at least")],
)
def test_a_memory_too_small_for_jax_or_not_a_size_is_refused_by_the_parser(value, said, capsys):
    with pytest.raises(SystemExit) as caught:
        parse(["check", "state-02", "x.py", "--memory", value])
    assert caught.value.code == 2
    assert said in capsys.readouterr().err


def test_limits_are_frozen_and_derived_numbers_follow_them():
    limits = Limits(memory=GiB, cgroup_margin=MiB, timeout=5, cpu_weight=50)
    with pytest.raises(AttributeError):
        limits.memory = 0  # type: ignore[misc]
    assert limits.cgroup_memory == GiB + MiB
    assert limits.cpu_seconds == 20 and limits.cpu_shares == 512
    assert limits.with_options(memory=None, timeout=None) == limits


def test_children_sharing_the_learners_uid_each_have_room_for_all_of_them(monkeypatch):
    """RLIMIT_NPROC counts every task of a user. Children without a uid of their own (no
    sandbox) share one count, so a limit set when one child starts must leave room for the
    threads the others start after it: 12 children of 60 threads each crashed at start
    (pthread_create: EAGAIN) on a TPU VM under gVisor when each had room for itself alone."""
    from lessonkit.run import sandbox

    monkeypatch.setattr(sandbox, "tasks_of", lambda uid: 40)
    limits = Limits(tasks=10, tasks_per_cpu=0, children=5)
    assert sandbox.process_limit(os.getuid(), limits) == 40 + 5 * 10
    assert sandbox.process_limit(os.getuid() + 1, limits) == 10  # a uid of its own: itself
