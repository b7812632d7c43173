"""The requirement line that installs lessonkit in a new course: lessonkit as it was installed.

A course from `lessonkit init` must set up on a fresh machine with its README's commands, so
its `requirements-cpu.txt` names the lessonkit that made it: the index version when it came
from an index, else the wheel file, VCS commit or folder that pip recorded in the installed
distribution's `direct_url.json` (PEP 610). `lessonkit init --lessonkit SPEC` names another.
"""

from __future__ import annotations

import json
import re
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlsplit

from lessonkit.errors import UsageError

DISTRIBUTION = "lessonkit"

_NAMED = re.compile(r"lessonkit\s*(?:$|[\[=<>!~@;(])", re.IGNORECASE)


def _with_subdirectory(url: str, record: dict) -> str:
    subdirectory = record.get("subdirectory")
    return f"{url}#subdirectory={subdirectory}" if subdirectory else url


def _local_path(url: str) -> str | None:
    """The folder or file a `file:` URL names, else None."""
    parts = urlsplit(url)
    return unquote(parts.path) if parts.scheme == "file" else None


def requirement_from_record(record: dict, version: str) -> str:
    """The requirement line for a distribution pip recorded as `record` (a direct_url.json)."""
    url = record.get("url")
    if not isinstance(url, str) or not url:
        return f"{DISTRIBUTION}=={version}"
    vcs = record.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs"):
        commit = vcs.get("commit_id") or vcs.get("requested_revision")
        pinned = f"{vcs['vcs']}+{url}" + (f"@{commit}" if commit else "")
        return f"{DISTRIBUTION} @ {_with_subdirectory(pinned, record)}"
    folder = _local_path(url)
    info = record.get("dir_info")
    if isinstance(info, dict) and info.get("editable") and folder is not None:
        return f"-e {Path(folder, record.get('subdirectory') or '').as_uri()}"
    return f"{DISTRIBUTION} @ {_with_subdirectory(url, record)}"


def installed_requirement() -> str:
    """The requirement line naming the lessonkit this process runs, where it came from."""
    try:
        distribution = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        raise UsageError(
            "this lessonkit runs without being installed (from a source folder on the Python "
            "path), so there is no record of where a course should install it from",
            fix="name it: `lessonkit init DIR --lessonkit SPEC` (a version, a wheel, a folder "
            "or a URL)",
        ) from None
    text = distribution.read_text("direct_url.json")
    if not text:  # installed from an index (or a layout pip did not record)
        return f"{DISTRIBUTION}=={distribution.version}"
    return requirement_from_record(json.loads(text), distribution.version)


def requirement_from_spec(spec: str, cwd: Path) -> str:
    """`init --lessonkit SPEC` as a requirement line: a path on disk (a wheel or a folder,
    `-e FOLDER` for an editable one) becomes an absolute `file:` URL, since pip reads the
    course's requirements from the course's folder; a bare URL gets lessonkit's name; a
    requirement naming lessonkit (`lessonkit==0.2.0`, `lessonkit @ git+https://...`) is kept."""
    text = spec.strip()
    editable = text.startswith("-e ")
    target = text[3:].strip() if editable else text
    path = (cwd / Path(target).expanduser()).resolve()
    if path.exists() and not _NAMED.match(target):
        return f"-e {path.as_uri()}" if editable else f"{DISTRIBUTION} @ {path.as_uri()}"
    if "://" in target and not _NAMED.match(target):
        return f"-e {target}" if editable else f"{DISTRIBUTION} @ {target}"
    if _NAMED.match(text):
        return text
    raise UsageError(
        f"--lessonkit {spec!r} is neither a file or folder on disk, nor a URL, nor a "
        "requirement naming lessonkit",
        fix="give e.g. `--lessonkit lessonkit==0.1.0`, `--lessonkit dist/lessonkit-0.1.0-"
        "py3-none-any.whl` or `--lessonkit git+https://host/lessonkit.git@v0.1.0`",
    )


def local_wheel(line: str) -> Path | None:
    """The wheel file on this machine that a requirement line installs lessonkit from
    (`lessonkit @ file:///.../lessonkit-X-py3-none-any.whl`), else None: the site's ZIP
    carries that file, so that learners can install what the line names."""
    name, at, url = line.partition("@")
    if not at or not _NAMED.match(name.strip() + "@"):
        return None
    path = _local_path(url.strip())
    if path is None or not path.endswith(".whl") or not Path(path).is_file():
        return None
    return Path(path)
