"""The reference run's report on disk: computed once per lesson revision and seed, then reused.

A reference run (the lesson's own code on every scenario, in a trusted child) costs a process
that imports JAX: about 2 CPU-s of every `check`. Its report depends only on what the child
was asked to run and on what ran it, so it is kept under a key made of exactly that:

- the reference request itself (every cell's source, the preloaded modules, every scenario's
  drawn inputs and changed calls: the lesson revision and the seed's draws), the seed, and
  the wire names that map the child's scenario names back to the grader's;
- the lesson's id and revision, and the grader (`fingerprint.grader_digest`: every file
  of the installed lessonkit package, found by walking it);
- the interpreter, every installed distribution's name and version (JAX, jaxlib, NumPy,
  Optax...), the machine and its CPU (XLA compiles for the CPU it runs on), and the settings
  every grading child gets.

Entries are written only here, in the grader's own process (the trusted side), whole or not
at all (`atomic.write_atomically`), and only for a run that finished and passed the grader's
checks of the lesson. Each entry carries an HMAC-SHA256 over its format, key and report
under the grading key (`grade.provenance.grading_key`: private to this account, kept apart from this
folder), so whoever can write this folder but cannot read the key cannot make an entry the
store believes: an edited value, even with the key and the format kept, does not verify.
Reading is defensive: an entry that is missing, cut short, edited, unsigned, of another
format or another key is ignored, and the reference runs again. A sandboxed learner child
never sees this folder, and one that runs as another account cannot write it; where learner
code runs as the grader's own user (rlimits alone) the store is not used at all, nor where
the grading key cannot be read or made. `LESSONKIT_NO_REFERENCE_CACHE=1` turns the store off
(`GradingSettings.reference_store`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import platform
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from lessonkit.atomic import make_folders, write_atomically
from lessonkit.errors import LessonkitError
from lessonkit.grade.channel.child_report import ChildReport
from lessonkit.grade.channel.child_report_codec import (
    BadChildReport,
    decode_child_report,
    encode_child_report,
)
from lessonkit.grade.channel.protocol import Request
from lessonkit.grade.model import JournalKey
from lessonkit.grade.provenance.fingerprint import grader_digest
from lessonkit.grade.provenance.grading_key import grading_key
from lessonkit.run.cache_folders import PRIVATE_FOLDER_MODE, SHARED_FOLDER_MODE, cache_home
from lessonkit.run.isolation import Isolation

FORMAT = 3  # 2: every probe runs `probes.COPIES` times; 3: each entry is signed
KEEP = 256  # entries kept; the oldest go first (each fresh seed of `check` writes one)
MAX_ENTRY_BYTES = 64 * 2**20


@functools.cache
def _installation() -> str:
    """A digest of what ran the reference: the grader (`fingerprint.grader_digest`: every
    file of the package, the packages installed, the child's settings), and what binds a
    report to this machine: the interpreter's build and path, where the packages are, the
    machine and its CPU."""
    facts = {
        "grader": grader_digest(),
        "python": sys.version,
        "executable": sys.executable,
        "packages": _distributions(),
        "machine": platform.machine(),
        "cpu": _cpu(),
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()


def _distributions() -> list[str]:
    """Every installed distribution's metadata folder (its name and version) on sys.path."""
    found: set[str] = set()
    for entry in sys.path:
        with contextlib.suppress(OSError):
            found.update(
                f"{entry}:{name}"
                for name in os.listdir(entry or ".")
                if name.endswith((".dist-info", ".egg-info"))
            )
    return sorted(found)


def _cpu() -> str:
    """The CPU's model and feature flags (XLA's CPU code, and so its rounding, follows them)."""
    with contextlib.suppress(OSError):
        lines = []
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                if not line.strip():
                    break  # the first processor says it for all
                if line.startswith(("model name", "flags", "Features", "CPU part")):
                    lines.append(line.strip())
        return "\n".join(lines)
    return platform.processor()


def reference_key(
    lesson_id: str, revision: str, seed: int, request: Request, names: dict[str, str]
) -> str:
    """The key of one reference run: everything its report depends on (module docstring)."""
    sent = replace(request, id="reference").to_line()
    parts = {
        "format": FORMAT,
        "lesson": lesson_id,
        "revision": revision,
        "seed": seed,
        "names": names,
        "installation": _installation(),
        "request": hashlib.sha256(sent).hexdigest(),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class ReferenceStore:
    """The store's entries, one file per key in one folder: each holds a reference run's report,
    signed with `signer`."""

    folder: Path
    signer: JournalKey

    def _path(self, lesson_id: str, key: str) -> Path:
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", lesson_id)[:60]
        return self.folder / f"{name}-{key}.json"

    def load(self, lesson_id: str, key: str) -> ChildReport | None:
        """The report kept under `key`, or None: missing, unreadable, not signed with our
        key, or not exactly ours."""
        path = self._path(lesson_id, key)
        try:
            with open(path, "rb") as file:
                raw = file.read(MAX_ENTRY_BYTES + 1)
            if len(raw) > MAX_ENTRY_BYTES:
                return None
            data = json.loads(raw)
            if type(data) is not dict or set(data) != {"format", "key", "record", "mac"}:
                return None
            signed = {name: data[name] for name in ("format", "key", "record")}
            if data["format"] != FORMAT or data["key"] != key:
                return None
            if not self.signer.verifies("reference", signed, data["mac"]):
                return None  # written or edited without the key
            return decode_child_report(data["record"])
        except (OSError, ValueError, BadChildReport, RecursionError):
            return None

    def save(self, lesson_id: str, key: str, child_report: ChildReport) -> None:
        """Keep `report` under `key`, signed; a store that cannot be written is simply not
        used."""
        try:
            signed = {"format": FORMAT, "key": key, "record": encode_child_report(child_report)}
            entry = signed | {"mac": self.signer.mac("reference", signed)}
            # private: it holds what the lesson's own solution computed, a learner's answers
            make_folders(self.folder, PRIVATE_FOLDER_MODE, parents=SHARED_FOLDER_MODE)
            write_atomically(self._path(lesson_id, key), json.dumps(entry), private=True)
        except (OSError, ValueError):
            return
        self._prune()

    def _prune(self) -> None:
        """Keep the newest `KEEP` entries."""
        with contextlib.suppress(OSError):
            entries = [e for e in os.scandir(self.folder) if e.name.endswith(".json")]
            if len(entries) <= KEEP:
                return
            entries.sort(key=lambda e: e.stat().st_mtime)
            for entry in entries[: len(entries) - KEEP]:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def reference_store(isolation: Isolation, *, enabled: bool = True) -> ReferenceStore | None:
    """The user's reference store, beside the compile cache; None unless `enabled`, or
    where learner code runs as this very user (rlimits alone): it could write the store
    there, and a report it wrote would grade the next run with the same seed. Also None
    where the compile cache (bound into every sandbox) holds the store's folder: the
    reports are the expected values. And None where the grading key (the default one, made
    on first use) cannot be read or made: no entry could be proved."""
    if not enabled or isolation.kind == "limits":
        return None
    folder = cache_home() / "references"
    if isolation.cache is not None and folder.resolve().is_relative_to(isolation.cache.resolve()):
        return None  # the compile cache is bound into the sandbox: the reports would be too
    try:
        signer = grading_key(None, not_inside=(folder,))
    except LessonkitError:
        return None
    return ReferenceStore(folder, signer)
