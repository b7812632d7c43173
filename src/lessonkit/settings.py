"""What one command grades with: a frozen `GradingSettings`, built once where the command starts.

A command (or another entry point: the notebook's grading server, a Dask worker) builds it
from its arguments and the environment it was given, with `grading_settings`, and passes it
down; no library module reads the environment to decide how to grade. The sizes, waits and
tolerances that no command chooses live in `defaults.py`, a child's limits in `Limits`.

The environment switches, all read here:

- `LESSONKIT_COMPILE_CACHE`: an absolute folder for JAX's compile cache, the same on every
  worker of a cluster (`run/cache_folders.py`); `LESSONKIT_NO_COMPILE_CACHE=1` turns it off;
- `LESSONKIT_NO_REFERENCE_CACHE=1` turns the reference store off
(`grade/channel/reference_store.py`);
- `LESSONKIT_SCENARIO_ORDER=N` gives every file one scenario order (the hostile suite does).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from lessonkit.run.cache_folders import compile_cache_folder
from lessonkit.run.isolation import UNSANDBOXED, Isolation, choose_isolation, sandbox_if_any
from lessonkit.run.limits import DEFAULT_LIMITS, Limits

COMPILE_CACHE_VARIABLE = "LESSONKIT_COMPILE_CACHE"
"""An absolute folder for JAX's compile cache, the same on every worker of a cluster."""
NO_COMPILE_CACHE_VARIABLE = "LESSONKIT_NO_COMPILE_CACHE"
"""Set (to anything): no compile cache at all."""
NO_REFERENCE_STORE_VARIABLE = "LESSONKIT_NO_REFERENCE_CACHE"
"""Set (to anything): the reference run is never kept nor reused."""
SCENARIO_ORDER_VARIABLE = "LESSONKIT_SCENARIO_ORDER"
"""A number: every file's scenarios in the one order it seeds, whatever the file."""


@dataclass(frozen=True)
class GradingSettings:
    """Everything a grader is told by the command that starts it; the defaults are what
    `lessonkit check FILE` gives with no option and an empty environment."""

    limits: Limits = DEFAULT_LIMITS
    """The limits of every child (the time limit is each file's)."""
    isolation: Isolation = UNSANDBOXED
    """What keeps learner children apart, and the compile cache they may read."""
    seed: int | None = None
    """The input seed of the command (None: a fresh one, drawn secretly)."""
    jobs: int = 0
    """Learner children started ahead of the files that will need them."""
    scenario_order: int | None = None
    """One scenario order for every file (`LESSONKIT_SCENARIO_ORDER`); None: one per file."""
    reference_store: bool = True
    """Whether the reference run may be kept and reused (`LESSONKIT_NO_REFERENCE_CACHE`)."""

    def guarding(self, paths: Iterable[Path | str | None]) -> GradingSettings:
        """These settings, their isolation guarding `paths` too: people's work the command
        reads, which no sandbox is shown (`run/import_binds.py`); None: an option not given."""
        return replace(self, isolation=self.isolation.guarding(paths))


DEFAULT_SETTINGS = GradingSettings()
"""No option given, nothing switched: resource limits only and no compile cache."""


def compile_cache_from(environ: Mapping[str, str]) -> Path | None:
    """JAX's compile cache as `environ` chooses it (None: switched off or unusable)."""
    if environ.get(NO_COMPILE_CACHE_VARIABLE):
        return None
    return compile_cache_folder(environ.get(COMPILE_CACHE_VARIABLE, "").strip())


def scenario_order_from(environ: Mapping[str, str]) -> int | None:
    """The one scenario order `environ` asks for, if it names a number."""
    replay = environ.get(SCENARIO_ORDER_VARIABLE, "").strip()
    return int(replay) if replay.isdigit() else None


def grading_settings(
    environ: Mapping[str, str],
    *,
    limits: Limits = DEFAULT_LIMITS,
    batch: bool = False,
    allow_unsandboxed: bool = True,
    compile_cache: bool = True,
    seed: int | None = None,
    jobs: int = 0,
) -> GradingSettings:
    """The settings of one command: its isolation chosen once (`choose_isolation`: `batch`
    refuses to run unisolated unless `allow_unsandboxed`), with the compile cache where
    `compile_cache`, and the switches `environ` sets. Raises UsageError where the isolation
    is refused."""
    cache = compile_cache_from(environ) if compile_cache else None
    isolation = choose_isolation(batch=batch, allow_unsandboxed=allow_unsandboxed, cache=cache)
    return settings_around(environ, isolation, limits=limits, seed=seed, jobs=jobs)


def settings_around(
    environ: Mapping[str, str],
    isolation: Isolation,
    *,
    limits: Limits = DEFAULT_LIMITS,
    seed: int | None = None,
    jobs: int = 0,
) -> GradingSettings:
    """The settings around an `isolation` the caller chose for itself (a Dask worker decides
    whether it may go on without the sandbox), with the switches `environ` sets."""
    return GradingSettings(
        limits=limits,
        isolation=isolation,
        seed=seed,
        jobs=jobs,
        scenario_order=scenario_order_from(environ),
        reference_store=not environ.get(NO_REFERENCE_STORE_VARIABLE),
    )


def proving_settings(
    environ: Mapping[str, str], *, timeout: float = DEFAULT_LIMITS.timeout, jobs: int = 2
) -> GradingSettings:
    """What `lessonkit verify` proves a lesson with: sandboxed where the sandbox works (a
    proof runs only the lesson's own attempts, so it is never refused), reading the compile
    cache the reference writes, as `check --batch` is."""
    isolation = sandbox_if_any(compile_cache_from(environ))
    limits = DEFAULT_LIMITS.with_options(timeout=timeout)
    return settings_around(environ, isolation, limits=limits, jobs=jobs)
