"""`run/import_binds.py`: an import folder is bound whole only where it holds no one's work;
else only its packages and modules that hold none; never where it is such work."""

from __future__ import annotations

import importlib.machinery
import itertools
import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from lessonkit.run.import_binds import Budget, Guard, import_binds, importable_entries, work_in

# An extension module as this Python names one (`.cpython-313-...so` on 3.13): a suffix of
# another Python is no module here, and is not bound.
SPEEDUPS = f"src/_speedups{importlib.machinery.EXTENSION_SUFFIXES[0]}"

_fresh = itertools.count()  # the binds are kept per process: every case gets new folders


def _tree(root: Path, files: dict[str, str]) -> Path:
    """`root` holding `files` (relative path: text; a path ending in / is a folder)."""
    root = root / f"case-{next(_fresh)}"
    for name, text in files.items():
        path = root / name
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


COURSE = {"phases/03-state/lesson.md": "solutions", "pyproject.toml": ""}


def _course_at(prefix: str) -> dict[str, str]:
    return {f"{prefix}/{name}": text for name, text in COURSE.items()}


def _binds(root: Path, on_path: list[Path], guarded=(), working: Path | None = None, **budget):
    guard = Guard.around([root / g for g in guarded], working or root.parent)
    found = import_binds([str(f) for f in on_path], guard, Budget(**budget))
    return sorted(str(p.relative_to(root)) for p in found)


def test_a_site_packages_is_bound_whole_with_what_is_no_package(tmp_path):
    root = _tree(
        tmp_path,
        {
            "site/numpy/__init__.py": "",
            "site/numpy.libs/libopenblas.so": "",
            "site/numpy-2.0.dist-info/METADATA": "",
            "site/google/protobuf/__init__.py": "",  # a namespace package
        },
    )
    assert _binds(root, [root / "site"]) == ["site"]


def test_a_folder_above_the_course_and_the_submissions_binds_only_its_packages(tmp_path):
    """`PYTHONPATH=~/src`: the course and the week's folder stay out, the packages beside
    them are bound, and of the loose modules only one an installed distribution records
    there; a folder named like a module without `__init__` is not."""
    root = _tree(
        tmp_path,
        {
            **_course_at("src/course"),
            "src/week3/bob.py": "# TASK repair",
            "src/week3/ana.py": "",
            "src/helpers/__init__.py": "",
            "src/tool.py": "",  # loose: a classmate's file looks the same
            SPEEDUPS: "",
            "src/six.py": "",
            "src/six-1.16.dist-info/RECORD": "six.py,sha256=x,1\nsix-1.16.dist-info/RECORD,,\n",
            "src/notes/todo.txt": "",
            "src/not-a-module.py": "",
            "src/README.md": "",
        },
    )
    expected = sorted(["src/helpers", "src/six.py"])
    assert _binds(root, [root / "src"], guarded=["src/week3/ana.py"]) == expected
    # the course alone makes the folder hold work, found at any depth
    assert _binds(root, [root / "src"]) == expected


def test_a_package_that_holds_a_course_or_the_submissions_is_left_out(tmp_path):
    root = _tree(
        tmp_path,
        {
            **_course_at("src/course"),
            **_course_at("src/mine/deep/er/copy"),
            "src/mine/__init__.py": "",
            "src/week/__init__.py": "",
            "src/week/bob.py": "",
            "src/clean/__init__.py": "",
        },
    )
    assert _binds(root, [root / "src"], guarded=["src/week/bob.py"]) == ["src/clean"]


def test_a_course_a_guarded_folder_or_the_working_folder_is_never_bound(tmp_path):
    root = _tree(tmp_path, {**_course_at("course"), "week/lib/__init__.py": "", "here/x.py": ""})
    assert _binds(root, [root / "course"]) == []
    assert _binds(root, [root / "week", root / "week/lib"], guarded=["week"]) == []
    assert _binds(root, [root / "here"], working=root / "here") == []


def test_a_file_graded_makes_its_folder_a_place_a_folder_inside_it_is_still_bound(tmp_path):
    """`check ~/week3/ana.py` with PYTHONPATH=~/week3 shows no classmate beside ana.py;
    PYTHONPATH=src run from the repository, or beside the file, still binds src."""
    root = _tree(tmp_path, {"week3/bob.py": "", "week3/ana.py": "", "week3/src/lib.py": ""})
    graded = ["week3/ana.py"]
    assert _binds(root, [root / "week3"], guarded=graded) == []
    assert _binds(root, [root / "week3/src"], guarded=graded) == ["week3/src"]
    assert _binds(root, [root / "week3/src"], working=root / "week3") == ["week3/src"]


def test_a_folder_too_large_to_search_binds_only_its_packages(tmp_path):
    files = {f"home/cache/{n}/": "" for n in range(30)}
    root = _tree(tmp_path, {**files, "home/pkg/__init__.py": "", "home/secret.txt": ""})
    assert _binds(root, [root / "home"], folders=10) == ["home/pkg"]
    assert _binds(root, [root / "home"], seconds=0.0) == []  # pkg too is unsearched
    assert work_in(root / "home", Guard(), Budget(folders=10)).kind == "unsearched"
    assert work_in(root / "home", Guard(), Budget()) is None


def test_the_graders_home_is_never_bound_whole_only_its_packages(tmp_path):
    """`PYTHONPATH=~` with nothing else of note in it still shows no key of `~/.ssh`."""
    root = _tree(tmp_path, {"home/.ssh/id_ed25519": "", "home/pkg/__init__.py": "", "x.py": ""})
    guard = Guard.around([], tmp_path, home=root / "home")
    assert import_binds([str(root / "home")], guard) == (root / "home/pkg",)
    assert import_binds([str(root)], guard) == ()  # a folder above it: x.py is loose
    assert import_binds([str(root / "home/pkg")], guard) == (root / "home/pkg",)


def test_a_linked_package_is_searched_where_it_leads(tmp_path):
    """A package that is a link to a folder holding a course is searched there."""
    root = _tree(tmp_path, {**_course_at("elsewhere/course"), "elsewhere/__init__.py": ""})
    (root / "src").mkdir()
    (root / "src" / "alias").symlink_to(root / "elsewhere")
    (root / "src" / "keep.py").write_text("", encoding="utf-8")
    (root / "week").mkdir()
    assert _binds(root, [root / "src"], guarded=["week"]) == ["src"]  # holds nothing
    assert importable_entries(root / "src") == [root / "src/alias", root / "src/keep.py"]
    assert work_in(root / "src/alias", Guard()).kind == "course"


def test_a_link_to_a_course_file_in_a_folder_too_large_to_search_is_not_bound(tmp_path):
    """The attack that passed before (issue 60): a `PYTHONPATH` folder too large to search,
    holding a link named as a module to the course's reference code, bound through the link
    (a blank file then passed a task from the lesson's own solution)."""
    root = _tree(
        tmp_path,
        {
            **_course_at("course"),
            "course/phases/03-state/code/main.py": "solutions",
            **{f"big/cache/{n}/": "" for n in range(30)},
            "big/pkg/__init__.py": "",
            "elsewhere/helper.py": "",
        },
    )
    (root / "big" / "main.py").symlink_to(root / "course/phases/03-state/code/main.py")
    (root / "big" / "solutions").symlink_to(root / "course/phases", target_is_directory=True)
    (root / "big" / "helper.py").symlink_to(root / "elsewhere/helper.py")
    assert _binds(root, [root / "big"], folders=10) == ["big/pkg"]


def test_a_link_to_a_submission_or_beside_the_graded_file_is_not_bound(tmp_path):
    """Bound entry by entry (too large to search), a link leading to the graded file, to
    a file beside it or to its folder is left out; the package beside them is bound. (Bound
    whole, a folder's links are bound as links: what they lead to is not in the sandbox.)"""
    root = _tree(tmp_path, {"week/ana.py": "", "week/bob.py": "", "src/pkg/__init__.py": ""})
    (root / "src" / "bob.py").symlink_to(root / "week/bob.py")
    (root / "src" / "ana.py").symlink_to(root / "week/ana.py")
    (root / "src" / "mine").symlink_to(root / "week", target_is_directory=True)
    (root / "src" / "mine" / "__init__.py").write_text("", encoding="utf-8")
    assert _binds(root, [root / "src"], guarded=["week/ana.py"], folders=1) == ["src/pkg"]


def test_a_classmates_loose_module_beside_work_is_not_bound_one_the_grader_imports_is(tmp_path):
    """`~/src/bob.py` beside the week's folder (issue 60); a module this process imported
    from that folder is one the grader runs on, and is bound."""
    import importlib
    import sys

    root = _tree(
        tmp_path,
        {"src/week/ana.py": "", "src/bob.py": "# TASK nested-model", "src/ours_mod.py": ""},
    )
    sys.path.insert(0, str(root / "src"))
    try:
        importlib.import_module("ours_mod")
        assert _binds(root, [root / "src"], guarded=["src/week/ana.py"]) == ["src/ours_mod.py"]
    finally:
        sys.path.remove(str(root / "src"))
        sys.modules.pop("ours_mod", None)


# ------------------------------------------------------------------ any layout of folders

NAMES = ("a", "b", "pkg", "week", "x.py", "y.txt")


@st.composite
def layouts(draw):
    """Folders up to three deep, each maybe a package or a course, files in some."""
    paths = draw(st.lists(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4), max_size=14))
    files: dict[str, str] = {}
    for parts in paths:
        name = "/".join(parts)
        if any(p.endswith((".py", ".txt")) for p in parts[:-1]):
            continue  # a file cannot hold another
        if parts[-1].endswith((".py", ".txt")):
            files[name] = ""
            continue
        files[name + "/"] = ""
        kind = draw(st.sampled_from(["plain", "package", "course"]))
        if kind == "package":
            files[f"{name}/__init__.py"] = ""
        elif kind == "course":
            files.update({f"{name}/phases/": "", f"{name}/pyproject.toml": ""})
    guarded = draw(st.lists(st.sampled_from(sorted(files) or ["a"]), max_size=2))
    return files, [g.rstrip("/") for g in guarded]


def _courses(folder: Path) -> list[Path]:
    """Every course in `folder`, by a full walk that follows no link."""
    found = []
    for here, dirs, files in os.walk(folder):
        if "phases" in dirs and "pyproject.toml" in files:
            found.append(Path(here))
    return found


@settings(max_examples=60, deadline=None)
@given(layouts())
def test_no_bound_path_is_or_holds_work_and_every_clean_package_is_bound(layout):
    files, guarded = layout
    with tempfile.TemporaryDirectory() as base:
        root = _tree(Path(base), {"top/": "", **{f"top/{n}": t for n, t in files.items()}})
        top = root / "top"
        work = [root / "top" / g for g in guarded]
        guard = Guard.around(work, root.parent)
        bound = import_binds([str(top)], guard)
        protected = [*guard.work, *guard.places]
        for path in bound:
            assert not _courses(path), path
            assert not any(path == g or g.is_relative_to(path) for g in protected), path
            assert not any(path.is_relative_to(g) for g in guard.work), path
        if bound != (top,) and not (
            _courses(top) == [top] or any(top == p or top.is_relative_to(p) for p in protected)
        ):
            for entry in importable_entries(top):
                holds = _courses(entry) or any(g.is_relative_to(entry) for g in protected)
                assert (entry in bound) is not bool(holds), entry
