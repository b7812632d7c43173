"""Run one command as the init of a fresh PID namespace, then report what it left behind.

Usage: python confine.py RESULT.json SETTLE TIMEOUT WATCH_DIR -- COMMAND...

This script is PID 1 of the namespace (`unshare --pid --fork --kill-child --mount-proc`),
so every process the command starts, including ones that escaped with setsid(), dies when
this script exits. Before exiting it records: the command's exit status, stdout, stderr and
duration, the processes still alive, and the hashes of every file under WATCH_DIR right after
the command returned and again SETTLE seconds later. It waits those seconds only when some
process outlived the command: every process of the namespace descends from this one, so
when none is left nothing can change a file afterwards (and one left is a violation anyway).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

CAP = 1 << 20  # bytes of stdout/stderr kept


def hashes(folder: str) -> dict[str, str]:
    out = {}
    root = Path(folder)
    if not root.is_dir():
        return out
    for path in sorted(root.rglob("*")):
        try:
            if path.is_file() and not path.is_symlink():
                out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as exc:
            out[str(path.relative_to(root))] = f"unreadable: {exc.strerror}"
    return out


def survivors() -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            state = (entry / "stat").read_text().split(") ")[-1].split()[0]
        except OSError:
            continue
        if state != "Z":
            found.append(f"{entry.name} [{state}] {cmd.strip()[:200]}")
    return found


def main() -> None:
    result_path, settle, timeout, watch = sys.argv[1:5]
    assert sys.argv[5] == "--"
    command = sys.argv[6:]
    started = time.monotonic()
    out_file = Path(result_path).with_suffix(".stdout")
    err_file = Path(result_path).with_suffix(".stderr")
    with open(out_file, "wb") as out, open(err_file, "wb") as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        try:
            code = process.wait(timeout=float(timeout))
            timed_out = False
        except subprocess.TimeoutExpired:
            process.kill()
            code = process.wait()
            timed_out = True
    seconds = time.monotonic() - started
    left_right_after = survivors()
    before = hashes(watch)
    if left_right_after:  # watch what they do; with none alive, nothing here can act again
        time.sleep(float(settle))
    result = {
        "returncode": code,
        "timed_out": timed_out,
        "seconds": round(seconds, 2),
        "stdout": out_file.read_bytes()[:CAP].decode("utf-8", "surrogateescape"),
        "stderr": err_file.read_bytes()[:CAP].decode("utf-8", "surrogateescape"),
        "hashes_at_return": before,
        "hashes_after_settle": hashes(watch),
        "processes_at_return": left_right_after,
        "processes_after_settle": survivors(),
    }
    Path(result_path).write_text(json.dumps(result, ensure_ascii=True), encoding="utf-8")


if __name__ == "__main__":
    main()
