"""The course gradebook: every graded attempt of every lesson, kept in one SQLite file.

An attempt is never overwritten: a resubmission, or a regrade, is a new attempt, with the
bytes graded (kept once per sha256), the seed, the toolkit version and the lesson revision,
so any grade can be traced to what produced it. An attempt is stored once: the same bytes
of the same student, graded with the same lesson revision and toolkit, are the same
attempt, however often a batch or a merge hands them in again (`Attempt.identity`); only
`regrade` grades kept bytes again. Which attempt counts is a policy applied when reading
(`counting`), over the attempts in the order they were *submitted* (`Attempt.submitted`),
never the order they were graded in. The roster is kept here too, a version per change, so
every later batch, merge and regrade matches files to the same students. The schema has a
version (SQLite's `user_version`) and a migration from each version to the next, run in a
transaction when a file is opened; two graders writing one file at once each take the write
lock in turn (WAL, `BEGIN IMMEDIATE`), so neither loses an attempt. Keep the file on a local
disk: SQLite's locks are not reliable over a network file system.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from lessonkit.atomic import create_private
from lessonkit.course.roster import Roster, Student
from lessonkit.errors import UsageError, shown
from lessonkit.grade.report import Scoring
from lessonkit.grade.results import (
    ERROR,
    LIMIT_CAUSES,
    CheckName,
    GradeReport,
    Status,
    counts_as_passed,
    error_cause,
)

Policy = Literal["latest", "best"]
POLICIES: tuple[Policy, ...] = ("latest", "best")
_BUSY_TIMEOUT_MS = 60_000


@dataclass(frozen=True)
class TaskGrade:
    """One task's verdict in one attempt."""

    task: str
    title: str
    status: Status
    points: float
    max_points: float
    optional: bool
    message: str
    check: CheckName | None = None
    """The check that found the problem (None when the task passed)."""
    path: str | None = None
    """The key path of the value the problem is about, if any."""

    @property
    def counts_as_passed(self) -> bool:
        """Passed, or an optional task left out."""
        return counts_as_passed(self.status, self.optional)


def utc_stamp(moment: dt.datetime | float | None = None) -> str:
    """A time as the gradebook writes it (`2026-12-05T09:30:00Z`): now, a datetime, or
    seconds since the epoch."""
    if moment is None:
        moment = dt.datetime.now(dt.UTC)
    elif isinstance(moment, float | int):
        moment = dt.datetime.fromtimestamp(moment, dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


Identity = tuple[str, str, str, str, str]
"""(student, lesson, sha256, lesson revision, toolkit version): what makes an attempt new."""


@dataclass(frozen=True)
class Attempt:
    """One graded submission; `id` orders attempts as kept (None until it is kept)."""

    id: int | None
    student: str
    lesson: str
    lesson_title: str
    file: str
    sha256: str
    seed: int | None
    graded_utc: str
    submitted: float
    """When the file was submitted (seconds since the epoch): its modification time at
    intake, or the time a submission system gave (`--submitted-at-from`). "Latest" is the
    newest by this time, whatever order the files were graded in."""
    toolkit: str
    revision: str
    points: float
    """Every point earned, optional tasks' included (`extra_points` says how many of them)."""
    max_points: float
    """The required tasks' points: optional ones are extra credit, never in the maximum."""
    regrade_of: int | None
    """The attempt whose bytes this one graded again (`lessonkit regrade`), or None."""
    tasks: tuple[TaskGrade, ...]

    @property
    def identity(self) -> Identity:
        return (self.student, self.lesson, self.sha256, self.revision, self.toolkit)

    @property
    def extra_points(self) -> float:
        """The points earned on optional tasks, over and above `max_points`."""
        return sum(t.points for t in self.tasks if t.optional)


@dataclass(frozen=True)
class Graded:
    """An attempt about to be kept: with the bytes it graded and the grader's whole report
    (kept so that a batch handed the same bytes again can show it without grading)."""

    attempt: Attempt
    data: bytes
    report: GradeReport


@dataclass(frozen=True)
class Added:
    """What `Gradebook.add_attempts` did."""

    ids: tuple[int, ...]
    """The new attempts' ids, in the order given."""
    unchanged: tuple[Attempt, ...]
    """Attempts not kept, because the gradebook already holds the same submission, graded
    with the same revision and toolkit."""
    regraded: tuple[Attempt, ...] = ()
    """Kept as regrades: a submission the gradebook holds, graded with another revision or
    toolkit, which takes its original's place."""


def attempt_of(
    report: GradeReport,
    scoring: Scoring,
    *,
    student: str,
    lesson_title: str,
    revision: str,
    toolkit: str,
    file: str,
    data: bytes,
    submitted: float,
    graded_utc: str,
    regrade_of: int | None = None,
) -> Graded:
    """The attempt a grade report makes, with the bytes it graded."""
    points = scoring.available
    earned = scoring.earned(report)
    tasks = tuple(
        TaskGrade(
            t.id,
            t.title,
            t.status,
            earned.get(t.id, 0.0),
            points.get(t.id, 0.0),
            t.optional,
            t.message,
            t.check,
            t.path,
        )
        for t in report.tasks
    )
    attempt = Attempt(
        id=None,
        student=student,
        lesson=report.lesson,
        lesson_title=lesson_title,
        file=file,
        sha256=hashlib.sha256(data).hexdigest(),
        seed=report.seed,
        graded_utc=graded_utc,
        submitted=submitted,
        toolkit=toolkit,
        revision=revision,
        points=sum(earned.values()),
        max_points=scoring.maximum,
        regrade_of=regrade_of,
        tasks=tasks,
    )
    return Graded(attempt, data, report)


def _run_all(db: sqlite3.Connection, script: str) -> None:
    """Each statement in turn (`executescript` would commit the migration's transaction)."""
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def _v1(db: sqlite3.Connection) -> None:
    _run_all(
        db,
        """
        CREATE TABLE files (sha256 TEXT PRIMARY KEY, content BLOB NOT NULL);
        CREATE TABLE attempts (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            student TEXT NOT NULL, lesson TEXT NOT NULL, file TEXT NOT NULL,
            sha256 TEXT NOT NULL REFERENCES files(sha256), seed INTEGER,
            graded_utc TEXT NOT NULL, mtime REAL NOT NULL,
            toolkit TEXT NOT NULL, revision TEXT NOT NULL,
            points REAL NOT NULL, max_points REAL NOT NULL
        );
        CREATE INDEX attempts_by_student ON attempts (student, lesson);
        CREATE TABLE task_grades (
            attempt INTEGER NOT NULL REFERENCES attempts(id), position INTEGER NOT NULL,
            task TEXT NOT NULL, title TEXT NOT NULL, status TEXT NOT NULL,
            points REAL NOT NULL, max_points REAL NOT NULL, optional INTEGER NOT NULL,
            message TEXT NOT NULL, PRIMARY KEY (attempt, task)
        );
        """,
    )


def _v2(db: sqlite3.Connection) -> None:
    """The lesson's title on each attempt (the exports' column names), and the roster."""
    _run_all(
        db,
        """
        ALTER TABLE attempts ADD COLUMN lesson_title TEXT NOT NULL DEFAULT '';
        UPDATE attempts SET lesson_title = lesson;
        CREATE TABLE students (
            id TEXT PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL,
            sis_user_id TEXT NOT NULL, sis_login_id TEXT NOT NULL,
            section TEXT NOT NULL, lms_id TEXT NOT NULL
        );
        """,
    )


def _v3(db: sqlite3.Connection) -> None:
    """A regrade names the attempt it graded again, which it then replaces."""
    _run_all(db, "ALTER TABLE attempts ADD COLUMN regrade_of INTEGER REFERENCES attempts(id)")


def _v4(db: sqlite3.Connection) -> None:
    """Which check found each task's problem, and at which key path (the class report)."""
    _run_all(
        db,
        """
        ALTER TABLE task_grades ADD COLUMN check_name TEXT;
        ALTER TABLE task_grades ADD COLUMN key_path TEXT
        """,
    )


def _v5(db: sqlite3.Connection) -> None:
    """Each attempt's whole report (an unchanged file is shown, not graded again), a
    version of the roster per change, and the look-up of an attempt by its identity.

    The column `mtime` holds `Attempt.submitted` (it has since version 1).
    """
    _run_all(
        db,
        """
        ALTER TABLE attempts ADD COLUMN report TEXT;
        CREATE INDEX attempts_by_identity ON attempts (student, lesson, sha256);
        CREATE TABLE roster_versions (
            version INTEGER PRIMARY KEY AUTOINCREMENT,
            stored_utc TEXT NOT NULL, students TEXT NOT NULL
        )
        """,
    )


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (_v1, _v2, _v3, _v4, _v5)
"""MIGRATIONS[k] takes a gradebook from version k to k + 1; the last gives `SCHEMA`."""
SCHEMA = len(MIGRATIONS)


class Gradebook:
    """An open gradebook file; use as a context manager, which closes it."""

    def __init__(self, path: Path, *, migrate_to: int = SCHEMA):
        self.path = path
        with suppress(OSError):  # where it cannot be made, SQLite's message says why
            create_private(path)  # private: every student's submissions and grades
        try:
            self.db = sqlite3.connect(path, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None)
            self.db.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.execute("PRAGMA foreign_keys = ON")
            self._migrate(migrate_to)
        except sqlite3.DatabaseError as exc:
            raise self._error(exc) from None

    def _error(self, exc: sqlite3.Error) -> UsageError:
        if "locked" in str(exc) or "busy" in str(exc):
            return UsageError(
                f"the gradebook {shown(self.path)} stayed locked by another writer for "
                f"{_BUSY_TIMEOUT_MS // 1000} s",
                fix="run again when the other grader is done (nothing was written)",
            )
        if isinstance(exc, sqlite3.OperationalError):
            return UsageError(
                f"cannot use the gradebook {shown(self.path)} ({exc})",
                fix="check the disk and the file's permissions; nothing was written",
            )
        return UsageError(
            f"{shown(self.path)} is not a lessonkit gradebook ({exc})",
            fix="give --gradebook a new file name, or the gradebook file itself",
        )

    def __enter__(self) -> Gradebook:
        return self

    def __exit__(self, *exc: object) -> None:
        self.db.close()

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, holding the write lock from its start."""
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        try:
            yield self.db
            self.db.execute("COMMIT")
        except BaseException as exc:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise self._error(exc) from None
            raise

    @property
    def version(self) -> int:
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self, target: int) -> None:
        with self._writing() as db:
            version = self.version
            if version > SCHEMA:
                raise UsageError(
                    f"{shown(self.path)} is a version {version} gradebook; this lessonkit "
                    f"reads versions up to {SCHEMA}",
                    fix="upgrade lessonkit",
                )
            for step in range(version, target):
                MIGRATIONS[step](db)
                db.execute(f"PRAGMA user_version = {step + 1}")

    def add_attempts(self, items: Sequence[Graded], *, replace_limited: bool = False) -> Added:
        """Keep each new attempt (in the order given) and its bytes, in one transaction.

        A file handed in again is the submission the gradebook already holds when the same
        student's same bytes are kept and the student submitted nothing else between that
        submission and this one (`_same_submission`). Graded with the same revision and
        toolkit, it is not kept again ("unchanged"); graded with another, it is kept as a
        regrade of it, taking its place (a submission is counted once, graded as the lesson
        is now). Bytes a student goes back to after submitting others are a new submission.
        An item that names the attempt it regrades (`lessonkit regrade`) is always kept.
        With `replace_limited` (a batch that graded such files afresh on purpose), a new
        grading of a submission whose kept grading stopped at a time, memory or crash limit
        is kept in its place too.
        """
        ids: list[int] = []
        unchanged: list[Attempt] = []
        regraded: list[Attempt] = []
        with self._writing() as db:
            for item in items:
                attempt = item.attempt
                if attempt.regrade_of is None:
                    same = self._same_submission(db, attempt)
                    if (
                        same is not None
                        and same[1:] == (attempt.revision, attempt.toolkit)
                        and not (replace_limited and self._stopped_at_a_limit(db, same[0]))
                    ):
                        unchanged.append(attempt)
                        continue
                    if same is not None:
                        place = self._original_time(db, same[0])
                        attempt = replace(attempt, regrade_of=same[0], submitted=place)
                        regraded.append(attempt)
                db.execute(
                    "INSERT OR IGNORE INTO files (sha256, content) VALUES (?, ?)",
                    (attempt.sha256, item.data),
                )
                cursor = db.execute(
                    "INSERT INTO attempts (student, lesson, lesson_title, file, sha256, seed, "
                    "graded_utc, mtime, toolkit, revision, points, max_points, regrade_of, "
                    "report) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        attempt.student,
                        attempt.lesson,
                        attempt.lesson_title,
                        attempt.file,
                        attempt.sha256,
                        attempt.seed,
                        attempt.graded_utc,
                        attempt.submitted,
                        attempt.toolkit,
                        attempt.revision,
                        attempt.points,
                        attempt.max_points,
                        attempt.regrade_of,
                        json.dumps(item.report.to_json()),
                    ),
                )
                row_id = int(cursor.lastrowid or 0)
                db.executemany(
                    "INSERT INTO task_grades (attempt, position, task, title, status, points, "
                    "max_points, optional, message, check_name, key_path) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            row_id,
                            i,
                            t.task,
                            t.title,
                            t.status,
                            t.points,
                            t.max_points,
                            int(t.optional),
                            t.message,
                            t.check,
                            t.path,
                        )
                        for i, t in enumerate(attempt.tasks)
                    ],
                )
                ids.append(row_id)
        return Added(tuple(ids), tuple(unchanged), tuple(regraded))

    @staticmethod
    def _same_submission(db: sqlite3.Connection, attempt: Attempt) -> tuple[int, str, str] | None:
        """The kept attempt these bytes already are, as (id, revision, toolkit) of its
        current grading (the newest regrade of it); None when they are a new submission."""
        who = (attempt.student, attempt.lesson)
        kept = db.execute(
            "SELECT id, mtime FROM attempts WHERE student = ? AND lesson = ? AND sha256 = ? "
            "AND regrade_of IS NULL ORDER BY (mtime <= ?) DESC, "
            "CASE WHEN mtime <= ? THEN -mtime ELSE mtime END, id DESC LIMIT 1",
            (*who, attempt.sha256, attempt.submitted, attempt.submitted),
        ).fetchone()
        if kept is None:
            return None
        original, when = int(kept[0]), float(kept[1])
        other = db.execute(  # other bytes submitted since: these are submitted anew
            "SELECT 1 FROM attempts WHERE student = ? AND lesson = ? AND sha256 != ? "
            "AND regrade_of IS NULL AND mtime > ? AND mtime <= ? LIMIT 1",
            (*who, attempt.sha256, when, attempt.submitted),
        ).fetchone()
        if other is not None:
            return None
        latest = original
        while True:  # a regrade of a regrade: its newest grading is the current one
            newer = db.execute(
                "SELECT MAX(id) FROM attempts WHERE regrade_of = ?", (latest,)
            ).fetchone()[0]
            if newer is None:
                break
            latest = int(newer)
        revision, toolkit = db.execute(
            "SELECT revision, toolkit FROM attempts WHERE id = ?", (latest,)
        ).fetchone()
        return latest, str(revision), str(toolkit)

    @staticmethod
    def _stopped_at_a_limit(db: sqlite3.Connection, attempt_id: int) -> bool:
        """Whether the attempt's grading stopped at a limit the machine may have caused (its
        new grading is then kept in its place, never dropped as unchanged)."""
        messages = db.execute(
            "SELECT message FROM task_grades WHERE attempt = ? AND status = ?",
            (attempt_id, ERROR),
        ).fetchall()
        return any(error_cause(str(m)) in LIMIT_CAUSES for (m,) in messages)

    @staticmethod
    def _original_time(db: sqlite3.Connection, attempt_id: int) -> float:
        """The submission time of the attempt `attempt_id` regrades (or is)."""
        row = db.execute("SELECT mtime FROM attempts WHERE id = ?", (attempt_id,)).fetchone()
        return float(row[0])

    def kept_report(self, identity: Identity) -> GradeReport | None:
        """The report of the attempt with this identity, if one is kept with its report."""
        row = self.db.execute(
            "SELECT report FROM attempts WHERE student = ? AND lesson = ? AND sha256 = ? "
            "AND revision = ? AND toolkit = ? AND report IS NOT NULL ORDER BY id DESC LIMIT 1",
            identity,
        ).fetchone()
        if row is None:
            return None
        try:
            return GradeReport.from_json(json.loads(row[0]))
        except (ValueError, KeyError, TypeError):
            return None  # graded again, as a file with no kept report would be

    def store_roster(self, roster: Roster, stored_utc: str) -> int | None:
        """Make `roster` the gradebook's class list; its version number when it changed
        anything (a new version is kept), else None."""
        rows = [
            (s.id, s.name, s.email, s.sis_user_id, s.sis_login_id, s.section, s.lms_id)
            for s in sorted(roster.students, key=lambda s: s.id)
        ]
        with self._writing() as db:
            held = db.execute("SELECT * FROM students ORDER BY id").fetchall()
            if [tuple(r) for r in held] == rows:
                return None
            db.execute("DELETE FROM students")
            db.executemany("INSERT INTO students VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
            cursor = db.execute(
                "INSERT INTO roster_versions (stored_utc, students) VALUES (?, ?)",
                (stored_utc, json.dumps(rows)),
            )
            return int(cursor.lastrowid or 0)

    def roster(self) -> Roster | None:
        """The class list the gradebook keeps, or None when it was never given one."""
        students = self.students()
        return Roster(tuple(students.values())) if students else None

    def roster_versions(self) -> tuple[tuple[int, str], ...]:
        """(version, stored_utc) of every roster kept, oldest first."""
        rows = self.db.execute("SELECT version, stored_utc FROM roster_versions ORDER BY version")
        return tuple((int(v), str(t)) for v, t in rows)

    def students(self) -> dict[str, Student]:
        rows = self.db.execute("SELECT * FROM students ORDER BY id").fetchall()
        return {row[0]: Student(*row) for row in rows}

    def attempts(
        self, *, lesson: str | None = None, student: str | None = None
    ) -> tuple[Attempt, ...]:
        """Attempts in the order they were kept, optionally of one lesson or one student."""
        where, values = [], []
        for column, value in (("lesson", lesson), ("student", student)):
            if value is not None:
                where.append(f"{column} = ?")
                values.append(value)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        rows = self.db.execute(
            "SELECT id, student, lesson, lesson_title, file, sha256, seed, graded_utc, mtime, "
            f"toolkit, revision, points, max_points, regrade_of FROM attempts {clause} "
            "ORDER BY id",
            values,
        ).fetchall()
        tasks: dict[int, list[TaskGrade]] = {row[0]: [] for row in rows}
        if rows:
            marks = ", ".join("?" for _ in rows)
            for row in self.db.execute(
                "SELECT attempt, task, title, status, points, max_points, optional, message, "
                f"check_name, key_path FROM task_grades WHERE attempt IN ({marks}) "
                "ORDER BY attempt, position",
                list(tasks),
            ):
                tasks[row[0]].append(TaskGrade(*row[1:6], bool(row[6]), *row[7:]))
        return tuple(Attempt(*row, tasks=tuple(tasks[row[0]])) for row in rows)

    def content(self, sha256: str) -> bytes:
        """The bytes an attempt graded."""
        row = self.db.execute("SELECT content FROM files WHERE sha256 = ?", (sha256,)).fetchone()
        if row is None:
            raise UsageError(f"{shown(self.path)} has no file with sha256 {sha256}")
        return bytes(row[0])


def current(attempts: Iterable[Attempt]) -> tuple[Attempt, ...]:
    """The attempts no regrade has replaced, in the order they were submitted (then kept): a
    regrade takes its original's place, as it keeps its original's submission time."""
    attempts = sorted(attempts, key=lambda a: a.id or 0)
    replaced = {a.regrade_of for a in attempts if a.regrade_of is not None}
    kept = [a for a in attempts if a.id not in replaced]
    place = {a.id: a.id for a in attempts}
    for attempt in attempts:  # a regrade of a regrade sits where the first original sat
        if attempt.regrade_of is not None:
            place[attempt.id] = place.get(attempt.regrade_of, attempt.regrade_of)
    return tuple(sorted(kept, key=lambda a: (a.submitted, place[a.id] or 0, a.id or 0)))


def counting(attempts: Iterable[Attempt], policy: Policy) -> dict[tuple[str, str], Attempt]:
    """Per (student, lesson), the attempt that counts among those no regrade replaced: the
    newest submission, or the best (ties: the newest of the best)."""
    chosen: dict[tuple[str, str], Attempt] = {}
    for attempt in current(attempts):
        key = (attempt.student, attempt.lesson)
        held = chosen.get(key)
        if held is None or policy == "latest" or attempt.points >= held.points:
            chosen[key] = attempt
    return chosen


def attempt_counts(attempts: Iterable[Attempt]) -> dict[tuple[str, str], int]:
    """Per (student, lesson), how many submissions (a regrade is not one)."""
    counts: dict[tuple[str, str], int] = {}
    for attempt in current(attempts):
        key = (attempt.student, attempt.lesson)
        counts[key] = counts.get(key, 0) + 1
    return counts


@dataclass(frozen=True)
class LessonColumn:
    lesson: str
    title: str
    max_points: float


@dataclass(frozen=True)
class CourseRow:
    student: Student
    points: tuple[float | None, ...]
    """Per lesson column, the counting attempt's points (extra included); None where none
    was graded."""
    extra: tuple[float, ...]
    """Per lesson column, how many of those points are extra credit (optional tasks)."""

    @property
    def total(self) -> float:
        return sum(p for p in self.points if p is not None)

    @property
    def extra_total(self) -> float:
        return sum(self.extra)


@dataclass(frozen=True)
class CourseTable:
    """Students by lessons: what `grades` prints and the exports write."""

    policy: Policy
    lessons: tuple[LessonColumn, ...]
    rows: tuple[CourseRow, ...]
    unrostered: tuple[str, ...] = ()
    """Students with attempts whom the gradebook's roster does not list: not in `rows`."""

    @property
    def max_total(self) -> float:
        return sum(c.max_points for c in self.lessons)


def course_table(
    attempts: Sequence[Attempt], students: dict[str, Student], policy: Policy
) -> CourseTable:
    """One row per roster student; without a roster, one per student with an attempt.

    With a roster, attempts kept under another name (graded before the roster was given, or
    of a student since removed from it) are named in `unrostered`, never given a row: an
    export row no learning-management system can match would be a grade posted nowhere.
    """
    lessons: dict[str, LessonColumn] = {}
    for attempt in sorted(attempts, key=lambda a: a.id or 0):  # the latest title and maximum
        lessons[attempt.lesson] = LessonColumn(
            attempt.lesson, attempt.lesson_title, attempt.max_points
        )
    columns = tuple(lessons[k] for k in sorted(lessons))
    chosen = counting(attempts, policy)
    graded = {a.student for a in attempts}
    ids = sorted(students) if students else sorted(graded)
    rows = tuple(
        CourseRow(
            students.get(sid, Student(sid)),
            tuple(
                chosen[(sid, c.lesson)].points if (sid, c.lesson) in chosen else None
                for c in columns
            ),
            tuple(
                chosen[(sid, c.lesson)].extra_points if (sid, c.lesson) in chosen else 0.0
                for c in columns
            ),
        )
        for sid in ids
    )
    unrostered = tuple(sorted(graded - set(students))) if students else ()
    return CourseTable(policy, columns, rows, unrostered)
