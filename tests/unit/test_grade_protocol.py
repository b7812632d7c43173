"""The report protocol: a learner child's reports are data, parsed strictly or refused."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lessonkit.grade.channel.protocol import (
    CellReport,
    Done,
    Interference,
    Ready,
    parse_event,
    parse_value,
)
from lessonkit.grade.channel.reported import Array
from lessonkit.grade.judging.values import differences

ARRAY = {"t": "array", "dtype": "float32", "shape": [2], "data": [1.0, -1.0]}


def cell(**changes) -> dict:
    event = {
        "event": "cell",
        "request": "learner-1",
        "scenario": "lesson",
        "cell": 3,
        "status": "ok",
        "output": "",
        "values": {"fixed": ARRAY},
    }
    event.update(changes)
    return event


def line(data) -> bytes:
    return json.dumps(data).encode()


def test_honest_reports_parse_into_typed_events():
    assert parse_event(line({"event": "ready", "jax": "0.10.2", "python": "3.11.7"})) == Ready(
        "0.10.2", "3.11.7"
    )
    report = parse_event(line(cell()))
    assert isinstance(report, CellReport)
    assert report.values["fixed"] == Array("float32", (2,), (1.0, -1.0))
    done = parse_event(line({"event": "done", "request": "r", "timed_out": False, "patched": []}))
    assert done == Done("r", False, ())


@pytest.mark.parametrize(
    "bad",
    [
        b'{"event": "cell", "event": "done"}',  # a repeated key: the last would win
        line(cell(extra=1)),  # an unknown field
        line(cell(status="passed")),  # an unknown status
        line(cell(status="error")),  # status and error disagree
        line(cell(cell=-1)),
        line(cell(cell=True)),  # a bool is not a cell index
        line(cell(output="x" * 20_000)),
        line(cell(values={"fixed": {"t": "array", "dtype": "float32", "shape": [], "data": []}})),
        line(cell(values={"fixed": {"t": "array", "dtype": "f32; rm", "shape": []}})),
        line(cell(values={"fixed": {"t": "number", "type": "float", "value": "96"}})),
        line(cell(values={"fixed": {"t": "number", "type": "complex", "value": 1.0}})),
        line(cell(values={"fixed": {"t": "str", "value": "x" * 3000, "length": 3000}})),
        line(cell(values={"fixed": {"t": "dict", "type": "dict", "items": [["a", ARRAY]] * 2}})),
        line(cell(values={"fixed": {"t": "lie"}})),
        line(cell(hook="not applied")),  # the child reports values and output, nothing that
        line(cell(aliases={"fixed": "updated"})),  # switches a check on or off (B1-B3)
        line({"event": "done", "request": "r", "timed_out": 0, "patched": []}),
        line({"event": "hello"}),
        line([1, 2]),
        b"not json",
        b"[" * 100_000 + b"]" * 100_000,  # deeper than the JSON parser's recursion
        b'{"event": "ready", "jax": "' + b"x" * (9 * 2**20) + b'", "python": "3"}',
    ],
)
def test_malformed_reports_are_interference(bad):
    with pytest.raises(Interference):
        parse_event(bad)


def test_too_many_values_are_interference():
    nested = ARRAY
    for _ in range(30):
        nested = {"t": "seq", "type": "list", "items": [nested, nested]}
    with pytest.raises(Interference):
        parse_value(nested)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(["t", "type", "value", "data", "shape", "x"]), children)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(
    event=st.sampled_from(["cell", "done", "start", "ready", None]),
    extra=st.dictionaries(st.text(max_size=8), json_values, max_size=4),
    values=json_values,
)
def test_arbitrary_json_never_crashes_the_parser(event, extra, values):
    data = cell(values={"v": values}) if event == "cell" else {"event": event}
    data.update(extra)
    with contextlib.suppress(Interference):
        parse_event(json.dumps(data).encode())


def test_a_scalar_without_data_matches_nothing():
    """A value the child could not read must never count as right; a value it could not look
    into (a function, an object) is known by its type's name alone (issue 32)."""
    expected = parse_value({"t": "array", "dtype": "float32", "shape": [], "data": [96.0]})
    empty = parse_value({"t": "array", "dtype": "float32", "shape": []})
    assert differences(expected, empty)
    big = parse_value({"t": "big", "type": "list", "why": "too many entries"})
    assert differences(big, big)
    other = parse_value({"t": "other", "type": "Liar"})
    assert not differences(other, other)
    assert differences(other, parse_value({"t": "other", "type": "function"}))
