"""The grading child's loop: every scenario of a request, cell by cell, reported as it goes."""

from __future__ import annotations

import ast
import builtins
import contextlib
import importlib
import math
import os
import resource
import signal
import sys
import time
from dataclasses import replace

from . import wire
from .cells import CellTimeout, CompileError, bound_beside_others, compile_cell, error_report
from .channel import Channel, OutputCapture, private_stdin
from .compile_cache import keep_whole_and_quiet, read_each_once
from .encoder import Encoder
from .guard import ModuleGuard
from .ir_contexts import share_ir_contexts
from .placeholders import PLACEHOLDER_HOOK, PlaceholderWatch
from .request import LESSON_ONLY, SETUP, SKIP, CellSpec, Request, ScenarioSpec
from .varied_calls import VariedCalls


class _Scenario:
    """One scenario made ready to run: its name in this request (`run-3`, drawn per request),
    its input arrays, and the changes to install; nothing here names what kind it is."""

    __slots__ = ("changes", "inputs", "lesson_only", "name")

    def __init__(self, name: str, inputs: dict | None, changes: list, lesson_only: bool):
        self.name, self.inputs, self.changes, self.lesson_only = name, inputs, changes, lesson_only


class ChildProgram:
    """Runs one request: every scenario of one plan, reporting cell by cell."""

    def __init__(
        self, channel: Channel, encoder: Encoder, guard: ModuleGuard, jax_module, jnp_module
    ):
        self.channel = channel
        self.encoder = encoder
        self.guard = guard
        self._asarray = jnp_module.asarray
        self._float32 = jnp_module.float32
        self._int32 = jnp_module.int32
        self._bool = jnp_module.bool_
        self._perf = time.perf_counter
        self.patched: list[str] = []
        self.deadline: float | None = None
        self._compiled: dict[tuple, object] = {}  # per request: each scenario reuses the code
        self.sources = VariedCalls(jax_module, self.make_array)
        self._jax = jax_module
        self._hooks = {  # each rule the child runs: its hook module (`wire.CELL_RULES`)
            key: importlib.import_module(f".{module}", __package__)
            for key, (module, _) in wire.CELL_RULES.items()
        }

    def make_array(self, value):
        return self._asarray(value, dtype=self._float32)

    def make_inputs(self, spec):
        """A drawn input set (`grade.preparation.inputs.Leaf`): a float or a list of floats
        becomes a float32 array, a list of ints an int32 array, a list of bools a bool array; a
        Python int or bool stays what the lesson's own code would have written."""
        if isinstance(spec, dict):
            return {k: self.make_inputs(v) for k, v in spec.items()}
        if type(spec) in (int, bool):
            return spec
        first = spec
        while type(first) is list and first:
            first = first[0]
        if type(first) is bool:
            return self._asarray(spec, dtype=self._bool)
        if type(first) is int:
            return self._asarray(spec, dtype=self._int32)
        return self.make_array(spec)

    # -- timing: the alarm is armed only while learner code runs

    def _arm(self) -> None:
        if self.deadline is None:
            return
        remaining = self.deadline - self._perf()
        if remaining <= 0:
            raise CellTimeout()
        signal.setitimer(signal.ITIMER_REAL, remaining)

    def _disarm(self) -> None:
        if self.deadline is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def run(self, request: Request) -> None:
        for name in request.preload:
            with contextlib.suppress(Exception):
                __import__(name)
        self.guard.refresh()
        budget = request.budget
        self.deadline = None if budget is None else self._perf() + float(budget)
        allowance = request.cpu_seconds
        if allowance is not None:
            limit = resource.getrusage(resource.RUSAGE_SELF)
            used = limit.ru_utime + limit.ru_stime
            try:
                hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
                resource.setrlimit(resource.RLIMIT_CPU, (int(used + float(allowance)), hard))
            except (ValueError, OSError):
                pass
        self.patched = []
        self._compiled = {}
        cells = request.cells
        files = {f"<cell {c.index}>": c.index for c in cells}
        timed_out = False
        # Every scenario is made ready before any cell runs and the request forgets their
        # descriptions: a cell that walks up to these frames finds names, arrays and closures.
        prepared = [self._prepare(spec) for spec in request.scenarios]
        request = replace(request, scenarios=())
        try:
            for scenario in prepared:
                if not self._scenario(request, scenario, cells, files):
                    timed_out = True
                    break
        finally:
            self._disarm()
            self.deadline = None
        self._close_figures()
        self.channel.send(
            wire.event(
                "done",
                request=request.id,
                timed_out=timed_out,
                patched=sorted(set(self.patched)),
            )
        )

    def _prepare(self, spec: ScenarioSpec) -> _Scenario:
        inputs = spec.inputs
        return _Scenario(
            spec.name,
            None if inputs is None else {k: self.make_inputs(v) for k, v in inputs.items()},
            self.sources.prepare(spec.sources),
            spec.lesson_only_cells,
        )

    def _scenario(self, request: Request, scenario: _Scenario, cells: list, files: dict) -> bool:
        """Run one scenario; False when the time budget ran out."""
        namespace = {"__name__": "__main__", "__builtins__": builtins}
        strip: frozenset[str] = frozenset()
        if scenario.inputs is not None:
            namespace.update(scenario.inputs)
            strip = frozenset(scenario.inputs)
        undo = self.sources.install(scenario.changes)
        self.guard.refresh()  # the changed calls are this scenario's baseline
        try:
            return self._cells(request, scenario, cells, files, namespace, strip)
        finally:
            undo()
            self.guard.refresh()

    def _cells(self, request, scenario, cells, files, namespace, strip) -> bool:
        for cell in cells:
            index = cell.index
            if cell.role == SKIP or (cell.role == LESSON_ONLY and not scenario.lesson_only):
                continue
            where = {"request": request.id, "scenario": scenario.name, "cell": index}
            self.channel.send(wire.event("start", **where))
            inputs_here = strip if cell.role == SETUP else frozenset()
            result = self._cell(cell, namespace, inputs_here, files)
            for name in self._bound_beside_others(cell, inputs_here):
                # A step binding a given name beside others (`value, grads = ...`) cannot
                # be stripped: the cells after it read the given value all the same.
                namespace[name] = scenario.inputs[name]
            report = wire.event("cell", **where, **result)
            names = cell.report
            if names:
                report["values"] = {
                    n: self.encoder.encode(namespace[n]) for n in names if n in namespace
                }
            if index == request.checkpoint:
                names = request.checkpoint_names
                report["checkpoint"] = {
                    n: self.encoder.encode(namespace[n]) for n in names if n in namespace
                }
            self.channel.send(report)
            if result.get("error", {}).get("kind") == "timeout":
                return False
        return True

    def _bound_beside_others(self, cell: CellSpec, strip: frozenset[str]) -> frozenset[str]:
        if not strip:
            return strip
        key = (cell.index, strip, "beside")
        if key not in self._compiled:
            self._compiled[key] = bound_beside_others(cell.source, strip)
        return self._compiled[key]

    def _compile(self, cell: CellSpec, strip: frozenset[str]):
        key = (cell.index, strip)
        if key not in self._compiled:
            self._compiled[key] = compile_cell(cell, strip)
        return self._compiled[key]

    def _cell(self, cell: CellSpec, namespace: dict, strip: frozenset[str], files) -> dict:
        try:
            segments = self._compile(cell, strip)
        except CompileError as exc:
            return {"status": "error", "error": exc.report, "output": ""}
        capture = OutputCapture()
        saved = sys.stdout, sys.stderr
        error = None
        watches = {
            key: hook.start(self._jax, files)
            for key, hook in self._hooks.items()
            if cell.asks.get(key)
        }
        for key, watch in watches.items():
            namespace[wire.rule_hook(key)] = watch.wrap
        placeholders = namespace[PLACEHOLDER_HOOK] = PlaceholderWatch()
        bind = self.sources.binder()  # a name the scenario changes where the cell binds it
        reached = self.sources.reached()
        sys.stdout = sys.stderr = capture
        try:
            self._arm()
            try:
                for code, changed in segments:
                    exec(code, namespace)
                    for name in changed:  # bound by the statement that ends the segment
                        namespace[name] = bind(namespace[name], name)
            finally:
                self._disarm()
                for key in watches:
                    namespace.pop(wire.rule_hook(key), None)
                namespace.pop(PLACEHOLDER_HOOK, None)
        except BaseException as exc:  # learner code may raise anything, SystemExit included
            self._disarm()
            placeholders.note(exc)
            error = error_report(exc, files)
            trees = self._mismatched_trees(exc, cell, namespace, error)
            if trees:
                error["trees"] = trees
        finally:
            sys.stdout, sys.stderr = saved
            self.patched.extend(self.guard.restore())
        result = {"status": "error" if error else "ok", "output": capture.text()}
        if error:
            result["error"] = error
        if placeholders.first is not None:  # the first `todo(...)` that ran, escaped or caught
            result["placeholder"] = error_report(placeholders.first, files)
        if self.sources.reached() != reached:
            result["reached"] = True
        for key, watch in watches.items():
            result[key] = watch.report(cell.asks[key])
        return result

    def _mismatched_trees(self, exc: BaseException, cell: CellSpec, namespace: dict, error: dict):
        """For a pytree structure error: the trees named in the failing call, as data.

        JAX's own message names no key path a learner can act on; with the trees the parent
        can say which key path one of them lacks. Only plain names are read, from the
        learner's frame, so no learner code runs.
        """
        message = error.get("message", "")
        if not any(mark in message for mark in _TREE_ERRORS) or not error["frames"]:
            return None
        index, line, _ = error["frames"][-1]
        if index != cell.index:
            return None
        frame_names = dict(namespace)
        tb = exc.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == f"<cell {index}>":
                frame_names = {**namespace, **tb.tb_frame.f_locals}
            tb = tb.tb_next
        try:
            tree = ast.parse(cell.source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and node.lineno + cell.offset == line:
                names = [a.id for a in node.args if isinstance(a, ast.Name)]
                found = [
                    [n, self.encoder.encode(frame_names[n])]
                    for n in names
                    if n in frame_names and not callable(frame_names[n])  # a type slot, no code
                ]
                if len(found) >= 2:
                    return found[:4]
        return None

    @staticmethod
    def _close_figures() -> None:
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is not None:
            with contextlib.suppress(Exception):
                pyplot.close("all")


# What JAX says when trees passed together to one call (`jax.tree.map` and its users) differ;
# other structure errors, such as a loop's carry, name their difference themselves.
_TREE_ERRORS = ("pytree structure error", "Dict key mismatch", "node type mismatch")


def _on_alarm(signum, frame):
    raise CellTimeout()


def main() -> None:
    """A child started from scratch: `python -I main.py REPORT_FD`."""
    serve(int(sys.argv[1]))


def serve(report_fd: int) -> None:
    """Answer the requests on stdin with reports on `report_fd` until stdin closes."""
    requests = os.fdopen(private_stdin(), "r", encoding="utf-8")
    sys.argv = sys.argv[:1]
    channel = Channel(report_fd)
    signal.signal(signal.SIGALRM, _on_alarm)

    import jax
    import jax.numpy as jnp
    import numpy as np

    keep_whole_and_quiet()
    read_each_once()
    share_ir_contexts()
    jax_tree = sys.modules.get("jax.tree") or jax.tree
    watched = [builtins, jax, jnp, jax_tree, jax.tree_util, jax.lax, np, os, math]
    guard = ModuleGuard(watched, jax, type(jnp.zeros(())))
    runner = ChildProgram(channel, Encoder(np, jax), guard, jax, jnp)
    channel.send(wire.event("ready", jax=jax.__version__, python=sys.version.split()[0]))
    for line in requests:
        if line.strip():
            runner.run(Request.from_line(line))
