"""The instructor's CSV files (a roster, submission times, Canvas assignment ids), read one
way: capped in size, UTF-8 (a byte-order mark allowed, as spreadsheets write it), every
failure one message naming the file."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

from lessonkit.errors import UsageError, shown

MAX_BYTES = 16 * 1024 * 1024


def read_csv(
    path: Path, what: str, columns: tuple[str, ...], fix: str
) -> Iterator[tuple[int, dict]]:
    """(line number, row) for each row of the CSV `what` at `path`, which must have
    `columns` (`fix` says how its first line must read)."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"cannot read {what} {shown(path)}: {exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:
        raise UsageError(f"{what} {shown(path)} is over {MAX_BYTES >> 20} MiB")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UsageError(f"{what} {shown(path)} is not UTF-8 text") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    missing = [c for c in columns if c not in (reader.fieldnames or ())]
    if missing:
        raise UsageError(f"{what} {shown(path)} lacks the column(s) {', '.join(missing)}", fix=fix)
    try:
        yield from enumerate(reader, start=2)
    except csv.Error as exc:
        raise UsageError(f"{what} {shown(path)} is not a CSV file ({exc})") from None
