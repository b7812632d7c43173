"""Every wait, timeout and tolerance has its one named home: `defaults.py` (or a child's
`Limits`, `run/limits.py`). No other module writes one as a number.

A wait is found by where a number stands, read from the source (`ast`), not by a list of
names: given as a keyword such as `timeout=`, `wait_s=` or `rtol=`; given to `time.sleep`,
`.wait(`, `.join(`, `select`, `settimeout`, `setitimer` or `isclose`; assigned to a name
or given as a parameter's default where the name says wait, timeout, poll, settle, delay,
tolerance or seconds (`POLL_S`, `_BUSY_TIMEOUT_MS`, `rel_tol`); or added to a clock read
(`time.monotonic() + 30`). A name the module binds to a number counts as that number there
(`LIMIT = 420.0` ... `time.monotonic() + LIMIT`). Zero is no wait (a poll that does not
block, an alarm disarmed).
Each kind of place is also planted in a small made package, so the guard is seen to fail.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "lessonkit"
HOMES = frozenset({"defaults.py", "run/limits.py"})

_WAIT_WORDS = (
    "timeout|wait|sleep|poll|interval|delay|deadline|settle|grace|patience|seconds|secs"
    "|tol|rtol|atol|tolerance"
)
_WAIT_NAME = re.compile(rf"(?i)(?:^|_)(?:{_WAIT_WORDS})(?:_|$)|.(?:_s|_ms)$")
"""A name that holds a wait or a tolerance: a word of one (`poll`, `BUSY_TIMEOUT`, `rel_tol`)
or a unit of time at its end (`wait_s`, `POLL_S`, `CHECKPOINT_WAIT_MS`)."""

_WAIT_ARGUMENTS = {
    "sleep": slice(0, 1),
    "wait": slice(0, 1),
    "join": slice(0, 1),
    "settimeout": slice(0, 1),
    "alarm": slice(0, 1),
    "setitimer": slice(1, 3),
    "select": slice(3, 4),
    "wait_for": slice(1, 2),
    "Timer": slice(0, 1),
    "isclose": slice(2, None),
    "allclose": slice(2, None),
}
"""Calls whose positional arguments (these of them) are waits or tolerances."""

_CLOCKS = frozenset({"monotonic", "time", "perf_counter", "monotonic_ns", "time_ns"})


def _numbers(node: ast.AST, named: frozenset[str] = frozenset()) -> list[ast.Constant | ast.Name]:
    """The numeric literals an expression computes with (through arithmetic, not into a
    call or an index), other than zero (no wait), and the names in `named` it reads so."""
    if isinstance(node, ast.Constant):
        number = isinstance(node.value, int | float) and not isinstance(node.value, bool)
        return [node] if number and node.value != 0 else []
    if isinstance(node, ast.Name):
        return [node] if node.id in named else []
    if isinstance(node, ast.BinOp | ast.UnaryOp | ast.BoolOp | ast.IfExp):
        return [n for child in ast.iter_child_nodes(node) for n in _numbers(child, named)]
    return []


def _named_numbers(tree: ast.AST) -> frozenset[str]:
    """Names a module binds to a number, or to arithmetic on one
    (`LIMIT = 420.0`, then `limit = LIMIT if first else 120.0`)."""
    named: frozenset[str] = frozenset()
    while True:
        more = {
            target.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(target, ast.Name) and _numbers(node.value, named)
        }
        if more <= named:
            return named
        named |= more


def _called(node: ast.Call) -> str | None:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)


def _target_name(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)


def _reads_clock(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and _called(n) in _CLOCKS for n in ast.walk(node))


def _places(tree: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """(what stands there, the expression given) for every place a wait is given."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            called = _called(node)
            for keyword in node.keywords:
                if keyword.arg and _WAIT_NAME.search(keyword.arg):
                    yield f"{called}({keyword.arg}=...)", keyword.value
            for argument in node.args[_WAIT_ARGUMENTS.get(called or "", slice(0, 0))]:
                yield f"{called}(...)", argument
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and node.value:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                name = _target_name(target)
                if name and _WAIT_NAME.search(name):
                    yield name, node.value
        elif isinstance(node, ast.arguments):
            positional = [*node.posonlyargs, *node.args]
            given = positional[len(positional) - len(node.defaults) :]
            pairs = [*zip(given, node.defaults, strict=True)]
            pairs += zip(node.kwonlyargs, node.kw_defaults, strict=True)
            for argument, default in pairs:
                if default is not None and _WAIT_NAME.search(argument.arg):
                    yield f"parameter {argument.arg}", default
        elif isinstance(node, ast.BinOp | ast.Compare) and _reads_clock(node):
            sides = [node.left, node.right] if isinstance(node, ast.BinOp) else [node.left]
            sides += getattr(node, "comparators", [])
            for side in sides:
                if not _reads_clock(side):
                    yield "a clock read", side


def literal_waits(package: Path) -> list[str]:
    """`module:line: where = number` for each number given as a wait outside the homes."""
    found = []
    for path in sorted(package.rglob("*.py")):
        module = path.relative_to(package).as_posix()
        if module in HOMES:
            continue
        seen: dict[tuple[int, int], str] = {}  # a number found in two places is told once
        tree = ast.parse(path.read_text(encoding="utf-8"))
        named = _named_numbers(tree)
        for where, given in _places(tree):
            for number in _numbers(given, named):
                said = number.id if isinstance(number, ast.Name) else repr(number.value)
                at = (number.lineno, number.col_offset)
                seen.setdefault(at, f"{module}:{number.lineno}: {where} = {said}")
        found += seen.values()
    return found


def test_no_module_but_the_homes_writes_a_wait_as_a_number():
    assert literal_waits(PACKAGE) == []


PLANTED = {
    "keyword": ("subprocess.run(['true'], timeout=5)\n", "run(timeout=...) = 5"),
    "keyword tolerance": ("math.isclose(a, b, rel_tol=1e-9)\n", "isclose(rel_tol=...) = 1e-09"),
    "sleep": ("time.sleep(0.02)\n", "sleep(...) = 0.02"),
    "wait": ("child.wait(2)\n", "wait(...) = 2"),
    "join": ("thread.join(1.5)\n", "join(...) = 1.5"),
    "select": ("select.select([r], [], [], 3)\n", "select(...) = 3"),
    "settimeout": ("sock.settimeout(4.0)\n", "settimeout(...) = 4.0"),
    "module name": ("POLL_S = 0.1\n", "POLL_S = 0.1"),
    "name in ms": ("_BUSY_TIMEOUT_MS = 60_000\n", "_BUSY_TIMEOUT_MS = 60000"),
    "local name": ("def f():\n    settle_seconds = 0.03\n", "settle_seconds = 0.03"),
    "factor": ("rel_tol = 4 * float(eps)\n", "rel_tol = 4"),
    "parameter": ("def stop(wait_s=10): ...\n", "parameter wait_s = 10"),
    "keyword-only": ("def watch(*, poll: float = 0.5): ...\n", "parameter poll = 0.5"),
    "clock": ("ends = time.monotonic() + 30\n", "a clock read = 30"),
    "clock compared": ("if time.monotonic() - t > 7: ...\n", "a clock read = 7"),
    "named number": (
        "LIMIT = 420.0\nlimit = LIMIT if first else LIMIT / 2\nends = time.monotonic() + limit\n",
        "a clock read = limit",
    ),
}


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_a_number_planted_as_a_wait_is_found(tmp_path: Path, kind: str):
    code, said = PLANTED[kind]
    package = tmp_path / "lessonkit"
    (package / "run").mkdir(parents=True)
    (package / "defaults.py").write_text(code)  # the homes may
    (package / "run" / "limits.py").write_text(code)
    (package / "run" / "waits.py").write_text(code)
    assert literal_waits(package) == [f"run/waits.py:{code.count(chr(10))}: {said}"]


@pytest.mark.parametrize(
    "code",
    [
        "time.sleep(POLL_S)\nchild.wait(timeout=STOP_WAIT_S)\n",  # a named home
        "runner.setitimer(signal.ITIMER_REAL, 0)\nchild.wait(0)\n",  # zero: no wait
        "', '.join(names)\nparts[1:3]\nMAX_LINES = 600\n",  # no wait at all
        "started = time.monotonic()\nleft = deadline - time.monotonic()\n",
    ],
)
def test_a_named_wait_or_no_wait_is_not_found(tmp_path: Path, code: str):
    (tmp_path / "lessonkit").mkdir()
    (tmp_path / "lessonkit" / "module.py").write_text(code)
    assert literal_waits(tmp_path / "lessonkit") == []
