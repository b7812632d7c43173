"""The way a `lessonkit check` of one file walks through the toolkit, counted.

Runs `check state-02 solved.py` in this process under a profiler hook and follows every call
from one lessonkit module into a function of another (the children run in processes of their
own and are not followed). Printed:

- stops:      distinct calls that cross from one module into another (caller function →
              callee function); a loop over tasks adds no stop, a new function does
- modules:    distinct lessonkit modules the walk enters
- re-entries: stops whose callee module is already on the call stack below the caller, a
              walk back into a module it had left (a callback, or a layer calling upward)
- the same three counted for stops into grade/ only, and the grade/ modules with most stops
- the modules entered most often, and the grade/ modules in the order first entered

Run from the repository root:  python bench/check_walk.py [--list]
"""

from __future__ import annotations

import argparse
import collections
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


class Walk:
    """Follows lessonkit frames only; everything else is transparent."""

    def __init__(self) -> None:
        self.stops: dict[tuple[str, str], Stop] = {}
        self.entries: collections.Counter[str] = collections.Counter()
        self.first_entered: list[str] = []
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
    inside = [stop for stop in stops if stop.callee.startswith("grade.")]
    print(f"stops into grade/: {len(inside)} across {len({_of(s.callee) for s in inside})} modules")
    print(f"re-entries into grade/: {sum(stop.re_entry for stop in inside)}")
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


if __name__ == "__main__":
    main()
