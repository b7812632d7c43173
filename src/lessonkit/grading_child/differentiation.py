"""JAX's differentiation, changed where every public way of differentiating passes, at every
depth.

`jax.grad`, `value_and_grad`, `vjp`, `jacrev`, `jacobian`, `hessian`, `fwd_and_bwd` (reverse
mode) and `jvp`, `jacfwd`, `linearize` (forward mode), and so every function with a
`custom_vjp` or `custom_jvp` rule, reach JAX's autodiff through two entry points of
`jax._src.interpreters.ad`, `jvp` and `linearize`, each given the function to differentiate
and its arguments as a tree; every reverse-mode derivative then comes out of one pullback,
`jax._src.api._vjp3_bwd`, shaped like the arguments. No public name is wrapped, so an alias
or a new transform is seen as soon as it differentiates (`seen`).

A moved leaf is made in the pullback for reverse mode (each row of a Jacobian is one of its
results), and for forward mode, which has no pullback, as a term of the function worth zero
whose derivative at its own level is the change (`Watch.differentiated`): a gradient, a
Jacobian, a directional derivative or a pullback of one cotangent all agree with
`jax.grad`'s.

Every derivative is changed, however deep: a gradient inside a `jvp`, a `jacfwd`, a
`hessian`, a `vmap` or a `checkpoint` is moved as a gradient taken alone is, so its value
(a `jvp`'s primal output, a `jacfwd`'s auxiliary output) is what `jax.grad` gives under the
same change. Each change is invisible to the derivatives taken of it (a moved gradient's own
derivative is the true Hessian, then moved as a Hessian is), so a derivative is moved once,
whichever way and in whichever order it is taken. A custom rule's own derivatives, taken
while it runs (`custom_jvp`'s rule, `custom_vjp`'s backward pass), are that rule's part of
the derivative it defines, which is the one moved.

A changed structure (a key dropped, renamed or added) has no such term: a derivative always
has its argument's structure. It is made where JAX assembles a derivative shaped like the
arguments (`STRUCTURE_SITES`): the pullback, and the Jacobian assemblers `jacrev` and
`jacfwd` (which `jacobian` and `hessian` call), bound wherever a module of `jax` holds them.

`reached` counts the derivatives a change applies to: any JAX differentiation for moved
leaves, one assembled at a structure site for a changed structure. A cell that took none
(finite differences, a formula by hand, `jax.experimental.jet`'s series, a gradient put
together from directional derivatives under a structure change) is one the change says
nothing about.

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
AD_TRACES = ("JVPTrace", "LinearizeTrace")
"""The traces whose `process_custom_jvp_call` and `process_custom_vjp_call` run a custom rule."""
RULE_SITES = ("process_custom_jvp_call", "process_custom_vjp_call")
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
    ad = importlib.import_module(AD_MODULE)
    for trace in AD_TRACES:
        owner = getattr(ad, trace, None)
        missing += [
            f"{AD_MODULE}.{trace}.{n}" for n in RULE_SITES if not callable(getattr(owner, n, None))
        ]
    core = importlib.import_module("jax._src.core")
    if getattr(getattr(core, "trace_ctx", None), "trace", None) is None:
        missing.append("jax._src.core.trace_ctx.trace")
    return missing


class Watch:
    """Differentiation seen and changed while installed.

    `values(tree)` moves the leaves of a derivative shaped like an argument (a tree whose
    structure it keeps: the change is made as a term of the function); `structure(tree)`
    changes such a derivative's structure where it is assembled. Either returns its tree
    itself where it changes nothing, and None is no change. `seen` counts the
    differentiations, `reached` those the change applies to (module docstring).
    """

    def __init__(self, jax_module, values: Callable | None, structure: Callable | None):
        self._jax = jax_module
        self._core = importlib.import_module("jax._src.core")
        self._values = values
        self._structure = structure
        self._depth = 0  # functions being differentiated, one inside another
        self._rules = 0  # custom rules and pullbacks running: their derivatives are theirs
        self._own = False  # the next differentiation is this watch's own (a change's Jacobian)
        self._assembling: list[int] = []  # the depth each running Jacobian assembler works at
        self._jacfwd = None
        self.seen = 0
        self.reached = 0

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

        self._jacfwd = api.jacfwd
        rebind(ad, "jvp", self._entry(ad.jvp, forward=True))
        rebind(ad, "linearize", self._entry(ad.linearize, forward=False))
        for trace in AD_TRACES:
            owner = getattr(ad, trace)
            for site in RULE_SITES:
                rebind(owner, site, self._rule(getattr(owner, site)))
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
        function unless a custom rule's own or this watch's own."""
        watch = self

        def entry(fun, primals, *args, has_aux=False, **kwargs):
            if watch._own or watch._rules:
                watch._own = False
                return original(fun, primals, *args, has_aux=has_aux, **kwargs)
            watch.seen += 1
            watch.reached += watch._values is not None
            # A reverse derivative's leaves are moved in its pullback, at no cost; a forward
            # one has no pullback, so its function gains the change as a term.
            plus = watch._values is not None and (forward or not kwargs.get("is_vjp", False))
            fun = watch.differentiated(fun, has_aux, plus)
            return original(fun, primals, *args, has_aux=has_aux, **kwargs)

        return entry

    def differentiated(self, fun, has_aux: bool, plus: bool):
        """`fun`, counted one level deeper while it runs; with `plus`, plus a term worth
        zero whose derivative at this level is the change of `fun`'s own: its own derivative
        (forward mode, as JAX was asked) as the change moves it (a bend follows the derivative
        it moves), less that derivative, times the step from where it is taken."""
        watch = self

        def changed(*args):
            watch._depth += 1
            try:
                out = fun(*args)
            finally:
                watch._depth -= 1
            if not plus:
                return out
            answer, aux = out if has_aux else (out, None)
            answer = watch._plus_change(fun, has_aux, args, answer)
            return (answer, aux) if has_aux else answer

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
        # The step at this level alone: a derivative taken of this one sees no term.
        here = self._core.trace_ctx.trace
        steps = [
            leaf - leaf.primal if getattr(leaf, "_trace", None) is here else None for leaf in leaves
        ]

        def of_movable(*chosen):
            given = list(held)
            for i, leaf in zip(movable, chosen, strict=True):
                given[i] = leaf
            out = fun(*tree.tree_unflatten(treedef, given))
            return out[0] if has_aux else out

        # The derivative of each output leaf by each movable argument leaf: this watch's own,
        # through what `fun` differentiates itself (changed as it is when the cell runs).
        self._own = True
        try:
            jac = self._jacfwd(of_movable, argnums=tuple(range(len(movable))))(
                *[held[i] for i in movable]
            )
        finally:
            self._own = False
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
                now = tree.tree_leaves(moved)[i]
                if now is not full[i] and steps[i] is not None:
                    term = term + jnp.tensordot(now - full[i], steps[i], axes=jnp.ndim(steps[i]))
            moved_leaves.append(out + term)
        return tree.tree_unflatten(out_def, moved_leaves)

    @contextlib.contextmanager
    def _running_rule(self):
        """A custom rule or a pullback running: the derivatives it takes are its own part."""
        self._rules += 1
        try:
            yield
        finally:
            self._rules -= 1

    def _rule(self, original):
        """A trace's `process_custom_*_call`: the custom rule it runs is counted while it
        runs, so the derivatives it takes are its own part of the one it defines."""
        watch = self

        def site(*args, **kwargs):
            with watch._running_rule():
                return original(*args, **kwargs)

        return named(site, original)

    # -- structure: where a derivative shaped like the arguments is assembled

    def _pullback(self, original):
        watch = self

        def pullback(*args, **kwargs):
            # a custom rule's own derivatives, taken while it runs, are part of this one
            inside = watch._rules
            assembled = bool(watch._assembling) and watch._assembling[-1] == watch._depth
            with watch._running_rule():
                arguments = original(*args, **kwargs)
            if inside:  # a custom rule's backward pass: part of the pullback running it
                return arguments
            changed = arguments
            if watch._values is not None:  # in a Jacobian too: each row is a derivative
                changed = tuple(watch._offset(a, watch._values(a)) for a in changed)
            if watch._structure is not None and not assembled:
                changed = tuple(watch._structure(a) for a in changed)
                watch.reached += 1
            return changed

        return pullback

    def _offset(self, tree, moved):
        """`moved` made as `tree` plus an offset no derivative taken of it sees: the change
        belongs to this derivative alone."""
        if moved is tree:
            return tree
        jax = self._jax
        tree_util = jax.tree_util
        if tree_util.tree_structure(tree) != tree_util.tree_structure(moved):
            return moved
        return tree_util.tree_map(
            lambda a, m: a + jax.lax.stop_gradient(m - a) if _inexact(jax.numpy, a) else m,
            tree,
            moved,
        )

    def _assembler(self, original):
        watch = self

        def assembler(fun, *args, has_aux=False, **kwargs):
            inner = original(fun, *args, has_aux=has_aux, **kwargs)

            def derivative(*a, **k):
                inside = watch._rules
                watch._assembling.append(watch._depth)
                try:
                    out = inner(*a, **k)
                finally:
                    watch._assembling.pop()
                if inside or watch._structure is None:
                    return out
                watch.reached += 1
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
