"""Write a file whole or not at all: the one way lessonkit replaces a file it owns.

A batch's outputs, an `--output FILE` and a lesson's execution record are each read by
someone else (a person, a spreadsheet, `lessonkit verify`) who must never see half a file,
even when the disk fills or the run is interrupted. The bytes go to a temporary file beside
the target, which is then renamed over it in one step; on any failure the temporary file is
removed and the target is left as it was.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomically(path: Path, content: str | bytes) -> None:
    """Write `content` (text as UTF-8) to a temporary file beside `path`, then rename it
    into place; the parent folders are made if missing.

    Raises:
        OSError: the folder or the file cannot be written (`path` is left unchanged).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(content.encode("utf-8") if isinstance(content, str) else content)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
