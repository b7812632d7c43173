"""The grading wire: its tags, keys and limits, shared by the child that writes it and the
parent that reads it.

Standard library only and free of imports: the grading child loads this file by its path,
read-only with the rest of `lessonkit/grading_child/` in the sandbox, so both sides name the same
fields and
cut and check values at the same sizes. The child builds every report with `event` and
`value` below; the parent's reader (`protocol.py`, `reported.py`) accepts exactly the shapes
in `EVENTS`, `VALUES` and `ERROR` and refuses the rest.
"""

from __future__ import annotations

# --------------------------------------------------------------------------- limits

MAX_ELEMENTS = 4096  # array entries sent as data; larger arrays are sent as layout only
MAX_LEAVES = 512  # tree leaves sent; larger trees are sent as a size only
MAX_DEPTH = 24  # nesting the child writes; deeper values are sent as "too deep"
PARSED_DEPTH = MAX_DEPTH + 8  # nesting the parent reads (container and leaf levels)
MAX_NODES = 4096  # value nodes in one report
MAX_TEXT = 240  # characters of a name or type the parent reads; an error message: 4 times
MAX_MESSAGE = 4 * MAX_TEXT  # characters of an exception message
MAX_STRING = 2_000  # characters of a string value: a whole JAX error message, for one
MAX_NAME = 120  # characters of a type or module name
OUTPUT_HEAD = 6_000  # captured output kept per cell: its head and its tail
OUTPUT_TAIL = 2_000
MAX_OUTPUT = 12_000  # captured output per cell the parent reads (head, tail and a note)

# A global the grading child sets on its `__main__` module: a graded file that calls
# `check()` finds it there and does not grade again from inside the grader.
CHILD_MARK = "LESSONKIT_GRADING_CHILD"

# --------------------------------------------------------------------------- shapes
# Each shape is (required keys, optional keys), besides the tag's own key.

# Task rules the child runs (`lessonkit/lesson/rules/`), by their wire key: a cell request
# names under the key what to watch (function names); the hook module of this folder watches
# them while the cell runs (`start(jax, files)` returns a watch with `wrap(value, name)`, handed
# each watched name as the cell binds it, and `report(names)`); the cell event reports under
# the same key one OUTCOME per name, its status one of the rule's ("error" comes with an ERROR).
CELL_RULES = {
    # "jit": each watched function's first call repeated through `jax.jit`; "not called" or
    # "not defined" when the cell never called or never bound it.
    "jit": ("jit_watch", ("ok", "error", "not called", "not defined")),
}
OUTCOME = (frozenset({"name", "status"}), frozenset({"error"}))


def rule_hook(key: str) -> str:
    """The namespace name of a rule's `wrap` while a cell runs: `__lessonkit_jit__`."""
    return f"__lessonkit_{key}__"


EVENT_TAG = "event"
EVENTS = {
    "ready": (frozenset({"jax", "python"}), frozenset()),
    "start": (frozenset({"request", "scenario", "cell"}), frozenset()),
    "cell": (
        frozenset({"request", "scenario", "cell", "status", "output"}),
        frozenset({"error", "values", "checkpoint", "placeholder", "reached", *CELL_RULES}),
    ),
    "done": (frozenset({"request", "timed_out", "patched"}), frozenset()),
}
CELL_STATUSES = ("ok", "error")  # a cell event's "status"; "error" comes with an ERROR
# A cell event's "placeholder": the first `todo(...)` that ran in the cell, as an ERROR, whether
# it stopped the cell or the cell caught it (`optional_task()`); see `placeholders.py`.
# A cell event's "reached": true (else left out) when the scenario's change to JAX's
# derivatives altered one the cell took (`differentiation.Watch.reached`).

ERROR = (
    frozenset({"kind", "type", "module", "message", "frames"}),
    frozenset({"exit_code", "trees"}),
)
ERROR_KINDS = ("syntax", "exception", "timeout", "exit", "interrupt")

VALUE_TAG = "t"
VALUES = {
    "none": (frozenset(), frozenset()),
    "number": (frozenset({"type", "value"}), frozenset()),
    "str": (frozenset({"value", "length"}), frozenset()),
    "module": (frozenset({"name"}), frozenset()),
    "dict": (frozenset({"type", "items"}), frozenset()),
    # "fields": the children's key-path names (a NamedTuple's fields, a registered node's
    # keys), one per item; without it, children are named by position.
    "seq": (frozenset({"type", "items"}), frozenset({"fields"})),
    "array": (frozenset({"dtype", "shape"}), frozenset({"data"})),
    "key": (frozenset({"dtype", "impl", "shape"}), frozenset({"data"})),
    "big": (frozenset({"type", "why"}), frozenset()),  # sent as a size only
    "other": (frozenset({"type"}), frozenset({"note"})),  # a type the child does not read
}


def event(tag: str, **entries: object) -> dict:
    """One report line's object: `tag` names one of `EVENTS`."""
    return {EVENT_TAG: tag, **entries}


def value(tag: str, **entries: object) -> dict:
    """One reported value's object: `tag` names one of `VALUES`."""
    return {VALUE_TAG: tag, **entries}
