"""A task cell's code in the one form a copier's disguises cannot change.

Renaming, comments and layout are undone later by the tokens (`course.fingerprints`); what
is undone here needs the syntax tree, as JPlag's token normalisation does: a statement
nothing reads is dropped (an inserted `unused = 0`, `pass`, `b = b`), a helper whose body is
one `return` is written where it is called (extracting or inlining a helper changes
nothing), a loop that builds a list, a dict or a sum is written as the comprehension it
is, `a += b` as `a = a + b`, and independent statements are put in one order. Each line of
the result knows the lines of the cell it came from, so a side-by-side view can mark the
student's own lines. A cell that does not parse has no canonical form (`None`): it is
compared line by line as written.
"""

from __future__ import annotations

import ast
import copy
import functools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from lessonkit.course.fingerprints import located_tokens
from lessonkit.lesson.syntax import parse_python


@dataclass(frozen=True)
class CanonicalLine:
    text: str
    """One statement (or a compound statement's header) as compared, without indentation."""
    origin: tuple[int, ...]
    """The lines of the cell (from 1) it was written on."""
    tokens: tuple[str, ...]
    """Its normalised tokens (`course.fingerprints.normal_tokens`)."""


def canonical_lines(cell: str, scaffold: str) -> tuple[CanonicalLine, ...] | None:
    """The cell's code in canonical form, line by line, the scaffold's own lines (also in
    canonical form) removed as often as the scaffold has them; `None` when either does
    not parse. The names the scaffold reads or asks for stay live, whoever reads them."""
    if cell.strip() == scaffold.strip():
        return ()
    given = _given(scaffold)
    if given is None:
        return None
    try:
        tree = _canonical(parse_python(cell), given.required, cell)
        lines = _lines(tree, cell.split("\n"), given.statements)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    left = dict(given.lines)
    kept = []
    for line in lines:
        if left.get(line.text, 0) > 0:
            left[line.text] -= 1
        else:
            kept.append(line)
    return tuple(kept)


@dataclass(frozen=True)
class _Given:
    required: frozenset[str]
    """The names the scaffold reads or its `todo(...)`s ask for."""
    lines: tuple[tuple[str, int], ...]
    """Its canonical lines, each with how often it occurs."""
    statements: Mapping[str, tuple[CanonicalLine, ...]]
    """Each top-level statement's lines, by its source as written (without indentation):
    a cell's statement written as the scaffold gave it is not written out again."""


@functools.lru_cache(maxsize=64)
def _given(scaffold: str) -> _Given | None:
    try:
        tree = parse_python(scaffold)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    required = frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name))
    source = scaffold.split("\n")
    written = [_source(statement, source) for statement in tree.body]
    canonical = _canonical(tree, required, scaffold)
    lines = _lines(canonical, source, {})
    statements = (
        {
            text: _lines(ast.Module([statement], []), source, {})
            for text, statement in zip(written, canonical.body, strict=True)
        }
        if len(written) == len(canonical.body)
        else {}
    )
    return _Given(required, tuple(Counter(line.text for line in lines).items()), statements)


def _source(statement: ast.stmt, source: Sequence[str]) -> str:
    end = statement.end_lineno or statement.lineno
    return "\n".join(line.strip() for line in source[statement.lineno - 1 : end])


def _canonical(tree: ast.Module, required: frozenset[str], text: str) -> ast.Module:
    """The transforms each disguise asks for, each only where the text could need it."""
    if any(op in text for op in ("+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=")):
        _for_each_body(tree, _plain_assignments)
    if "def " in text:
        _inline_helpers(tree, required)
    if "for " in text:
        _for_each_body(tree, _loops_to_comprehensions)
    _index_names(tree)
    _drop_dead(tree.body, set(required))
    return tree


def _plain_assignments(body: list[ast.stmt]) -> None:
    """`a += b` is `a = a + b`."""
    for index, node in enumerate(body):
        if isinstance(node, ast.AugAssign):
            load = copy.deepcopy(node.target)
            for part in ast.walk(load):
                if hasattr(part, "ctx"):
                    part.ctx = ast.Load()
            value = ast.BinOp(load, node.op, node.value)
            body[index] = ast.copy_location(ast.Assign([node.target], value), node)


def _bodies(node: ast.AST) -> Iterable[list[ast.stmt]]:
    for field in ("body", "orelse", "finalbody"):
        value = getattr(node, field, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            yield value
    for handler in getattr(node, "handlers", ()):
        yield handler.body


def _for_each_body(tree: ast.AST, change) -> None:
    """`change(body)` on every list of statements, innermost first."""
    for body in list(_bodies(tree)):
        for statement in body:
            _for_each_body(statement, change)
        change(body)


# -- helpers written where they are called -------------------------------------------------


def _helper_expression(node: ast.stmt, required: frozenset[str]) -> ast.expr | None:
    """The returned expression of a plain one-`return` function the task does not name."""
    if not isinstance(node, ast.FunctionDef) or node.decorator_list or node.name in required:
        return None
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.posonlyargs:
        return None
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # a docstring
    if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
        return body[0].value
    return None


class _Substitute(ast.NodeTransformer):
    def __init__(self, values: dict[str, ast.expr]) -> None:
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.values:
            return copy.deepcopy(self.values[node.id])
        return node


class _Inline(ast.NodeTransformer):
    def __init__(self, helpers: dict[str, ast.FunctionDef]) -> None:
        self.helpers = helpers
        self.used: set[str] = set()

    def visit_Call(self, node: ast.Call) -> ast.AST:
        helper = self.helpers.get(node.func.id) if isinstance(node.func, ast.Name) else None
        if (
            helper is None
            or node.keywords
            or len(node.args) != len(helper.args.args)
            or any(isinstance(a, ast.Starred) for a in node.args)
        ):
            self.generic_visit(node)
            return node
        node.args = [self.visit(a) for a in node.args]
        self.used.add(helper.name)
        values = {a.arg: v for a, v in zip(helper.args.args, node.args, strict=True)}
        body = copy.deepcopy(_helper_expression(helper, frozenset()))
        return ast.copy_location(_Substitute(values).visit(body), node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        helper = self.helpers.get(node.id) if isinstance(node.ctx, ast.Load) else None
        if helper is None:
            return node
        self.used.add(helper.name)
        body = copy.deepcopy(_helper_expression(helper, frozenset()))
        return ast.copy_location(ast.Lambda(copy.deepcopy(helper.args), body), node)


def _inline_helpers(tree: ast.Module, required: frozenset[str]) -> None:
    """Each one-`return` helper of the cell's top level written where it is used, as an
    expression where called and as a lambda where passed; the `def` goes."""
    helpers = {
        node.name: node for node in tree.body if _helper_expression(node, required) is not None
    }
    if not helpers:
        return
    for _ in range(3):  # a helper that calls a helper
        inline = _Inline(helpers)
        for index, node in enumerate(tree.body):
            if not (isinstance(node, ast.FunctionDef) and node.name in helpers):
                tree.body[index] = inline.visit(node)
        for node in helpers.values():
            node.body = [inline.visit(statement) for statement in node.body]
        if not inline.used:
            break
    tree.body = [n for n in tree.body if not (isinstance(n, ast.FunctionDef) and n.name in helpers)]


# -- loops written as the comprehension they are ---------------------------------------------


def _empty_kind(node: ast.stmt) -> tuple[str, str] | None:
    """(name, kind) of `name = []`, `{}`, `list()`, `dict()` or `0`."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
        return None
    target, value = node.targets[0], node.value
    if not isinstance(target, ast.Name):
        return None
    if (isinstance(value, ast.List) and not value.elts) or (
        isinstance(value, ast.Call) and _called(value, "list")
    ):
        return target.id, "list"
    if (isinstance(value, ast.Dict) and not value.keys) or (
        isinstance(value, ast.Call) and _called(value, "dict")
    ):
        return target.id, "dict"
    if isinstance(value, ast.Constant) and type(value.value) in (int, float) and not value.value:
        return target.id, "sum"
    return None


def _called(call: ast.Call, name: str) -> bool:
    return (
        isinstance(call.func, ast.Name) and call.func.id == name and not call.args
    ) and not call.keywords


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _element(statement: ast.stmt, name: str, kind: str) -> ast.expr | tuple | None:
    """What one pass of the loop adds to `name`: an element, a (key, value), or a term."""
    if kind == "list" and isinstance(statement, ast.Expr):
        call = statement.value
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "append"
            and _is_name(call.func.value, name)
            and len(call.args) == 1
            and not call.keywords
        ):
            return call.args[0]
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return None
    target, value = statement.targets[0], statement.value
    if kind == "dict" and isinstance(target, ast.Subscript) and _is_name(target.value, name):
        return (target.slice, value)
    if (
        kind == "sum"
        and _is_name(target, name)
        and isinstance(value, ast.BinOp)
        and isinstance(value.op, ast.Add)
        and _is_name(value.left, name)
    ):
        return value.right
    return None


def _reads(node: ast.AST, name: str) -> bool:
    return any(_is_name(n, name) for n in ast.walk(node))


def _as_comprehension(start: ast.stmt, loop: ast.stmt) -> ast.stmt | None:
    found = _empty_kind(start)
    if found is None or not isinstance(loop, ast.For) or loop.orelse or len(loop.body) != 1:
        return None
    name, kind = found
    inner, conditions = loop.body[0], []
    if isinstance(inner, ast.If) and not inner.orelse and len(inner.body) == 1:
        conditions, inner = [inner.test], inner.body[0]
    element = _element(inner, name, kind)
    if element is None or _reads(loop.iter, name) or any(_reads(c, name) for c in conditions):
        return None
    parts = element if isinstance(element, tuple) else (element,)
    if any(_reads(p, name) for p in parts):
        return None
    generator = ast.comprehension(loop.target, loop.iter, conditions, 0)
    if kind == "list":
        value: ast.expr = ast.ListComp(element, [generator])
    elif kind == "dict":
        value = ast.DictComp(parts[0], parts[1], [generator])
    else:
        value = ast.Call(ast.Name("sum", ast.Load()), [ast.GeneratorExp(element, [generator])], [])
    made = ast.Assign([ast.Name(name, ast.Store())], value)
    ast.copy_location(made, start)
    made.end_lineno = loop.end_lineno
    return made


def _loops_to_comprehensions(body: list[ast.stmt]) -> None:
    index = 0
    while index < len(body) - 1:
        made = _as_comprehension(body[index], body[index + 1])
        if made is not None:
            body[index : index + 2] = [made]
        index += 1


# -- what nothing reads ----------------------------------------------------------------------


_Names = tuple[frozenset[str], frozenset[str], bool]


def _index_names(node: ast.AST) -> tuple[set[str], set[str], bool]:
    """(names read, names bound, whether it has a `:=`, `yield` or `await`) of `node`, from
    one walk of it, kept on each statement inside it: statements are asked again and
    again, and walking each one anew would walk the nested ones many times. On the way,
    `f([e for x in xs])` becomes `f(e for x in xs)`: one form for both."""
    loaded: set[str] = set()
    stored: set[str] = set()
    effects = False
    if isinstance(node, ast.Name):
        (stored if isinstance(node.ctx, ast.Store) else loaded).add(node.id)
    elif isinstance(node, ast.NamedExpr | ast.Yield | ast.YieldFrom | ast.Await):
        effects = True
    elif isinstance(node, ast.Call) and len(node.args) == 1:
        comp = node.args[0]
        if isinstance(comp, ast.ListComp):
            node.args = [ast.copy_location(ast.GeneratorExp(comp.elt, comp.generators), comp)]
    for child in _children(node):
        inner = _index_names(child)
        loaded |= inner[0]
        stored |= inner[1]
        effects = effects or inner[2]
    if isinstance(node, ast.stmt):
        node._lessonkit_names = (frozenset(loaded), frozenset(stored), effects)  # type: ignore[attr-defined]
    return loaded, stored, effects


def _children(node: ast.AST) -> list[ast.AST]:
    """`ast.iter_child_nodes` without the contexts (`Load()`), for the one walk above."""
    out: list[ast.AST] = []
    for field in node._fields:
        if field == "ctx":
            continue
        value = getattr(node, field, None)
        if type(value) is list:
            out += [item for item in value if isinstance(item, ast.AST)]
        elif isinstance(value, ast.AST):
            out.append(value)
    return out


def _names(node: ast.AST) -> _Names:
    known = getattr(node, "_lessonkit_names", None)
    if known is None:
        loaded, stored, effects = _index_names(node)
        known = (frozenset(loaded), frozenset(stored), effects)
    return known


def _stored(node: ast.AST) -> frozenset[str]:
    return _names(node)[1]


def _loaded(node: ast.AST) -> frozenset[str]:
    return _names(node)[0]


def _plain_targets(node: ast.stmt) -> list[str] | None:
    """The names a plain assignment binds (`a = ...`, `a, b = ...`), else `None`."""
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        targets = [node.target]
    else:
        return None
    names: list[str] = []
    for target in targets:
        parts = target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
        if not all(isinstance(p, ast.Name) for p in parts):
            return None
        names += [p.id for p in parts]
    return names


def _dead(node: ast.stmt, live: set[str]) -> bool:
    """Whether the statement changes nothing anything reads: an assignment of names no
    later line reads (or a name to itself), `pass`, or a bare value without a call."""
    if isinstance(node, ast.Pass):
        return True
    if isinstance(node, ast.Expr):
        return not any(isinstance(n, ast.Call | ast.Await | ast.Yield) for n in ast.walk(node))
    names = _plain_targets(node)
    if names is None:
        return False
    if isinstance(node, ast.Assign) and len(names) == 1 and _is_name(node.value, names[0]):
        return True
    return not any(name in live for name in names)


def _drop_dead(body: list[ast.stmt], live: set[str]) -> None:
    """Drop, from the last statement up, those `_dead` for what is read after them; `live`
    becomes what the body reads before it runs. A compound statement is kept, and the
    statements inside it are dropped only where nothing in it or after it reads them."""
    kept: list[ast.stmt] = []
    for node in reversed(body):
        if _dead(node, live):
            continue
        names = _plain_targets(node)
        if names is not None:
            live.difference_update(names)
            live.update(_loaded(node))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            inner = _loaded(node) - _stored(node)
            _drop_dead(node.body, set(_loaded(node)))
            live.update(inner)
        else:
            live.update(_loaded(node))
            inside = live | _loaded(node)
            for sub in _bodies(node):
                _drop_dead(sub, set(inside))
        kept.append(node)
    body[:] = kept[::-1] or [ast.Pass()]


# -- one order for independent statements ----------------------------------------------------


def _movable(node: ast.stmt) -> bool:
    """An assignment, or a plain `def` (which reads what its body reads, to be safe)."""
    if isinstance(node, ast.FunctionDef):
        return not node.decorator_list
    return isinstance(node, ast.Assign | ast.AnnAssign) and not _names(node)[2]


def _writes(node: ast.stmt) -> set[str]:
    """Names a movable statement binds or changes (`d[k] = v` changes `d`)."""
    if isinstance(node, ast.FunctionDef):
        return {node.name}
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    out: set[str] = set()
    for target in targets:
        out |= _stored(target)
        base = target
        while isinstance(base, ast.Subscript | ast.Attribute):
            base = base.value
        if isinstance(base, ast.Name):
            out.add(base.id)
    return out


def _ordered(run: Sequence[ast.stmt], keys: Sequence[tuple[str, ...]]) -> list[int]:
    """A run of movable statements in one order: among those whose inputs are ready, the
    one whose normalised tokens (`keys`) sort first goes next (a stable topological
    order), so swapping two independent statements changes nothing."""
    reads = [_loaded(n) for n in run]
    writes = [_writes(n) for n in run]
    after: list[set[int]] = [set() for _ in run]
    for j in range(len(run)):
        for i in range(j):
            if writes[i] & (reads[j] | writes[j]) or reads[i] & writes[j]:
                after[j].add(i)
    done: set[int] = set()
    out: list[int] = []
    while len(out) < len(run):
        ready = [j for j in range(len(run)) if j not in done and after[j] <= done]
        chosen = min(ready, key=lambda j: (keys[j], j))
        done.add(chosen)
        out.append(chosen)
    return out


# -- lines, each with where it came from -----------------------------------------------------


def _origin(node: ast.AST) -> tuple[int, ...]:
    start = getattr(node, "lineno", None)
    if start is None:
        return ()
    end = getattr(node, "end_lineno", None) or start
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and hasattr(body[0], "lineno"):
        end = min(end, max(start, body[0].lineno - 1))  # a compound statement's header
    return tuple(range(start, end + 1))


def _statement_lines(statement: ast.stmt) -> list[tuple[str, tuple[int, ...]]]:
    """(text, origin) of each line the statement is written as by `ast.unparse`: one way
    to write it, whatever brackets the student added or left out."""
    whole = _origin(statement)
    text = ast.unparse(statement)
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    if len(lines) == 1:
        return [(lines[0], whole)]
    nodes = list(_in_order(statement))
    out: list[tuple[str, tuple[int, ...]]] = []
    for line in lines:
        if line in ("else:", "finally:") or line.startswith("@"):
            out.append((line, whole if line.startswith("@") else ()))
        elif nodes:
            out.append((line, _origin(nodes.pop(0))))
        else:
            return [(line, whole) for line in lines]  # a string over several lines
    return out if not nodes else [(line, whole) for line in lines]


def _in_order(node: ast.AST) -> Iterable[ast.AST]:
    """The statements and `except` clauses in `node`, in the order `ast.unparse` writes
    them, one line each."""
    yield node
    for field in ("body", "handlers", "orelse", "finalbody"):
        for child in getattr(node, field, ()) or ():
            if isinstance(child, ast.stmt | ast.excepthandler):
                yield from _in_order(child)


def _lines(
    tree: ast.Module, source: Sequence[str], known: Mapping[str, tuple[CanonicalLine, ...]]
) -> tuple[CanonicalLine, ...]:
    """The module's lines, each run of movable top-level statements in one order; a
    statement whose source is `known` takes the lines known for it."""
    units: list[list[tuple[str, tuple[int, ...]]] | None] = []
    for statement in tree.body:
        found = known.get(_source(statement, source)) if known else None
        units.append(None if found is not None else _statement_lines(statement))
    flat = [line for unit in units if unit is not None for line in unit]
    tokens: list[list[str]] = [[] for _ in flat]
    for token, number in located_tokens("\n".join(text for text, _ in flat)):
        tokens[min(number, len(flat)) - 1].append(token)
    made: list[list[CanonicalLine]] = []
    index = 0
    for statement, unit in zip(tree.body, units, strict=True):
        if unit is None:
            whole = _origin(statement)
            made.append([replace(line, origin=whole) for line in known[_source(statement, source)]])
            continue
        made.append(
            [
                CanonicalLine(text, origin, tuple(tokens[index + k]))
                for k, (text, origin) in enumerate(unit)
            ]
        )
        index += len(unit)
    keys = [tuple(t for line in unit for t in line.tokens) for unit in made]
    order: list[int] = []
    start = 0
    while start < len(units):
        if not _movable(tree.body[start]):
            order.append(start)
            start += 1
            continue
        end = start
        while end < len(units) and _movable(tree.body[end]):
            end += 1
        order += [start + i for i in _ordered(tree.body[start:end], keys[start:end])]
        start = end
    return tuple(line for index in order for line in made[index])
