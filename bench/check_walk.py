"""The way a `lessonkit check` of one file walks through the toolkit, counted.

Runs `check state-02 solved.py` in this process under a profiler hook and follows every call
from one lessonkit module into a function of another (the children run in processes of their
own and are not followed). Printed:

- stops:      distinct calls that cross from one module into another (caller function →
              callee function); a loop over tasks adds no stop, a new function does
- modules:    distinct lessonkit modules the walk enters
- re-entries: stops whose callee module is already on the call stack below the caller, a
              walk back into a module it had left, split into callbacks (the caller's module
              does not import the callee's: it calls a value handed to it, as a rule calls
              the facts it is given) and upward calls (it imports the module it returns to)
- the same three counted for stops into grade/ only, and the grade/ modules with most stops
- the modules entered most often, and the grade/ modules in the order first entered
- the line: the calls the command and the grader make into other modules, in order

Run from the repository root:  python bench/check_walk.py [--list]
"""

from __future__ import annotations

import argparse
import ast
import collections
import functools
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from check_latency import solved_files

import lessonkit
from lessonkit.cli import main as lessonkit_main

PACKAGE = Path(lessonkit.__file__).resolve().parent


@dataclass(frozen=True)
class Stop:
    caller: str
    callee: str
    re_entry: bool


def _module(frame: FrameType) -> str | None:
    filename = frame.f_code.co_filename
    if not filename.startswith(str(PACKAGE)):
        return None
    relative = Path(filename).relative_to(PACKAGE).with_suffix("")
    return ".".join(relative.parts)


@functools.cache
def _imports(module: str) -> frozenset[str]:
    """The lessonkit modules `module` imports, at top level or inside functions."""
    path = PACKAGE.joinpath(*module.split("."))
    source = (path / "__init__.py") if path.is_dir() else path.with_suffix(".py")
    found = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("lessonkit"):
            base = node.module.removeprefix("lessonkit").lstrip(".")
            found.add(base)
            found.update(f"{base}.{alias.name}".lstrip(".") for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name.removeprefix("lessonkit.") for a in node.names)
    return frozenset(found)


def _upward(stop: Stop) -> bool:
    """A re-entry made by calling a module the caller imports (not a value handed to it)."""
    return stop.re_entry and _of(stop.callee) in _imports(_of(stop.caller))


LINE_CALLERS = ("commands.check", "grade.grader")


class Walk:
    """Follows lessonkit frames only; everything else is transparent."""

    def __init__(self) -> None:
        self.stops: dict[tuple[str, str], Stop] = {}
        self.entries: collections.Counter[str] = collections.Counter()
        self.first_entered: list[str] = []
        self.line: list[str] = []  # calls out of LINE_CALLERS, in the order first made
        self._stacks: dict[int, list[tuple[str, str]]] = collections.defaultdict(list)

    def __call__(self, frame: FrameType, event: str, arg: object) -> None:
        if event not in ("call", "return"):
            return
        module = _module(frame)
        if module is None or frame.f_code.co_name == "<module>":
            return
        stack = self._stacks[threading.get_ident()]
        function = f"{module}:{frame.f_code.co_qualname}"
        if event == "return":
            if stack and stack[-1][1] == function:
                stack.pop()
            return
        if stack and stack[-1][0] != module:
            caller = stack[-1][1]
            if (caller, function) not in self.stops:
                below = {entry[0] for entry in stack[:-1]}
                self.stops[(caller, function)] = Stop(caller, function, module in below)
                if stack[-1][0] in LINE_CALLERS and module not in LINE_CALLERS:
                    self.line.append(f"{caller.split(':')[1]} -> {function}")
            self.entries[module] += 1
        if module not in self.first_entered:
            self.first_entered.append(module)
        stack.append((module, function))


def _of(function: str) -> str:
    return function.split(":")[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print every stop")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        script, _ = solved_files(Path(scratch))
        walk = Walk()
        threading.setprofile(walk)
        sys.setprofile(walk)
        try:
            code = lessonkit_main(["check", "state-02", str(script)])
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]
    stops = list(walk.stops.values())
    modules = {_of(stop.callee) for stop in stops}
    if options.list:
        for stop in stops:
            mark = "  ↩" if stop.re_entry else ""
            print(f"{stop.caller}  →  {stop.callee}{mark}")
    print(f"check exit code: {code}")
    print(f"stops: {len(stops)}")
    print(f"modules: {len(modules)}")
    print(f"re-entries: {sum(stop.re_entry for stop in stops)}")
    print(f"  of them upward calls by import: {sum(_upward(stop) for stop in stops)}")
    inside = [stop for stop in stops if stop.callee.startswith("grade.")]
    print(f"stops into grade/: {len(inside)} across {len({_of(s.callee) for s in inside})} modules")
    print(f"re-entries into grade/: {sum(stop.re_entry for stop in inside)}")
    print(f"  of them upward calls by import: {sum(_upward(stop) for stop in inside)}")
    print("grade/ modules with the most stops into them:")
    into = collections.Counter(_of(stop.callee) for stop in inside)
    for module, count in into.most_common(5):
        print(f"  {count:4d}  {module}")
    print("calls into a module most often (loops included):")
    for module, count in walk.entries.most_common(5):
        print(f"  {count:6d}  {module}")
    grade = [module for module in walk.first_entered if module.startswith("grade")]
    print("grade/ modules, first entered in this order:")
    print("  " + "\n  ".join(grade))
    print(f"the line ({len(walk.line)} calls out of {' and '.join(LINE_CALLERS)}):")
    print("  " + "\n  ".join(walk.line))


if __name__ == "__main__":
    main()
