"""Every kind of lesson item and how each rendering shows it: one table, `ITEM_KINDS`.

For each model item class: its Markdown or cells in the practice files (or neither), the
page template that shows it (or none), and what the portfolio keeps of it. The practice
layout (`lesson.layout`) and the page (`render.blocks`) both read it, and `item_kind` refuses
an item without an entry, so a new block kind is never dropped unseen.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from lessonkit.lesson.cell import Cell, task_cell_source
from lessonkit.lesson.model import (
    Check,
    CodeNote,
    Diagram,
    EvidenceBlock,
    Experiment,
    Figure,
    Grading,
    Illustration,
    Item,
    Math,
    Numbers,
    Pause,
    Plot,
    Prose,
    Quiz,
    RunCommand,
    Section,
    SetupCommand,
    Step,
    Task,
)

ItemT = TypeVar("ItemT")  # the item class an entry is for


@dataclass(frozen=True)
class Saves(Generic[ItemT]):
    """What the page keeps of one item in the learner's portfolio (browser storage)."""

    prefix: str  # the key's first part: "quiz" in "quiz:pytree-leaves"
    name: Callable[[ItemT, Section], str]  # its second part; the page adds -2, -3 to repeats
    fields: Callable[[ItemT, Section], tuple[tuple[str, str], ...]]
    """(suffix after the key, label "My learning" shows) for each field kept."""


@dataclass(frozen=True)
class ItemKind(Generic[ItemT]):
    """How the renderings show one kind of item; a kind with neither `markdown` nor `cells`
    is data for the toolkit (tests, grader, evidence), not text for the learner."""

    markdown: Callable[[ItemT], str] | None = None  # its text in the practice files
    cells: Callable[[ItemT, Section], Iterator[Cell]] | None = None  # or the cells it makes there
    template: str | None = None  # the page's template for it (render/templates); None: not shown
    saves: Saves[ItemT] | None = None  # what the page keeps of it in the portfolio

    def __post_init__(self) -> None:
        if self.markdown is not None and self.cells is not None:
            raise TypeError("an item kind is Markdown or cells in the practice files, not both")


# Markdown and cells in the practice files ---------------------------------------------------


def _fence(code: str, language: str = "python") -> str:
    return f"```{language}\n{code}\n```"


def _notes(uses: tuple[CodeNote, ...]) -> str:
    return "\n".join(f"- `{n.signature}`: {n.meaning}" for n in uses)


def _details(summary: str, body: str) -> str:
    return f"<details>\n<summary>{summary}</summary>\n\n{body}\n\n</details>"


def _prose(item: Prose) -> str:
    return item.markdown


def _setup(item: SetupCommand) -> str:
    language = "powershell" if item.shell == "powershell" else "bash"
    return f"**{item.label}**\n\n{_fence(item.commands, language)}"


def _check(item: Check) -> str:
    return f"**Check:** {item.expected}"


def _illustration(item: Illustration) -> str:
    rows = "\n".join(f"| **{b.title}** | `{b.formula}` | {b.caption} |" for b in item.boxes)
    return f"**{item.title}**\n\n| | | |\n|---|---|---|\n{rows}\n\n{item.caption}"


def _pause(item: Pause) -> str:
    return f"**Pause and reason:** {item.question}\n\n" + _details("Answer", item.answer)


def _diagram(item: Diagram) -> str:
    return _fence(item.text, "text")


def _math(item: Math) -> str:
    return f"$$\n{item.latex}\n$$"


def _run(item: RunCommand) -> str:
    # The section's heading already names the command; a label here would repeat it.
    command = _fence(item.command, "bash")
    return f"{command}\n\n{item.about}\n\n**Expected result:** {item.expected}"


def _quiz(item: Quiz) -> str:
    options = "\n".join(f"{i + 1}. {o}" for i, o in enumerate(item.options))
    answer = f"Option {item.answer + 1}: {item.options[item.answer]}\n\n{item.explanation}"
    return f"**Check your understanding:** {item.question}\n\n{options}\n\n" + _details(
        "Answer", answer
    )


def _step_cells(item: Step, section: Section) -> Iterator[Cell]:
    intro = f"### Step {item.number} · {item.title}\n\n{item.intro}"
    if item.uses:
        intro += f"\n\nCode building blocks in this step:\n\n{_notes(item.uses)}"
    yield Cell(f"step-{item.number}-intro", "markdown", intro)
    # The summary heads the step in main.py and on the page; here the prose after the
    # step says the same, so it is left out rather than said twice.
    yield Cell(f"step-{item.number}", "code", item.code, ("step",))


def _figure_cells(item: Figure, section: Section) -> Iterator[Cell]:
    yield Cell("figure-prompt", "markdown", f"**{item.prompt}**")
    yield Cell("figure-data", "code", item.code, ("figure",))


def _plot_cells(item: Plot, section: Section) -> Iterator[Cell]:
    yield Cell("figure-plot", "code", item.code, ("figure",), figure=True)


def _experiment_cells(item: Experiment, section: Section) -> Iterator[Cell]:
    slug = section.id
    label = "Optional experiment. Predict first:" if item.optional else "Predict first:"
    yield Cell(f"{slug}-prompt", "markdown", f"**{label}** {item.prompt}")
    yield Cell(slug, "code", item.code, ("experiment",))
    expected = f"**Expected:** {item.expected}"
    if item.output:
        expected += "\n\n" + _fence("\n".join(item.output), "text")
    yield Cell(f"{slug}-expected", "markdown", expected)


def _task_cells(item: Task, section: Section) -> Iterator[Cell]:
    guide = [f"**{item.kind.capitalize()}.** {item.prompt}", f"*Where:* {item.where}"]
    if item.uses:
        guide.append(f"Key functions:\n\n{_notes(item.uses)}")
    if item.plan:
        guide.append("Plan:\n\n" + "\n".join(f"{i}. {p}" for i, p in enumerate(item.plan, 1)))
    guide.append(_details("Show a hint", item.hint))
    yield Cell(f"{item.id}-guide", "markdown", "\n\n".join(guide))
    yield Cell(
        f"task-{item.id}",
        "code",
        task_cell_source(item, item.scaffold),
        ("task", f"task:{item.id}"),
    )
    solution = _fence(item.solution) + (f"\n\n{item.reasoning}" if item.reasoning else "")
    yield Cell(
        f"{item.id}-solution",
        "markdown",
        _details("Reference solution: attempt the task and run the check first", solution),
        ("solution",),
        solution=True,
    )


# What the portfolio keeps -------------------------------------------------------------------


def _by_section(item: Any, section: Section) -> str:
    return section.id


def _by_id(item: Task | Quiz, section: Section) -> str:
    return item.id


def _answer(item: Pause, section: Section) -> tuple[tuple[str, str], ...]:
    return (("", f"{section.title}: your answer"),)


def _prediction(item: Figure | Experiment, section: Section) -> tuple[tuple[str, str], ...]:
    return (("", f"{section.title}: your prediction"),)


def _task_fields(item: Task, section: Section) -> tuple[tuple[str, str], ...]:
    return (
        (":done", f"{section.title}: exercise complete"),
        (":notes", f"{section.title}: your notes"),
    )


def _quiz_fields(item: Quiz, section: Section) -> tuple[tuple[str, str], ...]:
    return (("", f"Quiz: {item.question}"),)


# The table ----------------------------------------------------------------------------------

ITEM_KINDS: dict[type, ItemKind[Any]] = {
    Prose: ItemKind(_prose, template="prose.html"),
    SetupCommand: ItemKind(_setup, template="setup.html"),  # a run of them: one tabbed box
    Check: ItemKind(_check, template="check.html"),
    Illustration: ItemKind(_illustration, template="illustration.html"),
    Pause: ItemKind(_pause, template="pause.html", saves=Saves("pause", _by_section, _answer)),
    Diagram: ItemKind(_diagram, template="diagram.html"),
    Math: ItemKind(_math, template="math.html"),
    Numbers: ItemKind(),  # checked by the tests against the executed values
    Step: ItemKind(cells=_step_cells, template="step.html"),
    RunCommand: ItemKind(_run, template="run.html"),
    Figure: ItemKind(
        cells=_figure_cells,
        template="figure.html",
        saves=Saves("prediction", _by_section, _prediction),
    ),
    Plot: ItemKind(cells=_plot_cells),  # on the page inside the figure's template
    Experiment: ItemKind(
        cells=_experiment_cells,
        template="experiment.html",
        saves=Saves("prediction", _by_section, _prediction),
    ),
    Task: ItemKind(
        cells=_task_cells, template="task.html", saves=Saves("task", _by_id, _task_fields)
    ),
    Quiz: ItemKind(_quiz, template="quiz.html", saves=Saves("quiz", _by_id, _quiz_fields)),
    Grading: ItemKind(),  # read by the grader
    EvidenceBlock: ItemKind(),  # read by the evidence template and report
}
"""Every model item class (`lesson.model.Item`) with how each rendering shows it."""


def item_kind(item: Item) -> ItemKind[Any]:
    """The table's entry for `item`; an item of a kind it lacks stops the rendering."""
    kind = ITEM_KINDS.get(type(item))
    if kind is None:
        raise TypeError(
            f"{type(item).__name__} has no entry in lesson/item_kinds.py ITEM_KINDS: "
            "say how the practice files and the page show it"
        )
    return kind
