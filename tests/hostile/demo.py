"""Run every hostile case against the grader in this checkout and write a Markdown record.

    .venv/bin/python tests/hostile/demo.py tests/hostile/DEMO-old-main.md

Cases run one at a time, confined exactly as in tests/test_grade_hostile_suite.py.
"""

from __future__ import annotations

import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))

from lessonkit.lesson.load import load_lesson  # noqa: E402

from conftest import LESSON_MD  # noqa: E402
from hostile.cases import CASES, Case  # noqa: E402
from hostile.harness import (  # noqa: E402
    Observation,
    can_confine,
    grade_alone,
    make_shared_grading,
    run_case,
)


def verdict(violations: list[str]) -> str:
    if not violations:
        return "held on old main"
    kinds = []
    for word, label in (
        ("false pass", "false pass"),
        ("verdict changed", "damage"),
        ("crash:", "crash"),
        ("hang:", "hang"),
        ("modified", "damage"),
        ("outside the scratch", "damage"),
        ("process(es) left", "escape"),
        ("outer", "exhaustion"),
        ("CSV", "damage"),
        ("escape seq", "damage"),
        ("exit status", "wrong exit"),
        ("missing", "damage"),
        ("no verdict", "damage"),
        ("not JSON", "crash"),
        ("new files", "damage"),
        ("temp folders", "damage"),
        ("empty", "damage"),
    ):
        if any(word in v for v in violations) and label not in kinds:
            kinds.append(label)
    return " / ".join(kinds) or "unsafe"


def header(case: Case) -> str:
    return f"## {case.klass} / {case.name} ({case.mode})"


def section(case: Case, obs: Observation) -> list[str]:
    source = case.file or f"builder `{case.builder.__name__}` in cases.py"
    lines = [
        header(case),
        "",
        f"- attack: `{source}`",
        f"- observed: **{verdict(obs.violations)}**",
    ]
    lines.append(f"- command: `{obs.command}`")
    lines += [f"- evidence: {v}" for v in obs.violations]
    lines += [f"- detail: {e}" for e in obs.evidence]
    return [*lines, ""]


def summary(body: str) -> list[str]:
    """Per class: how many cases broke the old grader, read back from the sections."""
    broken: dict[str, int] = {}
    for case in CASES:
        part = body.split(header(case) + "\n", 1)[1].split("\n## ", 1)[0]
        if "- observed: **" in part and "**held on old main**" not in part:
            broken[case.klass] = broken.get(case.klass, 0) + 1
    lines = ["## Summary: cases that break the old grader, per class", ""]
    for klass in dict.fromkeys(c.klass for c in CASES):
        total = sum(c.klass == klass for c in CASES)
        lines.append(f"- {klass}: {broken.get(klass, 0)} of {total}")
    return [*lines, ""]


def relabel(body: str) -> str:
    """Recompute every section's "observed" label from its evidence lines."""
    parts = body.split("\n## ")
    for index, part in enumerate(parts):
        lines = part.splitlines()
        found = [
            line.removeprefix("- evidence: ") for line in lines if line.startswith("- evidence: ")
        ]
        parts[index] = "\n".join(
            f"- observed: **{verdict(found)}**" if line.startswith("- observed: ") else line
            for line in lines
        ) + ("\n" if part.endswith("\n") else "")
    return "\n## ".join(parts)


def run(cases: list[Case]) -> dict[str, list[str]]:
    """Each case's section, run one at a time."""
    lesson = load_lesson(LESSON_MD)
    sections = {}
    with tempfile.TemporaryDirectory(prefix="hostile-demo-") as scratch:
        base = Path(scratch)
        grading = make_shared_grading(base, secrets.token_hex(4))
        alone = grade_alone(lesson, base / "alone", grading)
        for number, case in enumerate(cases):
            missing = [n for n in case.needs if not can_confine(n)]
            if missing:
                sections[header(case)] = [
                    header(case),
                    "",
                    f"Not run: cannot confine it here ({missing}).",
                    "",
                ]
                continue
            started = time.monotonic()
            obs = run_case(
                case,
                lesson,
                base / f"case-{number}",
                grading,
                alone if case.mode == "batch" else None,
            )
            print(
                f"{case.id}: {verdict(obs.violations)} ({time.monotonic() - started:.0f} s)",
                flush=True,
            )
            sections[header(case)] = section(case, obs)
    return sections


def main() -> None:
    """`demo.py OUT` runs every case; `demo.py OUT NAME...` reruns those cases in OUT."""
    target, names = Path(sys.argv[1]), sys.argv[2:]
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=TESTS
    ).stdout.strip()
    intro = [
        "# Hostile suite against the old grader",
        "",
        f"Generated by `tests/hostile/demo.py` on commit {commit} (today's grader, before the "
        "rewrite of issue 10), one case at a time, each confined (PID namespace, prlimit, "
        "pids and memory cgroups). `$CASE` is the case's temporary folder; batch cases grade "
        "`a-hostile-*.py` beside two honest files, `m-honest-solved.py` and "
        "`n-honest-forgot-bias.py`, whose verdicts alone are the baseline.",
        "",
    ]
    chosen = [c for c in CASES if not names or c.name in names]
    fresh = run(chosen)
    if names:
        old = target.read_text(encoding="utf-8")
        body = old[old.index("\n## " + CASES[0].klass) + 1 :]
        for key, lines in fresh.items():
            head, _, rest = body.partition(key + "\n")
            tail = rest.split("\n## ", 1)
            body = head + "\n".join(lines) + ("\n## " + tail[1] if len(tail) > 1 else "\n")
        intro = [*old[: old.index("## Summary")].rstrip("\n").splitlines(), ""]
        body = relabel(body)
    else:
        body = "\n".join(line for key in fresh for line in fresh[key]) + "\n"
    target.write_text("\n".join(intro + summary(body)) + "\n" + body, encoding="utf-8")


if __name__ == "__main__":
    main()
