"""The course gradebook: every submission of every lesson, and every grading, in one SQLite file.

A submission (student, file, time, sha256 of its bytes) is kept once and never overwritten.
A grading is kept apart, keyed by the bytes and the grading fingerprint
(`grade.provenance.fingerprint`), so unchanged bytes are never graded twice, yet every
submission counts. An attempt read back is a submission with the newest grading of its
bytes; which attempt counts is decided when reading (`course.policies`), in submission
order, so the order of intake, merge or regrade never changes it.

The roster is kept here too, a version per change. Migrations (`course.gradebook_schema`)
run in a transaction on open; concurrent graders take the write lock in turn (WAL,
`BEGIN IMMEDIATE`). Keep the file on a local disk: SQLite's locks fail over network file
systems.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from lessonkit.atomic import create_private
from lessonkit.course.attempts import (
    POLICIES,
    Added,
    Attempt,
    Graded,
    GradingKey,
    Policy,
    TaskGrade,
    attempt_of,
    utc_stamp,
)
from lessonkit.course.gradebook_schema import MIGRATIONS, SCHEMA
from lessonkit.course.policies import (
    CourseRow,
    CourseTable,
    LessonColumn,
    attempt_counts,
    attempt_numbers,
    counting,
    course_table,
    current,
    older_gradings,
)
from lessonkit.course.roster import Roster, Student
from lessonkit.defaults import GRADEBOOK_BUSY_WAIT_S, GRADEBOOK_CHECKPOINT_WAIT_S
from lessonkit.errors import UsageError, shown
from lessonkit.grade.judging import ERROR, LIMIT_CAUSES, GradeReport, error_cause

__all__ = [
    "MIGRATIONS",
    "POLICIES",
    "SCHEMA",
    "Added",
    "Attempt",
    "CourseRow",
    "CourseTable",
    "Gradebook",
    "Graded",
    "GradingKey",
    "LessonColumn",
    "Policy",
    "TaskGrade",
    "attempt_counts",
    "attempt_numbers",
    "attempt_of",
    "counting",
    "course_table",
    "current",
    "older_gradings",
    "utc_stamp",
]


def _busy_wait(seconds: float) -> str:
    """The statement that makes SQLite wait `seconds` for another writer's lock."""
    return f"PRAGMA busy_timeout = {round(seconds * 1000)}"


class _RolledBack(Exception):
    """Raised inside `Gradebook._writing` to end a transaction with nothing written."""


class Gradebook:
    """An open gradebook file; use as a context manager, which closes it."""

    def __init__(self, path: Path, *, migrate_to: int = SCHEMA):
        self.path = path
        with contextlib.suppress(OSError):  # where it cannot be made, SQLite's message says why
            create_private(path)  # private: every student's submissions and grades
        try:
            self.db = sqlite3.connect(path, timeout=GRADEBOOK_BUSY_WAIT_S, isolation_level=None)
            self.db.execute(_busy_wait(GRADEBOOK_BUSY_WAIT_S))
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.execute("PRAGMA foreign_keys = ON")
            self._migrate(migrate_to)
        except sqlite3.DatabaseError as exc:
            raise self._error(exc) from None

    def _error(self, exc: sqlite3.Error) -> UsageError:
        if "locked" in str(exc) or "busy" in str(exc):
            return UsageError(
                f"the gradebook {shown(self.path)} stayed locked by another writer for "
                f"{GRADEBOOK_BUSY_WAIT_S:g} s",
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

    def check_writable(self) -> None:
        """Refuse, before anything is graded, a gradebook this process cannot write: a
        real write (the schema version, rewritten as it is) in a transaction rolled back.
        Taking the write lock alone writes nothing, so a read-only file or folder passes it.
        """
        with contextlib.suppress(_RolledBack), self._writing() as db:
            db.execute(f"PRAGMA user_version = {self.version}")
            db.execute("CREATE TABLE write_probe (x)")
            raise _RolledBack

    def checkpoint(self) -> None:
        """Move everything from the write-ahead log into the gradebook file itself, so the
        one file holds every table (a copy of it alone is whole). Another writer at work
        keeps its log: it checkpoints when it is done."""
        self.db.execute(_busy_wait(GRADEBOOK_CHECKPOINT_WAIT_S))
        try:
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        finally:
            self.db.execute(_busy_wait(GRADEBOOK_BUSY_WAIT_S))

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, holding the write lock from its start; rolled back when
        anything raises in it (`_RolledBack`, to write nothing on purpose)."""
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

    def add_attempts(
        self,
        items: Sequence[Graded],
        *,
        replace_limited: bool = False,
        keep_old: bool = False,
    ) -> Added:
        """Keep each item's submission and, where its bytes need one, its grading, in one
        transaction; then checkpoint.

        A submission handed in again (same student, bytes and time) is `held`. A grading of bytes
        already graded under the same fingerprint is not kept (`unchanged`); under another it is
        kept as `regraded` and read in that one's place, unless `keep_old` (`kept_old`). With
        `replace_limited`, a grading replacing one stopped at a limit is kept too. An item naming
        the submission it regrades keeps its grading only.
        """
        ids: list[int] = []
        unchanged: list[Attempt] = []
        regraded: list[Attempt] = []
        kept_old: list[Attempt] = []
        held = 0
        with self._writing() as db:
            for item in items:
                attempt = item.attempt
                db.execute(
                    "INSERT OR IGNORE INTO files (sha256, content) VALUES (?, ?)",
                    (attempt.sha256, item.data),
                )
                if attempt.regrade_of is None:
                    cursor = db.execute(
                        "INSERT OR IGNORE INTO submissions (student, lesson, file, sha256, "
                        "submitted, received_utc) VALUES (?, ?, ?, ?, ?, ?)",
                        (
                            attempt.student,
                            attempt.lesson,
                            attempt.file,
                            attempt.sha256,
                            attempt.submitted,
                            attempt.graded_utc,
                        ),
                    )
                    if cursor.rowcount == 1:
                        ids.append(int(cursor.lastrowid or 0))
                    else:
                        held += 1
                    same = self._grading(db, attempt.grading_key)
                    if same is not None and not (
                        replace_limited and self._stopped_at_a_limit(db, same)
                    ):
                        unchanged.append(attempt)
                        continue
                    other = self._grading(db, (attempt.lesson, attempt.sha256, None))
                    if same is None and other is not None and keep_old:
                        kept_old.append(attempt)
                        continue
                    if other is not None:
                        regraded.append(attempt)
                self._insert_grading(db, item)
        self.checkpoint()
        return Added(tuple(ids), tuple(unchanged), tuple(regraded), held, tuple(kept_old))

    @staticmethod
    def _grading(db: sqlite3.Connection, key: tuple[str, str, str | None]) -> int | None:
        """The newest grading of (lesson, sha256) under `fingerprint` (any, for None)."""
        lesson, sha256, fingerprint = key
        row = db.execute(
            "SELECT MAX(id) FROM attempts WHERE lesson = ? AND sha256 = ? "
            "AND (? IS NULL OR fingerprint = ?)",
            (lesson, sha256, fingerprint, fingerprint),
        ).fetchone()
        return None if row[0] is None else int(row[0])

    @staticmethod
    def _insert_grading(db: sqlite3.Connection, item: Graded) -> None:
        attempt = item.attempt
        cursor = db.execute(
            "INSERT INTO attempts (student, lesson, lesson_title, file, sha256, seed, "
            "graded_utc, mtime, toolkit, revision, points, max_points, regrade_of, "
            "report, fingerprint) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)",
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
                json.dumps(item.report.to_json()),
                attempt.fingerprint,
            ),
        )
        row_id = int(cursor.lastrowid or 0)
        db.executemany(
            "INSERT INTO task_grades (attempt, position, task, title, status, points, "
            "max_points, optional, message, check_name, key_path, mistake) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                    t.mistake,
                )
                for i, t in enumerate(attempt.tasks)
            ],
        )

    @staticmethod
    def _stopped_at_a_limit(db: sqlite3.Connection, grading: int) -> bool:
        """Whether the grading stopped at a limit the machine may have caused (a new
        grading of its bytes is then kept in its place, never dropped as unchanged)."""
        messages = db.execute(
            "SELECT message FROM task_grades WHERE attempt = ? AND status = ?",
            (grading, ERROR),
        ).fetchall()
        return any(error_cause(str(m)) in LIMIT_CAUSES for (m,) in messages)

    def kept_report(self, key: GradingKey) -> GradeReport | None:
        """The report of the newest grading with this key, if one is kept with its report."""
        grading = self._grading(self.db, key)
        if grading is None:
            return None
        row = self.db.execute("SELECT report FROM attempts WHERE id = ?", (grading,)).fetchone()
        if row is None or row[0] is None:
            return None
        try:
            return GradeReport.from_json(json.loads(row[0]))
        except (ValueError, KeyError, TypeError):
            return None  # graded again, as a file with no kept report would be

    def fingerprints(self, lesson: str, sha256: str) -> tuple[str, ...]:
        """The fingerprints the bytes were graded under, newest grading first."""
        rows = self.db.execute(
            "SELECT fingerprint FROM attempts WHERE lesson = ? AND sha256 = ? ORDER BY id DESC",
            (lesson, sha256),
        ).fetchall()
        return tuple(dict.fromkeys(str(f) for (f,) in rows))

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
        """Every submission in the order it was kept (optionally of one lesson or one
        student), each with the newest grading of its bytes."""
        where, values = [], []
        for column, value in (("s.lesson", lesson), ("s.student", student)):
            if value is not None:
                where.append(f"{column} = ?")
                values.append(value)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        rows = self.db.execute(
            "SELECT s.id, s.student, s.lesson, g.lesson_title, s.file, s.sha256, g.seed, "
            "g.graded_utc, s.submitted, g.toolkit, g.revision, g.points, g.max_points, "
            "g.fingerprint, g.id FROM submissions s JOIN attempts g ON g.id = (SELECT MAX(id) "
            f"FROM attempts WHERE lesson = s.lesson AND sha256 = s.sha256) {clause} "
            "ORDER BY s.id",
            values,
        ).fetchall()
        tasks: dict[int, list[TaskGrade]] = {row[-1]: [] for row in rows}
        if rows:
            marks = ", ".join("?" for _ in tasks)
            for row in self.db.execute(
                "SELECT attempt, task, title, status, points, max_points, optional, message, "
                f"check_name, key_path, mistake FROM task_grades WHERE attempt IN ({marks}) "
                "ORDER BY attempt, position",
                list(tasks),
            ):
                tasks[row[0]].append(TaskGrade(*row[1:6], bool(row[6]), *row[7:]))
        return tuple(
            Attempt(
                *row[:13],
                regrade_of=None,
                tasks=tuple(tasks[row[-1]]),
                fingerprint=str(row[13]),
                grading=int(row[14]),
            )
            for row in rows
        )

    def content(self, sha256: str) -> bytes:
        """The bytes an attempt graded."""
        row = self.db.execute("SELECT content FROM files WHERE sha256 = ?", (sha256,)).fetchone()
        if row is None:
            raise UsageError(f"{shown(self.path)} has no file with sha256 {sha256}")
        return bytes(row[0])
