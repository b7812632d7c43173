"""The phase project's grader without a process: the contract, the .npz reader's caps and
the property rules, on fabricated parameter trees (each rule seen failing)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest

from lessonkit.errors import LessonError
from lessonkit.lesson.project import PROPERTIES, parse_contract
from lessonkit.lesson.study_guide import load_study_guide
from lessonkit.project import parameters as params_module
from lessonkit.project import plan_runs, read_parameters
from lessonkit.project.grade import decide
from lessonkit.project.parameters import ParameterFileError
from lessonkit.project.properties import (
    RunProblem,
    check_distinct_keys,
    check_runs,
    check_same,
    check_seed_sensitive,
)
from lessonkit.project.runs import other_seed

from conftest import REPO, REPO_LESSONS

GUIDE = REPO / "phases" / "03-state" / "phase.yaml"
PHASE_LESSONS = tuple(param.id for param in REPO_LESSONS)  # every lesson under phases/
CONTRACT = load_study_guide(GUIDE, PHASE_LESSONS).project.graded


def npz(**arrays: np.ndarray) -> bytes:
    """The bytes of an .npz holding `arrays`; `__` in a name stands for `/`."""
    buffer = io.BytesIO()
    np.savez(buffer, **{name.replace("__", "/"): value for name, value in arrays.items()})
    return buffer.getvalue()


def tree(seed: int = 0, **changes: np.ndarray):
    rng = np.random.default_rng(seed)
    arrays = {
        "layer1__w": rng.normal(size=(3, 3)).astype(np.float32),
        "layer1__b": rng.normal(size=3).astype(np.float32),
        "layer2__w": rng.normal(size=(3, 3)).astype(np.float32),
        "layer2__b": rng.normal(size=3).astype(np.float32),
    }
    return read_parameters(npz(**{**arrays, **changes}))


# --------------------------------------------------------------------------- the contract


def test_the_phase_declares_its_project_contract():
    assert CONTRACT is not None
    assert CONTRACT.command("run") == "python project.py --seed S --steps N --out params.npz"
    assert CONTRACT.command("resume") == (
        "python project.py --seed S --from params.npz --start K --steps N --out params.npz"
    )
    assert CONTRACT.arguments("run", seed=7, steps=0) == (
        "--seed",
        "7",
        "--steps",
        "0",
        "--out",
        "params.npz",
    )
    assert [name for name, _ in CONTRACT.properties] == list(PROPERTIES)


def _raw() -> dict:
    import yaml

    return yaml.safe_load(GUIDE.read_text(encoding="utf-8"))["project"]["graded"]


def _error(message: str, key: str) -> LessonError:
    return LessonError(message, where=f"phase.yaml ({key})")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"run": ["--seed", "{seed}", "--out", "{output}"]}, "exactly the placeholders"),
        ({"resume": ["--seed", "{seed}", "--steps", "{steps}", "--out", "{output}"]}, "{start}"),
        ({"properties": {"runs": "x", "fast": "y"}}, "unknown property 'fast'"),
        ({"properties": {"reproducible": "x"}}, "must include 'runs'"),
        ({"restart_at": 3}, "before the last step"),
        ({"output": "../params.npz"}, "plain file name"),
        ({"script": "project.sh"}, "must end in .py"),
        ({"devices": 1}, "from 2 to 64"),
    ],
)
def test_a_contract_mistake_is_one_message(change, message):
    with pytest.raises(LessonError, match=message.replace("{", r"\{").replace("}", r"\}")):
        parse_contract({**_raw(), **change}, _error)


def test_the_study_guide_refuses_an_unknown_project_key(tmp_path: Path):
    text = GUIDE.read_text(encoding="utf-8").replace(
        "  graded:\n", "  graded_by_hand: 1\n  graded:\n"
    )
    path = tmp_path / "phase.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LessonError, match="optionally graded"):
        load_study_guide(path, PHASE_LESSONS)


def test_plan_runs_each_run_once_and_only_the_runs_needed():
    plan = plan_runs(CONTRACT, 5, other_seed(5))
    assert [r.name for r in plan] == [
        "full",
        "again",
        "initial",
        "other-seed",
        "to-restart",
        "restarted",
        "devices",
        "devices-jax",
    ]
    restarted = next(r for r in plan if r.name == "restarted")
    assert restarted.reads == "to-restart" and "--start" in restarted.arguments
    commands = {r.name: r.command("project.py") for r in plan}
    assert commands["devices"].startswith(
        "XLA_FLAGS=--xla_force_host_platform_device_count=4 python project.py"
    )
    assert commands["devices-jax"].startswith("JAX_NUM_CPU_DEVICES=4 python project.py")
    # Every run sets a device count, 1 or 4, the two settings taking turns (red team F8).
    assert commands["full"].startswith("XLA_FLAGS=--xla_force_host_platform_device_count=1 ")
    assert commands["again"].startswith("JAX_NUM_CPU_DEVICES=1 python")
    from dataclasses import replace

    only = replace(CONTRACT, properties=(("runs", "x"), ("seed-sensitive", "y")))
    assert [r.name for r in plan_runs(only, 5, 6)] == ["full", "initial", "other-seed"]
    assert other_seed(2**31 - 1) == 2**31 - 2


# --------------------------------------------------------------------------- the reader


def test_a_parameter_file_reads_as_a_tree_of_exact_bytes():
    parameters = tree()
    assert [leaf.name for leaf in parameters.leaves] == [
        "layer1/b",
        "layer1/w",
        "layer2/b",
        "layer2/w",
    ]
    assert parameters.layers == ("layer1", "layer2")
    assert parameters.leaf("layer1/w").shape == (3, 3)
    assert parameters.leaf("layer1/w").dtype == "float32"


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def test_the_reader_refuses_each_malformed_file():
    cases = {
        b"not a zip at all": "not an .npz file",
        _zip({}): "holds no arrays",
        _zip({"layer1/w.txt": b"x"}): "is not a .npy array",
        _zip({"../etc/w.npy": _npy(np.zeros(2))}): "is not a key path",
        _zip({"layer1/w.npy": b"\x93NUMPY garbage"}): "cannot be read",
        _zip({"a.npy": _npy(np.zeros(2)), "a/b.npy": _npy(np.zeros(2))}): "both an array and",
        _zip({"w.npy": _npy(np.array([{"x": 1}], dtype=object))}): "dtype object",
        _zip({"w.npy": _npy(np.zeros(2, dtype=complex))}): "dtype complex128",
    }
    for data, message in cases.items():
        with pytest.raises(ParameterFileError, match=message):
            read_parameters(data)


def test_a_header_that_claims_a_huge_array_allocates_nothing(monkeypatch):
    """The header says 4e12 floats; the member holds 16 bytes: refused before any allocation."""
    buffer = io.BytesIO()
    header = {"descr": "<f4", "fortran_order": False, "shape": (4_000_000_000_000,)}
    np.lib.format.write_array_header_1_0(buffer, header)
    lying = buffer.getvalue() + np.zeros(4, np.float32).tobytes()

    def no_allocation(*args, **kwargs):
        raise AssertionError("the reader allocated the array the header claims")

    monkeypatch.setattr(np, "load", no_allocation)
    with pytest.raises(ParameterFileError, match="w cannot be read"):
        read_parameters(_zip({"w.npy": lying}))


@pytest.mark.parametrize(
    ("cap", "value", "message"),
    [
        ("MAX_FILE_BYTES", 100, "larger than"),
        ("MAX_MEMBERS", 3, "more than 3 arrays"),
        ("MAX_ARRAY_BYTES", 64, "expand to more than"),
    ],
)
def test_the_reader_caps_size_members_and_expansion(monkeypatch, cap, value, message):
    data = npz(**{f"layer{i}__w": np.zeros(8, dtype=np.float32) for i in range(4)})
    read_parameters(data)  # fits the real caps
    monkeypatch.setattr(params_module, cap, value)
    with pytest.raises(ParameterFileError, match=message):
        read_parameters(data)


# --------------------------------------------------------------------------- the rules


def test_runs_wants_a_dict_per_layer_with_two_layers():
    assert check_runs(tree()).holds
    flat = read_parameters(npz(layer1_w=np.zeros(2), layer2_w=np.ones(2)))
    result = check_runs(flat)
    assert result.verdict == "fails" and result.paths == ("layer1_w", "layer2_w")
    one = read_parameters(npz(layer1__w=np.zeros(2), layer1__b=np.ones(2)))
    assert "only one layer" in check_runs(one).evidence
    problem = RunProblem("full", "`python project.py ...` failed: it exited with status 1")
    assert check_runs(problem).verdict == "fails"


def test_same_compares_bit_for_bit_and_names_the_leaves_that_differ():
    assert check_same("reproducible", tree(), tree(), "two runs").holds
    moved = tree(layer2__b=np.array([1.0, 2.0, 3.0], np.float32))
    result = check_same("reproducible", tree(), moved, "two runs")
    assert result.verdict == "fails" and result.paths == ("layer2/b",)
    assert "differs at layer2/b" in result.evidence
    zero = tree(layer1__b=np.zeros(3, np.float32))
    negative_zero = tree(layer1__b=-np.zeros(3, np.float32))  # equal as numbers, not as bits
    assert check_same("restartable", zero, negative_zero, "x").paths == ("layer1/b",)
    nan = tree(layer1__b=np.full(3, np.nan, np.float32))
    assert check_same("restartable", nan, nan, "x").holds  # the same bits
    missing = read_parameters(npz(layer1__w=np.zeros(2), layer2__w=np.ones(2)))
    assert check_same("device-independent", tree(), missing, "x").verdict == "fails"


def test_seed_sensitive_names_a_leaf_the_seed_does_not_reach():
    assert check_seed_sensitive(tree(0), tree(1), "seeds 0 and 1").holds
    fixed = tree(0).leaf("layer2/b")
    same_bias = tree(1, layer2__b=np.frombuffer(fixed.data, np.float32))
    result = check_seed_sensitive(tree(0), same_bias, "seeds 0 and 1")
    assert result.verdict == "fails" and result.paths == ("layer2/b",)
    assert check_seed_sensitive(tree(0), tree(0), "x").paths == (
        "layer1/b",
        "layer1/w",
        "layer2/b",
        "layer2/w",
    )


def test_distinct_keys_names_two_leaves_that_start_equal():
    assert check_distinct_keys([("seed 0", tree(0)), ("seed 1", tree(1))]).holds
    weight = np.frombuffer(tree(0).leaf("layer1/w").data, np.float32).reshape(3, 3)
    reused = tree(0, layer2__w=weight)
    result = check_distinct_keys([("seed 0", tree(1)), ("seed 1", reused)])
    assert result.verdict == "fails" and result.paths == ("layer1/w", "layer2/w")
    assert "layer1/w and layer2/w start equal" in result.evidence
    unlike = read_parameters(npz(a__w=np.zeros(2), b__w=np.zeros(3)))
    assert "1 pair of leaves compared" in check_distinct_keys([("seed 0", unlike)]).evidence


def _one_stream(**leaves: np.ndarray):
    return check_distinct_keys([("seed 0", tree(1)), ("seed 1", tree(0, **leaves))])


def test_f7_one_stream_for_leaves_of_different_shapes_fails_distinct_keys():
    """Red team F7: one key, four shapes; each smaller leaf is the first numbers of a
    larger one, so no two are equal and the old rule said none could be."""
    stream = np.random.default_rng(7).normal(size=12).astype(np.float32)
    result = _one_stream(
        layer1__w=stream.reshape(3, 4),
        layer1__b=stream[:4],
        layer2__w=stream[:8].reshape(4, 2),
        layer2__b=stream[:2],
    )
    assert result.verdict == "fails", result
    assert result.evidence.startswith("seed 1: one random stream feeds more than one leaf")
    assert "layer1/b is the first 4 numbers of layer1/w" in result.evidence
    assert set(result.paths) == {"layer1/b", "layer1/w", "layer2/b", "layer2/w"}


@pytest.mark.parametrize(
    ("inner", "said"),
    [
        (lambda s: s[:3] * np.float32(0.5), "the first 3 numbers of layer1/w, times 0.5"),
        (lambda s: s[5:8], "numbers 5 to 7 of layer1/w"),
        (lambda s: s[6:9] * np.float32(-1 / 3**0.5), "times -0.57735"),
    ],
    ids=["scaled", "sliced", "scaled-and-sliced"],
)
def test_distinct_keys_finds_a_leaf_that_is_a_scaled_or_sliced_run_of_another(inner, said):
    weight = np.frombuffer(tree(0).leaf("layer1/w").data, np.float32)
    result = _one_stream(layer1__b=inner(weight))
    assert result.verdict == "fails" and said in result.evidence, result.evidence
    assert result.paths == ("layer1/b", "layer1/w")


def test_distinct_keys_holds_for_leaves_from_their_own_keys_and_for_constant_leaves():
    rng = np.random.default_rng(3)
    own = {
        "layer1__w": rng.normal(size=(3, 4)).astype(np.float32),
        "layer1__b": np.zeros(4, np.float32),
        "layer2__w": rng.normal(size=(4, 2)).astype(np.float32),
        "layer2__b": np.ones(2, np.float32),
    }
    result = check_distinct_keys([("seed 0", read_parameters(npz(**own)))])
    assert result.holds and "6 pairs of leaves compared" in result.evidence, result.evidence


def test_distinct_keys_reports_a_search_that_spends_its_budget(monkeypatch):
    from lessonkit.project import streams

    pattern = tree(
        0,
        layer1__w=np.tile(np.float32([1, 2]), 5)[:9].reshape(3, 3),
        layer1__b=np.float32([1, 2, 5]),  # lines up with the weight four times, then differs
    )
    assert check_distinct_keys([("seed 0", pattern)]).holds
    monkeypatch.setattr(streams, "MAX_WORK", 2)
    result = check_distinct_keys([("seed 0", pattern)])
    assert result.verdict == "fails" and "stopped comparing" in result.evidence


def test_device_independent_compares_each_way_of_setting_the_devices():
    """Red team F8: a tree that differs only where JAX_NUM_CPU_DEVICES set the devices."""
    same = {"full": tree(), "devices": tree(), "devices-jax": tree()}
    result = decide("device-independent", same, 1, 2, CONTRACT)
    assert result.holds and "set by XLA_FLAGS and by JAX_NUM_CPU_DEVICES" in result.evidence
    other = {**same, "devices-jax": tree(1)}
    result = decide("device-independent", other, 1, 2, CONTRACT)
    assert result.verdict == "fails", result
    assert result.evidence.startswith("the run on 4 logical devices (JAX_NUM_CPU_DEVICES=4)")


def test_a_run_without_parameters_leaves_its_properties_not_checked():
    problem = RunProblem("again", "it did not finish in 60 s")
    outcomes = {"full": tree(), "again": problem, "initial": tree(), "other-seed": problem}
    assert decide("reproducible", outcomes, 1, 2, CONTRACT).verdict == "not checked"
    assert decide("distinct-keys", outcomes, 1, 2, CONTRACT).verdict == "not checked"
    assert "again run" in decide("seed-sensitive", outcomes, 1, 2, CONTRACT).evidence


def test_the_report_serialises_with_stable_keys_and_passes_only_when_every_property_holds():
    from lessonkit.project import FinishedRun, ProjectReport

    results = (
        check_runs(tree()),
        check_same("reproducible", tree(), tree(1), "two runs"),
    )
    runs = (FinishedRun("full", "python project.py --seed 5", 1.5, None),)
    report = ProjectReport("03", "a.py", 5, 6, results, runs, 3.0, True, CONTRACT.properties)
    data = report.to_json()
    assert list(data) == [
        "schema",
        "phase",
        "file",
        "passed",
        "seed",
        "other_seed",
        "sandboxed",
        "properties",
        "runs",
        "seconds",
    ]
    assert list(data["properties"][0]) == ["property", "verdict", "evidence", "paths", "sentence"]
    assert data["passed"] is False and data["properties"][1]["verdict"] == "fails"
    assert data["properties"][1]["paths"] == ["layer1/b", "layer1/w", "layer2/b", "layer2/w"]
    assert data["runs"] == [
        {"name": "full", "command": "python project.py --seed 5", "seconds": 1.5, "problem": None}
    ]
    assert "**reproducible** (fails)" in report.feedback_markdown()
    held = ProjectReport("03", "a.py", 5, 6, results[:1], runs, 3.0, True, CONTRACT.properties)
    assert held.passed and not ProjectReport("03", "a.py", 5, 6, (), (), 0, True).passed


def test_a_report_reads_back_from_its_json_as_the_same_report():
    """A resumed project batch keeps journalled reports: read back, each writes the same
    JSON and feedback; what is not a report of this schema is refused."""
    from lessonkit.project import FinishedRun, ProjectReport, failed_to_read

    results = (check_runs(tree()), check_same("reproducible", tree(), tree(1), "two runs"))
    runs = (
        FinishedRun("full", "python project.py --seed 5", 1.5, None),
        FinishedRun("again", "python project.py --seed 5", 0.25, "it did not finish in 60 s"),
    )
    report = ProjectReport("03", "a.py", 5, 6, results, runs, 3.0, True, CONTRACT.properties)
    unread = failed_to_read("03", "b.py", CONTRACT, "not UTF-8", 9)
    for original in (report, unread):
        again = ProjectReport.from_json(original.to_json())
        assert again.to_json() == original.to_json()
        assert again.feedback_markdown() == original.feedback_markdown()
        assert (again.properties, again.runs, again.seed) == (
            original.properties,
            original.runs,
            original.seed,
        )
    assert ProjectReport.from_json(report.to_json() | {"seconds": 3.14159}).seconds == 3.14159
    for bad in (
        report.to_json() | {"schema": 2},
        {
            **report.to_json(),
            "properties": [{**report.to_json()["properties"][0], "verdict": "ok"}],
        },
        {**report.to_json(), "runs": [{**report.to_json()["runs"][0], "name": "sideways"}]},
        [],
    ):
        with pytest.raises((ValueError, KeyError, TypeError)):
            ProjectReport.from_json(bad)
