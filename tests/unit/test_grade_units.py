"""The grader's parts, one at a time, without a grading child."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import random
import re
import signal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lessonkit.grade.channel import reported
from lessonkit.grade.channel.child_handle import describe_end
from lessonkit.grade.channel.protocol import ErrorInfo
from lessonkit.grade.channel.values import describe, differences, explain_layout
from lessonkit.grade.judging.explain import explain_error
from lessonkit.grade.judging.results import GradeReport, PrerequisiteResult, TaskResult
from lessonkit.grade.preparation.inputs import draw_inputs, draw_set, grading_of
from lessonkit.grade.preparation.rubric import rubric_for
from lessonkit.grade.submission.plan import (
    LESSON_ONLY,
    SETUP,
    SKIP,
    TASK,
    match_cells,
    plan_submission,
    reference_plan,
)
from lessonkit.grade.submission.sources import CodeCell, Submission, read_submission
from lessonkit.grading_child import cells, channel, varied_calls, wire
from lessonkit.grading_child.encoder import Encoder
from lessonkit.grading_child.guard import ModuleGuard
from lessonkit.grading_child.request import CellSpec, ChangedCall
from lessonkit.grading_child.runner import ChildProgram
from lessonkit.learner.history import history_submission
from lessonkit.learner.messages import RunCell
from lessonkit.lesson.model import Bernoulli, Grading, Integers, Probe, Uniform

from conftest import REPORT_KEYS


def arr(data, shape=None, dtype="float32"):
    shape = (len(data),) if shape is None else tuple(shape)
    return reported.Array(dtype, shape, tuple(data))


def num(value, kind="float"):
    return reported.Number(kind, value)


def tree(**items):
    return reported.Mapping(tuple(items.items()))


def text(value: str):
    return reported.Text(value, len(value))


# --------------------------------------------------------------------------- values


def test_equal_trees_have_no_differences():
    params = tree(weight=arr([1.0, -1.0]), bias=arr([0.0], shape=[]))
    assert differences(params, params) == ()


def test_structure_comes_before_values():
    expected = tree(weight=arr([1.0, -1.0]), bias=arr([0.0], shape=[]))
    got = tree(weight=arr([9.0, 9.0]))
    kinds = [(d.kind, d.location) for d in differences(expected, got)]
    assert kinds == [("missing", "bias"), ("value", "weight")]


def test_scalars_compare_by_value_whatever_their_container():
    f32 = arr([96.0], shape=[])
    assert differences(f32, num(96.0)) == ()
    assert differences(num(96.0), arr([96.00001], shape=[], dtype="float64")) == ()
    assert [d.kind for d in differences(f32, num(95.0))] == ["value"]
    assert differences(num(True, "bool"), arr([True], shape=[], dtype="bool")) == ()


def test_nan_matches_only_nan():
    assert [d.kind for d in differences(num(96.0), num(math.nan))] == ["value"]
    assert [d.kind for d in differences(num(math.nan), num(96.0))] == ["value"]
    assert differences(num(math.nan), num(math.nan)) == ()  # issue 32: the same result


def test_shape_dtype_and_type_differences():
    assert [d.kind for d in differences(arr([1.0, 2.0]), arr([1.0, 2.0, 3.0]))] == ["shape"]
    assert [d.kind for d in differences(arr([1.0]), arr([2], dtype="int32"))] == ["dtype", "value"]
    assert [d.kind for d in differences(num(96.0), text("96"))] == ["type"]


def test_values_are_described_for_people():
    assert describe(num(96.0)) == "96.0"
    assert describe(arr([1.4, -0.8])) == "[1.4, -0.8]"
    assert describe(text("96")) == "the string '96'"
    assert describe(reported.Opaque("other", "PyTreeDef")) == "a PyTreeDef"
    assert describe(arr([math.nan], shape=[])) == "nan"


def test_layout_wording_agrees_with_lessonkit_trees():
    expected = tree(layer=tree(weight=arr([1.0, -1.0]), bias=arr([0.0], shape=[])), scale=num(1.0))
    got = tree(layer=tree(weight=arr([1.0, -1.0])), scale=num(1.0), extra=arr([1.0]))
    found = differences(expected, got)
    assert [(d.kind, d.location) for d in found] == [("missing", "layer/bias"), ("extra", "extra")]
    message = explain_layout("nested", found)
    assert (
        message
        == "`nested` is missing `layer/bias` (expected float32[]) (1 more layout difference)."
    )


# --------------------------------------------------------------------------- plan


def _submission(
    lesson, replace: dict[str, str] | None = None, notebook: bool = False
) -> Submission:
    from lessonkit.grade.submission.sources import _percent_cells

    from conftest import practice_script

    text = practice_script(lesson)
    for old, new in (replace or {}).items():
        assert old in text
        text = text.replace(old, new)
    cells = tuple(_percent_cells(text))
    if notebook:
        cells = tuple(CodeCell(c.source, i + 1, c.task) for i, c in enumerate(cells))
    return Submission(Path("attempt.ipynb" if notebook else "attempt.py"), cells)


def test_cells_get_roles_from_the_lesson(lesson):
    plan = plan_submission(_submission(lesson), lesson)
    roles = {c.label or c.task: c.role for c in plan.cells}
    assert roles["todo-helper"] == SETUP
    assert [roles[f"step-{s.number}"] for s in lesson.steps] == [SETUP] * len(lesson.steps)
    assert roles["verify-leaves"] == LESSON_ONLY
    assert roles["figure-plot"] == SKIP
    assert all(roles[t.id] == TASK for t in lesson.tasks)
    assert plan.cell(plan.checkpoint).label == f"step-{lesson.steps[-1].number}"


def test_an_edited_step_is_still_that_step(lesson):
    step = lesson.steps[2].code
    edited = step.replace("0.05", "0.5") + '\nprint("my own line")'
    plan = plan_submission(_submission(lesson, {step: edited}), lesson)
    assert plan.labelled("step-3") is not None
    assert "my own line" in plan.labelled("step-3").source


def test_matching_keeps_order_and_skips_strangers():
    lesson_cells = ["import jax", "x = 1\ny = 2", "assert x == 1"]
    learner = ["import jax", "print('mine')", "x = 1\ny = 3", "assert x == 1"]
    assert match_cells(learner, lesson_cells) == {0: 0, 2: 1, 3: 2}


def test_notebook_lines_are_cited_by_cell(lesson):
    plan = plan_submission(_submission(lesson, notebook=True), lesson)
    task = plan.task_cell("make-it-yours")
    assert plan.where(task.index, 3) == f'cell [{task.line}] ("Make it yours"), line 3'
    script = plan_submission(_submission(lesson), lesson)
    assert script.where(0, 14) == "line 14"


def test_a_notebooks_cells_are_numbered_as_jupyter_counts_them(lesson):
    """Batch feedback said "cell 51" (every cell counted, Markdown too) where the notebook's
    check() said "cell 11" (its execution count): both now count code cells, as Run All
    numbers them, [1] the first."""
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# title"),
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_markdown_cell("more words"),
        nbformat.v4.new_code_cell("# TASK make-it-yours\ny = 2"),
    ]
    path = Path("state-02.ipynb")
    submission = read_submission(path, nbformat.writes(notebook).encode())
    assert [c.line for c in submission.cells] == [1, 2]
    plan = plan_submission(submission, lesson)
    assert plan.place(1) == 'cell [2] ("Make it yours")'
    kernel = history_submission((RunCell("x = 1", 1), RunCell("# TASK make-it-yours\ny = 2", 2)))
    assert plan_submission(kernel, lesson).place(1) == plan.place(1)


def test_reference_plan_is_steps_then_solutions(lesson):
    plan = reference_plan(lesson)
    assert [c.role for c in plan.cells] == [SETUP] * len(lesson.steps) + [TASK] * len(lesson.tasks)
    source = lesson.source.splitlines()
    for cell in plan.cells:
        assert source[cell.offset] == cell.source.splitlines()[0]


# --------------------------------------------------------------------------- lesson data


def test_rubric_names_are_what_the_scaffold_leaves_to_the_learner(lesson):
    names = {r.task.id: r.names for r in rubric_for(lesson, lesson.grading)}
    assert names == {
        "make-it-yours": ("norm_squared", "manual"),
        "nested-model": ("nested", "g", "same_structure", "scale_by_hand"),
        "repair": ("partial", "mismatch", "fixed"),
        "adam-by-hand": ("adam_by_hand",),
    }


def _step(params, x, rate=0.05):
    w, b = params["weight"], params["bias"]
    prediction = sum(wi * xi for wi, xi in zip(w, x, strict=True)) + b
    g = 2 * (prediction - 3.0)
    new_w = [wi - rate * g * xi for wi, xi in zip(w, x, strict=True)]
    new_b = b - rate * g
    after = sum(wi * xi for wi, xi in zip(new_w, x, strict=True)) + new_b
    return (prediction - 3.0) ** 2, (after - 3.0) ** 2


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_drawn_input_sets_keep_the_step_3_assertion_true(lesson, seed):
    inputs = draw_inputs(lesson.grading, seed)
    assert inputs.names == ("params", "x") and len(inputs.others) == 2
    for other in inputs.others:
        before, after = _step(other.values["params"], other.values["x"])
        assert after < before


def test_a_seed_replays_its_input_sets_and_another_seed_draws_others(lesson):
    first, again = draw_inputs(lesson.grading, 7), draw_inputs(lesson.grading, 7)
    assert first == again
    assert draw_inputs(lesson.grading, 8).others != first.others
    shape = first.others[0].values
    assert len(shape["params"]["weight"]) == 2 and isinstance(shape["params"]["bias"], float)


EVERY_GENERATOR = Grading(
    inputs=(
        ("count", Integers(-3, 40)),
        ("counts", Integers(0, 9, (2, 3))),
        ("flag", Bernoulli(0.5)),
        ("mask", Bernoulli(0.2, (4,))),
        ("nested", {"x": Uniform(-1.0, 1.0, (2,), 1), "n": Integers(5, 6)}),
    ),
    input_sets=8,
    probes=(),
    points=(),
    line=1,
)


def _leaves(value, shape):
    """The leaves of a drawn value, after checking it is nested lists of that shape."""
    if not shape:
        return [value]
    assert type(value) is list and len(value) == shape[0]
    return [leaf for item in value for leaf in _leaves(item, shape[1:])]


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_drawn_values_keep_their_declared_bounds_types_and_shapes(seed):
    def check(spec, value):
        if isinstance(spec, dict):
            assert list(value) == list(spec)
            for name, child in spec.items():
                check(child, value[name])
            return
        for leaf in _leaves(value, spec.shape):
            if isinstance(spec, Integers):
                assert type(leaf) is int and spec.low <= leaf <= spec.high
            elif isinstance(spec, Bernoulli):
                assert type(leaf) is bool
            else:
                assert type(leaf) is float and spec.low <= leaf <= spec.high
                assert round(leaf, spec.decimals) == leaf

    inputs = draw_inputs(EVERY_GENERATOR, seed)
    assert len(inputs.others) == 8
    for drawn in inputs.others:
        assert list(drawn.values) == list(EVERY_GENERATOR.input_names)
        for name, spec in EVERY_GENERATOR.inputs:
            check(spec, drawn.values[name])


def test_the_child_makes_each_drawn_leaf_the_type_its_generator_promises():
    """Through the JSON request, as the grader sends it: int and bool stay Python scalars."""
    import jax
    import jax.numpy as jnp

    runner = ChildProgram(None, None, None, jax, jnp)
    drawn = json.loads(json.dumps(draw_inputs(EVERY_GENERATOR, 3).others[0].values))
    made = {name: runner.make_inputs(value) for name, value in drawn.items()}
    assert type(made["count"]) is int and type(made["flag"]) is bool
    assert (made["counts"].dtype, made["counts"].shape) == (jnp.int32, (2, 3))
    assert (made["mask"].dtype, made["mask"].shape) == (jnp.bool_, (4,))
    assert (made["nested"]["x"].dtype, made["nested"]["x"].shape) == (jnp.float32, (2,))
    assert type(made["nested"]["n"]) is int


def test_a_lesson_without_a_grading_block_cannot_be_checked(lesson):
    from dataclasses import replace

    from lessonkit.errors import UsageError

    parts = tuple(
        replace(
            part,
            sections=tuple(
                replace(s, items=tuple(i for i in s.items if i is not lesson.grading))
                for s in part.sections
            ),
        )
        for part in lesson.parts
    )
    with pytest.raises(UsageError, match="declares no grading"):
        grading_of(replace(lesson, parts=parts))


# --------------------------------------------------------------------------- messages


def test_errors_show_only_the_learners_lines(lesson):
    plan = plan_submission(_submission(lesson), lesson)
    task = plan.task_cell("make-it-yours")
    line = task.offset + 3
    error = ErrorInfo(
        kind="exception",
        type="TypeError",
        module="builtins",
        message="bad operand\n--------------------\nFor simplicity, JAX has removed frames",
        frames=((task.index, line, 1), (task.index, line, 40)),
    )
    text = explain_error(error, plan, 60)
    assert text.splitlines()[0] == "TypeError: bad operand"
    assert "JAX has removed" not in text
    assert f"line {line}: norm_squared = todo(" in text
    assert "(repeated 40 times)" in text


def test_exit_and_timeout_messages(lesson):
    plan = plan_submission(_submission(lesson), lesson)
    frames = ((0, 3, 1),)
    exit_error = ErrorInfo("exit", "SystemExit", "builtins", "", frames, exit_code=3)
    assert "sys.exit(3)" in explain_error(exit_error, plan, 60)
    timeout = ErrorInfo("timeout", "CellTimeout", "__main__", "", frames)
    assert "time limit of 2.5 s" in explain_error(timeout, plan, 2.5)


def test_child_endings_are_explained():
    assert "exited with status 0" in describe_end(0)
    assert "ran out of memory" in describe_end(-signal.SIGKILL)
    assert "CPU time" in describe_end(-signal.SIGXCPU)


def test_json_report_has_exactly_the_agreed_keys():
    report = GradeReport(
        "state-02",
        "attempt.py",
        (TaskResult("make-it-yours", "Make it yours", "failed", "`x` differs.", "A hint."),),
        (PrerequisiteResult("Step 1 · Prepare the inputs", "passed", ""),),
        1.23456,
    )
    data = json.loads(json.dumps(report.to_json()))
    assert list(data) == REPORT_KEYS
    assert data["schema"] == 4 and data["passed"] is False and data["seconds"] == 1.235
    task_keys = ["id", "title", "status", "message", "hint", "optional", "check", "path", "mistake"]
    assert list(data["tasks"][0]) == task_keys
    assert list(data["prerequisites"][0]) == ["name", "status", "message"]


def test_table_shows_messages_literally_and_without_colour(monkeypatch):
    from rich.console import Console

    from lessonkit.grade.judging.report import report_view

    report = GradeReport(
        "state-02",
        "attempt.py",
        (
            TaskResult(
                "repair", "Repair", "failed", "`fixed` is [1.8, -0.6]; expected [bold]", "Hint."
            ),
        ),
        (),
        2.0,
    )
    console = Console(record=True, width=120, no_color=True, force_terminal=True)
    console.print(report_view(report))
    text = console.export_text()
    assert "[1.8, -0.6]; expected [bold]" in text
    assert "Hint: Hint." in text and "0 of 1 tasks passed" in text


def test_batch_table_keeps_the_file_column_readable_in_80_columns(lesson):
    from rich.console import Console

    from lessonkit.grade.batches.kind import BatchEntry
    from lessonkit.grade.batches.local import unreadable
    from lessonkit.grade.judging.report import batch_table

    long_name = "/home/instructor/course-2026/submissions/bob-smith/state-02-final-version.ipynb"
    paths = [Path("alice/state-02.py"), Path(long_name)]
    entries = [BatchEntry(p, unreadable(lesson, p, "unreadable", 1.0)) for p in paths]
    console = Console(record=True, width=80, no_color=True)
    console.print(batch_table(entries, [(t.id, t.title) for t in lesson.tasks]))
    lines = console.export_text().splitlines()
    assert max(len(line) for line in lines) <= 80
    file_cells = [line.split("│")[1].strip() for line in lines if line.startswith("│")]
    assert "".join(file_cells) == "alice/state-02.py" + long_name
    assert file_cells[0] == "alice/state-02.py"  # a short name is never folded
    caption = " ".join(" ".join(lines).split())
    assert all(t.title in caption for t in lesson.tasks)


# --------------------------------------------------------------------------- the child's parts


def test_inputs_are_stripped_only_where_they_are_plain_assignments():
    cell = CellSpec(0, "params = 1\nx = 2\nparams['a'] = 3\ny = x\n", 10, "setup", ())
    ((code, ()),) = cells.compile_cell(cell, frozenset({"params", "x"}))
    namespace = {"params": {}, "x": 5}
    exec(code, namespace)
    assert namespace["params"] == {"a": 3} and namespace["y"] == 5


def _run_in_pieces(source: str, change=None) -> tuple[dict, int]:
    """A task cell that grades `g` and `s`, run as the runner runs it with `g` changed where
    the cell binds it (`vary: g`): the namespace after, and how many bindings changed."""
    cell = CellSpec(0, source, 0, "task", ("g", "s"), varies=("g",))
    calls = varied_calls.VariedCalls(None, lambda v: v)
    undo = calls.install(calls.prepare((change or ChangedCall("g", "shift_key", "k", 1.0),)))
    bind, namespace = calls.binder(), {}
    try:
        for code, changed in cells.compile_cell(cell, frozenset()):
            exec(code, namespace)
            for name in changed:
                namespace[name] = bind(namespace[name], name)
        return namespace, calls.reached()
    finally:
        undo()


def test_a_name_the_cell_binds_is_changed_where_it_binds_it_once():
    """Issue 60: what the cell computes from g after binding it follows the change, what it
    works out without g does not; the first value the change fits is changed, once."""
    space, reached = _run_in_pieces('g = {"k": 1.0}\ns = g["k"] * 2\nt = 2.0\ng = dict(g)\n')
    assert (space["g"], space["s"], space["t"], reached) == ({"k": 2.0}, 4.0, 2.0, 1)
    # a value the change does not fit is no binding reached: the next one is changed
    space, reached = _run_in_pieces('g = None\ng = {"k": 1.0}\ns = g["k"]\n')
    assert (space["s"], reached) == (2.0, 1)
    # beside an ungraded name, changed; beside a graded one, or inside a block, not
    space, reached = _run_in_pieces('_, g = 0, {"k": 1.0}\ns = g["k"]\n')
    assert (space["s"], reached) == (2.0, 1)
    space, reached = _run_in_pieces('g, s = {"k": 1.0}, 1.0\n')
    assert (space["g"], reached) == ({"k": 1.0}, 0)
    space, reached = _run_in_pieces('if True:\n    g = {"k": 1.0}\ns = g["k"]\n')
    assert (space["s"], reached) == (1.0, 0)


def test_a_changed_binding_keeps_the_cells_lines():
    """The pieces keep the cell's own line numbers, so an error names the learner's line."""
    cell = CellSpec(
        3, 'g = {"k": 1.0}\ns = 1\nraise ValueError\n', 10, "task", ("g",), varies=("g",)
    )
    pieces = cells.compile_cell(cell, frozenset())
    assert [changed for _, changed in pieces] == [("g",), ()]
    with pytest.raises(ValueError) as caught:
        for code, _ in pieces:
            exec(code, {})
    assert caught.value.__traceback__.tb_next.tb_lineno == 13


def test_only_inputs_bound_beside_other_names_at_the_top_are_handed_on():
    """`value, grads = ...` cannot be stripped, so the runner hands the given `grads` on after
    the cell; a step that binds an input inside a block keeps its own value (issue 60)."""
    given = frozenset({"params", "x", "grads"})
    beside = cells.bound_beside_others
    assert beside("value, grads = f(params)\nparams = 2\n", given) == {"grads"}
    assert beside("params, x = 1, 2\ny: int = 3\n", given) == frozenset()
    assert beside("if True:\n    params = 1\n    value, grads = 1, 2\n", given) == frozenset()
    assert beside("def f(:\n", given) == frozenset()


def test_syntax_errors_are_reported_with_file_lines():
    with pytest.raises(cells.CompileError) as caught:
        cells.compile_cell(CellSpec(2, "a = 1\nb = (\n", 40, "setup", ()), frozenset())
    assert caught.value.report["kind"] == "syntax"
    assert caught.value.report["frames"][0][:2] == [2, 42]


def test_output_capture_keeps_head_and_tail():
    capture = channel.OutputCapture()
    capture.write("start\n")
    capture.write("x" * 100_000)
    capture.write("\nend")
    text = capture.text()
    assert text.startswith("start\n") and text.endswith("\nend")
    assert re.search(r"\[\.\.\. [\d,]+ characters not shown \.\.\.\]", text)
    assert len(text) < 10_000


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 3 * wire.MAX_STRING),
    st.integers(0, wire.MAX_DEPTH + 4),
    st.integers(1, wire.MAX_ELEMENTS + 8),
)
def test_what_the_child_writes_the_parent_reads(length, depth, size):
    """One set of limits (`grade/wire.py`): an honest report at or past any of them parses."""
    import jax
    import numpy as np

    encoder = Encoder(np, jax)
    value: object = {"text": "e" * length, "array": np.zeros(size, np.float32)}
    for _ in range(depth):
        value = [value]
    parsed = reported.parse_value(encoder.encode(value))
    while isinstance(parsed, reported.Sequence):
        (parsed,) = parsed.items
    if isinstance(parsed, reported.Mapping):
        text = dict(parsed.items)["text"]
        assert text.length == length and len(text.value) == min(length, wire.MAX_STRING)


def test_encoder_reports_data_without_running_learner_code():
    import jax
    import jax.numpy as jnp
    import numpy as np

    encoder = Encoder(np, jax)
    value = encoder.encode({"weight": jnp.array([1.0, -1.0]), "bias": jnp.array(0.0), "n": 3})
    assert reported.parse_value(value) == tree(
        weight=arr([1.0, -1.0]), bias=arr([0.0], shape=[]), n=num(3, "int")
    )

    class Sneaky(dict):
        def items(self):
            raise RuntimeError("learner code ran")

    assert encoder.encode(Sneaky(a=1)) == {"t": "other", "type": "Sneaky"}
    assert encoder.encode(jax.tree.structure({"a": 1}))["t"] == "other"
    big = encoder.encode(jnp.zeros((100, 100)))
    assert big == {"t": "array", "dtype": "float32", "shape": [100, 100]}


def test_encoder_reads_exact_types_only():
    """A subclass can lie about its shape, dtype and data; complex values are not numbers."""
    import jax
    import numpy as np

    encoder = Encoder(np, jax)

    class Liar(np.ndarray):
        @property
        def shape(self):
            raise RuntimeError("learner code ran")

    liar = np.array([96.0]).view(Liar)
    assert encoder.encode(liar) == {"t": "other", "type": "Liar"}
    assert encoder.encode(np.complex64(96 + 1j))["t"] == "other"
    assert encoder.encode(np.array([1 + 2j]))["t"] == "other"
    assert encoder.encode(96 + 0j) == {"t": "other", "type": "complex"}
    assert encoder.encode(np.float32(96.0)) == {
        "t": "array",
        "dtype": "float32",
        "shape": [],
        "data": [96.0],
    }
    key = encoder.encode(jax.random.key(0))
    assert key["t"] == "key" and key["impl"] == "fry" and key["shape"] == []
    assert key["data"] == [int(v) for v in np.asarray(jax.random.key_data(jax.random.key(0)))]


def test_module_guard_restores_patches_and_names_them():
    import jax
    import jax.numpy as jnp

    guard = ModuleGuard([jnp], jax, type(jnp.zeros(())))
    original = jnp.allclose
    jnp.allclose = lambda *a, **k: True
    jnp.extra_name = 1
    changed = guard.restore()
    assert jnp.allclose is original and not hasattr(jnp, "extra_name")
    assert set(changed) == {"jax.numpy.allclose", "jax.numpy.extra_name"}
    assert guard.restore() == []


def test_module_guard_finds_a_value_replaced_under_the_same_names():
    """No name added or removed: only an identity check tells the change (an object equal to
    everything is still another object)."""
    import jax
    import jax.numpy as jnp

    class EqualToAll:
        def __eq__(self, other):
            return True

        __hash__ = object.__hash__

    guard = ModuleGuard([jnp], jax, type(jnp.zeros(())))
    original, pi = jnp.allclose, jnp.pi
    jnp.allclose = lambda *a, **k: True
    assert guard.restore() == ["jax.numpy.allclose"] and jnp.allclose is original
    jnp.pi = EqualToAll()
    assert guard.restore() == ["jax.numpy.pi"] and jnp.pi is pi
    assert guard.restore() == []


def test_long_messages_end_where_a_sentence_ends():
    from lessonkit.grade.judging.explain import MAX_MESSAGE_CHARS, _short_message

    long = "The first sentence is short. " + "A much longer second sentence follows. " * 20
    short = _short_message(long)
    assert short.startswith("The first sentence is short.") and short.endswith(". (…)")
    assert len(short) <= MAX_MESSAGE_CHARS
    words = _short_message("word " * 200)
    assert words.endswith("word (…)") and "wor (…)" not in words


def test_a_wrong_optional_answer_is_named_in_the_summary():
    from lessonkit.grade.judging.report import summary_line

    report = GradeReport(
        "state-02",
        "attempt.py",
        (
            TaskResult("make-it-yours", "Make it yours", "passed", ""),
            TaskResult("adam", "Adam's first step by hand", "failed", "wrong", "hint", True),
        ),
        (),
        1.0,
    )
    assert not report.passed
    line = summary_line(report).plain
    assert "1 of 1 tasks passed" in line and '"Adam\'s first step by hand"' in line
    assert "fails the check" in line and "All" not in line


def test_keys_that_differ_only_in_their_data_say_which_words_differ():
    """Two key arrays of one layout must not read alike in a message, or "is X; expected X"."""
    expected = reported.KeyArray("fry", "key", (2,), (0, 1, 2, 3))
    got = dataclasses.replace(expected, data=(0, 1, 2, 4))
    assert [d.kind for d in differences(expected, got)] == ["value"]
    assert describe(expected) != describe(got)
    assert describe(got) == "a key<fry>[2] PRNG key array with key data [0, 1, 2, 4]"
    many = dataclasses.replace(expected, shape=(4,), data=tuple(range(8)))
    assert describe(many) == "a key<fry>[4] PRNG key array with key data [0, 1, 2, 3, 4, 5, ...]"
    unread = dataclasses.replace(expected, data=None)
    assert describe(unread) == "a key<fry>[2] PRNG key array"


# --------------------------------------------------------------------------- source probes


def _sources(call: str, transform: str, key: str, value):
    import jax
    import jax.numpy as jnp

    installer = varied_calls.VariedCalls(jax, lambda v: jnp.asarray(v, dtype=jnp.float32))
    source = ChangedCall(call, transform, key, value)
    return installer.install(installer.prepare((source,)))


def test_a_gradient_probe_changes_every_derivative_where_it_is_made():
    """B4: a second name bound in the same statement carries the change too."""
    import jax
    import jax.numpy as jnp

    original = jax.grad

    def loss(p):
        return p["scale"] * jnp.sum(p["w"] ** 2)

    tree = {"w": jnp.array([1.0, 2.0]), "scale": jnp.array(1.0)}
    undo = _sources("gradients", "shift_key", "scale", 1.0)
    try:
        g, scale = (lambda G: (G, G["scale"] + 0.0))(jax.grad(loss)(tree))
        _, g2 = jax.value_and_grad(loss)(tree)
        (pulled,) = jax.vjp(loss, tree)[1](jnp.array(1.0))
        jac = jax.jacrev(loss)(tree)
        aux = jax.grad(lambda p: (loss(p), 7), has_aux=True)(tree)
        plain = jax.grad(lambda w: jnp.sum(w**2))(tree["w"])  # no `scale` key: unchanged
    finally:
        undo()
    assert jax.grad is original
    for derivative in (g, g2, pulled, jac, aux[0]):
        assert float(derivative["scale"]) == 6.0  # 5.0 + 1.0
        assert derivative["w"].tolist() == [2.0, 4.0]
    assert float(scale) == 6.0 and aux[1] == 7
    assert plain.tolist() == [2.0, 4.0]


def test_a_call_probe_changes_what_the_library_returns_through_every_path():
    """B5: a copy through a list or a closure is the changed value."""
    import jax
    import jax.numpy as jnp
    import optax

    original = optax.apply_updates
    params = {"weight": jnp.array([1.0, -1.0]), "bias": jnp.array(0.0)}
    updates = {"weight": jnp.array([0.1, 0.1]), "bias": jnp.array(0.1)}
    undo = _sources("optax.apply_updates", "shift_key", "weight", [1.0, 1.0])
    try:
        steps = [optax.apply_updates(params, updates)]
        later = (lambda: steps[0])()
    finally:
        undo()
    assert optax.apply_updates is original
    assert later["weight"].tolist() == pytest.approx([2.1, 0.1])
    assert float(later["bias"]) == pytest.approx(0.1)
    assert jax.tree.structure(later) == jax.tree.structure(params)


def test_a_function_each_instance_carries_moves_optax_step_however_reached():
    """Issue 50: optax's updates move where the transformation is made, so its step moves
    through optax.apply_updates, updates added by hand and an unpacked transformation
    alike, once (a chain's update calls its parts'), and the constructor is put back."""
    import jax
    import jax.numpy as jnp
    import optax

    original = optax.GradientTransformation.__new__
    params = {"weight": jnp.array([1.0, -1.0]), "bias": jnp.array(0.0)}
    grads = {"weight": jnp.array([0.5, -2.0]), "bias": jnp.array(1.0)}

    def steps():
        adam = optax.adam(0.1)
        updates, _ = adam.update(grads, adam.init(params), params)
        init, update = optax.adam(0.1)
        unpacked, _ = update(grads, init(params), params)
        return [
            optax.apply_updates(params, updates),
            jax.tree.map(lambda p, u: p + u, params, updates),
            jax.tree.map(lambda p, u: p + u, params, unpacked),
        ]

    plain = steps()
    undo = _sources("optax.GradientTransformation.update", "shift_key", "weight", [1.0, 1.0])
    try:
        moved = steps()
    finally:
        undo()
    assert optax.GradientTransformation.__new__ is original
    for step, was in zip(moved, plain, strict=True):
        assert jnp.allclose(step["weight"], was["weight"] + 1.0)
        assert jnp.allclose(step["bias"], was["bias"])
    assert all(jnp.allclose(a["weight"], b["weight"]) for a, b in zip(steps(), plain, strict=True))


def test_probes_of_inputs_change_drawn_data_in_the_parent(lesson):
    from lessonkit.grade.preparation.probes import probe_runs

    grading = grading_of(lesson)
    extra = Probe(
        "params with an extra leaf", "repair", "input", "params", "add_leaf", "extra",
        [1.0, 2.0, 3.0], (), 1,
    )  # fmt: skip
    grading = dataclasses.replace(grading, probes=(*grading.probes, extra))
    runs = {run.probe.name: run for run in probe_runs(grading, seed=7)}
    layer = runs["params with an extra leaf"]
    added = layer.inputs["params"][layer.probe.key]  # the key and values of this run's draw
    assert layer.sources == () and len(added) == 3 and added == list(layer.probe.value)
    assert set(layer.inputs) == set(grading.input_names)
    replaced = runs["another result in updated"]
    assert replaced.inputs["updated"] == {"weight": [0.0, 0.0], "bias": 0.0}
    moved = runs["optax's step moved"]
    assert moved.sources[0].call == "optax.GradientTransformation.update"
    # a change of JAX's derivatives and of g where the cell binds it: one change, two places;
    # a change of g alone where the cell binds it: the name is the call
    dropped = runs["gradients without a scale leaf"]
    assert [(c.call, c.transform, c.key) for c in dropped.sources] == [
        ("gradients", "drop_key", "scale"),
        ("g", "drop_key", "scale"),
    ]
    shifted = runs["a wrong scale in g"]
    assert [(c.call, c.transform, c.key) for c in shifted.sources] == [("g", "shift_key", "scale")]
    # every probe runs on inputs drawn for it alone: no two scenarios share an input set
    # (issue 34, F1-F2: comparing scenarios inside one process tells nothing)
    assert all(set(grading.input_names) <= set(run.inputs) for run in runs.values())
    own = [{k: run.inputs[k] for k in grading.input_names} for run in runs.values()]
    drawn = [s.values for s in draw_inputs(grading, 7).others]
    for number, inputs in enumerate(own):
        assert inputs not in own[:number] and inputs not in drawn
    assert probe_runs(grading, seed=7) == probe_runs(grading, seed=7)


def test_every_probe_runs_in_copies_on_inputs_and_members_of_their_own(lesson):
    """Issue 34, F1: a probe runs three times, each copy drawn apart (inputs and, for a
    family, its member), so a cell that counts scenarios must bet on three places at once.
    Copy 1 draws as a single probe run always did, so a seed replays it."""
    from lessonkit.grade.preparation import probes
    from lessonkit.grade.preparation.probes import probe_runs

    grading = grading_of(lesson)
    runs = probe_runs(grading, seed=7)
    by_probe: dict[str, list] = {}
    for run in runs:
        by_probe.setdefault(run.probe.name, []).append(run)
    assert [len(copies) for copies in by_probe.values()] == [3] * len(grading.probes)
    assert probes.COPIES == 3 and len({run.name for run in runs}) == len(runs)
    names = grading.input_names
    pairs = zip(grading.probes, by_probe.values(), strict=True)
    for number, (probe, copies) in enumerate(pairs, 1):
        assert [run.copy for run in copies] == [1, 2, 3]
        own = [{k: run.inputs[k] for k in names} for run in copies]
        assert all(own[i] not in own[:i] for i in range(1, 3)), probe.name
        if probe.transform in ("add_leaf", "shift_key"):  # a family: each copy its own member
            members = [(run.probe.key, run.probe.value) for run in copies]
            assert len(set(members)) == 3, members
        first = random.Random(f"7/probe/{number}")  # copy 1: the draw of a single probe run
        assert {k: v for k, v in draw_set(grading, first).items() if k != probe.target} == {
            k: v for k, v in own[0].items() if k != probe.target
        }
    assert probe_runs(grading, seed=7) == runs


# --------------------------------------------------------------------------- edges and accept


def test_b7_each_edge_is_a_family_of_input_sets_on_every_run():
    """Edge k sets its own leaf and draws the others; drawn sets are the same as without.
    Each edge is graded on its value and on values drawn around it (issue 34, F4-F5)."""
    xs = Uniform(-9.0, -1.0, (3,), 2, edges=((-1000.0, -500.0, -9.5),))
    n = Integers(0, 5, edges=(-7, 99))
    plain = dataclasses.replace(
        EVERY_GENERATOR, inputs=(("xs", Uniform(-9.0, -1.0, (3,), 2)), ("n", Integers(0, 5)))
    )
    edged = dataclasses.replace(plain, inputs=(("xs", xs), ("n", n)))
    inputs = draw_inputs(edged, 11)
    kinds = [s.kind for s in inputs.others]
    assert kinds == ["drawn"] * 8 + ["edge"] * 13  # xs: itself and 4 around; n: 2 x (1 + 3)
    assert (inputs.count("drawn"), inputs.count("edge")) == (8, 13)
    assert inputs.others[:8] == draw_inputs(plain, 11).others
    sets = {s.name: s.values for s in inputs.others[8:]}
    assert list(sets) == [
        "edge-1", "edge-1-beyond", "edge-1-between", "edge-1-across", "edge-1-close",
        "edge-2", "edge-2-beyond", "edge-2-between", "edge-2-across",
        "edge-3", "edge-3-beyond", "edge-3-between", "edge-3-across",
    ]  # fmt: skip
    declared = [-1000.0, -500.0, -9.5]
    assert sets["edge-1"]["xs"] == declared and 0 <= sets["edge-1"]["n"] <= 5
    for drawn_x, edge_x in zip(sets["edge-1-beyond"]["xs"], declared, strict=True):
        assert 2 * edge_x - (-9.0) <= drawn_x <= edge_x  # farther from the bound -9, at most twice
    for drawn_x, edge_x in zip(sets["edge-1-between"]["xs"], declared, strict=True):
        assert edge_x <= drawn_x <= -9.0
    assert all(-11.0 <= v <= -7.0 for v in sets["edge-1-across"]["xs"])  # -9 +- a quarter span
    close = sets["edge-1-close"]["xs"]
    assert close != declared and all(
        abs(c - e) <= 1e-4 for c, e in zip(close, declared, strict=True)
    )
    assert sets["edge-2"]["n"] == -7 and all(-9.0 <= v <= -1.0 for v in sets["edge-2"]["xs"])
    assert -14 <= sets["edge-2-beyond"]["n"] <= -7 and -7 <= sets["edge-2-between"]["n"] <= 0
    assert sets["edge-3"]["n"] == 99 and 99 <= sets["edge-3-beyond"]["n"] <= 193
    assert all(type(sets[k]["n"]) is int for k in sets)
    assert draw_inputs(edged, 11) == inputs  # the seed replays the edge sets too
    assert draw_inputs(edged, 12) != inputs  # and another seed draws others around the edges
    assert json.loads(json.dumps(sets["edge-1"])) == sets["edge-1"]


def test_probe_families_draw_the_added_key_the_values_and_the_shift(lesson):
    """Issue 34, F6: the published key and value are an example of the family, not the
    instance; a dropped key and a replaced value stay as declared."""
    from lessonkit.grade.preparation.probes import family_member

    added = Probe("a", "t", "input", "params", "add_leaf", "extra", (1.0, 2.0, 3.0), (), 1)
    shift = Probe("s", "t", "gradients", "gradients", "shift_key", "layer", 1.0, (), 1)
    dropped = Probe("d", "t", "input", "params", "drop_key", "bias", None, (), 1)
    members = [family_member(added, random.Random(n)) for n in range(20)]
    assert len({m.key for m in members}) == 20 and all(m.key.isidentifier() for m in members)
    assert all(len(m.value) == 3 and all(0.5 <= abs(v) <= 3.0 for v in m.value) for m in members)
    assert len({m.value for m in members}) == 20
    shifts = {family_member(shift, random.Random(n)).value for n in range(20)}
    assert len(shifts) > 10 and all(0.5 <= abs(v) <= 2.0 for v in shifts)
    assert {v > 0 for v in shifts} == {True, False}
    assert family_member(dropped, random.Random(1)) == dropped


def test_b16_accept_widens_only_what_the_task_declares():
    from lessonkit.lesson.rules.accept import Accept

    expected = tree(weight=arr([1.4, -0.8]), bias=arr([0.2], shape=[]))
    ordered = reported.Mapping(
        (("weight", arr([1.4, -0.8], dtype="float64")), ("bias", num(0.2))), "OrderedDict"
    )
    both = Accept("any", ("float32", "float64"))
    assert [d.kind for d in differences(expected, ordered)] == ["node", "dtype"]
    assert differences(expected, ordered, both) == ()
    assert [d.kind for d in differences(expected, ordered, Accept(floats=both.floats))] == ["node"]
    assert [d.kind for d in differences(expected, ordered, Accept("any"))] == ["dtype"]
    # still strict about everything else: keys, other dtypes, values
    missing = reported.Mapping((("weight", arr([1.4, -0.8], dtype="float64")),), "OrderedDict")
    assert [d.kind for d in differences(expected, missing, both)] == ["missing"]
    half = tree(weight=arr([1.4, -0.8], dtype="float16"), bias=arr([0.2], shape=[]))
    assert [d.kind for d in differences(expected, half, both)] == ["dtype"]
    wrong = tree(weight=arr([1.4, 0.8], dtype="float64"), bias=arr([0.2], shape=[]))
    assert [d.kind for d in differences(expected, wrong, both)] == ["value"]
    opaque = reported.Opaque("other", "MyDict")
    assert differences(expected, opaque, both)[0].kind == "node"


def test_b16_encoder_reads_exact_ordered_and_default_dicts_only():
    """They are C types read by their own C methods; a subclass stays a name."""
    from collections import OrderedDict, defaultdict

    import jax
    import numpy as np

    encoder = Encoder(np, jax)
    ordered = OrderedDict(bias=1.0, weight=2.0)
    ordered.move_to_end("bias")
    assert reported.parse_value(encoder.encode(ordered)) == reported.Mapping(
        (("weight", num(2.0)), ("bias", num(1.0))), "OrderedDict"
    )
    counts = defaultdict(int, a=1)
    assert reported.parse_value(encoder.encode(counts)) == reported.Mapping(
        (("a", num(1, "int")),), "defaultdict"
    )

    class Sneaky(OrderedDict):
        def items(self):
            raise RuntimeError("learner code ran")

    assert encoder.encode(Sneaky(a=1)) == {"t": "other", "type": "Sneaky"}
    with pytest.raises(reported.Interference):
        reported.parse_value({"t": "dict", "type": "Sneaky", "items": []})


def test_b8_a_grading_childs_environment_is_an_allow_list(monkeypatch):
    from lessonkit.run.process import child_environment

    for name in ("INSTRUCTOR_TOKEN", "AWS_SECRET_ACCESS_KEY", "PYTHONPATH", "LD_PRELOAD"):
        monkeypatch.setenv(name, "tok-b8")
    env = child_environment(
        "allow-list", {"JAX_COMPILATION_CACHE_DIR": "/cache"}, scratch="/scratch"
    )
    assert set(env) == {
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "LC_ALL",
        "PYTHONIOENCODING",
        "JAX_PLATFORMS",
        "MPLBACKEND",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONHASHSEED",
        "TF_CPP_MIN_LOG_LEVEL",
        "JAX_COMPILATION_CACHE_DIR",
    }
    assert env["PATH"] == "/usr/local/bin:/usr/bin:/bin"
    assert env["HOME"] == env["TMPDIR"] == "/scratch"
    assert env["LANG"] == env["LC_ALL"] == "C.UTF-8" and env["JAX_PLATFORMS"] == "cpu"
    assert "tok-b8" not in env.values()
    with pytest.raises(ValueError, match="INSTRUCTOR_TOKEN"):
        child_environment("allow-list", {"INSTRUCTOR_TOKEN": "tok-b8"}, scratch="/scratch")


def _junk_cells(lesson, kind: str) -> list[str]:
    """Cells made from the lesson's own, the costliest shapes for cell matching."""
    import random

    from lessonkit.grade.submission.plan import practice_cells

    known = [c.source for c in practice_cells(lesson)]
    rng = random.Random(15)

    def shaped(number: int) -> str:
        base = known[number % len(known)]
        if kind == "tasks":  # task cells full of placeholders
            task = lesson.tasks[number % len(lesson.tasks)].id
            return f"# TASK {task}\n" + ";".join(f"a{number}_{i}=todo({i})" for i in range(100))
        if kind == "dense" or (kind == "dense+lines" and number < 200):  # many nodes a byte
            return ";".join(f"a{number}_{i}={i}" for i in range(120))
        lines = base.splitlines()
        rng.shuffle(lines)
        if kind.endswith("lines"):  # the lesson's tokens, in another order
            return "\n".join(lines) + f"\nz{number} = 1"
        chars = list(base)  # the lesson's characters, in another order
        rng.shuffle(chars)
        return "# " + "".join(chars).replace("\n", "\n# ")

    from lessonkit.defaults import MAX_CODE_CELLS

    cells, size = [], 0
    while len(cells) < MAX_CODE_CELLS:
        cell = shaped(len(cells))
        size += len(cell.encode()) + 6
        if size > 1_990_000:
            break
        cells.append(cell)
    return cells


@pytest.mark.parametrize("kind", ["lines", "chars", "dense", "dense+lines", "tasks"])
def test_b15_planning_a_file_at_the_caps_is_bounded(lesson, tmp_path, kind):
    """Reading, planning and reviewing the largest file the caps allow costs the parent
    under 1 s."""
    import time

    from lessonkit.defaults import MAX_CODE_CELLS, MAX_CODE_CHARACTERS
    from lessonkit.grade.preparation.prepared import prepare_lesson
    from lessonkit.grade.submission.known_answers import varied_of
    from lessonkit.grade.submission.review import review_marks
    from lessonkit.grade.submission.sources import read_submission

    path = tmp_path / "junk.py"
    path.write_text("".join(f"# %%\n{c}\n" for c in _junk_cells(lesson, kind)), "utf-8")
    assert path.stat().st_size <= MAX_CODE_CHARACTERS
    varied = varied_of(prepare_lesson(lesson, 5).grading.probes)
    started = time.process_time()
    plan = plan_submission(read_submission(path), lesson)
    review_marks(plan, varied)
    spent = time.process_time() - started
    assert len(plan.cells) == MAX_CODE_CELLS
    assert spent <= 1.0, f"{kind}: {spent:.2f} s of parent CPU"


def test_one_wire_schema_names_every_tag_both_sides_use():
    """The child writes, and the parent reads, exactly the shapes `grade/wire.py` declares."""
    import typing

    import jax
    import numpy as np

    from lessonkit.grade.channel import protocol

    assert typing.get_args(protocol.ErrorKind) == wire.ERROR_KINDS
    assert typing.get_args(protocol.CellStatus) == wire.CELL_STATUSES
    encoder = Encoder(np, jax)
    samples = [
        None, 3, 2**60, "text", np, np.zeros(3), np.zeros(wire.MAX_ELEMENTS + 1), 1j,
        jax.random.key(0), {1.5: [1, 2]}, {(1,): 1}, [[1]] * (wire.MAX_LEAVES + 1), (1, [2]),
    ]  # fmt: skip
    written = {}
    for sample in samples:
        data = encoder.encode(sample)
        required, optional = wire.VALUES[data[wire.VALUE_TAG]]
        assert required <= data.keys() - {wire.VALUE_TAG} <= required | optional
        reported.parse_value(data)
        written.setdefault(data[wire.VALUE_TAG], data)
    deep: object = 1
    for _ in range(wire.MAX_DEPTH + 1):
        deep = [deep]
    written.setdefault("big", encoder.encode(deep))
    assert set(written) == set(wire.VALUES), "a value tag the child never writes"
    for tag, data in written.items():
        with pytest.raises(reported.Interference):
            reported.parse_value({**data, "extra": 1})
        with pytest.raises(reported.Interference):
            reported.parse_value({**data, wire.VALUE_TAG: tag + "?"})


_CELL_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=40)


def _order(grading, seed: int, name: str, data: bytes) -> tuple[str, ...]:
    from lessonkit.grade.preparation.prepared import scenario_order, wire_names
    from lessonkit.settings import scenario_order_from

    replay = scenario_order_from(os.environ)  # as a command reads it
    order = scenario_order(seed, read_submission(Path(name), data), replay)
    return tuple(wire_names(grading, order).values())


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), body=_CELL_TEXT)
def test_scenario_order_is_a_pure_function_of_the_seed_and_the_files_bytes(lesson, seed, body):
    """`--seed N` replays a file's scenario order: asked again, from another path or after
    other files, the same seed and bytes give the same order, the lesson's inputs first."""
    from lessonkit.grade.preparation.prepared import prepare_lesson, wire_names

    grading = prepare_lesson(lesson, 5)
    data = f"# %% [markdown]\n# mine\n# %%\nx = {body!r}\n".encode()
    first = _order(grading, seed, "alice.py", data)
    _order(grading, seed + 1, "other.py", data + b"y = 1\n")  # drawn in between
    assert _order(grading, seed, "submissions/bob.py", data) == first
    assert first[0] == "lesson" and sorted(first) == sorted(wire_names(grading).values())


def test_scenario_order_differs_with_the_seed_and_the_file_and_is_replayed_by_the_setting(
    lesson, monkeypatch
):
    """Issue 34, F1: a count of scenarios says nothing, since the order is drawn per seed
    and file (a fresh seed per command unless `--seed`); the grader's own setting gives
    every file one order."""
    from lessonkit.grade.preparation.prepared import prepare_lesson, wire_names
    from lessonkit.settings import SCENARIO_ORDER_VARIABLE

    grading = prepare_lesson(lesson, 5)
    monkeypatch.delenv(SCENARIO_ORDER_VARIABLE, raising=False)
    by_seed = {_order(grading, seed, "a.py", b"x = 1\n") for seed in range(30)}
    by_file = {_order(grading, 7, "a.py", f"x = {n}\n".encode()) for n in range(30)}
    assert len(by_seed) > 20 and len(by_file) > 20
    monkeypatch.setenv(SCENARIO_ORDER_VARIABLE, "1")
    replayed = {_order(grading, seed, "a.py", f"x = {seed}\n".encode()) for seed in range(5)}
    assert len(replayed) == 1 and replayed != {tuple(wire_names(grading).values())}


@pytest.mark.parametrize(
    ("transform", "key", "value"),
    [
        ("add_leaf", "extra", (1.0, 2.0, 3.0)),
        ("drop_key", "bias", None),
        ("shift_key", "weight", (0.1, -0.3)),
        ("shift_key", "bias", 1e-7),  # rounding: the parent keeps 6 places, float32 ~7 digits
        ("shift_key", "", 0.5),
        ("shift_key", "missing", 1.0),  # a key the tree lacks: both leave it as it is
        ("drop_key", "missing", None),
    ],
)
def test_the_parent_and_the_child_transform_alike(transform, key, value):
    """Issue 33, item 3: one implementation of each probe transform (`lessonkit.grading_child.
    transforms`), applied by the parent to drawn data and by the child to arrays."""
    import jax.numpy as jnp

    from lessonkit.grade.preparation.probes import _changed

    plain = {"weight": [1.25, -0.5], "bias": 0.2}
    probe = Probe("p", "t", "input", "params", transform, key, value, (), 1)
    by_parent = _changed(plain, probe)
    calls = varied_calls.VariedCalls(None, lambda v: jnp.asarray(v, dtype=jnp.float32))
    source = ChangedCall("x.y", transform, key, value)
    ((_, (change, _)),) = calls.prepare((source,))
    arrays = {k: jnp.asarray(v, dtype=jnp.float32) for k, v in plain.items()}
    by_child = change(arrays)
    assert sorted(by_parent) == sorted(by_child)
    for name, expected in by_parent.items():
        assert by_child[name].tolist() == pytest.approx(expected, abs=1e-6)
    if key == "missing":
        assert by_parent == plain and by_child is arrays


@pytest.mark.parametrize("source", ["input", "gradients", "call"])
def test_a_transform_without_a_row_fails_loudly_in_the_parent(lesson, source):
    """Every choice about a transform is read from its row (`lessonkit.grading_child.transforms`):
    a probe naming one that has none stops the grading where the parent builds the probe's
    scenarios, rather than being sent as it is or drawn as some other transform."""
    from lessonkit.grade.preparation.probes import probe_runs

    grading = grading_of(lesson)
    target = {"input": grading.input_names[0], "gradients": "gradients", "call": "optax.sgd"}
    twist = Probe("twist", "t", source, target[source], "twist", "w", 1.0, (), 1)
    with pytest.raises(KeyError, match=r"no probe transform is named 'twist'; they are: add_leaf"):
        probe_runs(dataclasses.replace(grading, probes=(twist,)), seed=1)


def test_every_copy_of_a_shifted_call_draws_its_own_bend(lesson):
    """The bend of a changed call's shift is drawn per copy, within the range the child's
    test below covers; a probe that adds or drops a key, or moves an input, has none."""
    from lessonkit.grade.preparation.prepared import prepare_lesson

    runs = prepare_lesson(lesson, 5).probes
    bends = {r.name: s.bend for r in runs for s in r.sources}
    shifted = {n: b for n, b in bends.items() if b is not None}
    assert shifted and len(set(shifted.values())) == len(shifted)
    assert all(0.3 <= d <= 0.6 and 0.7 <= f <= 1.3 for d, f, _ in shifted.values())
    calls = [r for r in runs if r.sources and r.probe.transform != "shift_key"]
    assert calls and all(s.bend is None for r in calls for s in r.sources)


@settings(max_examples=40, deadline=None)
@given(
    depth=st.floats(0.3, 0.6),
    frequency=st.floats(0.7, 1.3),
    phase=st.floats(0.0, 6.283),
    known=st.floats(-4, 4),
    real=st.floats(-4, 4),
)
def test_a_known_answer_does_not_measure_a_bent_shift(depth, frequency, phase, known, real):
    """Issue 43, item 3: a changed call's shift follows the value it moves, so a cell that
    calls it on an answer it knows (0 for a function of its own making) learns how far that
    answer moves, not how far the task's own result does; every leaf still moves."""
    import jax
    import jax.numpy as jnp

    bend = (depth, frequency, phase)
    calls = varied_calls.VariedCalls(jax, lambda v: jnp.asarray(v, dtype=jnp.float32))
    source = ChangedCall("x.y", "shift_key", "", 1.0, bend)
    ((_, (change, _)),) = calls.prepare((source,))
    moved = {v: float(change(jnp.float32(v))) - v for v in (known, real)}
    assert all(0.39 <= by <= 1.61 for by in moved.values()), moved
    apart = abs(math.sin(frequency * real + phase) - math.sin(frequency * known + phase))
    if apart > 1e-3:  # the same place on the bend (a coincidence a run cannot aim for)
        assert moved[known] != pytest.approx(moved[real], abs=1e-4), (bend, moved)


@pytest.mark.parametrize(
    ("statuses", "said"),
    [
        # state-02 by hand: three required tasks, one optional (Adam's first step)
        (("passed", "passed", "passed", "passed"), "All 3 tasks passed (and 1 optional)"),
        (("passed", "passed", "passed", "not attempted"), "All 3 tasks passed"),
        (("passed", "failed", "passed", "passed"), "2 of 3 tasks passed (and 1 optional)"),
        (("error", "failed", "failed", "not attempted"), "0 of 3 tasks passed"),
    ],
)
def test_check_batch_feedback_and_gradescope_count_the_tasks_one_way(lesson, statuses, said):
    """Issue 52: a full-marks student's batch feedback said "3 of 4 tasks passed" (the
    optional task counted with the required ones) while `check` said "All 3 tasks passed"."""
    from lessonkit.course.autograder import results_json
    from lessonkit.grade.judging.report import Scoring, summary_line

    assert [t.optional for t in lesson.tasks] == [False, False, False, True]
    tasks = tuple(
        TaskResult(t.id, t.title, status, "", None, t.optional)
        for t, status in zip(lesson.tasks, statuses, strict=True)
    )
    report = GradeReport(lesson.meta.id, "ana.py", tasks, (), 1.0, 7)
    assert summary_line(report).plain.startswith(said)
    assert f"\n\n{said}.\n\n" in report.feedback_markdown()
    assert results_json(report, Scoring.of(lesson), "ran")["output"].startswith(f"{said}.")
