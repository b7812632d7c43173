"""`lessonkit check`: grade your attempt at a lesson's tasks, once, on every save, or in bulk.

Exit status: 0 when every task passes, 1 when one does not, 2 when the file or the options
cannot be used. The grading child is started before the lesson is even loaded, so it
imports JAX while this process reads lesson.md and the practice file.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import threading
from pathlib import Path

from rich.text import Text

from lessonkit.commands._common import (
    add_key_argument,
    add_lesson_argument,
    add_limit_arguments,
    add_practice_file_argument,
    add_run_as_me_argument,
    console,
    limits_from,
    practice_file,
    quoted,
    seed_number,
    shard_spec,
    whole_number,
)
from lessonkit.errors import UsageError
from lessonkit.grade import Grader
from lessonkit.lesson.catalog import find_lesson
from lessonkit.lesson.model import Lesson
from lessonkit.lesson.text import safe_name
from lessonkit.settings import GradingSettings, grading_settings


def configure(parser: argparse.ArgumentParser) -> None:
    add_lesson_argument(parser)
    add_practice_file_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the report as JSON for tools")
    add_limit_arguments(parser, "time limit for running your code (each file's, with --batch)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--watch", action="store_true", help="grade again on every save of FILE")
    mode.add_argument("--batch", metavar="DIR", help="grade every .py and .ipynb file in DIR")
    parser.add_argument(
        "--jobs", type=whole_number, metavar="N", help="files graded at once in --batch"
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        help="where --batch writes its CSV, JSON and feedback (default: ./check-LESSON/); "
        "never inside the submissions folder",
    )
    parser.add_argument(
        "--seed",
        type=seed_number,
        metavar="N",
        help="replay the input sets of an earlier run (its report names the seed)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="--batch: keep the files an interrupted batch already graded, grade the rest",
    )
    parser.add_argument(
        "--shard",
        type=shard_spec,
        metavar="K/N",
        help="--batch: grade only shard K of N (the files whose path hash mod N is K-1); "
        "needs --seed. Without it, a Slurm array task or a Kubernetes indexed job "
        "(with --shard-count) picks its own shard",
    )
    parser.add_argument(
        "--shard-count",
        type=whole_number,
        metavar="N",
        help="--batch in a Kubernetes indexed job: the job's completions (JOB_COMPLETION_INDEX "
        "gives the shard)",
    )
    parser.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="--batch: grade on the Dask distributed scheduler at ADDRESS (tcp://host:8786); "
        "each worker grades each file in a sandboxed child of its own",
    )
    parser.add_argument(
        "--gradebook",
        metavar="FILE",
        help="--batch: keep every graded file as an attempt in this course gradebook (SQLite)",
    )
    parser.add_argument(
        "--roster",
        metavar="FILE",
        help="--gradebook: the class list (id,name,email,...), kept in the gradebook for every "
        "later batch, merge and regrade; a file is its student's whose id is its name, or "
        "that id and version tags (alice_v2.py, alice-late.py)",
    )
    parser.add_argument(
        "--submitted-at-from",
        metavar="FILE",
        help="--gradebook: a CSV file,submitted_at giving each file's submission time (ISO "
        "8601); otherwise a file's modification time is its submission time. 'Latest' means "
        "the newest submission, whatever order files are graded in",
    )
    parser.add_argument(
        "--keep-old-gradings",
        action="store_true",
        help="--gradebook: files whose bytes the gradebook graded under another grading "
        "fingerprint (the lesson's grading or the grader changed since) keep those gradings, "
        "marked as older, instead of being graded again",
    )
    add_key_argument(parser)
    add_run_as_me_argument(parser)


def run(args: argparse.Namespace) -> int:
    batch_only = (
        *(
            args.jobs,
            args.out,
            args.resume,
            args.run_submissions_as_me,
            args.gradebook,
            args.roster,
        ),
        *(args.shard, args.shard_count, args.dask, args.submitted_at_from, args.key),
    )
    if any(batch_only) and not args.batch:
        raise UsageError(
            "--jobs, --out, --resume, --run-submissions-as-me, --gradebook, --roster, "
            "--submitted-at-from, --shard, --dask and --key only apply to --batch",
            fix="add --batch DIR",
        )
    if (args.roster or args.submitted_at_from or args.keep_old_gradings) and not args.gradebook:
        raise UsageError(
            "--roster, --submitted-at-from and --keep-old-gradings say whose files go into a "
            "gradebook, when they were submitted, and which gradings it keeps",
            fix="add --gradebook FILE",
        )
    if args.batch:
        if args.file:
            raise UsageError("give either FILE or --batch DIR, not both")
        return _batch(args)
    settings = grading_settings(os.environ, limits=limits_from(args), seed=args.seed)
    if settings.isolation.note and not args.json:
        console(stderr=True).print(Text(settings.isolation.note, style="yellow"))
    lesson = find_lesson(args.lesson)
    path = practice_file(lesson, args.file)
    # no sandbox is shown the file, nor the folder it lies in (run/import_binds.py)
    settings = settings.guarding([path])
    # prepares the lesson; the reference child starts unless its record is kept
    grader = Grader(settings, lesson=lesson)
    try:
        if args.watch:
            return _watch(grader, lesson, path, args.json)
        report = grader.grade(lesson, path)
    finally:
        grader.close()
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        from lessonkit.grade.judging import report_view

        console().print(report_view(report))
    return 0 if report.passed else 1


def _watch(grader: Grader, lesson: Lesson, path: Path, as_json: bool) -> int:
    import time

    from lessonkit.grade import watch
    from lessonkit.grade.judging import report_view

    out = console()

    def show(report) -> None:
        if as_json:
            print(json.dumps(report.to_json()), flush=True)
            return
        out.rule(f"{time.strftime('%H:%M:%S')} · {quoted(path)}")
        out.print(report_view(report))

    def show_problem(message: str) -> None:
        if as_json:
            print(json.dumps({"schema": 1, "lesson": lesson.meta.id, "error": message}), flush=True)
        else:
            out.rule(time.strftime("%H:%M:%S"))
            out.print(Text(message, style="red"))

    if not as_json:
        out.print(f"Watching {quoted(path)}; save it to grade again. Press Ctrl-C to stop.")
    stop = threading.Event()

    def interrupted(signum: int, frame: object) -> None:
        stop.set()  # the loop also polls it: Ctrl-C stops the watch even if the raise is lost
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, interrupted)
    try:
        watch(grader, lesson, path, show, show_problem, should_stop=stop.is_set)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGINT, previous)
    if not as_json:
        out.print("Stopped watching.")
    return 0


def _batch(args: argparse.Namespace) -> int:
    """Grade a folder as one batch (`grade_folder`), its progress shown, then its outcome."""
    from lessonkit.commands._batch import folder_batch, grade_shown, say_not_graded
    from lessonkit.commands._course import say_gradebook_kept
    from lessonkit.course.batch_gradebook import CourseIntake, LessonGradebook
    from lessonkit.course.shards import choose_shard
    from lessonkit.grade.batches import BatchKind, lesson_kind

    lesson = find_lesson(args.lesson)
    shard = choose_shard(args.shard, args.shard_count, os.environ)
    folder = Path(args.batch)

    def gradebook() -> LessonGradebook:
        course = CourseIntake.open(args.gradebook, args.roster, folder, args.submitted_at_from)
        return LessonGradebook(course, lesson, folder, keep_old=args.keep_old_gradings)

    def kind(settings: GradingSettings) -> BatchKind:
        return lesson_kind(
            lesson,
            jobs=args.jobs or os.cpu_count(),
            settings=settings,
            dask=args.dask,
            allow_unsandboxed=args.run_submissions_as_me,
            shard=shard,
        )

    batch = folder_batch(
        args,
        holds="submissions",
        elsewhere=bool(args.dask),  # the Dask workers run the files, each in its own sandbox
        guarded=(args.gradebook, args.roster, args.submitted_at_from),
        seed=args.seed,
        shard=shard,
        gradebook=gradebook if args.gradebook else None,
    )
    outcome = grade_shown(batch, kind)
    if outcome.status == "interrupted":
        return 130
    out = console(stderr=True)
    out.print(f"Graded {outcome.graded_here} file(s) in {outcome.seconds:.1f} s.")
    entries = outcome.entries
    if args.json:
        print(json.dumps(outcome.summary, indent=2))
    else:
        from lessonkit.grade.judging import batch_table

        view = console()
        view.print(batch_table(entries, [(t.id, t.title) for t in lesson.tasks]))
        passed = sum(e.report.passed for e in entries)
        of_shard = "" if shard is None else f", shard {shard}"
        if outcome.seed is None:
            seed = "none graded now: each shows its earlier grading"
        elif outcome.reused:
            seed = f"input seed {outcome.seed} for the files graded now; the {outcome.reused} "
            seed += "unchanged keep their earlier seeds"
        else:
            seed = f"input seed {outcome.seed}"
        view.print(f"{passed} of {len(entries)} files pass every task ({seed}{of_shard}).")
        view.print(Text(f"Wrote {', '.join(safe_name(quoted(p)) for p in outcome.written)}."))
    if outcome.kept is not None:
        # so that files left out of the gradebook are seen
        say_gradebook_kept(outcome.kept.course, outcome.kept.kept, out)
    return say_not_graded(outcome, out)
