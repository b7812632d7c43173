"""The package keeps its layers: no cycle between its parts or between its modules, no
process started outside `run/`, no import up the layers, other packages reach grade/ through
its fronts, no module over `MAX_LINES`, and a package root of entry points and faces only.
Inside grade/ the same order holds between its own parts (`GRADE_LAYERS`), and no module of
grade/ loads another lazily (inside a function, under `TYPE_CHECKING`, through importlib).

A part is a subpackage or a module of the package root. `LAYERS` lists the parts from the
bottom up; a part may import its own modules and any part below it, never one above. The
checks read the source (`ast`), so they see imports inside functions too. Each rule is
also run on a small package made to break it, so the test is seen to fail.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "lessonkit"

LAYERS = (
    "grading_child",
    "defaults",
    "errors",
    "guides",
    "atomic",
    "treediff",
    "lesson",
    "trees",
    "run",
    "settings",
    "receipts",
    "render",
    "grade",
    "project",
    "course",
    "evidence",
    "learner",
    "site",
    "commands",
    "cli",
    "__main__",
    "__init__",
)
"""Bottom first: the grading child's program (standard library only, loaded by path in the
sandbox, so it imports nothing of lessonkit), the toolkit's sizes, waits and tolerances, the
error type, the one way a file is replaced whole, the tree-difference engine (no JAX), the
model of a lesson, the tree library, the one way code runs, a command's grading settings,
records, renderers, the grader, the phase project's grader, the course gradebook, evidence,
the notebook's check(), the site, then the commands."""

GRADE_LAYERS = (
    "model",
    "provenance",
    "submission",
    "channel",
    "preparation",
    "judging",
    "grader",
    "batches",
    "self_checks",
    "watching",
    "__init__",
)
"""grade/'s parts, bottom first: the types its layers share, what vouches for a grading (the
grader's fingerprint, the grading key), the learner's file read and planned, the channel to a
child, a lesson's preparation, judging, the grader, batches, the self-checks that drive the
grader, and watching."""

ROOT_MODULES_MAX = 6
MAX_LINES = 600
FRONTED = ("grade",)
"""Parts whose packages others import through their fronts (`__init__.py` and its `__all__`),
never a module past them."""

SPAWN_MODULES = ("subprocess", "multiprocessing", "concurrent.futures.process", "pty")
SPAWN_CALLS = frozenset(
    {"fork", "forkpty", "system", "popen", "posix_spawn", "posix_spawnp"}
    | {f"exec{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")}
    | {f"spawn{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")}
)


def _part(package: Path, path: Path) -> str:
    relative = path.relative_to(package)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def _imported(package: Path, path: Path, node: ast.AST, name: str | None = None) -> list[str]:
    """The dotted names an import statement brings in, relative ones resolved; `name` is the
    package's dotted name (its folder's name by default)."""
    name = name or package.name
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level == 0:
        base = node.module or ""
    else:
        here = list(path.relative_to(package).parent.parts)
        here = here[: len(here) - (node.level - 1)]
        base = ".".join([name, *here, *([node.module] if node.module else [])])
    return [base] + [f"{base}.{alias.name}" for alias in node.names]


def scan(
    package: Path, layers: tuple[str, ...] = LAYERS, name: str | None = None
) -> tuple[dict[str, set[str]], list[str], list[str]]:
    """Part-to-part imports, "file:line part -> part" for imports up `layers`, spawn sites.
    `name` is the package's dotted name, for a subpackage (`lessonkit.grade`)."""
    name = name or package.name
    edges: dict[str, set[str]] = {}
    upward, spawns = [], []
    parts = {_part(package, p) for p in package.rglob("*.py")}
    for path in sorted(package.rglob("*.py")):
        here = _part(package, path)
        where = path.relative_to(package).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for dotted in _imported(package, path, node, name):
                spawning = any(dotted == m or dotted.startswith(m + ".") for m in SPAWN_MODULES)
                if spawning and not where.startswith("run/"):
                    spawns.append(f"{where}:{node.lineno} imports {dotted}")
                if not dotted.startswith(name + "."):
                    continue
                target = dotted[len(name) + 1 :].split(".")[0]
                if target not in parts:
                    continue
                if target == here:
                    continue
                edges.setdefault(here, set()).add(target)
                up = f"{where}:{node.lineno} {here} -> {target}"
                if (
                    here in layers
                    and target in layers
                    and layers.index(target) > layers.index(here)
                    and up not in upward
                ):
                    upward.append(up)
            if (
                isinstance(node, ast.Attribute)
                and node.attr in SPAWN_CALLS
                and isinstance(node.value, ast.Name)
                and node.value.id == "os"
                and not where.startswith("run/")
            ):
                spawns.append(f"{where}:{node.lineno} calls os.{node.attr}")
    return edges, upward, spawns


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The groups of parts that import each other, directly or round a loop (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def lazy_imports(package: Path, name: str) -> list[str]:
    """ "file:line" for each import of the package `name` by one of its own modules that loads
    late: inside a function, under `if TYPE_CHECKING:`, or through `importlib.import_module`
    (any module name). Such an import is how a cycle hides from `scan`."""
    found = []
    for path in sorted(package.rglob("*.py")):
        where = path.relative_to(package).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        late = [
            node
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            or (isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test))
        ]
        for block in late:
            for node in ast.walk(block):
                if any(
                    d == name or d.startswith(name + ".")
                    for d in _imported(package, path, node, name)
                ):
                    found.append(f"{where}:{node.lineno}")
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "import_module"
                and isinstance(node.value, ast.Name)
                and node.value.id == "importlib"
            ):
                found.append(f"{where}:{node.lineno}")
    return sorted(set(found), key=lambda s: (s.split(":")[0], int(s.split(":")[1])))


def module_name(package: Path, path: Path) -> str:
    parts = path.relative_to(package).with_suffix("").parts
    return ".".join([package.name, *(parts[:-1] if parts[-1] == "__init__" else parts)])


def module_edges(package: Path) -> dict[str, set[str]]:
    """Module-to-module imports, inside functions too; `from p import m` is an import of the
    module `p.m` where there is one. An import of a package a module lies in is no edge."""
    modules = {module_name(package, p): p for p in package.rglob("*.py")}
    edges: dict[str, set[str]] = {}
    for me, path in sorted(modules.items()):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for dotted in _imported(package, path, node):
                target = dotted
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != me and not me.startswith(target + "."):
                    edges.setdefault(me, set()).add(target)
    return edges


def _front_names(front: Path) -> set[str]:
    for node in ast.parse(front.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
    return set()


def past_fronts(package: Path) -> list[str]:
    """ "file:line name" for each import from another part that reaches a module of a
    `FRONTED` part past its front, or names what its front does not export."""
    found: list[tuple[str, int, str]] = []
    for path in sorted(package.rglob("*.py")):
        here = _part(package, path)
        where = path.relative_to(package).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            dotted = _imported(package, path, node)
            module = dotted[0] if isinstance(node, ast.ImportFrom) else None
            for name in [module] if module else dotted:
                pieces = name.split(".")
                if pieces[0] != package.name or len(pieces) < 2 or pieces[1] not in FRONTED:
                    continue
                if pieces[1] == here:
                    continue
                folder = package.joinpath(*pieces[1:])
                if not (folder / "__init__.py").exists():
                    found.append((where, node.lineno, name))
                elif module:
                    exported = _front_names(folder / "__init__.py")
                    for alias in node.names:
                        if alias.name not in exported:
                            found.append((where, node.lineno, f"{name}.{alias.name}"))
    return [f"{where}:{line} {name}" for where, line, name in sorted(found)]


def long_modules(package: Path) -> list[str]:
    return sorted(
        p.relative_to(package).as_posix()
        for p in package.rglob("*.py")
        if len(p.read_text(encoding="utf-8").splitlines()) > MAX_LINES
    )


def root_modules(package: Path) -> list[str]:
    return sorted(p.stem for p in package.glob("*.py") if p.stem not in ("__init__", "__main__"))


def test_lessonkit_keeps_its_layers():
    edges, upward, spawns = scan(PACKAGE)
    unknown = sorted({p for p in edges} | {t for ts in edges.values() for t in ts})
    assert set(unknown) <= set(LAYERS), f"not in LAYERS: {set(unknown) - set(LAYERS)}"
    assert cycles(edges) == []
    assert upward == []
    assert spawns == []
    assert len(root_modules(PACKAGE)) <= ROOT_MODULES_MAX, root_modules(PACKAGE)


def test_grade_keeps_its_layers():
    grade = PACKAGE / "grade"
    edges, upward, _ = scan(grade, GRADE_LAYERS, "lessonkit.grade")
    unknown = sorted({p for p in edges} | {t for ts in edges.values() for t in ts})
    assert set(unknown) <= set(GRADE_LAYERS), (
        f"not in GRADE_LAYERS: {set(unknown) - set(GRADE_LAYERS)}"
    )
    assert cycles(edges) == []
    assert upward == []
    assert lazy_imports(grade, "lessonkit.grade") == []


def test_no_cycle_between_modules():
    found = cycles(module_edges(PACKAGE))
    assert found == []


def test_other_packages_import_grade_through_its_fronts():
    assert past_fronts(PACKAGE) == []


def test_no_module_is_over_max_lines():
    assert long_modules(PACKAGE) == []


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    """A small package with one of each fault: a cycle, an upward import, a spawn site."""
    package = tmp_path / "lessonkit"
    for folder in ("lesson", "grade", "run"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "lesson" / "model.py").write_text("from lessonkit.grade import checks\n")
    (package / "grade" / "checks.py").write_text(
        "def f():\n    from ..lesson import model\n    import subprocess\n"
    )
    (package / "run" / "process.py").write_text("import os\nos.fork\nimport subprocess\n")
    for name in ("a", "b", "c", "d", "e", "f", "g"):
        (package / f"{name}.py").write_text("")
    return package


def test_each_rule_fails_on_a_package_that_breaks_it(broken: Path):
    edges, upward, spawns = scan(broken)
    assert cycles(edges) == [["grade", "lesson"]]
    assert upward == ["lesson/model.py:1 lesson -> grade"]
    assert spawns == ["grade/checks.py:3 imports subprocess"]  # run/ may start processes
    assert len(root_modules(broken)) == 7 > ROOT_MODULES_MAX


def test_a_back_edge_or_a_lazy_import_inside_grade_is_found(tmp_path: Path):
    """grade/'s own order, on a copy of grade/ with one import planted against it: the
    channel importing judging, once at the top (a back-edge) and once, as a cycle would be
    dodged, inside a function and through importlib."""
    grade = tmp_path / "lessonkit" / "grade"
    shutil.copytree(PACKAGE / "grade", grade, ignore=shutil.ignore_patterns("__pycache__"))
    name = "lessonkit.grade"
    assert scan(grade, GRADE_LAYERS, name)[1] == [] and lazy_imports(grade, name) == []
    (grade / "channel" / "planted.py").write_text(
        "from lessonkit.grade.judging.results import PASSED\n"
        "def late():\n    from ..judging import results\n"
        "    return importlib.import_module('lessonkit.grade.judging')\n"
    )
    edges, upward, _ = scan(grade, GRADE_LAYERS, name)
    assert upward == [
        "channel/planted.py:1 channel -> judging",
        "channel/planted.py:3 channel -> judging",
    ]
    assert cycles(edges) == [["channel", "judging", "preparation"]]
    assert lazy_imports(grade, name) == ["channel/planted.py:3", "channel/planted.py:4"]


def test_a_fork_outside_run_is_a_spawn_site(broken: Path):
    (broken / "grade" / "fork.py").write_text("import os\n\ndef go():\n    return os.fork()\n")
    assert "grade/fork.py:4 calls os.fork" in scan(broken)[2]


def test_a_cycle_through_an_import_inside_a_function_is_found(tmp_path: Path):
    package = tmp_path / "lessonkit"
    (package / "grade").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "grade" / "__init__.py").write_text("")
    (package / "grade" / "batch.py").write_text("from lessonkit.grade import remote\n")
    (package / "grade" / "remote.py").write_text("def f():\n    from . import batch\n")
    (package / "grade" / "lone.py").write_text("from lessonkit.grade import batch\n")
    assert cycles(module_edges(package)) == [["lessonkit.grade.batch", "lessonkit.grade.remote"]]


def test_an_import_past_a_front_or_of_a_name_it_does_not_export_is_found(tmp_path: Path):
    package = tmp_path / "lessonkit"
    for folder in ("grade", "grade/judging", "course"):
        (package / folder).mkdir(parents=True)
    (package / "grade" / "__init__.py").write_text("")
    (package / "grade" / "judging" / "__init__.py").write_text(
        "from lessonkit.grade.judging.checks import good\n__all__ = ['good']\n"
    )
    (package / "grade" / "judging" / "checks.py").write_text("good = bad = 1\n")
    (package / "grade" / "inside.py").write_text("from lessonkit.grade.judging.checks import bad\n")
    (package / "course" / "ok.py").write_text("from lessonkit.grade.judging import good\n")
    (package / "course" / "past.py").write_text(
        "def f():\n    from lessonkit.grade.judging.checks import good\n"
        "import lessonkit.grade.judging.checks\n"
        "from lessonkit.grade.judging import bad\n"
    )
    assert past_fronts(package) == [
        "course/past.py:2 lessonkit.grade.judging.checks",
        "course/past.py:3 lessonkit.grade.judging.checks",
        "course/past.py:4 lessonkit.grade.judging.bad",
    ]


def test_a_module_over_max_lines_is_found(tmp_path: Path):
    (tmp_path / "lessonkit").mkdir()
    (tmp_path / "lessonkit" / "short.py").write_text("x = 1\n" * MAX_LINES)
    (tmp_path / "lessonkit" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    assert long_modules(tmp_path / "lessonkit") == ["long.py"]
