"""The class list, and whose submission a file is.

A roster is a CSV `id,name,email` with optional LMS columns (`sis_user_id`, `sis_login_id`,
`section`, `lms_id`). A file is the student's whose id is its name without suffix (or its
subfolder's name), optionally followed by version tags (`alice_v2.py`, `alice-late.py`:
`VERSION_TAG`). Any other name is reported, never guessed (`ana-maria.py` is not `ana`'s),
and a name two ids could make (`bob-2.py` with `bob` and `bob-2`) is a question. Without a
roster, a student is the submission's relative path without its suffix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from lessonkit.course.csv_input import read_csv
from lessonkit.errors import UsageError, shown

REQUIRED = ("id", "name", "email")
OPTIONAL = ("sis_user_id", "sis_login_id", "section", "lms_id")
_SEPARATORS = ("-", "_", ".")
VERSION_TAG = re.compile(
    r"v?\d{1,4}|late|resubmit(?:ted)?|final|old|draft|again|new|week\d{1,2}", re.IGNORECASE
)
"""A part of a file name after the student's id that says which version it is."""
_SUFFIXES = (".py", ".ipynb")


@dataclass(frozen=True)
class Student:
    """One roster row; empty strings where the roster has nothing."""

    id: str
    name: str = ""
    email: str = ""
    sis_user_id: str = ""
    sis_login_id: str = ""
    section: str = ""
    lms_id: str = ""


@dataclass(frozen=True)
class Roster:
    students: tuple[Student, ...]

    def by_id(self) -> dict[str, Student]:
        return {s.id: s for s in self.students}

    def match(self, file_name: str) -> str | None:
        """The one id `file_name` is, with version tags after it at most; None for any other
        name, and for one that is two ids' (`candidates`)."""
        found = self.candidates(file_name)
        return found[0] if len(found) == 1 else None

    def candidates(self, file_name: str) -> tuple[str, ...]:
        """Every id `file_name` is, with version tags after it at most, shortest first: two
        or more make the name ambiguous (`bob-2.py` with `bob` and `bob-2` on the roster)."""
        stem = _stem(file_name)
        found = [s.id for s in self.students if _is_version_of(stem, s.id)]
        return tuple(sorted(found, key=lambda sid: (len(sid), sid)))

    def near(self, file_name: str) -> str | None:
        """The longest id `file_name` begins with at a separator, though not as a version of
        it (`ana-maria` of `ana`): to say why the file was not counted."""
        stem = _stem(file_name)
        found = [
            s.id
            for s in self.students
            if stem.startswith(s.id) and stem[len(s.id) : len(s.id) + 1] in _SEPARATORS
        ]
        return max(found, key=len) if found else None


def _stem(file_name: str) -> str:
    for suffix in _SUFFIXES:
        if file_name.endswith(suffix):
            return file_name[: -len(suffix)]
    return file_name


def _is_version_of(stem: str, sid: str) -> bool:
    if stem == sid:
        return True
    rest = stem[len(sid) :]
    if not stem.startswith(sid) or rest[:1] not in _SEPARATORS:
        return False
    parts = re.split(r"[-_.]", rest[1:])
    return all(VERSION_TAG.fullmatch(part) for part in parts)


def student_without_roster(relative: str) -> str:
    """`alice.py` -> `alice`; `week1/bob.ipynb` -> `week1/bob`."""
    path = PurePosixPath(relative)
    return path.with_suffix("").as_posix()


def read_roster(path: Path) -> Roster:
    """The roster in `path`; a missing column, a blank or repeated id is one clear error."""
    rows = read_csv(
        path,
        "the roster",
        REQUIRED,
        fix=f"its first line must be id,name,email (then any of {','.join(OPTIONAL)})",
    )
    students: list[Student] = []
    seen: set[str] = set()
    emails: dict[str, str] = {}
    for line, row in rows:
        values = {k: (row.get(k) or "").strip() for k in (*REQUIRED, *OPTIONAL)}
        if not values["id"]:
            raise UsageError(f"{shown(path)}:{line}: a roster row has no id")
        if values["id"] in seen:
            raise UsageError(f"{shown(path)}:{line}: the id {values['id']!r} appears twice")
        seen.add(values["id"])
        email = values["email"].casefold()
        if email and email in emails:
            raise UsageError(
                f"{shown(path)}:{line}: the email {values['email']!r} is also "
                f"{emails[email]!r}'s; a learning-management system matches students by it",
                fix="give each student their own email address",
            )
        emails[email] = values["id"]
        students.append(Student(**values))
    return Roster(tuple(students))
