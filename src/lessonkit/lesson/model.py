"""The lesson model: frozen dataclasses, no I/O.

Every renderer, the runner and the grader read a `Lesson`; none of them reads lesson.md.
Each block keeps the line it came from so that later checks can cite `file:line`.
A field marked `UNGRADED` is one no verdict reads; every other field is graded.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

from lessonkit.grading_child.transforms import AUTHORED
from lessonkit.lesson.rules.base import UNGRADED, TaskRule

STAGES: tuple[str, ...] = (
    "Understand",
    "Build & Run",
    "Experiment",
    "Exercise & Check",
    "Evidence",
)
PREAMBLE = "Before you start"
TaskKind = Literal["exercise", "practice", "challenge", "optional"]
TASK_KINDS: tuple[TaskKind, ...] = get_args(TaskKind)
DEFAULT_FIGURE_NOTE = "The figure from Stage 1, computed now that the build steps have run."


@dataclass(frozen=True)
class Phase:
    number: str
    title: str
    study_guide: str
    lessons: tuple[str | None, ...]  # ids in order; None: a lesson still to be written

    @property
    def own_title(self) -> str | None:
        """The title, or None while it is the default `lessonkit new` gives a new phase
        ("Phase 04"): shown beside the number, that would say the number twice."""
        return None if self.title == f"Phase {self.number}" else self.title

    @property
    def heading(self) -> str:
        """The number and the title ("Phase 03 · State"), or the number alone (see `own_title`)."""
        own = self.own_title
        return f"Phase {self.number}" + (f" · {own}" if own else "")


@dataclass(frozen=True)
class Meta:
    id: str
    title: str = field(metadata=UNGRADED)
    goal: str = field(metadata=UNGRADED)
    track: str = field(metadata=UNGRADED)
    hardware_labels: tuple[str, ...] = field(metadata=UNGRADED)
    phase: Phase = field(
        metadata=UNGRADED
    )  # from the phase.yaml of the phase the front matter names
    lesson_number: int = field(metadata=UNGRADED)  # the lesson's place in `phase.lessons`
    revision: str = field(metadata=UNGRADED)
    date: dt.date = field(metadata=UNGRADED)
    minutes: int = field(metadata=UNGRADED)
    hardware: str = field(metadata=UNGRADED)
    practice: str = field(metadata=UNGRADED)


@dataclass(frozen=True)
class Prose:
    """Markdown text between blocks, kept verbatim."""

    markdown: str = field(metadata=UNGRADED)
    line: int = field(metadata=UNGRADED)


@dataclass(frozen=True)
class SetupCommand:
    label: str = field(metadata=UNGRADED)
    shell: str = field(metadata=UNGRADED)
    commands: str = field(metadata=UNGRADED)
    line: int = field(metadata=UNGRADED)


@dataclass(frozen=True)
class Check:
    expected: str = field(metadata=UNGRADED)
    line: int = field(metadata=UNGRADED)


@dataclass(frozen=True)
class Box:
    title: str
    formula: str
    caption: str


@dataclass(frozen=True)
class Illustration:
    title: str = field(metadata=UNGRADED)
    boxes: tuple[Box, ...] = field(metadata=UNGRADED)
    caption: str = field(metadata=UNGRADED)
    line: int = field(metadata=UNGRADED)


@dataclass(frozen=True)
class Pause:
    question: str = field(metadata=UNGRADED)
    answer: str = field(metadata=UNGRADED)
    line: int = field(metadata=UNGRADED)


@dataclass(frozen=True)
class Diagram:
    """A tree diagram the prose shows; tests compare it with `lessonkit.trees.describe`."""

    tree: str = field(metadata=UNGRADED)
    text: str = field(metadata=UNGRADED)
    line: int = field(metadata=UNGRADED)


@dataclass(frozen=True)
class Math:
    latex: str = field(metadata=UNGRADED)
    line: int = field(metadata=UNGRADED)


NumberValue = float | tuple[float, ...]


@dataclass(frozen=True)
class Number:
    """A number the prose states, with the expression that computes it from the lesson code.

    `stated` ties it to the prose: the lesson.md lines, in the sections its block covers, that
    write its value (for a list, every element).
    """

    name: str
    value: NumberValue
    expr: str
    line: int = field(metadata=UNGRADED)
    stated: tuple[int, ...] = field(default=(), metadata=UNGRADED)

    @property
    def values(self) -> tuple[float, ...]:
        return self.value if isinstance(self.value, tuple) else (self.value,)

    @property
    def shown(self) -> str:
        """The value as the declaration writes it: 0.05, or [1.4, -0.8]."""
        parts = [f"{v:g}" for v in self.values]
        return f"[{', '.join(parts)}]" if isinstance(self.value, tuple) else parts[0]


@dataclass(frozen=True)
class ProseNumber:
    """A number written in the prose of a section that a `{numbers}` block covers."""

    text: str  # as written, e.g. "-0.8"
    value: float
    line: int = field(metadata=UNGRADED)


@dataclass(frozen=True)
class Numbers:
    """Declared numbers and the prose they govern.

    Every number written in the prose of `sections` must be a declared value or one of
    `not_results` (counts, years, step numbers: written exactly as in the prose). Every
    declared value must be written there, in the prose or in the code of a block (`in_code`:
    a solution's ``assert jnp.allclose(norm_squared, 96.)`` states 96, at the block's line).
    """

    items: tuple[Number, ...] = field(metadata=UNGRADED)
    sections: tuple[str, ...] = field(metadata=UNGRADED)
    not_results: tuple[str, ...] = field(metadata=UNGRADED)
    prose: tuple[ProseNumber, ...] = field(metadata=UNGRADED)
    in_code: tuple[ProseNumber, ...] = field(metadata=UNGRADED)
    line: int = field(metadata=UNGRADED)


@dataclass(frozen=True)
class CodeNote:
    """A "code building block": a call signature and what it does."""

    signature: str
    meaning: str


@dataclass(frozen=True)
class Step:
    number: int
    title: str = field(metadata=UNGRADED)
    intro: str = field(metadata=UNGRADED)
    summary: str = field(metadata=UNGRADED)
    uses: tuple[CodeNote, ...] = field(metadata=UNGRADED)
    code: str
    line: int = field(metadata=UNGRADED)


@dataclass(frozen=True)
class RunCommand:
    command: str = field(metadata=UNGRADED)
    expected: str = field(metadata=UNGRADED)
    about: str = field(metadata=UNGRADED)
    line: int = field(metadata=UNGRADED)


@dataclass(frozen=True)
class Figure:
    title: str = field(metadata=UNGRADED)
    prompt: str = field(metadata=UNGRADED)
    alt: str = field(metadata=UNGRADED)
    code: str
    line: int = field(metadata=UNGRADED)
    notebook_note: str = field(
        default=DEFAULT_FIGURE_NOTE, metadata=UNGRADED
    )  # above the figure cells, after the steps


@dataclass(frozen=True)
class Plot:
    code: str
    line: int = field(metadata=UNGRADED)


@dataclass(frozen=True)
class Experiment:
    title: str = field(metadata=UNGRADED)
    prompt: str = field(metadata=UNGRADED)
    expected: str = field(metadata=UNGRADED)
    code: str
    line: int = field(metadata=UNGRADED)
    optional: bool = False
    output: tuple[str, ...] = field(
        default=(), metadata=UNGRADED
    )  # the lines the code prints, checked against execution
    # where `:expected:` is written, for problems with its numbers
    expected_line: int = field(default=0, metadata=UNGRADED)


@dataclass(frozen=True)
class Task:
    id: str
    kind: TaskKind
    title: str = field(metadata=UNGRADED)
    where: str = field(metadata=UNGRADED)
    uses: tuple[CodeNote, ...] = field(metadata=UNGRADED)
    plan: tuple[str, ...] = field(metadata=UNGRADED)
    prompt: str = field(metadata=UNGRADED)
    scaffold: str
    solution: str
    hint: str = field(metadata=UNGRADED)
    reasoning: str = field(metadata=UNGRADED)
    line: int = field(metadata=UNGRADED)
    hint_for: tuple[str, ...] = field(default=(), metadata=UNGRADED)
    """The checks (`CheckName`) and declared mistakes (titles) the hint belongs to; empty:
    any failure its hint may help with."""

    @property
    def optional(self) -> bool:
        """Optional tasks go with the "going further" experiments; leaving one out is fine."""
        return self.kind == "optional"


@dataclass(frozen=True)
class Quiz:
    id: str = field(metadata=UNGRADED)
    question: str = field(metadata=UNGRADED)
    options: tuple[str, ...] = field(metadata=UNGRADED)
    answer: int = field(metadata=UNGRADED)
    explanation: str = field(metadata=UNGRADED)
    line: int = field(metadata=UNGRADED)


Transform = Literal[AUTHORED]  # the names lesson.md may give, from `child.transforms` rows
# Where a probe varies a value: a drawn input, a name a step assigns, every derivative JAX's
# differentiation functions return, what one library function returns, or a name the task's
# own cell binds, changed where the cell binds it (however the cell computed it).
ProbeSource = Literal["input", "step", "gradients", "call", "binding"]
ProbeValue = float | tuple[float, ...] | dict | None
# Of which cell a probe's messages speak, where the probe gives a name another value (an
# `input` or a `step`): any cell that is wrong there, only one that reads the varied name (a
# value that follows it: "`g` changes when `grads` holds other numbers"), or only one that
# never reads it (a value that ignores it: "count the leaves instead of typing in their
# number"). A cell the message does not describe gets the plain one: what is wrong where.
MessagesWhen = Literal["always", "read", "not read"]


#: One value of a generator's own shape: a scalar, or nested tuples of them.
EdgeValue = float | int | bool | tuple["EdgeValue", ...]


@dataclass(frozen=True)
class Uniform:
    """One generated input leaf: uniform in [low, high], rounded to `decimals`, float32.

    `edges` are values of the leaf's shape that no draw reaches (bounds, and beyond them):
    each is one more input set on every run (`lessonkit.grade.preparation.inputs`).
    """

    low: float
    high: float
    shape: tuple[int, ...] = ()
    decimals: int = 2
    edges: tuple[EdgeValue, ...] = ()


@dataclass(frozen=True)
class Integers:
    """One generated input leaf: an integer in [low, high] (both included).

    Without a shape it is a Python `int`, as a lesson writes a count (`start = 3`); with a
    shape it is an int32 array.
    """

    low: int
    high: int
    shape: tuple[int, ...] = ()
    edges: tuple[EdgeValue, ...] = ()


@dataclass(frozen=True)
class Bernoulli:
    """One generated input leaf: True with probability `p`; a Python `bool`, or with a shape
    a bool array."""

    p: float
    shape: tuple[int, ...] = ()
    edges: tuple[EdgeValue, ...] = ()


Generator = Uniform | Integers | Bernoulli
InputTree = dict[str, "InputTree"] | Generator


@dataclass(frozen=True)
class Probe:
    """One more scenario that varies a value at its source, before any cell runs.

    `source` (`ProbeSource`) says where: an `input` (a fresh drawn set, `transform(key, value)`
    applied to `target`), a name a `step` assigns (given `value`), every derivative JAX computes
    (`gradients`), what the library function `target` returns (`call`), or the value the
    task's cell binds to `target`, changed there (`binding`). Every path from the
    source carries the change; each graded name of `task` must then have the reference's value,
    else the learner reads that name's declared message, where `messages_when` says the
    message describes the cell (`MessagesWhen`).
    """

    name: str
    task: str
    source: ProbeSource
    target: str  # the input or step name, the library function, or "gradients"
    transform: Transform
    key: str
    value: ProbeValue
    messages: tuple[tuple[str, str], ...]  # (graded name, what it means when it differs)
    line: int = field(metadata=UNGRADED)
    messages_when: MessagesWhen = "always"
    where_bound: str = ""
    """A `gradients` probe that changes a structure may also change this name where the
    task's cell binds it: a derivative JAX assembled is changed once (the binding no longer
    fits), and one the cell made another way (by hand, a Taylor series) is changed there."""

    @property
    def bound(self) -> str:
        """The name this probe changes where the task's cell binds it, or ""."""
        return self.target if self.source == "binding" else self.where_bound


AttemptStatus = Literal["passed", "failed", "error", "not attempted"]

ATTEMPT_STATUSES: tuple[str, ...] = get_args(AttemptStatus)


@dataclass(frozen=True)
class DeclaredAttempt:
    """An attempt at a task, declared with the verdict it must get (`lessonkit verify`)."""

    task: str
    name: str
    code: str  # the task cell's code, replacing the scaffold
    expect: AttemptStatus
    message: str  # a regular expression the verdict's message must match ("" for any)
    line: int = field(metadata=UNGRADED)
    why: str = ""  # what a learner who writes this has misunderstood (a wrong attempt's)
    instead: str = ""  # what to do instead: with `why`, what the learner reads

    @property
    def is_mistake(self) -> bool:
        """A declared mistake: a wrong attempt that explains itself, which the grader
        matches learners' answers to."""
        return self.expect in ("failed", "error") and bool(self.why) and bool(self.instead)


@dataclass(frozen=True)
class Grading:
    """How `lessonkit check` grades the lesson: the inputs it draws afresh, probes, points."""

    inputs: tuple[tuple[str, InputTree], ...]  # (input name, generator tree), in order
    input_sets: int  # generated sets per run, besides the lesson's own inputs
    probes: tuple[Probe, ...]
    points: tuple[tuple[str, float], ...]  # (task id, points)
    line: int = field(metadata=UNGRADED)
    attempts: tuple[DeclaredAttempt, ...] = ()
    rules: tuple[tuple[str, str, TaskRule], ...] = ()
    """(rule key, task id, rule) for every per-task rule (`lesson.rules.RULES`), in the
    order they are read."""

    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.inputs)

    def points_for(self, task_id: str) -> float:
        return dict(self.points).get(task_id, 1.0)

    def rules_for(self, task_id: str) -> dict[str, TaskRule]:
        """One task's rules by name (`{"jit": JitRule(...)}`); a rule it is not given is absent."""
        return {name: rule for name, task, rule in self.rules if task == task_id}


ShowKind = Literal["tree", "value", "numbers", "round_trip"]
SHOW_KINDS: tuple[ShowKind, ...] = get_args(ShowKind)


@dataclass(frozen=True)
class Show:
    """One thing an evidence report shows from the learner's run.

    `tree`: the diagram of the value `expr` names; `value`: the value of the expression
    `expr`, next to the hand-derived number `number` when one is named; `numbers`: every
    number of the lesson's {numbers} block, derived by hand and computed; `round_trip`: the
    leaves of `expr` in flatten order, its tree definition and the tree rebuilt from them.
    """

    kind: ShowKind
    expr: str  # a name or Python expression; "" for `numbers`
    number: str = ""  # a {numbers} name whose hand-derived value is shown next to `expr`
    line: int = 0


@dataclass(frozen=True)
class EvidenceItem:
    """One thing the lesson asks a learner to keep, tied to the section it comes from.

    The report reads the learner's values after the lesson's steps, or after `task`'s cell
    when the item belongs to a task (then it also shows the task's verdict, code and output).
    """

    key: str
    title: str
    section: str  # id of the section it comes from; its experiment prompts the prediction
    keep: str
    prompt: str  # the prediction prompt; "" takes the section's experiment prompt
    task: str  # a task id, or ""
    show: tuple[Show, ...]
    line: int = field(metadata=UNGRADED)


@dataclass(frozen=True)
class EvidenceBlock:
    """The `{evidence}` block: the items of the evidence template and report, in order."""

    items: tuple[EvidenceItem, ...] = field(metadata=UNGRADED)
    line: int = field(metadata=UNGRADED)


Item = (
    Prose
    | SetupCommand
    | Check
    | Illustration
    | Pause
    | Diagram
    | Math
    | Numbers
    | Step
    | RunCommand
    | Figure
    | Plot
    | Experiment
    | Task
    | Quiz
    | Grading
    | EvidenceBlock
)


@dataclass(frozen=True)
class Section:
    id: str = field(metadata=UNGRADED)
    title: str = field(metadata=UNGRADED)
    items: tuple[Item, ...]
    line: int = field(metadata=UNGRADED)


@dataclass(frozen=True)
class Part:
    """A top-level heading: the preamble or one of the five stages."""

    title: str = field(metadata=UNGRADED)
    stage: int | None = field(metadata=UNGRADED)
    sections: tuple[Section, ...]
    line: int = field(metadata=UNGRADED)


@dataclass(frozen=True)
class Lesson:
    meta: Meta
    parts: tuple[Part, ...]
    path: Path = field(metadata=UNGRADED)
    source: str = field(repr=False, metadata=UNGRADED)

    @property
    def directory(self) -> Path:
        return self.path.parent

    @property
    def exercise_paths(self) -> tuple[str, str]:
        """The practice script and notebook, relative to the lesson folder."""
        return f"exercises/{self.meta.id}.py", f"exercises/{self.meta.id}.ipynb"

    @property
    def sections(self) -> tuple[Section, ...]:
        return tuple(s for p in self.parts for s in p.sections)

    def items(self, kind: type) -> tuple:
        """Every item of one kind, in lesson order."""
        return tuple(i for s in self.sections for i in s.items if isinstance(i, kind))

    @property
    def steps(self) -> tuple[Step, ...]:
        return self.items(Step)

    @property
    def experiments(self) -> tuple[Experiment, ...]:
        return self.items(Experiment)

    @property
    def core_experiments(self) -> tuple[Experiment, ...]:
        return tuple(e for e in self.experiments if not e.optional)

    @property
    def optional_experiments(self) -> tuple[Experiment, ...]:
        return tuple(e for e in self.experiments if e.optional)

    @property
    def tasks(self) -> tuple[Task, ...]:
        return self.items(Task)

    @property
    def core_tasks(self) -> tuple[Task, ...]:
        return tuple(t for t in self.tasks if not t.optional)

    @property
    def optional_tasks(self) -> tuple[Task, ...]:
        return tuple(t for t in self.tasks if t.optional)

    @property
    def quizzes(self) -> tuple[Quiz, ...]:
        return self.items(Quiz)

    @property
    def numbers(self) -> tuple[Number, ...]:
        return tuple(n for block in self.items(Numbers) for n in block.items)

    @property
    def figure(self) -> Figure:
        return self.items(Figure)[0]

    @property
    def plot(self) -> Plot:
        return self.items(Plot)[0]

    @property
    def grading(self) -> Grading | None:
        """The `{grading}` block, if the lesson has one (a lesson without it cannot be checked)."""
        found = self.items(Grading)
        return found[0] if found else None

    @property
    def evidence(self) -> tuple[EvidenceItem, ...]:
        """The `{evidence}` block's items; none when the lesson has no such block."""
        found = self.items(EvidenceBlock)
        return found[0].items if found else ()

    def task(self, task_id: str) -> Task:
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)
