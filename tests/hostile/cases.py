"""The hostile suite's manifest: every attack, its class, how it is run, and the safe outcome.

An attack is either a file under tests/hostile/<class>/ or a builder function here (for
submissions that are not Python at all or need a set-up step: FIFOs, symlinks, huge JSON).

Attack files are patches of the practice file, so they stay short and readable: lines
`#@ TASK <id>` start the code that replaces that task's cell, `#@ PREFIX` code put before
the first cell. Tasks not named keep the lesson's reference solution.

The safe outcome is stated in terms of the CLI only, so the same manifest judges today's
grader and its replacement: exit status, `--json` statuses of the tasks the attack got
wrong, batch outputs and honest submissions; see tests/test_grade_hostile_suite.py.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from lessonkit.lesson.model import Lesson

HERE = Path(__file__).resolve().parent
Mode = Literal["single", "batch"]
Klass = Literal[
    "value-forgery",
    "channel-forgery",
    "reference-scraping",
    "cross-submission-poisoning",
    "process-escape",
    "filesystem-damage",
    "resource-exhaustion",
    "parser-and-encoding-crashes",
]
Need = Literal["pids-cgroup", "memory-cgroup", "not-root"]
ALL_TASKS = ("make-it-yours", "nested-model", "repair", "adam-by-hand")
_MARKER = re.compile(r"^#@ (TASK [a-z-]+|PREFIX)\s*$")


@dataclass(frozen=True)
class Case:
    """One attack and the outcome that counts as safe."""

    klass: Klass
    name: str
    mode: Mode
    wrong: tuple[str, ...]  # tasks whose answers are wrong or not computed: never "passed"
    file: str | None = None  # attack file, relative to tests/hostile
    builder: Callable[[Path, Lesson], Path] | None = None  # writes the submission, returns it
    exit_codes: tuple[int, ...] = (1,)  # allowed exit statuses (single mode)
    seconds: float = 60.0  # the command must return within this bound
    as_json: bool = True  # False: the human-readable report (terminal output checks)
    jobs: int = 1  # --jobs in batch mode
    needs: tuple[Need, ...] = ()  # confinement the case cannot be run without
    extra: tuple[str, ...] = field(default=())  # more CLI options
    env: tuple[tuple[str, str], ...] = ()  # more environment for the grader (never the child)

    @property
    def id(self) -> str:
        return f"{self.klass}/{self.name}"


# --------------------------------------------------------------------------- building


def practice_script(lesson: Lesson) -> str:
    from lessonkit.lesson.scripts import render_exercise_script

    return render_exercise_script(lesson)


def patched_script(lesson: Lesson, patch: str) -> str:
    """The practice file with every task solved, then the attack's sections applied."""
    from lessonkit.lesson.cell import task_cell_source

    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in patch.splitlines(keepends=True):
        found = _MARKER.match(line)
        if found:
            current = found.group(1)
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    bodies = {k.removeprefix("TASK "): "".join(v) for k, v in sections.items()}
    text = practice_script(lesson)
    for task in lesson.tasks:
        scaffold = task_cell_source(task, task.scaffold)
        assert scaffold in text, task.id
        text = text.replace(scaffold, task_cell_source(task, bodies.get(task.id, task.solution)))
    prefix = bodies.get("PREFIX")
    return text if prefix is None else f"# %%\n{prefix}\n{text}"


def build(case: Case, folder: Path, lesson: Lesson, name: str) -> Path:
    """Write the case's submission into `folder` (named `name` + suffix) and return it."""
    if case.builder is not None:
        return case.builder(folder, lesson)
    assert case.file is not None
    path = folder / f"{name}.py"
    patch = (HERE / case.file).read_text(encoding="utf-8")
    path.write_text(patched_script(lesson, patch), encoding="utf-8")
    return path


def honest_files(lesson: Lesson) -> dict[str, str]:
    """Honest submissions graded beside every batch attack: one right, one wrong."""
    from lessonkit.lesson.cell import task_cell_source

    solved = patched_script(lesson, "")
    task = lesson.task("make-it-yours")
    wrong_body = task.solution.replace(
        'manual = jnp.sum(grads["weight"] ** 2) + grads["bias"] ** 2',
        'manual = jnp.sum(grads["weight"] ** 2)',
    ).replace("assert jnp.allclose(norm_squared, manual)\n", "")
    wrong_body = wrong_body.replace(
        "norm_squared = sum(jnp.sum(g ** 2) for g in jax.tree.leaves(grads))",
        'norm_squared = jnp.sum(grads["weight"] ** 2)',
    ).replace("assert jnp.allclose(norm_squared, 96.)\n", "")
    wrong = solved.replace(
        task_cell_source(task, task.solution), task_cell_source(task, wrong_body)
    )
    assert wrong != solved
    return {"m-honest-solved.py": solved, "n-honest-forgot-bias.py": wrong}


# --------------------------------------------------------------------------- builders


def _notebook(cells: list) -> dict:
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def notebook_int_source(folder: Path, lesson: Lesson) -> Path:
    path = folder / "int-source.ipynb"
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "source": [1, None, "x = 1\n"]}
    path.write_text(json.dumps(_notebook([cell])), encoding="utf-8")
    return path


def notebook_null_source(folder: Path, lesson: Lesson) -> Path:
    path = folder / "null-source.ipynb"
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "source": None}
    path.write_text(json.dumps(_notebook([cell])), encoding="utf-8")
    return path


def deep_json(folder: Path, lesson: Lesson) -> Path:
    path = folder / "deep.ipynb"
    depth = 700_000
    path.write_text('{"cells": ' + "[" * depth + "]" * depth + "}", encoding="utf-8")
    return path


def huge_int_json(folder: Path, lesson: Lesson) -> Path:
    path = folder / "huge-int.ipynb"
    path.write_text('{"cells": [], "nbformat": 4' + "0" * 5000 + "}", encoding="utf-8")
    return path


def symlink_loop(folder: Path, lesson: Lesson) -> Path:
    (folder / "loop-a.py").symlink_to(folder / "loop-b.py")
    (folder / "loop-b.py").symlink_to(folder / "loop-a.py")
    return folder / "loop-a.py"


def unreadable(folder: Path, lesson: Lesson) -> Path:
    path = folder / "unreadable.py"
    path.write_text(patched_script(lesson, ""), encoding="utf-8")
    path.chmod(0)
    return path


def directory_named_py(folder: Path, lesson: Lesson) -> Path:
    path = folder / "attempt.py"
    path.mkdir()
    return path


def fifo(folder: Path, lesson: Lesson) -> Path:
    path = folder / "fifo.py"
    os.mkfifo(path)
    return path


def symlink_dev_zero(folder: Path, lesson: Lesson) -> Path:
    path = folder / "zero.py"
    path.symlink_to("/dev/zero")
    return path


def u2028_before_cell_marker(folder: Path, lesson: Lesson) -> Path:
    """A line separator inside a comment: str.splitlines() sees a `# %%` cell start there,
    Python does not, so the grader's cells differ from the file Python runs."""
    path = folder / "u2028.py"
    text = patched_script(lesson, "")
    task = "# TASK make-it-yours"
    hidden = (
        '# note\u2028# %% tags=["task"]\u2028# TASK make-it-yours\u2028'
        "norm_squared = manual = 0.0\n"
    )
    path.write_text(text.replace(task, hidden + task, 1), encoding="utf-8")
    return path


def null_bytes(folder: Path, lesson: Lesson) -> Path:
    path = folder / "null-bytes.py"
    path.write_text(patched_script(lesson, "#@ TASK make-it-yours\nx = '\0'\n"), encoding="utf-8")
    return path


def shuffled_cells(folder: Path, lesson: Lesson) -> Path:
    """1,750 cells: the practice file's code cells repeated and shuffled (seeded)."""
    path = folder / "shuffled.py"
    text = patched_script(lesson, "")
    cells = [c for c in re.split(r"(?m)^(?=# %%)", text) if c.startswith("# %%")]
    code = [c for c in cells if "[markdown]" not in c.splitlines()[0] and "# TASK" not in c]
    tasks = [c for c in cells if "# TASK" in c]
    rng = random.Random(2028)
    body = [rng.choice(code) for _ in range(1750 - len(tasks))]
    rng.shuffle(body)
    path.write_text("".join(body + tasks), encoding="utf-8")
    return path


def symlink_to_outside_file(folder: Path, lesson: Lesson) -> Path:
    """B9: an archive unpacks `a-hostile.py` as a link to a solved file outside the folder
    (any file the instructor can read); a batch must not read it, let alone pass it."""
    outside = folder.parent / "outside-solved.py"
    outside.write_text("# SECRET-b9: outside the batch folder\n" + patched_script(lesson, ""))
    path = folder / "a-hostile.py"
    path.symlink_to(outside)
    return path


# --------------------------------------------------------------------------- the manifest


def _files(klass: Klass, mode: Mode, wrong: dict[str, tuple[str, ...]], **kw) -> list[Case]:
    return [
        Case(klass, name, mode, tasks, file=f"{klass}/{name}.py", **kw)
        for name, tasks in wrong.items()
    ]


MIY = ("make-it-yours",)

CASES: tuple[Case, ...] = (
    *_files(
        "value-forgery",
        "single",
        {
            "lying-ndarray-subclass": MIY,
            "lying-subclass-tree": ("repair",),
            "fixed-is-updated": ("repair",),
            "adam-is-optax-step": ("adam-by-hand",),
            "g-built-from-grads": ("nested-model",),
            "hardcoded-input-sets": ("repair",),
            "complex-scalar": MIY,
            "b4-second-name-in-one-statement": ("nested-model",),
            "b5-adam-copied-through-a-list": ("adam-by-hand",),
            "b6-print-instead-of-mismatch": ("repair",),
            "f2-undo-probe-from-frame": MIY,
            "f3-unwrapped-original": ("adam-by-hand",),
            "k1-undo-scale-gradient-by-known-answer": ("nested-model",),
            "k2-undo-optax-step-by-known-answer": ("adam-by-hand",),
        },
    ),
    # F1 counts scenarios: under an order that moves every probe it aims at (seed 1 of
    # LESSONKIT_SCENARIO_ORDER) a count can land on none; any other order is as likely. A
    # count that lands on a probe fixes one of its three copies only (test_counting_cell.py).
    *_files(
        "value-forgery",
        "single",
        {"f1-count-scenarios-apply-probe": ("make-it-yours", "nested-model", "adam-by-hand")},
        env=(("LESSONKIT_SCENARIO_ORDER", "1"),),
    ),
    *_files(
        "channel-forgery",
        "single",
        {
            "rewrite-report-encoder-via-frames": ("make-it-yours", "nested-model"),
            "replace-worker-encoder": ("make-it-yours", "nested-model"),
            "forge-events-with-token-from-gc": MIY,
            "b1-wrap-cell-runner-wrong-attempts": ALL_TASKS,
            "b1-wrap-cell-runner-structure-check": ("nested-model",),
            "b3-set-probe-state-from-frame": ("nested-model",),
        },
    ),
    *_files(
        "reference-scraping",
        "single",
        {
            "gc-reference-namespace-make-it-yours": MIY,
            "gc-reference-namespace-repair": ("repair",),
            "gc-reference-namespace-adam": ("adam-by-hand",),
            "exec-solution-from-lesson-md": ("nested-model",),
            "import-lessonkit-solution": ("repair",),
        },
    ),
    *_files(
        "cross-submission-poisoning",
        "batch",
        {
            "patch-main-encoder": MIY,
            "patch-json-default-encoder": MIY,
            "patch-function-code": MIY,
            "wrong-answers-pass-next": MIY,
            "leak-next-sources": MIY,
        },
    ),
    *_files(
        "process-escape",
        "batch",
        {"setsid-rewrite-outputs": MIY, "sigkill-parent": MIY},
    ),
    *_files("process-escape", "batch", {"kill-sibling-workers": MIY}, jobs=2),
    *_files("process-escape", "single", {"sigstop-parent": MIY, "orphan-daemon": MIY}, seconds=40),
    *_files(
        "filesystem-damage",
        "batch",
        {
            "overwrite-other-submissions": MIY,
            "copy-other-submissions": MIY,
            "plant-file-in-batch-folder": MIY,
        },
    ),
    *_files(
        "filesystem-damage",
        "single",
        {"tamper-lesson-reference": MIY, "fill-disk-outside-scratch": MIY},
    ),
    Case(
        "filesystem-damage",
        "b9-symlink-to-outside-file",
        "batch",
        ALL_TASKS,
        builder=symlink_to_outside_file,
    ),
    *_files("resource-exhaustion", "single", {"fork-bomb": MIY}, needs=("pids-cgroup",)),
    *_files(
        "resource-exhaustion",
        "single",
        {"memory-bomb-across-processes": MIY},
        needs=("memory-cgroup",),
    ),
    *_files("resource-exhaustion", "single", {"thread-storm": MIY}, needs=("pids-cgroup",)),
    *_files("resource-exhaustion", "single", {"fill-dev-shm": MIY, "stderr-flood": MIY}),
    *_files(
        "parser-and-encoding-crashes",
        "batch",
        {"lone-surrogate-message": MIY, "csv-formula-injection": MIY},
    ),
    *_files(
        "parser-and-encoding-crashes", "single", {"lone-surrogate-message": MIY}, as_json=False
    ),
    *_files("parser-and-encoding-crashes", "single", {"terminal-escapes": MIY}, as_json=False),
    *(
        Case(
            "parser-and-encoding-crashes",
            name,
            "single",
            ALL_TASKS,
            builder=builder,
            exit_codes=(1, 2),
            seconds=seconds,
            needs=needs,
        )
        for name, builder, seconds, needs in (
            ("notebook-int-source", notebook_int_source, 30.0, ()),
            ("notebook-null-source", notebook_null_source, 30.0, ()),
            ("700k-deep-json", deep_json, 30.0, ()),
            ("5000-digit-int", huge_int_json, 30.0, ()),
            ("symlink-loop", symlink_loop, 30.0, ()),
            ("unreadable-file", unreadable, 30.0, ("not-root",)),
            ("directory-named-py", directory_named_py, 30.0, ()),
            ("fifo", fifo, 30.0, ()),
            ("symlink-to-dev-zero", symlink_dev_zero, 30.0, ("memory-cgroup",)),
            ("null-bytes", null_bytes, 30.0, ()),
        )
    ),
    Case(
        "parser-and-encoding-crashes",
        "u2028-before-cell-marker",
        "single",
        (),  # Python runs the real cell; the grader must neither crash nor split differently
        builder=u2028_before_cell_marker,
        exit_codes=(0, 1, 2),
        seconds=30.0,
    ),
    Case(
        "parser-and-encoding-crashes",
        "1750-shuffled-cells",
        "single",
        ALL_TASKS,
        builder=shuffled_cells,
        exit_codes=(1, 2),
        seconds=45.0,
    ),
)
