"""A batch's outputs: the JSON, one Markdown feedback file per submission, and a lesson's CSV.

Each is written whole or not at all, relative to the output folder opened once and never
through a link (`lessonkit.atomic.OpenFolder`), so no submission's child and no
spreadsheet ever sees one half-written, no link put in the folder sends one elsewhere, and
every feedback file has a name of its own, even on a case-blind file system, whatever the
submissions were called.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

from lessonkit.atomic import OpenFolder
from lessonkit.errors import UsageError
from lessonkit.grade.model import Report

FEEDBACK = "feedback"
"""The folder of a batch's output folder that holds one feedback file per submission."""
_SIMPLE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")


def feedback_name(relative: str, hashed: bool = False) -> str:
    """`alice.py` -> `alice.py.md`; any other path -> a readable stem and its sha256.

    A one-part name of safe characters keeps its name; every other path (folders, spaces,
    non-ASCII, over 200 characters), or one `hashed` because its name differs from another
    only in case, gets the flattened, cut stem plus the first 16 hex digits of the sha256 of
    its POSIX path. Kept names end in .py or .ipynb, hashed ones in hex digits: one
    submission's feedback can never take another's name.
    """
    if not hashed and _SIMPLE.fullmatch(relative):
        return relative + ".md"
    digest = hashlib.sha256(os.fsencode(relative)).hexdigest()[:16]
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", relative.replace("/", "__"))[:120]
    return f"{stem}--{digest}.md"


def feedback_names(relatives: list[str]) -> dict[str, str]:
    """Each relative path's feedback file name; distinct even on a case-blind file system."""
    names = {r: feedback_name(r) for r in relatives}
    folded: dict[str, list[str]] = {}
    for relative, name in names.items():
        folded.setdefault(name.casefold(), []).append(relative)
    for group in folded.values():
        if len(group) > 1:
            names.update({r: feedback_name(r, hashed=True) for r in group})
    if len({n.casefold() for n in names.values()}) != len(names):
        raise UsageError(
            "two submissions' feedback files would have the same name",
            fix="rename one of the submissions, then grade again",
        )
    return names


def write_results(
    out: OpenFolder,
    stem: str,
    reports: Sequence[Report],
    relatives: Sequence[str],
    summary: dict,
    csv: str | None = None,
) -> list[Path]:
    """A batch's outputs in the output folder `out` (opened once, `atomic.OpenFolder`): a
    feedback file per report in its `feedback` folder, `stem`.csv (when given), and
    `stem`.json; the paths written, the feedback folder last.

    `relatives` are the reports' paths below the batch folder; each file is written to a
    temporary name and renamed, relative to the open folder, never through a link (one put
    in the place of `feedback` while the batch ran is refused: ELOOP). OSError names the
    file or folder that could not be written.
    """

    def write(folder: OpenFolder, name: str, text: str) -> None:
        try:
            folder.write(name, text)
        except OSError as exc:  # named by the file it was for, not by its temporary name
            raise OSError(exc.errno, exc.strerror or str(exc), str(folder.path / name)) from exc

    names = feedback_names(list(relatives))
    try:
        feedback = out.folder(FEEDBACK)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(out.path / FEEDBACK)) from exc
    with feedback:
        for report, relative in zip(reports, relatives, strict=True):
            write(feedback, names[relative], report.feedback_markdown())
    written = []
    if csv is not None:
        write(out, f"{stem}.csv", csv)
        written.append(out.path / f"{stem}.csv")
    write(out, f"{stem}.json", json.dumps(summary, indent=2) + "\n")
    return [*written, out.path / f"{stem}.json", out.path / FEEDBACK]
