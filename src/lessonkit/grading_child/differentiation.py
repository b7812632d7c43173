"""JAX's differentiation, changed where every public way of differentiating passes.

`jax.grad`, `value_and_grad`, `vjp`, `jacrev`, `jacobian`, `hessian`, `fwd_and_bwd` (reverse
mode) and `jvp`, `jacfwd`, `linearize` (forward mode), and so every function with a
`custom_vjp` or `custom_jvp` rule, reach JAX's autodiff through two entry points of
`jax._src.interpreters.ad`, `jvp` and `linearize`, each given the function to differentiate
and its arguments as a tree; every reverse-mode derivative then comes out of one pullback,
`jax._src.api._vjp3_bwd`, shaped like the arguments. No public name is wrapped, so an alias
or a new transform is seen as soon as it differentiates (`seen`).

A moved leaf is made in the pullback for reverse mode (each row of a Jacobian is one of its
results), and for forward mode, which has no pullback, as a term of the function worth zero
whose derivative is the change (`Watch.differentiated`): a gradient, a Jacobian, a
directional derivative or a pullback of one cotangent all agree with `jax.grad`'s.

A changed structure (a key dropped, renamed or added) has no such term: a derivative always
has its argument's structure. It is made where JAX assembles a derivative shaped like the
arguments (`STRUCTURE_SITES`): the pullback, and the Jacobian assemblers `jacrev` and
`jacfwd` (which `jacobian` and `hessian` call), bound wherever a module of `jax` holds them.

Only the outermost differentiation is changed: one made while another's function or custom
rule runs (a Jacobian inside a Hessian, the change's own Jacobian) is that one's part.

JAX's internals move between releases: `missing_layer` names what this module needs and
cannot find, and the tests fail on it by name.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Callable

AD_MODULE = "jax._src.interpreters.ad"
AD_ENTRIES = ("jvp", "linearize")
"""Where every differentiation starts: `fun` and a tree of its arguments (a `FlatTree`)."""
API_MODULE = "jax._src.api"
ASSEMBLERS = ("jacrev", "jacfwd")
STRUCTURE_SITES = ("_vjp3_bwd", *ASSEMBLERS)
"""Where a derivative shaped like the arguments is assembled: the pullback every reverse-mode
derivative comes from, and the Jacobian assemblers."""


def missing_layer() -> list[str]:
    """The internals this module hooks that this JAX lacks (empty when all are there)."""
    missing = []
    for module_name, names in ((AD_MODULE, AD_ENTRIES), (API_MODULE, STRUCTURE_SITES)):
        module = importlib.import_module(module_name)
        missing += [f"{module_name}.{n}" for n in names if not callable(getattr(module, n, None))]
    return missing


class Watch:
    """Differentiation seen and changed while installed.

    `values(tree)` moves the leaves of a derivative shaped like an argument (a tree whose
    structure it keeps: the change is made as a term of the function); `structure(tree)`
    changes such a derivative's structure where it is assembled. Either returns its tree
    itself where it changes nothing, and None is no change. `seen` counts the outermost
    differentiations.
    """

    def __init__(self, jax_module, values: Callable | None, structure: Callable | None):
        self._jax = jax_module
        self._values = values
        self._structure = structure
        self._tracing = 0  # functions being differentiated (the change's own Jacobian too)
        self._assembling = 0  # Jacobians being assembled
        self.seen = 0

    def install(self) -> Callable[[], None]:
        """Hook the layer; return the function that puts it back as it was."""
        missing = missing_layer()
        if missing:
            raise RuntimeError(f"JAX's differentiation layer has moved: no {', '.join(missing)}")
        ad = importlib.import_module(AD_MODULE)
        api = importlib.import_module(API_MODULE)
        saved: list[tuple[object, str, object]] = []

        def rebind(owner, name, replacement):
            saved.append((owner, name, getattr(owner, name)))
            setattr(owner, name, replacement)

        rebind(ad, "jvp", self._entry(ad.jvp, forward=True))
        rebind(ad, "linearize", self._entry(ad.linearize, forward=False))
        rebind(api, "_vjp3_bwd", self._pullback(api._vjp3_bwd))
        originals = {id(getattr(api, n)): getattr(api, n) for n in ASSEMBLERS}
        assemblers = {key: self._assembler(original) for key, original in originals.items()}
        loaded = len(sys.modules)
        for owner, attribute, original in _bindings(originals):
            rebind(owner, attribute, assemblers[id(original)])

        def undo() -> None:
            for owner, name, original in reversed(saved):
                setattr(owner, name, original)
            if len(sys.modules) != loaded:  # a module imported since may hold a replacement
                back = {id(r): originals[key] for key, r in assemblers.items()}
                for owner, name, replacement in _bindings(back, fresh=True):
                    setattr(owner, name, back[id(replacement)])

        return undo

    # -- values: a term of the differentiated function

    def _entry(self, original, forward: bool):
        """`ad.jvp` (forward) or `ad.linearize` (forward unless `is_vjp`), given the changed
        function when it is the outermost differentiation."""
        watch = self

        def entry(fun, primals, *args, has_aux=False, **kwargs):
            if watch._tracing:
                return original(fun, primals, *args, has_aux=has_aux, **kwargs)
            if not watch._assembling:
                watch.seen += 1
            # A reverse derivative's leaves are moved in its pullback, at no cost; a forward
            # one has no pullback, so its function gains the change as a term.
            plus = watch._values is not None and (forward or not kwargs.get("is_vjp", False))
            fun = watch.differentiated(fun, has_aux, plus)
            return original(fun, primals, *args, has_aux=has_aux, **kwargs)

        return entry

    def differentiated(self, fun, has_aux: bool, plus: bool):
        """`fun`, counted as differentiated while it runs (what it differentiates, a custom
        rule's own `jvp` say, is part of this derivative); with `plus`, plus a term worth
        zero whose derivative is the change of `fun`'s own: its own derivative (forward
        mode, as JAX was asked) as the change moves it (a bend follows the derivative it
        moves), less that derivative, times the step from where it is taken."""
        watch = self

        def plus_change(*args):
            out = fun(*args)
            if not plus:
                return out
            answer, aux = out if has_aux else (out, None)
            answer = watch._plus_change(fun, has_aux, args, answer)
            return (answer, aux) if has_aux else answer

        def changed(*args):
            return watch._within("_tracing", plus_change, args, {})[1]

        return changed

    def _plus_change(self, fun, has_aux, args, answer):
        jax = self._jax
        jnp, tree = jax.numpy, jax.tree_util
        leaves, treedef = tree.tree_flatten(args)
        movable = [i for i, leaf in enumerate(leaves) if _inexact(jnp, leaf)]
        out_leaves, out_def = tree.tree_flatten(answer)
        if not movable or not any(_inexact(jnp, o) for o in out_leaves):
            return answer
        if all(self._values(a) is a for a in args):
            return answer  # the change fits no argument (no such key): nothing to take
        held = [jax.lax.stop_gradient(leaf) for leaf in leaves]

        def of_movable(*chosen):
            given = list(held)
            for i, leaf in zip(movable, chosen, strict=True):
                given[i] = leaf
            out = fun(*tree.tree_unflatten(treedef, given))
            return out[0] if has_aux else out

        # The derivative of each output leaf by each movable argument leaf.
        jac = jax.jacfwd(of_movable, argnums=tuple(range(len(movable))))(
            *[held[i] for i in movable]
        )
        jac_leaves = out_def.flatten_up_to(jac)
        moved_leaves = []
        for out, by_leaf in zip(out_leaves, jac_leaves, strict=True):
            if not _inexact(jnp, out):
                moved_leaves.append(out)
                continue
            full = [
                jnp.zeros(jnp.shape(out) + jnp.shape(leaf), jnp.result_type(out)) for leaf in leaves
            ]
            for i, d in zip(movable, by_leaf, strict=True):
                full[i] = d
            derivative = tree.tree_unflatten(treedef, full)
            moved = tuple(self._values(a) for a in derivative)
            term = 0.0
            for i in movable:
                step = leaves[i] - held[i]
                now = tree.tree_leaves(moved)[i]
                if now is not full[i]:
                    term = term + jnp.tensordot(now - full[i], step, axes=jnp.ndim(step))
            moved_leaves.append(out + term)
        return tree.tree_unflatten(out_def, moved_leaves)

    def _within(self, counter: str, call, args, kwargs) -> tuple[bool, object]:
        """(whether no differentiation was under way, `call(*args, **kwargs)`) with `call`
        counted in `counter` while it runs."""
        outermost = not (self._tracing or self._assembling)
        setattr(self, counter, getattr(self, counter) + 1)
        try:
            return outermost, call(*args, **kwargs)
        finally:
            setattr(self, counter, getattr(self, counter) - 1)

    # -- structure: where a derivative shaped like the arguments is assembled

    def _pullback(self, original):
        watch = self

        def pullback(*args, **kwargs):
            # a custom rule's own derivatives, taken while it runs, are part of this one
            inside, assembling = watch._tracing, watch._assembling
            arguments = watch._within("_tracing", original, args, kwargs)[1]
            if inside:  # part of another differentiation's function
                return arguments
            if watch._values is not None:  # in a Jacobian too: each row is a derivative
                arguments = tuple(watch._values(a) for a in arguments)
            if watch._structure is not None and not assembling:
                arguments = tuple(watch._structure(a) for a in arguments)
            return arguments

        return pullback

    def _assembler(self, original):
        watch = self

        def assembler(fun, *args, has_aux=False, **kwargs):
            inner = original(fun, *args, has_aux=has_aux, **kwargs)

            def derivative(*a, **k):
                outermost, out = watch._within("_assembling", inner, a, k)
                watch.seen += outermost
                if not outermost or watch._structure is None:
                    return out
                return (
                    (each(watch._structure, out[0]), *out[1:])
                    if has_aux
                    else each(watch._structure, out)
                )

            return named(derivative, inner)

        return named(assembler, original)


def each(change, result):
    """`change` on a derivative, or on each one when several arguments were asked for."""
    return tuple(change(r) for r in result) if type(result) is tuple else change(result)


def _inexact(jnp, leaf) -> bool:
    try:
        return jnp.issubdtype(jnp.result_type(leaf), jnp.inexact)
    except TypeError:
        return False


_FOUND: dict[tuple[int, ...], tuple[int, list]] = {}
"""The bindings last found for a set of objects, with how many modules were loaded then."""


def _bindings(objects: dict[int, object], fresh: bool = False) -> list[tuple[object, str, object]]:
    """Every (module, name, value) of a loaded `jax` module whose value is one of `objects`
    (by id), read again only when modules were loaded since the last reading (or `fresh`)."""
    key, loaded = tuple(sorted(objects)), len(sys.modules)
    known = _FOUND.get(key)
    if known is not None and known[0] == loaded and not fresh:
        return known[1]
    found = []
    for module_name, module in list(sys.modules.items()):
        if module is None or not (module_name == "jax" or module_name.startswith("jax.")):
            continue
        found += [(module, n, v) for n, v in list(vars(module).items()) if id(v) in objects]
    _FOUND[key] = (loaded, found)
    return found


def named(wrapper, original):
    """`wrapper` under the original's name and docstring, with no path back to it (what
    functools.wraps leaves on `__wrapped__`)."""
    for attribute in ("__module__", "__name__", "__qualname__", "__doc__"):
        with contextlib.suppress(AttributeError, TypeError):
            setattr(wrapper, attribute, getattr(original, attribute))
    return wrapper
