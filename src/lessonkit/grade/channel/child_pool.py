"""A grader's children: the starter, the learner children started ahead, the reference child.

Where the platform forks (`run.forking`), learner children are forks of one starter that
imported JAX (and the lesson's modules) once; a starter that ended is replaced. Elsewhere
each child starts from scratch. A learner child runs one file and is closed; with
`prestart`, the next ones start while the current file runs, and each may first run the
warm-up request (`warm_with`) so its JAX programs are compiled before its file arrives. The
trusted reference child never runs learner code and serves every reference request.

Concurrency contract. Any thread may call any method.

- Every child is started from one spawner thread that lives as long as the pool:
  bubblewrap's --die-with-parent follows the *thread* that started it, so a child started
  by a batch thread that has finished would be killed mid-run. Learner forks are made on a
  forker thread, the reference fork on a thread of its own (so it never waits behind a
  learner's warm-up); a fork that finds the starter ended has the spawner replace it.
- `_lock` guards the spares and `children`; `_starter_lock` guards the starter and
  `_closed`; `_reference_lock` guards the reference child. None is held while waiting for
  a child, except the spawner's result when a starter is replaced (under `_starter_lock`).
- After `close` no child starts: the thread pools cancel what they have not begun, a fork
  asked for after it raises `GradingError`, and every child started is closed.
"""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from functools import partial

from lessonkit.grade.channel.child_handle import ChildHandle, GradingError, grading_starter
from lessonkit.grade.channel.protocol import Request
from lessonkit.run.forking import forks_children
from lessonkit.run.isolation import Isolation
from lessonkit.run.limits import Limits
from lessonkit.run.starter import Starter


def _send_once_started(request: Request, started: Future[ChildHandle]) -> None:
    """Send the reference its request once it has started (one that failed to start says
    so where its report is awaited)."""
    if started.exception() is None:
        started.result().send(request)


class ChildPool:
    """Starts, hands out and closes a grader's children (module docstring: the contract)."""

    def __init__(
        self, limits: Limits, isolation: Isolation, preload: tuple[str, ...], prestart: int = 0
    ):
        """`limits` hold for every child; `isolation` keeps the learner children apart (the
        reference child is trusted, never sandboxed); the starter imports `preload` once,
        ahead of every child it forks. The first learner child starts now. Up to `prestart`
        children grade while as many wait started ahead, beside the reference child: their
        limits count all of them (`Limits.children`)."""
        self.limits = replace(limits, children=2 * max(1, prestart) + 1)
        self.isolation = isolation
        self.prestart = prestart
        self.children = 0  # learner children started, for tests and benchmarks
        self._preload = preload
        self._lock = threading.Lock()
        self._starter_lock = threading.Lock()
        self._reference_lock = threading.Lock()
        self._spawner = ThreadPoolExecutor(1, thread_name_prefix="lessonkit-children")
        self._forker = ThreadPoolExecutor(1, thread_name_prefix="lessonkit-forks")
        self._reference_pool = ThreadPoolExecutor(1, thread_name_prefix="lessonkit-reference")
        self._closed = False
        self._reference: Future[ChildHandle] | None = None
        self._warm_up: Request | None = None
        self._starter: Starter | None = None
        if forks_children():  # learner children are forks of a starter that imported JAX once
            starting = self._spawner.submit(grading_starter, isolation, limits, preload)
            self._starter = starting.result()
        self._spares: list[Future[ChildHandle]] = [self._learner_child_soon()]

    def close(self) -> None:
        with self._starter_lock:  # no fork thread starts a new starter after this
            self._closed = True
            starter = self._starter
        with self._lock:
            spares, self._spares = self._spares, []
        reference, self._reference = self._reference, None
        if starter is not None:
            starter.close()  # a spare still waiting for it gives up at once
        for pool in (self._forker, self._reference_pool, self._spawner):
            pool.shutdown(wait=False, cancel_futures=True)  # no child starts after close
        if reference is not None:
            spares.append(reference)
        for spare in spares:
            if not spare.cancel():
                with contextlib.suppress(GradingError):
                    spare.result().close()

    def warm_with(self, request: Request) -> None:
        """Have every learner child started from now on run `request` before its file."""
        self._warm_up = request

    def take(self) -> ChildHandle:
        """A learner child that has never run anything; start the next ones ahead if asked."""
        with self._lock:
            spare = self._spares.pop(0) if self._spares else None
            missing = self.prestart - len(self._spares)
        child = spare.result() if spare is not None else None
        if child is None or not child.alive:
            if child is not None:
                child.close()
            child = self._learner_child_soon().result()
        for _ in range(missing):
            ahead = self._learner_child_soon()
            with self._lock:
                self._spares.append(ahead)
        return child

    def ahead_for(self, jobs: int, left: int) -> None:
        """Start at most `jobs` children ahead, and none beyond the `left` files still to
        come (a batch pool's `on_take`)."""
        self.prestart = min(jobs, left)

    def start_spare(self) -> None:
        """Start a learner child ahead now, unless one is waiting already.

        For a caller that knows when the machine is idle (`check()`'s server, right after it
        answers): a child started while another grades competes with it for the CPU.
        """
        with self._lock:
            if self._spares:
                return
        ahead = self._learner_child_soon()
        with self._lock:
            self._spares.append(ahead)

    def start_reference(self) -> None:
        """Start the trusted reference child ahead, for a caller that does not know its lesson
        yet (`check()`'s server): it imports JAX meanwhile. Left idle when the reference store
        keeps the report the lesson's preparation looks for."""
        with self._reference_lock:
            self._live_reference()

    def send_reference(self, request: Request) -> None:
        """Send `request` to the reference child once it has started (started again first
        if it ended), without waiting for it."""
        with self._reference_lock:
            self._live_reference().add_done_callback(partial(_send_once_started, request))

    def reference_child(self) -> ChildHandle:
        """The reference child last sent a request; waits for it to start (a child that
        cannot start raises `GradingError` here)."""
        with self._reference_lock:
            reference = self._reference
        assert reference is not None, "send_reference comes first"
        return reference.result()

    def _live_reference(self) -> Future[ChildHandle]:
        """The reference child, started again if it ended; call with `_reference_lock`."""
        if self._reference is not None and self._reference.done():
            try:
                if not self._reference.result().alive:
                    self._reference.result().close()
                    self._reference = None
            except GradingError:
                self._reference = None
        if self._reference is None:
            self._reference = self._start_reference()
        return self._reference

    def _start_reference(self) -> Future[ChildHandle]:
        """The trusted reference child on its way: the starter's reference fork (on a thread
        of its own, so it never waits behind a learner's warm-up), else started from
        scratch on the spawner thread."""
        if self._starter is not None:
            return self._reference_pool.submit(self._new_fork, True)
        return self._spawner.submit(self._new_child, True)

    def _new_child(self, trusted: bool) -> ChildHandle:
        """A child started from scratch, on the spawner thread: the reference, or a learner
        child where there is no starter."""
        child = ChildHandle(trusted=trusted, isolation=self.isolation, limits=self.limits)
        if not trusted:
            self._warm(child)
        return child

    def _new_fork(self, trusted: bool = False) -> ChildHandle:
        """A child forked by the starter (a fork waits for the starter to import JAX). A
        starter that ended is replaced first, from the spawner thread."""
        with self._starter_lock:
            assert self._starter is not None
            if self._closed:
                raise GradingError("the grader was closed before this child started")
            if not self._starter.alive:
                self._starter.close()
                self._starter = self._spawner.submit(
                    grading_starter, self.isolation, self.limits, self._preload
                ).result()
            starter = self._starter
        child = ChildHandle(
            trusted=trusted, isolation=self.isolation, limits=self.limits, starter=starter
        )
        if not trusted:
            self._warm(child)
        return child

    def _warm(self, child: ChildHandle) -> None:
        if self._warm_up is not None:
            child.warm(self._warm_up, self.limits.timeout)

    def _learner_child_soon(self) -> Future[ChildHandle]:
        """A learner child on its way: a fork of the starter, else started from scratch."""
        with self._lock:
            self.children += 1
        if self._starter is not None:
            return self._forker.submit(self._new_fork)
        return self._spawner.submit(self._new_child, False)
