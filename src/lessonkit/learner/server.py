"""The grading server behind `check()`: a process of its own that a kernel starts once.

It holds one `Grader` for the session (a trusted reference child, and a sandboxed learner
child started ahead so checks do not wait for JAX to import) and grades each request in a
fresh learner child, as `lessonkit check` grades a file; it never runs learner code itself.
It reads JSON lines on stdin and answers on stdout (`learner.messages`), and ends when stdin
closes, i.e. with the kernel. Run as: python -I -m lessonkit.learner.server
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import BinaryIO

from lessonkit.errors import LessonkitError, UsageError
from lessonkit.grade import Grader
from lessonkit.grade.submission import read_submission
from lessonkit.learner.history import history_submission, mark_unrun, up_to_task
from lessonkit.learner.messages import (
    CheckReply,
    CheckRequest,
    ProtocolError,
    decode_request,
    encode_reply,
)
from lessonkit.lesson.catalog import find_lesson
from lessonkit.lesson.model import Lesson
from lessonkit.settings import grading_settings


class Server:
    """Answers check requests with one long-lived grader; `close` stops every child."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        """`environ`: the server's own environment, where its settings' switches are read."""
        settings = grading_settings(environ)
        self.note = settings.isolation.note
        self.grader = Grader(settings)  # its children import JAX now
        self.grader.pool.start_reference()  # the lesson is known at the first request only
        self.lessons: dict[str, Lesson] = {}

    def close(self) -> None:
        self.grader.close()

    def lesson(self, lesson_id: str) -> Lesson:
        if lesson_id not in self.lessons:
            self.lessons[lesson_id] = find_lesson(lesson_id)
            self.grader.warm_up(self.lessons[lesson_id])  # the children started from now on
        return self.lessons[lesson_id]

    def answer(self, request: CheckRequest) -> CheckReply:
        lesson = self.lesson(request.lesson)
        ids = [t.id for t in lesson.tasks]
        if request.task is not None and request.task not in ids:
            raise UsageError(
                f"{request.lesson} has no task {request.task!r}",
                fix=f"choose one of: {', '.join(ids)}, or call check() for every task",
            )
        if request.file is not None:
            submission = read_submission(request.file)
        else:
            submission = history_submission(request.cells)
        graded = submission if request.task is None else up_to_task(submission, request.task)
        report = self.grader.grade_submission(lesson, graded)
        if request.file is None:
            report = mark_unrun(report, submission)
        note, self.note = self.note, None
        return CheckReply(report, note=note)

    def handle(self, line: bytes) -> CheckReply:
        """One request's reply; every failure becomes an error reply, never a crash."""
        try:
            return self.answer(decode_request(line))
        except ProtocolError as exc:
            return CheckReply(None, f"check() sent a request the server cannot read: {exc}")
        except LessonkitError as exc:
            return CheckReply(None, str(exc))
        except Exception as exc:  # the server must outlive any one request
            return CheckReply(None, f"the grading server failed: {type(exc).__name__}: {exc}")


def serve(requests: BinaryIO, replies: BinaryIO, environ: Mapping[str, str]) -> None:
    try:
        server = Server(environ)
    except LessonkitError as exc:  # e.g. no POSIX: every request gets the one message
        for _ in requests:
            replies.write(encode_reply(CheckReply(None, str(exc))))
            replies.flush()
        return
    try:
        for line in requests:
            replies.write(encode_reply(server.handle(line)))
            replies.flush()
            # The next learner child starts only now, so it never competes with a grading run
            # for the CPU, and imports JAX while the learner reads the verdict.
            server.grader.pool.start_spare()
    finally:
        server.close()


def main() -> None:
    # Replies go to the original stdout; anything a library prints goes to stderr instead.
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    serve(sys.stdin.buffer, replies, os.environ)


if __name__ == "__main__":
    main()
