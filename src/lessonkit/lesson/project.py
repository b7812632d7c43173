"""A phase project's graded contract: how its script is run and which properties it must have.

`phase.yaml` declares it under `project: graded:`; the toolkit knows how to check each named
property (`Property`), the phase says which apply. The script's arguments are templates
(``{seed}``, ``{steps}``, ``{start}``) and ``output`` is the ``.npz`` file it writes.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, get_args

from lessonkit.errors import LessonError

Property = Literal[
    "runs",
    "reproducible",
    "seed-sensitive",
    "distinct-keys",
    "restartable",
    "device-independent",
]
#: Every property the toolkit can check, in the order a report lists them.
PROPERTIES: tuple[Property, ...] = get_args(Property)

Invocation = Literal["run", "resume"]
#: The placeholders each invocation must use, so the grader can vary what it says.
PLACEHOLDERS: dict[Invocation, frozenset[str]] = {
    "run": frozenset({"seed", "steps", "output"}),
    "resume": frozenset({"seed", "steps", "start", "output"}),
}
#: How the study guide writes each placeholder for a learner.
SHOWN = {"seed": "S", "steps": "N", "start": "K"}
_KEYS = ("script", "output", "run", "resume", "steps", "restart_at", "devices", "properties")
_FILE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


@dataclass(frozen=True)
class ProjectContract:
    """How `lessonkit project` runs a phase's project script, and what it checks."""

    script: str  # the file name the script is run under, `project.py`
    output: str  # the .npz file the script writes and a resumed run reads
    run: tuple[str, ...]  # arguments of a fresh run, with placeholders
    resume: tuple[str, ...]  # arguments of a run restarted from a saved file
    steps: int  # N: the steps of a full run
    restart_at: int  # K: the step a restarted run resumes after
    devices: int  # logical CPU devices of the device-independence run
    properties: tuple[tuple[Property, str], ...]  # each checked property, in the phase's words

    def arguments(self, invocation: Invocation, **values: int) -> tuple[str, ...]:
        """An invocation's arguments with its placeholders filled in."""
        template = self.run if invocation == "run" else self.resume
        filled = {"output": self.output, **{k: str(v) for k, v in values.items()}}
        return tuple(part.format_map(filled) for part in template)

    def command(self, invocation: Invocation) -> str:
        """An invocation as the study guide shows it: `python project.py --seed S ...`."""
        shown = {"output": self.output, **SHOWN}
        parts = (
            part.format_map(shown) for part in (self.run if invocation == "run" else self.resume)
        )
        return " ".join(("python", self.script, *parts))


def parse_contract(data: object, error: Callable[[str, str], LessonError]) -> ProjectContract:
    """The `graded:` mapping of a phase's project; `error(message, key)` makes the error."""
    if not isinstance(data, dict) or set(data) != set(_KEYS):
        raise error(f"'graded' must have exactly these keys: {', '.join(_KEYS)}", "graded")
    for key in ("script", "output"):
        if not isinstance(data[key], str) or not _FILE.fullmatch(data[key]):
            raise error(f"'{key}' must be a plain file name (letters, digits, '.', '_', '-')", key)
    if not data["script"].endswith(".py") or not data["output"].endswith(".npz"):
        raise error("'script' must end in .py and 'output' in .npz", "script")
    templates = {name: _template(data[name], name, error) for name in ("run", "resume")}
    numbers = {}
    for key, low in (("steps", 1), ("restart_at", 1), ("devices", 2)):
        value = data[key]
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= 64:
            raise error(f"'{key}' must be a whole number from {low} to 64", key)
        numbers[key] = value
    if numbers["restart_at"] >= numbers["steps"]:
        raise error("'restart_at' must come before the last step ('steps')", "restart_at")
    return ProjectContract(
        script=data["script"],
        output=data["output"],
        run=templates["run"],
        resume=templates["resume"],
        steps=numbers["steps"],
        restart_at=numbers["restart_at"],
        devices=numbers["devices"],
        properties=_properties(data["properties"], error),
    )


def _template(value: object, key: Invocation, error) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise error(f"'{key}' must be a list of the script's arguments", key)
    used: set[str] = set()
    for part in value:
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(part) if f is not None]
        except ValueError:
            raise error(f"'{key}': {part!r} is not a valid template", key) from None
        used |= set(fields)
    allowed = PLACEHOLDERS[key]
    if used != allowed:
        raise error(
            f"'{key}' must use exactly the placeholders "
            f"{', '.join('{' + p + '}' for p in sorted(allowed))}",
            key,
        )
    return tuple(value)


def _properties(value: object, error) -> tuple[tuple[Property, str], ...]:
    if not isinstance(value, Mapping) or not value:
        raise error("'properties' must map property names to sentences", "properties")
    for name, sentence in value.items():
        if name not in PROPERTIES:
            raise error(
                f"unknown property {name!r}; choose from: {', '.join(PROPERTIES)}", str(name)
            )
        if not isinstance(sentence, str) or not sentence.strip():
            raise error(f"property '{name}' needs a sentence for the learner", str(name))
    if "runs" not in value:
        raise error("'properties' must include 'runs': every other one needs it", "properties")
    return tuple((p, " ".join(value[p].split())) for p in PROPERTIES if p in value)
