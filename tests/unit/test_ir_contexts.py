"""A grading child's lowerings share one MLIR context (`grading_child/ir_contexts.py`): the
same programs, lowered alike, with the memory it may hold bounded.

The CPU it saves is measured side by side by bench/child_cpu.py; every grading test checks
that verdicts stay as they were.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src import cache_key
from jax._src.interpreters import mlir

from lessonkit.grading_child import ir_contexts


@pytest.fixture
def shared(monkeypatch) -> ir_contexts.SharedContext:
    """The hook in place on JAX's lowering module, taken off after the test."""
    monkeypatch.setattr(mlir, "make_ir_context", mlir.make_ir_context)
    monkeypatch.setattr(mlir, "_numpy_array_attribute", mlir._numpy_array_attribute)
    hook = ir_contexts.share_ir_contexts()
    assert hook is not None, "this JAX lowers through both hooks"
    return hook


def _module(constant: np.ndarray | None = None):
    """A new program (a new function, as a cell run again defines), lowered."""
    offset = np.float32(1.5) if constant is None else constant

    def f(x):
        return jnp.tanh(x * 2.0) + jnp.sum(offset)

    return jax.jit(f).lower(jnp.ones(3, jnp.float32)).compiler_ir()


def _keyed(module) -> bytes:
    """The program as JAX's compile-cache key reads it (debug locations stripped)."""
    return cache_key._canonicalize_ir(module, cache_key.IgnoreCallbacks.NO)


def test_programs_share_one_context_and_lower_as_before(request):
    alone = [_module() for _ in range(2)]  # JAX's own way: a context for each program
    assert alone[0].context is not alone[1].context
    request.getfixturevalue("shared")
    first, second = _module(), _module()
    assert first.context is second.context
    assert [str(m) for m in (first, second)] == [str(m) for m in alone]
    assert [_keyed(m) for m in (first, second)] == [_keyed(m) for m in alone]
    assert ir_contexts.share_ir_contexts() is mlir.make_ir_context  # installed once


def test_past_the_budget_each_program_gets_a_context_of_its_own(shared):
    shared.budget = 4096
    before = _module(np.zeros(256, np.float32))  # 1 KiB embedded: still shared
    assert _module().context is before.context
    _module(np.zeros(1024, np.float32))  # 4 KiB more: past the budget
    assert not shared.sharing
    third, fourth = _module(), _module()
    assert third.context is not fourth.context
    assert before.context not in (third.context, fourth.context)


def test_a_context_a_caller_changed_is_not_handed_out_again(shared):
    changed = mlir.make_ir_context()
    assert mlir.make_ir_context() is changed
    changed.allow_unregistered_dialects = True
    assert mlir.make_ir_context() is not changed
    assert _module().context is mlir.make_ir_context()


def test_a_jax_without_the_hooks_is_left_as_it_is(monkeypatch):
    monkeypatch.delattr(mlir, "_numpy_array_attribute")
    monkeypatch.setattr(mlir, "make_ir_context", mlir.make_ir_context)
    make = mlir.make_ir_context
    assert ir_contexts.share_ir_contexts() is None
    assert mlir.make_ir_context is make
