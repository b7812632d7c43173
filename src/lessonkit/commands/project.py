"""`lessonkit project`: grade a phase project script by the properties its phase declares.

Exit status: 0 when every property holds (or, with --batch, when every file was graded), 1
when one does not, 2 when the file, the phase or the options cannot be used. The script runs
as the phase's contract says (phase.yaml, `project: graded:`), confined like every learner
child; every verdict is decided here, from the parameter files read as data.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from rich.table import Table
from rich.text import Text

from lessonkit.commands._common import (
    add_key_argument,
    add_limit_arguments,
    add_run_as_me_argument,
    console,
    limits_from,
    marked,
    quoted,
    whole_number,
)
from lessonkit.errors import UsageError, shown
from lessonkit.lesson.catalog import phase_contract
from lessonkit.lesson.text import safe_name
from lessonkit.project import (
    MAX_SEED,
    ProjectReport,
    grade_project,
)
from lessonkit.settings import GradingSettings, grading_settings

_MARKS = {"holds": "ok", "fails": "bad", "not checked": "warn"}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("phase", help="the phase, as `phase-NN` (or `NN`)")
    parser.add_argument("file", nargs="?", help="your project script (.py)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON for tools")
    add_limit_arguments(parser, "time limit for each run of your script")
    parser.add_argument(
        "--seed", type=seed_number, metavar="S", help="replay the seeds of an earlier report"
    )
    parser.add_argument(
        "--jobs",
        type=whole_number,
        default=2,
        metavar="N",
        help="runs at once (default: 2); with --batch, files graded at once",
    )
    parser.add_argument("--batch", metavar="DIR", help="grade every .py file in DIR")
    parser.add_argument(
        "--out",
        metavar="DIR",
        help="where --batch writes its JSON and feedback (default: ./project-phase-NN/); "
        "never inside the submissions folder",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="--batch: keep the scripts an interrupted batch already graded, grade the rest",
    )
    add_key_argument(parser)
    add_run_as_me_argument(parser)


def seed_number(text: str) -> int:
    """An argparse type for --seed: a whole number from 0 to MAX_SEED."""
    if not text.isdigit() or int(text) > MAX_SEED:
        raise argparse.ArgumentTypeError(
            f"must be a whole number from 0 to {MAX_SEED}, got {text!r}"
        )
    return int(text)


def run(args: argparse.Namespace) -> int:
    if (args.out or args.run_submissions_as_me or args.resume or args.key) and not args.batch:
        raise UsageError(
            "--out, --resume, --key and --run-submissions-as-me only apply to --batch",
            fix="add --batch DIR",
        )
    if args.batch:
        if args.file:
            raise UsageError("give either FILE or --batch DIR, not both")
        return _batch(args)
    if not args.file:
        raise UsageError("give your project script", fix="lessonkit project PHASE FILE")
    from lessonkit.project.batch import read_script

    number, contract = phase_contract(args.phase)
    path = Path(args.file)
    script = read_script(path)
    settings = grading_settings(os.environ, limits=limits_from(args), compile_cache=False)
    if settings.isolation.note and not args.json:
        console(stderr=True).print(Text(settings.isolation.note, style="yellow"))
    report = grade_project(
        number,
        contract,
        shown(path),
        script,
        isolation=settings.isolation,
        seed=args.seed,
        limits=settings.limits,
        jobs=args.jobs,
    )
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        show_report(report)
    return 0 if report.passed else 1


def show_report(report: ProjectReport) -> None:
    """The report for a person: each property, its verdict and its evidence."""
    out = console()
    where = "sandboxed" if report.sandboxed else "not sandboxed"
    out.print(
        Text(
            f"Phase {report.phase} project · {safe_name(report.file)} "
            f"(seeds {report.seed} and {report.other_seed}, {where}, {report.seconds:.1f} s)"
        )
    )
    for result in report.properties:
        label = result.property + ("" if result.verdict != "not checked" else " (not checked)")
        out.print(marked(_MARKS[result.verdict], f"{label}: {report.sentence(result)}"))
        for line in result.evidence.splitlines():
            out.print(Text(f"    {line}", style="dim" if result.holds else ""))
    held = sum(r.holds for r in report.properties)
    if report.passed:
        out.print(Text("Every property holds.", style="green"))
    else:
        out.print(
            f"{held} of {len(report.properties)} properties hold; "
            f"replay these runs with --seed {report.seed}."
        )


def _batch(args: argparse.Namespace) -> int:
    """Grade every .py file below a folder as one batch (`grade_folder`), one report each; the
    folder is data. Its progress is shown, then its outcome."""
    from lessonkit.commands._batch import folder_batch, grade_shown
    from lessonkit.grade.batches import BatchKind
    from lessonkit.project.batch import project_kind
    from lessonkit.project.runs import new_seed

    number, contract = phase_contract(args.phase)
    # Afresh, the seed is drawn now; resumed, it is the interrupted batch's (or drawn then).
    seed = args.seed if args.seed is not None or args.resume else new_seed()
    batch = folder_batch(args, holds="scripts", suffixes=(".py",), compile_cache=False, seed=seed)

    def kind(settings: GradingSettings) -> BatchKind:
        return project_kind(
            number,
            contract,
            batch.folder,
            isolation=settings.isolation,
            limits=settings.limits,
            jobs=args.jobs,
        )

    outcome = grade_shown(batch, kind, marks=("every property holds", "not every property holds"))
    if outcome.status == "interrupted":
        return 130
    reports = [e.report for e in outcome.entries]
    if args.json:
        print(json.dumps(outcome.summary, indent=2))
        return 0
    table = Table("file", *(name for name, _ in contract.properties))
    symbols = {"holds": "✓", "fails": "✗", "not checked": "·"}
    for report in reports:
        table.add_row(
            Text(safe_name(report.file)), *(symbols[p.verdict] for p in report.properties)
        )
    view = console()
    view.print(table)
    passed = sum(r.passed for r in reports)
    view.print(f"{passed} of {len(reports)} scripts have every property (seed {outcome.seed}).")
    written = outcome.written
    view.print(Text(f"Wrote {quoted(written[0])} and {quoted(written[-1])}."))
    return 0
