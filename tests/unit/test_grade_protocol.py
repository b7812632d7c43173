"""The wire: a learner child's reports are data, parsed strictly or refused; what the parent
sends (a request, a confinement) reads back as it was built, and nothing of another shape."""

from __future__ import annotations

import contextlib
import dataclasses
import json
from pathlib import Path
from typing import get_args

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
from lessonkit.grade.channel.values import differences
from lessonkit.grading_child.codec import ShapeError
from lessonkit.grading_child.confinement import Confinement, Mode
from lessonkit.grading_child.request import ROLES, CellSpec, ChangedCall, Request, ScenarioSpec
from lessonkit.grading_child.transforms import TRANSFORMS
from lessonkit.run.sandbox import CONFINE_SCRIPT, RECORD_FOLDER

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


# --------------------------------------------------------------------------- what the parent sends
# A request (to a grading child) and a confinement (to a fork, or to run/confine.py) are the
# records of `lessonkit.grading_child.request` and `.confinement`, both sides reading the same
# class.

names = st.text(max_size=6)
finite = st.floats(allow_nan=False, allow_infinity=False)
drawn_trees = st.recursive(
    finite | st.integers(-5, 5) | st.booleans(),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(names, children, max_size=3),
    max_leaves=8,
)
changed_calls = st.builds(
    ChangedCall,
    call=names,
    transform=st.sampled_from(list(TRANSFORMS)),
    key=names,
    value=st.none() | finite | st.lists(finite, max_size=3).map(tuple),
    bend=st.none() | st.tuples(finite, finite, finite),
)
requests = st.builds(
    Request,
    id=names,
    preload=st.lists(names, max_size=2).map(tuple),
    budget=st.none() | finite,
    cells=st.lists(
        st.builds(
            CellSpec,
            index=st.integers(0, 99),
            source=st.text(max_size=30),
            offset=st.integers(0, 999),
            role=st.sampled_from(ROLES),
            report=st.lists(names, max_size=3).map(tuple),
            asks=st.dictionaries(st.just("jit"), st.lists(names, max_size=2).map(tuple)),
        ),
        max_size=3,
    ).map(tuple),
    checkpoint=st.none() | st.integers(0, 99),
    checkpoint_names=st.lists(names, max_size=3).map(tuple),
    cpu_seconds=st.none() | finite,  # left to hypothesis, it drew NaN, which equals nothing
    scenarios=st.lists(
        st.builds(
            ScenarioSpec,
            name=names,
            inputs=st.none() | st.dictionaries(names, drawn_trees, max_size=3),
            sources=st.lists(changed_calls, max_size=2).map(tuple),
            lesson_only_cells=st.booleans(),
        ),
        max_size=3,
    ).map(tuple),
)
confinements = st.builds(
    Confinement,
    mode=st.sampled_from(get_args(Mode)),
    memory=st.integers(0, 2**40),
    file_bytes=st.integers(0, 2**34),
    processes=st.integers(0, 4096),
    scratch_bytes=st.integers(0, 2**34),
    uid=st.none() | st.integers(0, 2**32 - 1),
    gid=st.none() | st.integers(0, 2**32 - 1),
    keep=st.lists(names, max_size=3).map(tuple),
    cache=st.none() | names,
    trusted=st.booleans(),
    home=names,
    cpu_seconds=st.integers(0, 10_000),
)


@settings(max_examples=100, deadline=None)
@given(request=requests)
def test_a_request_reads_back_as_the_parent_built_it(request):
    assert Request.from_line(request.to_line()) == request


@settings(max_examples=100, deadline=None)
@given(confinement=confinements)
def test_a_confinement_reads_back_as_the_parent_built_it(confinement):
    assert Confinement.from_line(confinement.to_line()) == confinement
    fork = json.loads(json.dumps({"fork": 1, "confinement": confinement.to_message()}))
    assert Confinement.from_message(fork["confinement"]) == confinement


def _request() -> dict:
    call = {"call": "gradients", "transform": "shift_key", "key": "", "value": 1.0, "bend": None}
    return {
        "id": "learner-1",
        "preload": ["optax"],
        "budget": 10.0,
        "cells": [
            {
                "index": 0,
                "source": "x = 1",
                "offset": 3,
                "role": "task",
                "report": ["x"],
                "asks": {"jit": ["f"]},
                "varies": ["x"],
            }
        ],
        "checkpoint": None,
        "checkpoint_names": [],
        "cpu_seconds": 12.0,
        "scenarios": [
            {"name": "run-1", "inputs": {"x": [1.0]}, "sources": [call], "lesson_only_cells": False}
        ],
    }


def _changed(path: str, value) -> bytes:
    """The honest request with one entry set (a path of keys and indices), or deleted
    (`value` is `...`)."""
    data = _request()
    *parents, last = path.split("/")
    place = data
    for step in parents:
        place = place[int(step)] if step.isdigit() else place[step]
    if value is ...:
        del place[last]
    else:
        place[int(last) if last.isdigit() else last] = value
    return json.dumps(data).encode()


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("extra", 1),  # unknown keys, at every level
        ("cells/0/hook", "x"),
        ("scenarios/0/probe", True),
        ("scenarios/0/sources/0/shift", 1.0),
        ("budget", ...),  # missing keys
        ("cells/0/asks", ...),
        ("cells/0/asks/twist", ["f"]),  # a rule the child does not run
        ("cells/0/asks/jit", "f"),
        ("scenarios/0/sources/0/bend", ...),
        ("budget", "10"),  # wrong types
        ("budget", True),
        ("preload", "optax"),
        ("cells/0/index", True),
        ("cells/0/role", "tusk"),
        ("cells/0/report", "x"),
        ("cells/0", ["x = 1"]),
        ("checkpoint", 1.5),
        ("scenarios/0/inputs", [1.0]),
        ("scenarios/0/lesson_only_cells", 0),
        ("scenarios/0/sources/0/value", "1.0"),
        ("scenarios/0/sources/0/bend", [0.1, 1.0]),
    ],
)
def test_a_request_of_another_shape_is_refused(path, value):
    Request.from_line(json.dumps(_request()).encode())  # the honest one reads
    with pytest.raises(ShapeError):
        Request.from_line(_changed(path, value))


@pytest.mark.parametrize(
    "bad",
    [
        b'{"id": "a", "id": "b"}',  # a repeated key: the last would win
        b"[]",
        b"not json",
    ],
)
def test_a_request_line_that_is_not_one_object_is_refused(bad):
    with pytest.raises(ShapeError):
        Request.from_line(bad)


CONFINEMENT = Confinement("userns", 2**30, 2**20, 64, 2**26, uid=7, gid=7, keep=("/tmp/v",))


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("root", True),  # an unknown key
        ("memory", ...),  # a missing one
        ("mode", "root"),
        ("memory", "1073741824"),
        ("processes", 1.5),
        ("uid", "0"),
        ("keep", "/tmp/v"),
        ("trusted", "yes"),
        ("cpu_seconds", None),
    ],
)
def test_a_confinement_of_another_shape_is_refused(key, value):
    data = CONFINEMENT.to_message()
    if value is ...:
        del data[key]
    else:
        data[key] = value
    with pytest.raises(ShapeError):
        Confinement.from_message(data)
    with pytest.raises(ShapeError):
        Confinement.from_line(json.dumps(data))


def test_confine_reads_the_confinement_the_parent_writes():
    """`run/confine.py` runs by path, in the sandbox: it loads the record's folder itself
    and reads the very line `run/confined_child.py` gives it."""
    import importlib.util

    import lessonkit.grading_child

    spec = importlib.util.spec_from_file_location("confine_under_test", CONFINE_SCRIPT)
    confine = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(confine)
    assert (
        Path(confine.CHILD_FOLDER) == Path(lessonkit.grading_child.__file__).parent == RECORD_FOLDER
    )
    read = confine.read_confinement(CONFINEMENT.to_line().decode())
    assert dataclasses.asdict(read) == dataclasses.asdict(CONFINEMENT)
    with pytest.raises(ValueError, match="unknown keys"):
        confine.read_confinement(json.dumps({**CONFINEMENT.to_message(), "root": True}))
