"""Facts about the machine and packages that ran a piece of lesson code.

A receipt is only worth keeping if it says where it was made. These facts are read inside the
process that ran the code (the child), after JAX started there, so the backend and devices are
the ones the code really used, including logical CPU devices set through ``XLA_FLAGS``.
"""

from __future__ import annotations

import dataclasses
import platform
import subprocess
import sys
from dataclasses import asdict, dataclass, fields
from importlib import metadata
from pathlib import Path
from typing import Any

from lessonkit.defaults import CPU_NAME_WAIT_S

NOT_INSTALLED = "not installed"


@dataclass(frozen=True)
class Environment:
    """Where a run happened: interpreter, system, package versions and JAX devices."""

    python: str
    python_implementation: str
    os: str
    cpu: str
    jax: str
    jaxlib: str
    numpy: str
    matplotlib: str
    backend: str
    device_count: int
    device_kinds: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["device_kinds"] = list(self.device_kinds)
        return data

    @classmethod
    def from_dict(cls, data: Any) -> Environment:
        """Rebuild from JSON; raises ValueError naming the first missing or mistyped field."""
        if not isinstance(data, dict):
            raise ValueError("environment must be a JSON object")
        values = {}
        for field in fields(cls):
            if field.name not in data:
                raise ValueError(f"environment lacks {field.name}")
            value = data[field.name]
            if field.name == "device_count":
                ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
            elif field.name == "device_kinds":
                ok = isinstance(value, list) and all(isinstance(k, str) for k in value)
                value = tuple(value) if ok else value
            else:
                ok = isinstance(value, str)
            if not ok:
                raise ValueError(f"environment.{field.name} has the wrong type: {value!r}")
            values[field.name] = value
        return cls(**values)

    def devices_line(self) -> str:
        """A short summary such as ``8 CPU devices``, as the lesson page shows it."""
        if self.device_count == 0:
            return f"no devices ({self.backend})"
        plural = "device" if self.device_count == 1 else "devices"
        return f"{self.device_count} {self.backend.upper()} {plural}"


def package_version(name: str) -> str:
    """The installed version of a distribution, without importing it."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return NOT_INSTALLED


def cpu_model() -> str:
    """The processor's marketing name, best effort on Linux, macOS and Windows."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Hardware", "Processor") and value.strip():
                return value.strip()
    if sys.platform == "darwin":
        try:
            found = subprocess.run(
                ["sysctl", "-n", "machdep.cpu.brand_string"],
                capture_output=True,
                text=True,
                timeout=CPU_NAME_WAIT_S,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            found = None
        if found is not None and found.stdout.strip():
            return found.stdout.strip()
    return platform.processor() or platform.machine() or "unknown"


def static_environment(backend: str = "JAX not started") -> Environment:
    """What is known without starting JAX: for a child stopped before it could report."""
    return Environment(
        python=platform.python_version(),
        python_implementation=platform.python_implementation(),
        os=platform.platform(),
        cpu=cpu_model(),
        jax=package_version("jax"),
        jaxlib=package_version("jaxlib"),
        numpy=package_version("numpy"),
        matplotlib=package_version("matplotlib"),
        backend=backend,
        device_count=0,
        device_kinds=(),
    )


def read_environment() -> Environment:
    """Facts about this process; starts JAX's backend if it has not started yet.

    Raises:
        RuntimeError: JAX has no backend for the platform it was asked to use.
    """
    import jax  # here, not at module level: only the child that ran the code needs JAX

    devices = jax.devices()
    return dataclasses.replace(
        static_environment(jax.default_backend()),
        device_count=len(devices),
        device_kinds=tuple(sorted({d.device_kind for d in devices})),
    )
