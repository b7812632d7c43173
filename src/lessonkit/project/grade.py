"""Grade one project script: plan the runs, run them confined, decide every property here."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from lessonkit.lesson.project import ProjectContract, Property
from lessonkit.project.parameters import Parameters
from lessonkit.project.properties import (
    Outcome,
    PropertyResult,
    check_distinct_keys,
    check_runs,
    check_same,
    check_seed_sensitive,
)
from lessonkit.project.report import ProjectReport
from lessonkit.project.runs import (
    DEVICE_RUNS,
    FinishedRun,
    RunName,
    device_settings,
    execute,
    new_seed,
    other_seed,
    plan_runs,
    shown,
)
from lessonkit.run.isolation import Isolation
from lessonkit.run.limits import DEFAULT_LIMITS, Limits


def decide(
    name: Property,
    outcomes: dict[RunName, Outcome],
    seed: int,
    other: int,
    contract: ProjectContract,
) -> PropertyResult:
    """One property's verdict from the runs' parameter trees."""
    if name == "runs":
        return check_runs(outcomes["full"])
    if name == "reproducible":
        return check_same(name, outcomes["full"], outcomes["again"], f"two runs with seed {seed}")
    if name == "seed-sensitive":
        what = f"initial parameters of seeds {seed} and {other}"
        return check_seed_sensitive(outcomes["initial"], outcomes["other-seed"], what)
    if name == "distinct-keys":
        return check_distinct_keys(
            [
                (f"initial parameters of seed {seed}", outcomes["initial"]),
                (f"initial parameters of seed {other}", outcomes["other-seed"]),
            ]
        )
    if name == "restartable":
        what = f"the run restarted after step {contract.restart_at} and the full run"
        return check_same(name, outcomes["full"], outcomes["restarted"], what)
    return decide_devices(outcomes, contract.devices)


def decide_devices(outcomes: dict[RunName, Outcome], devices: int) -> PropertyResult:
    """device-independent: each device run, its devices set its own way, equals the full run."""
    for run, setting in DEVICE_RUNS.items():
        how = shown(device_settings(setting, devices))
        what = f"the run on {devices} logical devices ({how}) and the run on one"
        result = check_same("device-independent", outcomes["full"], outcomes[run], what)
        if not result.holds:
            return result
    full = outcomes["full"]
    assert isinstance(full, Parameters)
    ways = " and by ".join(DEVICE_RUNS.values())
    return PropertyResult(
        "device-independent",
        "holds",
        f"the runs on {devices} logical devices (set by {ways}) and the run on one: "
        f"bit-identical in all {len(full.leaves)} leaves",
    )


def grade_project(
    phase: str,
    contract: ProjectContract,
    file: str,
    script: bytes,
    *,
    isolation: Isolation,
    seed: int | None = None,
    limits: Limits = DEFAULT_LIMITS,
    jobs: int = 2,
    on_run: Callable[[FinishedRun], None] | None = None,
    stop: threading.Event | None = None,
) -> ProjectReport:
    """Every property the contract declares, decided from the script's confined runs.

    `limits` hold for each run (`limits.timeout` is each run's time limit). Setting `stop`
    (a batch's Ctrl-C) stops every run in flight.
    """
    started = time.monotonic()
    seed = new_seed() if seed is None else seed
    other = other_seed(seed)
    plan = plan_runs(contract, seed, other)
    outcomes, records = execute(
        contract,
        script,
        plan,
        isolation=isolation,
        limits=limits,
        jobs=jobs,
        on_run=on_run,
        stop=stop,
    )
    results = tuple(
        decide(name, outcomes, seed, other, contract) for name, _ in contract.properties
    )
    return ProjectReport(
        phase,
        file,
        seed,
        other,
        results,
        records,
        time.monotonic() - started,
        isolation.sandbox is not None,
        contract.properties,
    )
