"""The runs a project is graded on, and running them confined.

Each property needs a few named runs (`NEEDS`: `full`, `again`, ...), one run serving every
property that needs it, so a project costs at most eight short runs, each confined
(`run.whole_script`) in a fresh folder, its parameter file read here with `read_parameters`.
Every run sets its CPU device count through one of the two documented settings
(`DeviceSetting`), taking turns, so a script cannot tell the device runs from the others
nor behave only where one setting is present.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

from lessonkit.lesson.project import ProjectContract, Property
from lessonkit.lesson.text import safe_text
from lessonkit.project.parameters import ParameterFileError, read_parameters
from lessonkit.project.properties import Outcome, RunProblem
from lessonkit.receipts.running import with_device_count
from lessonkit.run.isolation import Isolation
from lessonkit.run.limits import Limits
from lessonkit.run.whole_script import run_confined

RunName = Literal[
    "full",
    "again",
    "initial",
    "other-seed",
    "to-restart",
    "restarted",
    "devices",
    "devices-jax",
]
DeviceSetting = Literal["XLA_FLAGS", "JAX_NUM_CPU_DEVICES"]
"""The two documented ways to set JAX's logical CPU devices from outside a script (the XLA
flag, and the `jax_num_cpu_devices` option read from its environment variable)."""
DEVICE_RUNS: dict[RunName, DeviceSetting] = {
    "devices": "XLA_FLAGS",
    "devices-jax": "JAX_NUM_CPU_DEVICES",
}
"""The device-independence runs, one per setting."""
NEEDS: dict[Property, tuple[RunName, ...]] = {
    "runs": ("full",),
    "reproducible": ("full", "again"),
    "seed-sensitive": ("initial", "other-seed"),
    "distinct-keys": ("initial", "other-seed"),
    "restartable": ("full", "to-restart", "restarted"),
    "device-independent": ("full", *DEVICE_RUNS),
}
STDERR_LINES = 6
MAX_SEED = 2**31 - 1  # a seed any script can take as a 32-bit integer


def new_seed() -> int:
    """A fresh seed for a project's runs: nobody can know it before the grading."""
    return secrets.randbelow(MAX_SEED + 1)


def other_seed(seed: int) -> int:
    """The second seed: fixed by the first, so `--seed` replays both."""
    return seed + 1 if seed < MAX_SEED else seed - 1


def device_settings(setting: DeviceSetting, devices: int) -> dict[str, str]:
    """The environment that gives a run `devices` logical CPU devices through `setting`."""
    if setting == "XLA_FLAGS":
        return {"XLA_FLAGS": with_device_count("", devices)}
    return {"JAX_NUM_CPU_DEVICES": str(devices)}


def shown(settings: dict[str, str]) -> str:
    """Settings as a shell writes them before a command: `NAME=value`."""
    return " ".join(f"{k}={v}" for k, v in settings.items())


@dataclass(frozen=True)
class PlannedRun:
    """One run of the script: its arguments, its devices and how they are set, and the run
    whose file it reads."""

    name: RunName
    arguments: tuple[str, ...]
    setting: DeviceSetting
    devices: int = 1
    reads: RunName | None = None

    @property
    def environment(self) -> dict[str, str]:
        return device_settings(self.setting, self.devices)

    def command(self, script: str) -> str:
        """The run as a learner would type it."""
        return " ".join((shown(self.environment), "python", script, *self.arguments))


@dataclass(frozen=True)
class FinishedRun:
    """What one run did: its command, how long it took, and its problem if it gave no tree."""

    name: RunName
    command: str
    seconds: float
    problem: str | None


def plan_runs(contract: ProjectContract, seed: int, other_seed: int) -> tuple[PlannedRun, ...]:
    """The runs the contract's properties need, each once, in an order that runs a run's
    input before it.

    The one-device runs alternate the two settings, so each property that compares two of
    them also compares the settings; each device run uses one.
    """
    full = contract.arguments("run", seed=seed, steps=contract.steps)
    xla: DeviceSetting = "XLA_FLAGS"
    jax: DeviceSetting = "JAX_NUM_CPU_DEVICES"
    every: dict[RunName, PlannedRun] = {
        "full": PlannedRun("full", full, xla),
        "again": PlannedRun("again", full, jax),
        "initial": PlannedRun("initial", contract.arguments("run", seed=seed, steps=0), xla),
        "other-seed": PlannedRun(
            "other-seed", contract.arguments("run", seed=other_seed, steps=0), jax
        ),
        "to-restart": PlannedRun(
            "to-restart", contract.arguments("run", seed=seed, steps=contract.restart_at), xla
        ),
        "restarted": PlannedRun(
            "restarted",
            contract.arguments(
                "resume", seed=seed, start=contract.restart_at, steps=contract.steps
            ),
            jax,
            reads="to-restart",
        ),
        **{
            name: PlannedRun(name, full, setting, contract.devices)
            for name, setting in DEVICE_RUNS.items()
        },
    }
    needed = {run for name, _ in contract.properties for run in NEEDS[name]}
    return tuple(run for name, run in every.items() if name in needed)


def execute(
    contract: ProjectContract,
    script: bytes,
    plan: tuple[PlannedRun, ...],
    *,
    isolation: Isolation,
    limits: Limits,
    jobs: int = 2,
    on_run: Callable[[FinishedRun], None] | None = None,
    stop: threading.Event | None = None,
) -> tuple[dict[RunName, Outcome], tuple[FinishedRun, ...]]:
    """Run every planned run, `jobs` at a time; each run's parameters or its problem.

    `stop`, when set (a batch's Ctrl-C), stops every run in flight.
    """
    files: dict[RunName, bytes] = {}
    outcomes: dict[RunName, Outcome] = {}
    records: dict[RunName, FinishedRun] = {}
    futures: dict[RunName, Future] = {}
    ending = threading.Event()  # this grading's own end: Ctrl-C here, or a grader bug

    def should_stop() -> bool:
        return ending.is_set() or (stop is not None and stop.is_set())

    def one(run: PlannedRun) -> None:
        inputs = {}
        if run.reads is not None:
            futures[run.reads].result()
            if run.reads not in files:
                outcomes[run.name] = RunProblem(run.name, f"the {run.reads} run gave no file")
                records[run.name] = FinishedRun(run.name, run.command(contract.script), 0.0, None)
                return
            inputs = {contract.output: files[run.reads]}
        done = run_confined(
            contract.script,
            script,
            run.arguments,
            collect=(contract.output,),
            isolation=isolation,
            limits=limits,
            inputs=inputs,
            settings=run.environment,
            should_stop=should_stop,
        )
        command = run.command(contract.script)
        left = done.file(contract.output)
        outcome: Outcome
        if done.ended is not None or done.exit_code != 0:
            why = done.ended or f"it exited with status {done.exit_code}"
            lines = safe_text(done.stderr).strip().splitlines()[-STDERR_LINES:]
            said = "".join(f"\n    {line}" for line in lines)
            outcome = RunProblem(run.name, f"`{command}` failed: {why}{said}")
        elif left.data is None:
            outcome = RunProblem(run.name, f"`{command}` gave no parameters: {left.problem}")
        else:
            files[run.name] = left.data
            try:
                outcome = read_parameters(left.data)
            except ParameterFileError as exc:
                outcome = RunProblem(run.name, f"`{command}` wrote {contract.output}, but {exc}")
        outcomes[run.name] = outcome
        problem = outcome.message if isinstance(outcome, RunProblem) else None
        records[run.name] = FinishedRun(run.name, command, round(done.seconds, 2), problem)
        if on_run is not None:
            on_run(records[run.name])

    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        read = {run.reads for run in plan}
        # The runs others read go first, so a run that reads one never holds a thread idle.
        for run in sorted(plan, key=lambda r: r.name not in read):
            futures[run.name] = pool.submit(one, run)
        for future in futures.values():
            future.result()
    except BaseException:  # Ctrl-C, or a grader bug: stop the runs in flight, start no more
        ending.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return outcomes, tuple(records[run.name] for run in plan)
