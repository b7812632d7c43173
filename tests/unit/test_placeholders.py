"""The grading child counts a placeholder exactly when the practice file's helper does.

The practice file's `optional_task()` ends a cell quietly when a `todo(...)`-shaped error
reaches it; the child, running the same cell, must report that very error as the cell's
placeholder, and nothing for any other form.
"""

from __future__ import annotations

import contextlib
import io
import textwrap

import pytest

from lessonkit.grading_child.cells import compile_cell
from lessonkit.grading_child.placeholders import PLACEHOLDER_HOOK, PlaceholderWatch
from lessonkit.grading_child.request import CellSpec
from lessonkit.lesson.layout import OPTIONAL_HELPER, TODO_HELPER

FORMS = {
    "todo": 'todo("x: later")',
    "raise TODO": 'raise NotImplementedError("TODO: x: later")',
    "subclass": 'class Later(NotImplementedError):\n    pass\nraise Later("TODO: x")',
    "todo in a function": 'def f():\n    return todo("x")\ny = f()',
    "other text": 'raise NotImplementedError("x: later")',
    "bare": "raise NotImplementedError",
    "lower case": 'raise NotImplementedError("todo: x")',
    "other type": 'raise ValueError("TODO: x")',
    "dead todo": 'if False:\n    todo("x")\ny = 1',
    "nothing": "y = 1",
}


def _helper() -> dict:
    namespace: dict = {"contextlib": contextlib}
    exec(TODO_HELPER + "\n\n" + OPTIONAL_HELPER, namespace)
    return namespace


def _optional_cell(form: str) -> str:
    return "# TASK t\nwith optional_task():\n" + textwrap.indent(form, "    ") + "\n"


def _helper_verdict(form: str) -> str:
    """What the practice file does: "left" (ended quietly), "raised" or "ran"."""
    namespace = _helper()
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            exec(_optional_cell(form), namespace)
    except Exception:
        return "raised"
    return "left" if printed.getvalue().startswith("Left for later") else "ran"


def _child_run(source: str) -> tuple[BaseException | None, BaseException | None]:
    """(the error that left the cell, the placeholder the child reports) for a task cell."""
    namespace = _helper()
    watch = namespace[PLACEHOLDER_HOOK] = PlaceholderWatch()
    ((code, ()),) = compile_cell(CellSpec(7, source, 0, "task", ()), frozenset())
    escaped = None
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(code, namespace)
    except Exception as error:
        escaped = error
        watch.note(error)  # what the runner does with an error that leaves the cell
    return escaped, watch.first


@pytest.mark.parametrize("form", FORMS.values(), ids=FORMS.keys())
def test_the_child_and_the_practice_helper_agree_on_every_form(form):
    helper = _helper_verdict(form)
    escaped, placeholder = _child_run(_optional_cell(form))
    assert (placeholder is not None) == (helper == "left"), (helper, placeholder)
    assert (escaped is not None) == (helper == "raised")
    required_escaped, required_placeholder = _child_run("# TASK t\n" + form + "\n")
    assert (required_placeholder is not None) == (helper == "left")
    if required_placeholder is not None:
        assert required_placeholder is required_escaped


def test_the_first_placeholder_is_reported_with_its_cells_line():
    source = '# TASK t\nwith optional_task():\n    todo("first")\ntodo("second")\n'
    escaped, placeholder = _child_run(source)
    assert str(escaped) == "TODO: second" and str(placeholder) == "TODO: first"
    tb = placeholder.__traceback__
    lines = []
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<cell 7>":
            lines.append(tb.tb_lineno)
        tb = tb.tb_next
    assert lines == [3]


def test_a_placeholder_the_cell_catches_itself_still_ran():
    _, placeholder = _child_run('# TASK t\ntry:\n    y = todo("x")\nexcept Exception:\n    pass\n')
    assert str(placeholder) == "TODO: x"


def test_the_rewritten_with_behaves_as_written():
    namespace = _helper()
    namespace[PLACEHOLDER_HOOK] = PlaceholderWatch()
    source = (
        "# TASK t\n"
        "with contextlib.suppress(KeyError) as kept, open(__file__) if False else "
        "contextlib.nullcontext(5) as five:\n"
        "    raise KeyError\n"
        "def later():\n"
        "    with contextlib.nullcontext():\n"
        "        return 1\n"
    )
    namespace["__file__"] = "unused"
    exec(
        compile_cell(CellSpec(1, source, 0, "task", ()), frozenset())[0][0],
        namespace,
    )
    assert namespace["kept"] is None and namespace["five"] == 5
    del namespace[PLACEHOLDER_HOOK]
    assert namespace["later"]() == 1  # a function's own `with` runs without the hook
    with pytest.raises(TypeError, match="does not support the context manager protocol"):
        namespace[PLACEHOLDER_HOOK] = PlaceholderWatch()
        ((code, ()),) = compile_cell(CellSpec(2, "with 3:\n    pass", 0, "task", ()), frozenset())
        exec(code, namespace)
