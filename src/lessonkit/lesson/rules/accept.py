"""`accept:` in {grading}: what else counts as the same answer for one task's graded names.

The rule has no check of its own: the value checks compare with it (`grade.channel.values`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from lessonkit.lesson.rules.base import UNGRADED, Fail, RuleKind

MappingRule = Literal["exact", "any"]
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
_KEYS = frozenset({"mappings", "floats"})


@dataclass(frozen=True)
class Accept:
    """What counts as the same answer for one task's graded names (`accept:` in {grading}).

    `mappings="any"`: any mapping the grader can read (dict, OrderedDict, defaultdict) with
    the same keys counts as the reference's dict. `floats`: leaves of any of these float
    dtypes count as the reference's leaf of another of them. The default is exact.
    """

    mappings: MappingRule = "exact"
    floats: tuple[str, ...] = ()
    line: int = field(default=0, compare=False, metadata=UNGRADED)


EXACT = Accept()


def _read(rule: object, line: int, fail: Fail) -> Accept:
    if not isinstance(rule, dict) or not rule:
        raise fail("must be a mapping with mappings and/or floats")
    unknown = set(rule) - _KEYS
    if unknown:
        raise fail(f"unknown key {sorted(unknown)[0]!r}; allowed: {', '.join(sorted(_KEYS))}")
    mappings = rule.get("mappings", "exact")
    if mappings not in ("exact", "any"):
        raise fail(f"'mappings' must be any or exact, got {mappings!r}")
    floats = rule.get("floats", [])
    if (
        not isinstance(floats, list)
        or any(f not in FLOAT_DTYPES for f in floats)
        or len(set(floats)) != len(floats)
        or len(floats) == 1
    ):
        raise fail(f"'floats' must list two or more of {', '.join(FLOAT_DTYPES)}")
    return Accept(mappings, tuple(floats), line=line)


ACCEPT: RuleKind[Accept] = RuleKind(
    key="accept",
    shape="{mappings: ..., floats: [...]}",
    read=_read,
    checks=("lesson inputs", "other inputs", "probes"),  # how they compare its values
    default=EXACT,
)
