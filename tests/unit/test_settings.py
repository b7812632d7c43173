"""One settings object, built by the commands, and one documented home for every default:
`GradingSettings` (`settings.py`), `Limits` (`run/limits.py`) and `defaults.py`, each value
with the line under it that `docs/settings.md` repeats."""

from __future__ import annotations

import ast
import dataclasses
import os
import re
from pathlib import Path
from types import ModuleType

import pytest

from lessonkit import defaults, settings
from lessonkit.cli import parse
from lessonkit.commands._common import limits_from
from lessonkit.errors import UsageError
from lessonkit.run import isolation, limits
from lessonkit.run.isolation import UNSANDBOXED
from lessonkit.run.limits import DEFAULT_LIMITS, Limits, MiB

from conftest import REPO

SOURCE = REPO / "src" / "lessonkit"
PAGE = REPO / "docs" / "settings.md"
# (module, class or None for its module level, the docs heading's path)
HOMES = (
    (settings, "GradingSettings", "src/lessonkit/settings.py"),
    (settings, None, "src/lessonkit/settings.py"),
    (limits, "Limits", "src/lessonkit/run/limits.py"),
    (defaults, None, "src/lessonkit/defaults.py"),
)
_ROW = re.compile(r"^\| `(?P<name>\w+)` \| `(?P<value>[^`]+)` \| (?P<doc>.+) \|$")


def documented(module: ModuleType, cls: str | None) -> dict[str, tuple[object, str | None]]:
    """Each name the code defines (a module's constants, or a class's fields): its value and
    the docstring under it (None where there is none)."""
    tree = ast.parse(Path(module.__file__ or "").read_text(encoding="utf-8"))
    body = tree.body
    if cls is not None:
        (node,) = [n for n in body if isinstance(n, ast.ClassDef) and n.name == cls]
        body = node.body
    found: dict[str, tuple[object, str | None]] = {}
    for node, after in zip(body, [*body[1:], None], strict=True):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name = node.target.id
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
        else:
            continue
        if name.startswith("_"):
            continue
        said = (
            " ".join(after.value.value.split())
            if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
            else None
        )
        if cls is None:
            value = getattr(module, name)
        else:
            value = {f.name: f.default for f in dataclasses.fields(getattr(module, cls))}[name]
        found[name] = (value, said)
    return found


def page_rows(text: str, heading_path: str, cls: str | None) -> dict[str, tuple[str, str]]:
    """The rows of the page's tables under the heading naming `heading_path`: for a class,
    the first table there; for a module level, the tables after it."""
    sections = re.split(r"^## ", text, flags=re.MULTILINE)
    (section,) = [s for s in sections if f"(`{heading_path}`)" in s.splitlines()[0]]
    tables = re.split(r"\n\n(?=\|)", section)[1:]
    chosen = tables[:1] if cls is not None else tables[1:] if len(tables) > 1 else tables
    rows = {}
    for table in chosen:
        for line in table.splitlines():
            if match := _ROW.match(line):
                rows[match["name"]] = (match["value"], match["doc"])
    return rows


def disagreements(text: str) -> list[str]:
    """Every name whose default or line differs between the code and the page."""
    found = []
    for module, cls, path in HOMES:
        code = documented(module, cls)
        page = page_rows(text, path, cls)
        found += [f"{path}: {name} is not on the page" for name in code.keys() - page.keys()]
        found += [f"{path}: {name} is not in the code" for name in page.keys() - code.keys()]
        for name in code.keys() & page.keys():
            (value, said), (shown, doc) = code[name], page[name]
            if eval(shown, vars(module)) != value:  # the page's own expression, e.g. `2 * GiB`
                found.append(f"{path}: {name} is {value!r} in the code, {shown} on the page")
            if said != doc:
                found.append(f"{path}: {name} says {said!r} in the code, {doc!r} on the page")
    return found


def test_every_default_has_a_line_that_says_what_it_is():
    for module, cls, path in HOMES:
        missing = [n for n, (_, said) in documented(module, cls).items() if not said]
        assert missing == [], f"{path}: {missing}"


def test_the_page_gives_every_default_and_its_line_as_the_code_does():
    assert disagreements(PAGE.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    ("before", "after", "said"),
    [
        ("| `GREETING_WAIT_S` | `30.0` |", "| `GREETING_WAIT_S` | `20.0` |", "is 30.0 in the code"),
        (
            "| `file_bytes` | `64 * MiB` |",
            "| `file_bytes` | `32 * MiB` |",
            "is 67108864 in the code",
        ),
        ("| `TREE_RTOL` | `1e-4` | How far", "| `TREE_RTOL` | `1e-4` | How near", "says"),
        ("| `jobs` | `0` |", "| `workers` | `0` |", "jobs is not on the page"),
    ],
)
def test_a_page_that_differs_from_the_code_is_caught(before, after, said):
    text = PAGE.read_text(encoding="utf-8")
    assert before in text
    found = disagreements(text.replace(before, after, 1))
    assert found and any(said in line for line in found), found


def _strings(path: Path) -> set[str]:
    return {
        node.value
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def test_no_module_but_settings_spells_a_grading_switch():
    """Each environment variable that switches grading is named in `settings.py` alone;
    waits and tolerances have their guard in `test_waits.py`."""
    switches = {v for k, v in vars(settings).items() if k.endswith("_VARIABLE")}
    assert len(switches) == 4
    found = [
        f"{path.relative_to(SOURCE)}: {sorted(_strings(path) & switches)}"
        for path in sorted(SOURCE.rglob("*.py"))
        if path.name != "settings.py" and _strings(path) & switches
    ]
    assert found == []


# Library modules that used to read the environment to decide how to grade.
_DEEP = (
    "run/cache_folders.py",
    "grade/preparation/prepared.py",
    "grade/channel/reference_store.py",
)


@pytest.mark.parametrize("module", _DEEP)
def test_no_library_module_reads_a_grading_switch_from_the_environment(module):
    text = (SOURCE / module).read_text(encoding="utf-8")
    reads = re.findall(r"os\.environ(?:\.get)?\W+(\w+)", text)
    assert [r for r in reads if r != "XDG_CACHE_HOME"] == []
    assert "LESSONKIT_" not in re.sub(r'"""[\s\S]*?"""', "", text)  # docstrings may name them


def test_the_environment_switches_become_settings(tmp_path):
    environ = {
        settings.SCENARIO_ORDER_VARIABLE: " 7 ",
        settings.NO_REFERENCE_STORE_VARIABLE: "1",
        settings.COMPILE_CACHE_VARIABLE: str(tmp_path / "jax"),
    }
    chosen = settings.settings_around(environ, UNSANDBOXED, seed=3, jobs=2)
    assert (chosen.scenario_order, chosen.reference_store) == (7, False)
    assert (chosen.seed, chosen.jobs, chosen.limits) == (3, 2, DEFAULT_LIMITS)
    assert settings.compile_cache_from(environ) == tmp_path / "jax"
    off = {**environ, settings.NO_COMPILE_CACHE_VARIABLE: "1"}
    assert settings.compile_cache_from(off) is None
    nothing = settings.settings_around({}, UNSANDBOXED)
    assert nothing == settings.DEFAULT_SETTINGS  # an empty environment switches nothing
    assert settings.scenario_order_from({settings.SCENARIO_ORDER_VARIABLE: "soon"}) is None


def test_a_command_builds_its_settings_from_its_arguments(monkeypatch):
    monkeypatch.setattr(isolation, "find_sandbox", lambda: (None, "none in a unit test"))
    monkeypatch.setattr(isolation, "root_isolation", lambda: "user")
    monkeypatch.setenv(settings.SCENARIO_ORDER_VARIABLE, "4")
    monkeypatch.setenv(settings.NO_COMPILE_CACHE_VARIABLE, "1")
    args = parse(["check", "state-02", "x.py", "--memory", "768M", "--timeout", "2"])
    chosen = settings.grading_settings(os.environ, limits=limits_from(args), seed=9)
    assert chosen.limits == Limits(memory=768 * MiB, timeout=2.0)
    assert (chosen.seed, chosen.scenario_order, chosen.isolation.cache) == (9, 4, None)
    assert chosen.isolation.reason == "none in a unit test"
    monkeypatch.setattr(isolation.os, "geteuid", lambda: 1000)  # not root
    with pytest.raises(UsageError, match="will not run it unisolated: none in a unit test"):
        settings.grading_settings(os.environ, batch=True, allow_unsandboxed=False)
    monkeypatch.setattr(isolation.os, "geteuid", lambda: 0)
    with pytest.raises(UsageError, match="the kernel refuses this root grader namespaces"):
        settings.grading_settings(os.environ, batch=True, allow_unsandboxed=False)
    allowed = settings.grading_settings(os.environ, batch=True, allow_unsandboxed=True)
    assert allowed.isolation.kind == "user"
    monkeypatch.setattr(isolation, "root_isolation", lambda: "namespaces")
    chosen = settings.grading_settings(os.environ, batch=True, allow_unsandboxed=False)
    assert chosen.isolation.kind == "namespaces" and chosen.isolation.note is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        chosen.seed = 1  # type: ignore[misc]


def test_the_child_is_sent_its_cpu_allowance_as_a_number(lesson):
    from lessonkit.grade.preparation.prepared import build_request, prepare_lesson

    grading = prepare_lesson(lesson, 5)
    learner = build_request("learner-1", grading.reference, grading, 2.5)
    assert learner.cpu_seconds == limits.cpu_allowance(2.5) == 15.0
    assert build_request("reference-1", grading.reference, grading, None).cpu_seconds is None
    assert Limits(timeout=2.5).cpu_seconds == int(limits.cpu_allowance(2.5))
