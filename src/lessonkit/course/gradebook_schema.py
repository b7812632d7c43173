"""The gradebook's schema: one migration from each version to the next.

`Gradebook` runs every migration a file needs, in one transaction, when it opens it; the
version is SQLite's `user_version`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable


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


def _v6(db: sqlite3.Connection) -> None:
    """Submissions apart from gradings.

    `submissions` keeps each submission event (student, file, time, sha256) once; `attempts`
    becomes the gradings, each under the fingerprint that graded it ('' for those kept before).
    Each old attempt that was not a regrade was a submission; a regrade stays a grading of its
    original's bytes.
    """
    _run_all(
        db,
        """
        ALTER TABLE attempts ADD COLUMN fingerprint TEXT NOT NULL DEFAULT '';
        CREATE INDEX gradings_by_bytes ON attempts (lesson, sha256, fingerprint);
        CREATE TABLE submissions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            student TEXT NOT NULL, lesson TEXT NOT NULL, file TEXT NOT NULL,
            sha256 TEXT NOT NULL REFERENCES files(sha256), submitted REAL NOT NULL,
            received_utc TEXT NOT NULL,
            UNIQUE (student, lesson, sha256, submitted)
        );
        INSERT OR IGNORE INTO submissions (student, lesson, file, sha256, submitted, received_utc)
            SELECT student, lesson, file, sha256, mtime, graded_utc FROM attempts
            WHERE regrade_of IS NULL ORDER BY id
        """,
    )


def _v7(db: sqlite3.Connection) -> None:
    """The declared mistake each task's answer makes, if any (the class report counts them)."""
    _run_all(db, "ALTER TABLE task_grades ADD COLUMN mistake TEXT")


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (
    _v1,
    _v2,
    _v3,
    _v4,
    _v5,
    _v6,
    _v7,
)
"""MIGRATIONS[k] takes a gradebook from version k to k + 1; the last gives `SCHEMA`."""
SCHEMA = len(MIGRATIONS)
