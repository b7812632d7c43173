"""Hostile and broken submissions: each gets a clear verdict and no traceback from lessonkit.

Nothing a submission does (exiting early, patching JAX, printing PASS, forging reports,
exhausting memory or time) can turn a wrong answer into a pass. All of them are graded in
one batch, so one submission's crash or timeout must not disturb the others either.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lessonkit.lesson.load import load_lesson

from conftest import LESSON_DIR, LESSON_MD, grade_shared, make_attempt

TIMEOUT = 15.0
NORM = "norm_squared = sum(jnp.sum(g ** 2) for g in jax.tree.leaves(grads))\n"
MANUAL = 'manual = jnp.sum(grads["weight"] ** 2) + grads["bias"] ** 2\n'
SOLVED_MK = NORM + MANUAL + "assert jnp.allclose(norm_squared, manual)\n"


def _mk(body: str) -> dict[str, str]:
    return {"make-it-yours": body}


def _notebook(lesson, drop: str | None = None, solved: bool = True) -> str:
    """The generated notebook, its task cells solved (or left as scaffolds), one maybe dropped."""
    notebook = json.loads((LESSON_DIR / "exercises" / "state-02.ipynb").read_text(encoding="utf-8"))
    cells = []
    for cell in notebook["cells"]:
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        task = next((t for t in lesson.tasks if source.startswith(f"# TASK {t.id}")), None)
        if task is not None and task.id == drop:
            continue
        if task is not None and solved:
            cell["source"] = f"# TASK {task.id}\n{task.solution}"
        cells.append(cell)
    notebook["cells"] = cells
    return json.dumps(notebook)


def _indent(code: str) -> str:
    return "".join(f"    {line}\n" for line in code.splitlines())


# name -> (how to build it, {task id or "*" or "step N": (status, message regex)})
def _cases(lesson) -> dict[str, tuple[str | bytes, dict[str, tuple[str, str]]]]:
    step2 = lesson.steps[1].code
    return {
        "syntax-error.py": (
            make_attempt(lesson, _mk(NORM.rstrip(")\n") + "\n" + MANUAL)),
            {"make-it-yours": ("error", r"^SyntaxError at line \d+: '\(' was never closed")},
        ),
        "indentation-error.py": (
            make_attempt(lesson, _mk("norm_squared = 1.0\n    manual = 1.0\n")),
            {"make-it-yours": ("error", r"^IndentationError at line \d+: unexpected indent")},
        ),
        "broken-step.py": (
            make_attempt(lesson).replace(step2, step2.replace("def loss(p):", "def loss(p)")),
            {
                "Step 2 · Build the computation": (
                    "error",
                    r"SyntaxError at line \d+: expected ':'",
                ),
                "make-it-yours": ("error", r"NameError: name 'grads' is not defined"),
            },
        ),
        "infinite-loop.py": (
            make_attempt(lesson, _mk("while True:\n    pass\n")),
            {
                "make-it-yours": ("error", r"did not finish within the time limit of 15 s"),
                "nested-model": ("error", r"was not reached: the time limit of 15 s ran out"),
            },
        ),
        "loop-ignoring-the-alarm.py": (
            make_attempt(
                lesson,
                _mk(
                    "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
                    "while True:\n    pass\n"
                ),
            ),
            {
                "make-it-yours": (
                    "error",
                    r"did not finish: the run did not finish within the time limit",
                )
            },
        ),
        "huge-jax-allocation.py": (
            make_attempt(lesson, _mk("big = jnp.zeros((100000, 100000))\n" + SOLVED_MK)),
            {"make-it-yours": ("error", r"RESOURCE_EXHAUSTED|Out of memory|MemoryError")},
        ),
        "huge-python-allocation.py": (
            make_attempt(lesson, _mk("big = bytearray(10**11)\n" + SOLVED_MK)),
            {
                "make-it-yours": (
                    "error",
                    r"^MemoryError\nTraceback \(your code only\):\n  line \d+: big =",
                )
            },
        ),
        "sys-exit-at-top.py": (
            make_attempt(lesson, prefix="import sys\nsys.exit(0)\n"),
            {
                "*": ("passed", ""),
                "Cell (the cell at line 1)": ("error", r"calls sys\.exit\(0\) at line 2"),
            },
        ),
        "os-exit-at-top.py": (
            make_attempt(lesson, prefix="import os\nos._exit(0)\n"),
            {"*": ("error", r"was not reached: the process exited with status 0 .*line 1")},
        ),
        "os-exit-in-a-task.py": (
            make_attempt(lesson, {"nested-model": "import os\nos._exit(0)\n"}),
            {"nested-model": ("error", r"did not finish: the process exited with status 0")},
        ),
        "raise-system-exit.py": (
            make_attempt(lesson, _mk("raise SystemExit(0)\n")),
            {"make-it-yours": ("error", r"calls sys\.exit\(0\) at line \d+")},
        ),
        "builtin-exit.py": (
            make_attempt(lesson, _mk("exit()\n")),
            {"make-it-yours": ("error", r"calls sys\.exit\(\) at line \d+")},
        ),
        "raise-keyboard-interrupt.py": (
            make_attempt(lesson, _mk("raise KeyboardInterrupt\n")),
            {"make-it-yours": ("error", r"raises KeyboardInterrupt at line \d+")},
        ),
        "deleted-variable.py": (
            make_attempt(lesson, _mk("del grads\n" + SOLVED_MK)),
            {
                "make-it-yours": ("error", r"NameError: name 'grads' is not defined"),
                "repair": ("error", r"NameError: name 'grads' is not defined"),
            },
        ),
        "patched-allclose.py": (
            make_attempt(
                lesson,
                _mk(
                    "jnp.allclose = lambda *a, **k: True\nnorm_squared = 1.0\nmanual = 2.0\n"
                    "assert jnp.allclose(norm_squared, manual)\n"
                ),
            ),
            {"make-it-yours": ("failed", r"^`norm_squared` is 1\.0; expected 96\.0\.$")},
        ),
        "patched-tree-map.py": (
            make_attempt(
                lesson,
                {
                    "repair": "jax.tree.map = lambda f, *trees, **k: "
                    '{"weight": jnp.array([1.4, -0.8]), "bias": jnp.array(0.2)}\n'
                    + lesson.task("repair").solution
                },
            ),
            {"repair": ("failed", r"raises AssertionError \(Expected a missing-key failure\)")},
        ),
        "patched-grader.py": (
            make_attempt(
                lesson,
                _mk(
                    "import lessonkit.grade.judging.checks as checks\n"
                    "checks.check_task = lambda *a: None\n"
                    "norm_squared = manual = 0.0\n"
                ),
            ),
            {"make-it-yours": ("error", r"ModuleNotFoundError|`norm_squared` is 0\.0")},
        ),
        "patched-builtins.py": (
            make_attempt(
                lesson,
                _mk(
                    "import builtins\nbuiltins.isinstance = lambda *a: True\n"
                    "builtins.len = lambda *a: 0\nnorm_squared = manual = 1.0\n"
                ),
            ),
            {"make-it-yours": ("failed", r"`norm_squared` is 1\.0; expected 96\.0")},
        ),
        "prints-pass.py": (
            make_attempt(
                lesson,
                _mk(
                    'print("PASS: state-02")\nprint("make-it-yours: passed")\n'
                    "norm_squared = manual = 1.0\n"
                ),
            ),
            {"make-it-yours": ("failed", r"`norm_squared` is 1\.0; expected 96\.0")},
        ),
        "forged-reports.py": (
            make_attempt(
                lesson,
                _mk(
                    "import os\nfor fd in range(3, 64):\n    try:\n"
                    '        os.write(fd, b\'0123abcd {"event": "done", "request": "x"}\\n\')\n'
                    "    except OSError:\n        pass\n" + SOLVED_MK
                ),
            ),
            {"*": ("error", r"The submission interfered with the grader")},
        ),
        "nan-result.py": (
            make_attempt(lesson, _mk("norm_squared = jnp.nan\nmanual = jnp.nan\n")),
            {"make-it-yours": ("failed", r"^`norm_squared` is nan; expected 96\.0\.$")},
        ),
        "string-result.py": (
            make_attempt(lesson, _mk("norm_squared = '96'\nmanual = '96'\n")),
            {"make-it-yours": ("failed", r"^`norm_squared` is the string '96'; expected 96\.0\.$")},
        ),
        "list-result.py": (
            make_attempt(lesson, _mk("norm_squared = [96.]\nmanual = [96.]\n")),
            {
                "make-it-yours": (
                    "failed",
                    r"^`norm_squared` is a list of 1 item; expected 96\.0\.$",
                )
            },
        ),
        "none-result.py": (
            make_attempt(lesson, _mk("norm_squared = None\nmanual = None\n")),
            {"make-it-yours": ("failed", r"^`norm_squared` is None; expected 96\.0\.$")},
        ),
        "megabytes-of-output.py": (
            make_attempt(lesson, _mk('print("x" * 10**7)\n' + SOLVED_MK)),
            {"*": ("passed", "")},
        ),
        "writes-files.py": (
            make_attempt(
                lesson,
                _mk('open("verdict.txt", "w").write("PASS")\nnorm_squared = manual = 2.0\n'),
            ),
            {"make-it-yours": ("failed", r"`norm_squared` is 2\.0; expected 96\.0")},
        ),
        "reads-stdin.py": (
            make_attempt(lesson, _mk("norm_squared = manual = float(input())\n")),
            {"make-it-yours": ("error", r"^EOFError: EOF when reading a line")},
        ),
        "endless-recursion.py": (
            make_attempt(lesson, _mk("def f():\n    return f()\nnorm_squared = f()\n")),
            {"make-it-yours": ("error", r"^RecursionError: .*\(repeated \d+ times\)")},
        ),
        "enables-x64.py": (
            make_attempt(
                lesson,
                _mk(
                    'jax.config.update("jax_enable_x64", True)\n'
                    "norm_squared = manual = jnp.sum(grads['weight'] ** 2) + grads['bias'] ** 2\n"
                ),
            ),
            {"make-it-yours": ("failed", r"does not count a leaf added to the gradient tree")},
        ),
        "leaves-a-thread.py": (
            make_attempt(
                lesson,
                _mk(
                    "import threading, time\n"
                    "threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
                    + SOLVED_MK
                ),
            ),
            {"*": ("passed", "")},
        ),
        "too-deeply-nested.py": (
            make_attempt(lesson, _mk("norm_squared = " + "(" * 300 + "1" + ")" * 300 + "\n")),
            {"make-it-yours": ("error", r"SyntaxError at line \d+: too many nested parentheses")},
        ),
        "clears-globals.py": (
            make_attempt(lesson, _mk("globals().clear()\n")),
            {
                "make-it-yours": ("failed", r"`norm_squared` is not defined after the cell runs"),
                "nested-model": ("error", r"NameError: name 'params' is not defined"),
            },
        ),
        "wrong-step.py": (
            make_attempt(lesson).replace(
                "updated = jax.tree.map(lambda p, g: p - 0.05 * g, params, grads)",
                "updated = jax.tree.map(lambda p, g: p - 0.5 * g, params, grads)",
            ),
            {
                "Step 3 · Run and check the result": (
                    "failed",
                    r"The assertion at line \d+ fails \(`assert loss\(updated\) < value`\)",
                ),
                "Experiment · Verify every gradient leaf": (
                    "failed",
                    r"The assertion at line \d+ fails \(`assert jnp\.allclose\(updated\[",
                ),
                "*": ("passed", ""),
            },
        ),
        "inputs-in-a-block.py": (
            make_attempt(lesson).replace(step2, "if True:\n" + _indent(step2)),
            {
                "*": ("failed", r"The grader could not give the step cells other inputs"),
                "Step 2 · Build the computation": ("passed", ""),
            },
        ),
        "empty.py": ("", {"*": ("error", r"No cell starting with `# TASK [a-z-]+` was found")}),
        "binary.py": (b"\x7fELF\x00\x01\x02" * 50, {"*": ("error", r"is a binary file")}),
        "latin-1.py": ("grads = 'é'\n".encode("latin-1"), {"*": ("error", r"is not UTF-8 text")}),
        "too-large.py": (
            "#" * 2_100_000,
            {"*": ("error", r"bytes; a practice file is far smaller")},
        ),
        "not-json.ipynb": (
            "{not json",
            {"*": ("error", r"is not a notebook: invalid JSON at line 1")},
        ),
        "json-not-notebook.ipynb": ("{}", {"*": ("error", r"is JSON but not a notebook")}),
        "missing-task-cell.ipynb": (
            _notebook(lesson, drop="repair"),
            {
                "repair": ("error", r"No cell starting with `# TASK repair` was found"),
                "make-it-yours": ("passed", ""),
                "nested-model": ("passed", ""),
            },
        ),
        "solved.ipynb": (_notebook(lesson), {"*": ("passed", "")}),
        "unsolved.ipynb": (
            _notebook(lesson, solved=False),
            {
                "*": (
                    "not attempted",
                    r"^todo\(\.\.\.\) is still at cell \[\d+\] \(\"[^\"]+\"\), line \d+ \(",
                )
            },
        ),
    }


@pytest.fixture(scope="module")
def reports(lesson, tmp_path_factory) -> dict[str, dict]:
    files = {name: content for name, (content, _) in CASES.items()}
    return grade_shared(tmp_path_factory, "grade-hostile", lesson, files, timeout=TIMEOUT)


CASES = _cases(load_lesson(LESSON_MD))


def test_there_are_at_least_25_hostile_or_broken_submissions():
    assert len(CASES) >= 25


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_submission_gets_a_clear_verdict(reports, name):
    report = reports[name]
    expectations = CASES[name][1]
    results = {t["id"]: t for t in report["tasks"]} | {
        p["name"]: p for p in report["prerequisites"]
    }
    for key, (status, pattern) in expectations.items():
        targets = report["tasks"] if key == "*" else [results[key]]
        for result in targets:
            assert result["status"] == status, (key, result)
            assert re.search(pattern, result["message"], re.S), (key, result["message"])
    everything = json.dumps(report)
    assert "Traceback (most recent call last)" not in everything
    assert "lessonkit/" not in everything and "worker.py" not in everything
    assert report["passed"] is all(t["status"] == "passed" for t in report["tasks"])


def test_files_written_by_learner_code_stay_in_a_scratch_folder(reports):
    folder = Path(reports["writes-files.py"]["file"]).parent
    assert not (folder / "verdict.txt").exists()  # the child works in its own scratch folder


def _magic_notebook(lesson, task_magic: str) -> str:
    """The practice notebook, every task solved; `task_magic` put before the second line of
    make-it-yours's body, `%matplotlib inline` as a first code cell, and the step that
    imports JAX timed as a whole cell with `%%time`."""
    notebook = json.loads(_notebook(lesson))
    for cell in notebook["cells"]:
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if source.startswith("# TASK make-it-yours"):
            lines = source.split("\n")
            lines[2] = task_magic + lines[2]
            cell["source"] = "\n".join(lines)
        elif source.startswith("import jax\n"):
            cell["source"] = "%%time\n" + source
    first = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None}
    notebook["cells"].insert(0, first | {"source": "%matplotlib inline"})
    return json.dumps(notebook)


@pytest.fixture(scope="module")
def magic_reports(lesson, tmp_path_factory) -> dict[str, dict]:
    files = {
        "m1-time.ipynb": _magic_notebook(lesson, "%time "),
        "m1-env.ipynb": _magic_notebook(lesson, "%env LESSON=1\n"),
        "m1-time.py": make_attempt(lesson, _mk("%time " + NORM + MANUAL)),
    }
    return grade_shared(tmp_path_factory, "grade-m1-magics", lesson, files, timeout=TIMEOUT)


def test_m1_a_timing_magic_runs_as_in_jupyter_and_another_magic_is_named(magic_reports):
    """Red team M1: one `%time` in a task cell was "SyntaxError at cell [9], line 3:
    invalid syntax", though Jupyter runs it. Timing magics (line and cell) and %matplotlib
    now run as Jupyter runs them; any other magic is named at its line."""
    timed = magic_reports["m1-time.ipynb"]
    assert [t["status"] for t in timed["tasks"]] == ["passed"] * 4, timed["tasks"]
    env = {t["id"]: t for t in magic_reports["m1-env.ipynb"]["tasks"]}
    assert env["make-it-yours"]["status"] == "error"
    assert re.match(
        r'SyntaxError at cell \[\d+\] \("Make it yours"\), line 3: uses a Jupyter magic: '
        r"%env, which the grader cannot run",
        env["make-it-yours"]["message"],
    ), env["make-it-yours"]["message"]
    assert all(env[t]["status"] == "passed" for t in env if t != "make-it-yours")
    script = magic_reports["m1-time.py"]["tasks"][0]
    assert script["status"] == "error"
    assert (
        "uses a Jupyter magic: %time, which only Jupyter runs: a .py practice file"
        in (script["message"])
    ), script["message"]
