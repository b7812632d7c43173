"""The pool every batch grades through: each item's grade-one function, `jobs` at once.

A lesson's batch, a project's, regrade, `verify`'s proofs and a Dask worker's chunk bring
their own grade-one function; the threads, the order and what Ctrl-C keeps are this one's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
E = TypeVar("E")


def grade_each(
    items: Sequence[T],
    grade_one: Callable[[T], E],
    *,
    jobs: int,
    on_done: Callable[[E], None] | None = None,
    on_take: Callable[[int], None] | None = None,
    stop: threading.Event | None = None,
) -> tuple[E, ...]:
    """`grade_one` of every item, `jobs` at once; results in item order.

    Every batch grades through here, so none waits at another file's end and no file stops
    the rest: `grade_one` turns a file's own failure into its row. An exception it raises
    (the lesson itself cannot be graded) starts no more items and is raised here once the
    others end. `on_take(left)` is told how many items wait after each one taken, and
    `on_done` gets each result, one call at a time. An exception in the caller's thread
    (Ctrl-C) sets `stop`, and from then on no result reaches `on_done`: the caller counts
    what was kept once, and an item cut short is never kept as graded. With `stop` given it
    waits for the items in flight (a grade-one that honours `stop` ends them); without, the
    threads are left to end as their children do.
    """
    results: list[Any] = [None] * len(items)
    indexes = iter(range(len(items)))
    lock = threading.Lock()
    failures: list[BaseException] = []
    wait_for_items = stop is not None
    stop = threading.Event() if stop is None else stop

    def work() -> None:
        while not failures and not stop.is_set():
            with lock:
                index = next(indexes, None)
                if index is not None and on_take is not None:
                    on_take(len(items) - index - 1)
            if index is None:
                return
            try:
                result = grade_one(items[index])
            except BaseException as exc:  # stop taking items; raised in the caller
                failures.append(exc)
                return
            with lock:
                if stop.is_set():
                    return  # finished after Ctrl-C: the caller has counted what was kept
                results[index] = result
                if on_done is not None:
                    on_done(result)

    threads = [threading.Thread(target=work, daemon=True) for _ in range(max(1, jobs))]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    except BaseException:  # Ctrl-C: stop the items in flight, take no more, keep no more
        with lock:  # a result being kept is kept whole; none after it
            stop.set()
        if wait_for_items:
            for thread in threads:
                if thread.is_alive():
                    thread.join()
        raise
    if failures:
        raise failures[0]
    return tuple(results)
