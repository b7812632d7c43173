"""A fresh run's output set beside its record: lines aligned, numbers compared within a tolerance.

A run on another machine prints the same lines with float32 residues that differ in the last
digits; only a changed word, a lost or extra line, or a number beyond the tolerance counts.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass

from lessonkit.defaults import OUTPUT_ATOL, OUTPUT_RTOL

_NUMBER = re.compile(r"([-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)")


@dataclass(frozen=True)
class LineDifference:
    """One difference: a changed line, an extra line in this run, or a recorded line missing."""

    line: int  # 1-based: in this run, or in the record for a line missing from this run
    expected: str | None  # None: this run printed an extra line
    got: str | None  # None: this run stopped short of the line
    detail: str
    recorded_line: int | None = None  # where a changed line stands in the record, if elsewhere


@dataclass(frozen=True)
class OutputComparison:
    """A fresh run's stdout set beside the recorded one."""

    expected_lines: int
    rel_tol: float
    differences: tuple[LineDifference, ...]

    @property
    def matches(self) -> bool:
        return not self.differences

    def explain(self) -> str:
        """The differences, one block per line, for a terminal."""
        out = []
        for d in self.differences:
            if d.got is None:
                where = f"recorded line {d.line}"
            elif d.recorded_line is not None and d.recorded_line != d.line:
                where = f"line {d.line} (recorded line {d.recorded_line})"
            else:
                where = f"line {d.line}"
            out.append(f"{where}: {d.detail}")
            if d.expected is not None:
                out.append(f"  recorded:  {d.expected}")
            if d.got is not None:
                out.append(f"  this run:  {d.got}")
        return "\n".join(out)


def printed_numbers(stdout: str) -> tuple[float, ...]:
    """Every number a run printed, in order, for the prose that states what it prints."""
    return tuple(float(text) for text in _NUMBER.findall(stdout))


def _compare_line(expected: str, got: str, rel_tol: float) -> str | None:
    want, have = _NUMBER.split(expected), _NUMBER.split(got)
    if len(want) != len(have):
        return "the text differs"
    for index, (a, b) in enumerate(zip(want, have, strict=True)):
        if index % 2 == 0:
            if a != b:
                return "the text differs"
        elif not math.isclose(float(a), float(b), rel_tol=rel_tol, abs_tol=OUTPUT_ATOL):
            return f"{b} differs from the recorded {a} by more than a relative {rel_tol:g}"
    return None


def _shape(line: str) -> str:
    """A line with its numbers blanked: lines that differ only in numbers align with each other."""
    return _NUMBER.sub("#", line)


def compare_output(expected: str, got: str, rel_tol: float = OUTPUT_RTOL) -> OutputComparison:
    """Align this run's lines with the record's, then compare each aligned pair.

    Lines are aligned by their text with numbers blanked (`difflib`), so one inserted or lost
    line is one difference, not a shift of every line after it. Numbers in aligned lines agree
    within `rel_tol`; all other text must agree exactly.
    """
    want, have = expected.splitlines(), got.splitlines()
    matcher = difflib.SequenceMatcher(None, [_shape(a) for a in want], [_shape(b) for b in have])
    differences = []
    for _, w0, w1, h0, h1 in matcher.get_opcodes():
        pairs = min(w1 - w0, h1 - h0)
        for offset in range(pairs):
            a, b = want[w0 + offset], have[h0 + offset]
            detail = _compare_line(a, b, rel_tol)
            if detail is not None:
                differences.append(LineDifference(h0 + offset + 1, a, b, detail, w0 + offset + 1))
        for index in range(w0 + pairs, w1):
            differences.append(
                LineDifference(index + 1, want[index], None, "missing from this run")
            )
        for index in range(h0 + pairs, h1):
            differences.append(
                LineDifference(index + 1, None, have[index], "an extra line in this run")
            )
    return OutputComparison(len(want), rel_tol, tuple(differences))


def missing_lines(
    declared: list[str] | tuple[str, ...], got: str, rel_tol: float = OUTPUT_RTOL
) -> tuple[str, ...]:
    """The `declared` lines that no line of `got` prints (numbers within `rel_tol`)."""
    have = got.splitlines()
    return tuple(
        line for line in declared if not any(_compare_line(line, h, rel_tol) is None for h in have)
    )
