"""What the learner's run showed, read from the grader's own run of their file.

Learner code runs only in the grader's sandboxed child, which reports the values the lesson's
steps and each task's graded names bind. This process turns them back into arrays, runs the
lesson's own (trusted) steps for functions and modules, and evaluates the `{evidence}`
expressions there: values are the learner's, functions the lesson's.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lessonkit.defaults import EVIDENCE_ATOL, EVIDENCE_RTOL
from lessonkit.errors import LessonError
from lessonkit.grade import GradedRun, Grader, GradeReport
from lessonkit.grade.channel import Value
from lessonkit.grade.channel import reported as r
from lessonkit.grade.judging import LESSON, opaque_type
from lessonkit.grade.submission import read_submission
from lessonkit.lesson.model import EvidenceItem, Lesson, Show, Task
from lessonkit.lesson.syntax import read_cell
from lessonkit.run.environment import Environment, read_environment
from lessonkit.run.inprocess import quiet_cpu, run_block, run_steps
from lessonkit.settings import GradingSettings

ObservedStatus = str  # "ran", "not attempted" or "error"
NOT_ATTEMPTED = "not attempted"


class NotData(Exception):
    """A reported value that cannot be turned back into an array, number or container."""


@dataclass(frozen=True)
class CellOutcome:
    where: str  # `Plan.place`: "the cell at line 12" in a script, "cell [4]" in a notebook
    task: str | None
    source: str
    status: ObservedStatus
    output: str
    error: str | None


@dataclass(frozen=True)
class Finding:
    """What one `show` entry found: a value (plain JSON-like), a diagram or a round trip."""

    show: Show
    value: Any = None
    text: str = ""  # a diagram, or the tree definition of a round trip
    leaves: tuple[tuple[str, Any], ...] = ()  # round trip: (key path, value) in flatten order
    matches: bool = False  # round trip: the rebuilt tree equals the original
    hand: Any = None  # the hand-derived value of `show.number`
    problem: str | None = None  # why there is nothing to show
    task_passed: bool = True  # False: the value belongs to a task whose verdict is not passed

    @property
    def agrees(self) -> bool:
        """The value matches its hand derivation, and its task passed: a failed task's value
        is never reported as agreeing (it may be compared with itself)."""
        return self.task_passed and self.problem is None and _agree(self.hand, self.value)


@dataclass(frozen=True)
class NumberCheck:
    """A number the lesson derives by hand, and the same expression on the learner's values."""

    name: str
    derived: Any
    computed: Any
    error: str | None

    @property
    def agrees(self) -> bool:
        return self.error is None and _agree(self.derived, self.computed)


@dataclass(frozen=True)
class ItemObserved:
    item: EvidenceItem
    findings: tuple[Finding, ...]
    numbers: tuple[NumberCheck, ...]  # for a `numbers: all` entry


@dataclass(frozen=True)
class Evidence:
    lesson: str
    file: Path
    file_sha256: str
    environment: Environment
    cells: tuple[CellOutcome, ...]
    items: tuple[ItemObserved, ...]
    verdicts: GradeReport
    problem: str | None  # why the run shows less than it should (time limit, interference)

    def task_cells(self, task_id: str) -> tuple[CellOutcome, ...]:
        return tuple(c for c in self.cells if c.task == task_id)

    @property
    def numbers(self) -> tuple[NumberCheck, ...]:
        return tuple(n for i in self.items for n in i.numbers)

    @property
    def hand_findings(self) -> tuple[Finding, ...]:
        """The values shown beside a hand derivation (`show: value` with `number:`)."""
        return tuple(f for i in self.items for f in i.findings if f.show.number)


def _flat(value: Any) -> list[float]:
    if isinstance(value, list | tuple):
        return [x for v in value for x in _flat(v)]
    if isinstance(value, bool):
        return [float(value)]
    if not isinstance(value, int | float):
        return [math.nan]
    return [float(value)]


def _agree(want: Any, got: Any) -> bool:
    a, b = _flat(want), _flat(got)
    return len(a) == len(b) and all(
        math.isclose(x, y, rel_tol=EVIDENCE_RTOL, abs_tol=EVIDENCE_ATOL)
        for x, y in zip(a, b, strict=True)
    )


# --------------------------------------------------------------------------- reported data


def live(value: Value) -> Any:
    """A reported value as an array, number or container again; NotData when it is not data."""
    import jax.numpy as jnp
    import numpy as np

    match value:
        case r.Number():
            return {"bool": bool, "int": int}.get(value.type, float)(value.value)
        case r.NoneValue():
            return None
        case r.Text() if value.complete:
            return value.value
        case r.Array(data=tuple(data)):
            try:
                dtype = jnp.dtype(value.dtype)
            except TypeError:
                raise NotData(f"an array of dtype {value.dtype}") from None
            return jnp.asarray(np.asarray(data).astype(dtype).reshape(value.shape))
        case r.KeyArray(data=tuple()):
            return _key_array(value)
        case r.Mapping():
            items = {key: live(child) for key, child in value.items}
            return collections.OrderedDict(items) if value.type == "OrderedDict" else items
        case r.Sequence(type="list"):
            return [live(child) for child in value.items]
        case r.Sequence(type="tuple"):
            return tuple(live(child) for child in value.items)
        case r.Sequence(type=kind, fields=(field,), items=(child,)) if (
            _KEY_ENTRIES.get(kind) == field
        ):
            import jax

            return getattr(jax.tree_util, kind)(live(child))
    raise NotData(f"a {getattr(value, 'type', type(value).__name__.lower())}")


_KEY_ENTRIES = {
    "DictKey": "key",
    "SequenceKey": "idx",
    "GetAttrKey": "name",
    "FlattenedIndexKey": "key",
}
"""JAX's path entries, each by the one field the child reports it with."""

_KEY_IMPLS = ("threefry2x32", "rbg", "unsafe_rbg")
"""JAX's public PRNG implementations; a key's dtype names only the short tag (`key<fry>`)."""


def _key_array(value: r.KeyArray) -> Any:
    """A typed key array again, from the words `jax.random.key_data` reported."""
    import jax
    import numpy as np

    tag = f"key<{value.impl}>"
    for impl in _KEY_IMPLS:
        if str(jax.random.key(0, impl=impl).dtype) == tag:
            words = np.asarray(value.data, dtype=np.uint32)
            return jax.random.wrap_key_data(words.reshape([*value.shape, -1]), impl=impl)
    raise NotData(f"a {tag} key array")


def _bind(
    namespace: dict[str, Any],
    reported: dict[str, Value],
    names: set[str],
    lesson_values: Callable[[], dict[str, Any]] | None = None,
) -> None:
    """Put the learner's values for `names` over the lesson's.

    A name the learner's run did not report is removed; one it reported as a function, module
    or other object that is not data (or a node of them, such as a `GradientTransformation`)
    keeps the lesson's binding (functions are the lesson's). A node of a type the parent
    cannot make (an optax state, a registered dataclass) is rebuilt in the structure of the
    lesson's own value (`lesson_values()`, by default `namespace`), when their key paths
    agree.
    """
    for name in names | set(reported):
        value = reported.get(name)
        if value is None:
            namespace.pop(name, None)
        elif not isinstance(value, r.Module) and opaque_type(value) is None:
            try:
                namespace[name] = live(value)
            except NotData:
                try:
                    like = (lesson_values() if lesson_values else namespace)[name]
                    namespace[name] = _rebuilt(value, like)
                except (NotData, KeyError):
                    namespace.pop(name, None)


def _rebuilt(value: Value, like: Any) -> Any:
    """The reported tree as a value of `like`'s structure: its leaves at `like`'s key paths."""
    import jax

    pairs, definition = jax.tree_util.tree_flatten_with_path(like)
    paths = [tuple(_key_name(key) for key in path) for path, _ in pairs]
    leaves = dict(_reported_leaves(value, ()))
    if len(set(paths)) != len(paths) or set(paths) != set(leaves):
        raise NotData(f"a {getattr(value, 'type', 'value')} of another structure")
    return jax.tree.unflatten(definition, [live(leaves[path]) for path in paths])


def _key_name(key: Any) -> Any:
    """A key-path entry's name, as the child reports a node's children: `mu`, `weight`, 0."""
    for field in ("key", "idx", "name"):
        if hasattr(key, field):
            return getattr(key, field)
    return str(key)


def _reported_leaves(value: Value, path: tuple) -> Iterator[tuple[tuple, Value]]:
    """Every leaf of a reported tree with its path of child names (None is an empty node)."""
    if isinstance(value, r.Mapping):
        for key, child in value.items:
            yield from _reported_leaves(child, (*path, key))
    elif isinstance(value, r.Sequence):
        for key, child in zip(value.names(), value.items, strict=True):
            yield from _reported_leaves(child, (*path, key))
    elif not isinstance(value, r.NoneValue):
        yield path, value


def _plain(value: Any) -> Any:
    """A JSON-like value for an array, number, or a dict or list of them."""
    import numpy as np

    if isinstance(value, bool | int | float | str) or value is None:
        return value
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(key): _plain(v) for key, v in value.items()}
    try:
        return np.asarray(value).tolist()
    except Exception:  # not numerical: show what it is instead
        return repr(value)[:200]


def _problem(exc: BaseException) -> str:
    if isinstance(exc, NameError):
        return f"your run reported no value for it ({exc})"
    return f"{type(exc).__name__}: {exc}"


# --------------------------------------------------------------------------- findings


def _find(show: Show, namespace: dict[str, Any], hands: dict[str, Any]) -> Finding:
    import jax

    from lessonkit.trees import describe

    hand = hands.get(show.number) if show.number else None
    try:
        with quiet_cpu():
            value = eval(show.expr, dict(namespace))  # the lesson's expression, trusted
            if show.kind == "tree":
                return Finding(show, text=describe(value, show.expr))
            if show.kind == "round_trip":
                pairs, definition = jax.tree_util.tree_flatten_with_path(value)
                rebuilt = jax.tree.unflatten(definition, [leaf for _, leaf in pairs])
                matches = jax.tree.structure(rebuilt) == definition and all(
                    bool(jax.numpy.array_equal(a, b))
                    for a, b in zip(jax.tree.leaves(rebuilt), jax.tree.leaves(value), strict=True)
                )
                leaves = tuple((jax.tree_util.keystr(p), _plain(leaf)) for p, leaf in pairs)
                return Finding(show, text=str(definition), leaves=leaves, matches=matches)
            return Finding(show, value=_plain(value), hand=hand)
    except Exception as exc:
        return Finding(show, hand=hand, problem=_problem(exc))


def _numbers(lesson: Lesson, namespace: dict[str, Any]) -> tuple[NumberCheck, ...]:
    checks = []
    for number in lesson.numbers:
        try:
            with quiet_cpu():
                computed, error = _plain(eval(number.expr, dict(namespace))), None
        except Exception as exc:
            computed, error = None, _problem(exc)
        checks.append(NumberCheck(number.name, number.value, computed, error))
    return tuple(checks)


def _namespaces(lesson: Lesson, run: GradedRun) -> tuple[dict[str, Any], dict[str, dict]]:
    """The namespace after the steps, and after each task's cell, with the learner's values."""
    base: dict[str, Any] = {"__name__": "__main__"}
    with quiet_cpu():
        run_steps(lesson, base)
    plan, child_report = run.plan, run.child_report
    step_names = {n for s in lesson.steps for n in read_cell(s.code).bound}
    reported = child_report.get(LESSON, plan.checkpoint) if plan.checkpoint is not None else None
    lesson_base = dict(base)
    _bind(base, (reported.checkpoint or {}) if reported else {}, step_names)
    after: dict[str, dict[str, Any]] = {}
    for cell in plan.cells:
        if cell.task and (report := child_report.get(LESSON, cell.index)):
            namespace = dict(base)
            solved = functools.partial(_solved, lesson, lesson.task(cell.task), lesson_base)
            _bind(namespace, report.values, set(), functools.cache(solved))
            after[cell.task] = namespace
    return base, after


def _solved(lesson: Lesson, task: Task, lesson_base: dict[str, Any]) -> dict[str, Any]:
    """The lesson's own values after its solution of `task`: the shapes of what it grades."""
    namespace = dict(lesson_base)
    try:
        with quiet_cpu():
            run_block(task.solution, namespace, lesson, "solution", task.line)
    except LessonError:
        pass  # a solution that fails here leaves what it had bound; the rest is not shown
    return namespace


def _observe(lesson: Lesson, run: GradedRun) -> tuple[ItemObserved, ...]:
    base, after = _namespaces(lesson, run)
    hands = {n.name: n.value for n in lesson.numbers}
    passed = {t.id for t in run.report.tasks if t.status == "passed"}
    observed = []
    for item in lesson.evidence:
        namespace = after.get(item.task, {}) if item.task else base
        findings, numbers = [], ()
        for show in item.show:
            if show.kind == "numbers":
                numbers = _numbers(lesson, namespace)
            elif item.task and item.task not in after:
                problem = f"your task cell for {item.task!r} did not run"
                findings.append(Finding(show, hand=hands.get(show.number), problem=problem))
            else:
                found = _find(show, namespace, hands)
                if item.task and item.task not in passed:
                    found = replace(found, task_passed=False)
                findings.append(found)
        observed.append(ItemObserved(item, tuple(findings), numbers))
    return tuple(observed)


def _error_text(run: GradedRun, index: int) -> str | None:
    report = run.child_report.get(LESSON, index)
    if report is None or report.error is None:
        return None
    error = report.error
    frames = [f for f in error.frames if f[0] == index]
    where = f" ({run.plan.where(index, frames[-1][1])})" if frames else ""
    return f"{error.type}: {error.message}{where}"


def _cells(run: GradedRun) -> tuple[CellOutcome, ...]:
    verdicts = {task.id: task.status for task in run.report.tasks}
    out = []
    for cell in run.plan.cells:
        report = run.child_report.get(LESSON, cell.index)
        if report is None:
            continue  # not run in the learner's own scenario (an optional experiment)
        error = _error_text(run, cell.index)
        if cell.task is not None and verdicts.get(cell.task) == NOT_ATTEMPTED:
            status = NOT_ATTEMPTED  # as the grader judged it: a todo(...) ran before its names
        elif cell.task is None and report.placeholder is not None:
            status = NOT_ATTEMPTED
        elif report.error is None:
            status = "ran"
        else:
            status = "error"
        where = run.plan.place(cell.index)
        out.append(CellOutcome(where, cell.task, cell.source, status, report.output, error))
    return tuple(out)


def collect_evidence(lesson: Lesson, file: Path, settings: GradingSettings) -> Evidence:
    """Grade the learner's file (the one run of their code) and read the evidence from it."""
    file = file.resolve()
    submission = read_submission(file)
    with Grader(settings, lesson=lesson) as grader:
        run = grader.run_submission(lesson, submission)
    digest = hashlib.sha256(file.read_bytes()).hexdigest()
    if run.child_report.interfered:
        problem = (
            f"your file interfered with the grader ({run.child_report.interfered}), so nothing "
            "from its run can be shown"
        )
        cells, items = (), ()
    else:
        problem = run.child_report.stop_reason
        cells, items = _cells(run), _observe(lesson, run)
    return Evidence(
        lesson.meta.id, file, digest, read_environment(), cells, items, run.report, problem
    )
