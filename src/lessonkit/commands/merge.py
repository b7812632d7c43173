"""`lessonkit merge`: join the shards of one batch into its CSV, JSON, feedback and gradebook.

Each argument is a shard's `--out` folder; `lessonkit.course.shards` refuses a shard result
that does not verify with the grading key (`grade.provenance.grading_key`) or whose seal does not
bind its entries (an unfinished batch, an entry deleted), shards of another folder,
seed, batch, lesson, revision, toolkit or grading fingerprint, shards given twice or left
out, and files graded twice, naming which. The joined outputs are those of one batch over the whole
folder, written to `--out`; with `--gradebook`, every graded file is kept as an attempt
there. A file a shard's grader failed on is merged as not graded, kept out of every count
and the gradebook, and named with its shard's `--resume` command (exit status 1).
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence
from pathlib import Path

from rich.text import Text

from lessonkit import __version__
from lessonkit.atomic import OpenFolder
from lessonkit.commands._common import add_key_argument, console, quoted
from lessonkit.commands._course import say_gradebook_kept
from lessonkit.course.batch_gradebook import CourseIntake
from lessonkit.course.shards import ShardResult, merge_shards, read_shard
from lessonkit.errors import UsageError, shown
from lessonkit.grade.batches import (
    BatchEntry,
    grading_fingerprint,
    grading_key,
    short,
    write_results,
)
from lessonkit.grade.judging import Scoring, summary_csv, summary_json
from lessonkit.lesson.catalog import find_lesson
from lessonkit.lesson.text import safe_name


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shards", nargs="+", metavar="OUT", help="each shard's --out folder")
    parser.add_argument("--out", required=True, metavar="DIR", help="where the joined outputs go")
    parser.add_argument("--gradebook", metavar="FILE", help="keep every file as an attempt here")
    parser.add_argument(
        "--roster",
        metavar="FILE",
        help="--gradebook: the class list to keep in it (without one, the roster the "
        "gradebook keeps matches the files)",
    )
    add_key_argument(parser)
    parser.add_argument(
        "--submitted-at-from",
        metavar="FILE",
        help="--gradebook: a CSV file,submitted_at giving each file's submission time",
    )


def run(args: argparse.Namespace) -> int:
    if (args.roster or args.submitted_at_from) and not args.gradebook:
        raise UsageError(
            "--roster and --submitted-at-from say whose files go into a gradebook, and when "
            "they were submitted",
            fix="add --gradebook FILE",
        )
    out_dir = Path(args.out)
    folders = [Path(folder) for folder in args.shards]
    key = grading_key(args.key, not_inside=(*folders, out_dir))
    results = [read_shard(folder, key) for folder in folders]
    merged = merge_shards(results)
    lesson = find_lesson(merged.lesson)
    if lesson.meta.revision != merged.revision:
        raise UsageError(
            f"the shards graded {merged.lesson} revision {merged.revision}; this repository "
            f"has revision {lesson.meta.revision}",
            fix="merge with the revision the shards graded, or regrade with this one",
        )
    here = grading_fingerprint(lesson)
    if merged.fingerprint != here:
        console(stderr=True).print(
            Text(
                f"The shards were graded under the grading fingerprint {short(merged.fingerprint)}"
                f"; this installation's is {short(here)} (another grader or lesson grading): "
                "they are kept as graded, and `lessonkit grades` counts them as older.",
                style="yellow",
            )
        )
    for shard in args.shards:
        if Path(shard).resolve() == out_dir.resolve():
            raise UsageError(f"--out {shown(out_dir)} is one of the shards; give another folder")
    course = (
        CourseIntake.open(args.gradebook, args.roster, None, args.submitted_at_from)
        if args.gradebook
        else None
    )
    entries = [BatchEntry(Path(e.path), e.report, e.sha256 or None, e.data) for e in merged.entries]
    scoring = Scoring.of(lesson)
    summary = summary_json(entries, lesson.meta.id, scoring)
    summary |= {
        "seed": merged.seed,
        "revision": merged.revision,
        "toolkit": merged.toolkit,
        "shard": f"merged from {merged.shards}",
    }
    stem = f"check-{lesson.meta.id}"
    try:
        reports, relatives = [e.report for e in entries], [e.path for e in merged.entries]
        csv = summary_csv(entries, scoring)
        with OpenFolder.open(out_dir) as folder:
            written = write_results(folder, stem, reports, relatives, summary, csv)
    except OSError as exc:
        raise UsageError(
            f"cannot write {shown(Path(exc.filename or out_dir))}: {exc.strerror or exc}",
            fix="give --out a folder you can write to",
        ) from None
    out = console()
    kept = (
        None
        if course is None
        else course.keep(
            lesson,
            [e for e in merged.entries if e.report.not_graded is None],
            merged.fingerprint,
            merged.toolkit,
            graded_here=False,
        )
    )
    passed = sum(e.report.passed for e in entries)
    out.print(
        Text(
            f"Merged {merged.shards} shard(s): {passed} of {len(entries)} files pass every task "
            f"(input seed {merged.seed}, lessonkit {merged.toolkit}; this is {__version__})."
        )
    )
    out.print(Text(f"Wrote {', '.join(safe_name(quoted(p)) for p in written)}."))
    if course is not None and kept is not None:
        say_gradebook_kept(course, kept, console(stderr=True))
    return say_shards_not_graded(results, folders, args.key)


def say_shards_not_graded(
    results: Sequence[ShardResult], folders: Sequence[Path], key: str | None
) -> int:
    """The files a shard's grader failed on (merged as not graded: kept out of every count
    and the gradebook) and, for each such shard, the command that grades them; the exit
    status (1 when there are any, else 0)."""
    count, lines = 0, []
    for result, folder in zip(results, folders, strict=True):
        failed = [e for e in result.entries if e.report.not_graded is not None]
        if not failed:
            continue
        count += len(failed)
        header = result.header
        argv = ["check", header.lesson, "--batch", header.folder, "--shard", str(header.shard)]
        argv += ["--seed", str(header.seed), "--out", str(folder), "--resume"]
        argv += ["--key", key] if key else []
        lines += [f"  {e.path} (shard {header.shard}): {e.report.not_graded}" for e in failed]
        lines.append(f"  grade them with: lessonkit {shlex.join(argv)}")
    if not count:
        return 0
    said = (
        f"Not graded: grader failure on {count} file(s), kept out of every count and the "
        "gradebook. Grade them in their shard (with the options it was graded with), then "
        "merge again:"
    )
    shown_lines = [said, *(safe_name(line) for line in lines)]
    console(stderr=True).print(Text("\n".join(shown_lines), style="yellow"))
    return 1
