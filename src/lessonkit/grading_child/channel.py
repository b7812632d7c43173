"""The child's two channels: requests on a private copy of stdin, reports as JSON lines on a
pipe, and what a cell prints, kept head and tail."""

from __future__ import annotations

import json
import os

from .wire import OUTPUT_HEAD, OUTPUT_TAIL


def private_stdin() -> int:
    """A private descriptor for requests; fd 0 then reads /dev/null for learner code."""
    requests = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return requests


class Channel:
    """JSON lines on the report pipe."""

    def __init__(self, fd: int):
        self._fd = fd
        self._dumps = json.dumps
        self._write = os.write

    def send(self, message: dict) -> None:
        data = self._dumps(message).encode() + b"\n"
        view = memoryview(data)
        while view:
            written = self._write(self._fd, view)
            view = view[written:]


class OutputCapture:
    """A stand-in for sys.stdout/sys.stderr that keeps the head and tail of what is written."""

    encoding = "utf-8"
    errors = "replace"

    def __init__(self) -> None:
        self.head: list[str] = []
        self.head_size = 0
        self.tail = ""
        self.size = 0

    def write(self, text) -> int:
        text = text if isinstance(text, str) else str(text)
        self.size += len(text)
        if self.head_size < OUTPUT_HEAD:
            part = text[: OUTPUT_HEAD - self.head_size]
            self.head.append(part)
            self.head_size += len(part)
            text = text[len(part) :]
        if text:
            self.tail = (self.tail + text[-OUTPUT_TAIL:])[-OUTPUT_TAIL:]
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    def text(self) -> str:
        head = "".join(self.head)
        if self.size <= OUTPUT_HEAD + OUTPUT_TAIL and not self.tail:
            return head
        skipped = self.size - self.head_size - len(self.tail)
        if skipped <= 0:
            return head + self.tail
        return f"{head}\n[... {skipped:,} characters not shown ...]\n{self.tail}"
