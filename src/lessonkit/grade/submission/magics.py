"""A notebook cell's IPython magics, as the plain Python a grading child runs.

Jupyter runs a cell through IPython, which turns `%time x = f()` into a call on the kernel,
`get_ipython().run_line_magic('time', 'x = f()')`; a grading child has no kernel, so that
line was a SyntaxError in the grader though Jupyter runs it. Here a notebook's cells are
read through IPython's own transformer (`TransformerManager.transform_cell`) where IPython
is installed (it is wherever Jupyter is), so a magic is found exactly where Jupyter finds
it, never inside a string, and then:

- a timing magic becomes the code it times, run once: `%time STMT` and `%timeit STMT` (its
  options dropped) become `STMT`, `y = %time EXPR` becomes `y = (EXPR)`, and a cell under
  `%%time` or `%%timeit` runs its body (`%%timeit`'s setup line first);
- `%matplotlib ...`, a display setting, becomes `pass`;
- any other magic, shell command or help request (`%env`, `%run`, `!pip ...`, `x?`) stays
  as written: the child reports the syntax error at that line, and the grader's message
  says which magic it is (`magic_in`): "uses a Jupyter magic: %env".

A cell that is already Python may call the kernel as IPython would
(`get_ipython().run_line_magic("matplotlib", "inline")`, as a notebook exported from another
tool does): such a line of one of the magics above becomes the same plain Python; any other
(`run_line_magic("env", ...)`, `get_ipython().system(...)`) stays, fails in its own cell
because a grading child has no `get_ipython`, and is named by `kernel_call_in`.

Every line keeps its number (a `run_cell_magic` line becomes its cell's lines), so an error
is cited at the line Jupyter shows. Without IPython only the `get_ipython()` lines of a cell
that is already Python are changed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from lessonkit.lesson.syntax import parse_python

TIMING = frozenset({"time", "timeit"})
MAX_WORK = 400_000
"""Characters times magic lines given to IPython per file. Its transformer reads the whole
cell again for each magic it turns into a call, so its work grows with both: a cell of 400
magic lines took 2.7 s. Past this bound a cell is left as written (its magic is named as
its error); the practice notebook with a magic in each task cell needs under 10,000."""

NO_EFFECT = frozenset({"matplotlib"})
KERNEL = "get_ipython()"
# A line that could hold a magic: only such cells are given to IPython.
_MAYBE_MAGIC = re.compile(r"^[ \t]*[%!]|=[ \t]*[%!]|\?[ \t]*$", re.M)
# The options a magic takes before its code: `%time --no-raise-error`, `%timeit -n10 -r 3 -q`.
_OPTIONS = {
    "time": re.compile(r"^\s*(?:--no-raise-error\b\s*)?"),
    "timeit": re.compile(r"^(?:\s*-(?=[tcqonrpv])[tcqo]*(?:[nrpv]\s*\S+)?)*\s*"),
}
_MAGIC_LINE = re.compile(r"^(?:[\w.,\[\]() ]+=\s*)?(%%?[A-Za-z_][\w.]*|![^\s]*)")


def python_of_cells(sources: Sequence[str]) -> list[str]:
    """`python_of_cell` of each of a file's cells, in bounded time (`MAX_WORK`)."""
    work, out = 0, []
    for source in sources:
        cost = len(source) * (len(_MAYBE_MAGIC.findall(source)) + source.count(KERNEL) + 1)
        if (KERNEL in source or _MAYBE_MAGIC.search(source)) and work + cost <= MAX_WORK:
            work += cost
            out.append(python_of_cell(source))
        else:
            out.append(source)
    return out


def python_of_cell(source: str) -> str:
    """The cell as the code Jupyter would run, with the magics above made plain Python."""
    if KERNEL in source and _parses(source):
        plain = [_plain_kernel_line(line) or line for line in source.split("\n")]
        return "\n".join(plain) if _parses("\n".join(plain)) else source
    if not _MAYBE_MAGIC.search(source) or _parses(source):
        return source
    lines = source.split("\n")
    filled = [i for i, line in enumerate(lines) if line.strip()]
    first, last = filled[0], filled[-1] + 1  # blank lines around are kept as they are
    return "\n".join([*lines[:first], _converted(lines[first:last]), *lines[last:]])


def _converted(lines: list[str]) -> str:
    """`python_of_cell` of a cell whose first and last lines are not blank."""
    source = "\n".join(lines)
    if lines[0].startswith("%%"):  # a cell magic: only on the cell's first line
        head = _cell_magic_head(lines[0])
        return source if head is None else "\n".join([head, python_of_cell("\n".join(lines[1:]))])
    transformed = _transformed(source)
    if transformed is None:
        return source
    new = transformed.removesuffix("\n").split("\n")
    if len(new) != len(lines):  # a magic continued with `\`: left to fail where it is
        return source
    out = []
    for original, line in zip(lines, new, strict=True):
        if line == original or "get_ipython()" not in line:
            out.append(line)  # unchanged, or a prompt or indentation Jupyter strips too
        else:
            out.append(_line_magic(line) or original)
    return "\n".join(out)


def python_of_kernel_input(source: str) -> str | None:
    """An input as a kernel's history holds it, already transformed by IPython (a magic is a
    `get_ipython()` call), with the magics above made plain Python again; None when it
    still needs the kernel (another magic, a shell command, a call of its own)."""
    out = []
    for line in source.split("\n"):
        plain = _plain_kernel_line(line)
        if plain is None:
            return None
        out.append(plain)
    return "\n".join(out)


def _plain_kernel_line(line: str) -> str | None:
    """The line with its `get_ipython()` magic call made plain Python; None when it still
    needs the kernel."""
    return line if KERNEL not in line else _cell_magic(line) or _line_magic(line)


_KERNEL_CALL = re.compile(r"get_ipython\(\)\s*\.\s*(\w+)\s*\(\s*(?:[rbuRBU]?(['\"])%*([\w.]*))?")
_CALL_PREFIX = {"run_line_magic": "%", "run_cell_magic": "%%"}


def kernel_call_in(line: str) -> str | None:
    """What a line that calls the kernel asks of it: the magic (`%env`, `%%bash`) or the
    kernel's method (`get_ipython().system`), as an error at that line names it."""
    match = _KERNEL_CALL.search(line)
    if match is None:
        return KERNEL if KERNEL in line else None
    method, name = match[1], match[3]
    if method in _CALL_PREFIX and name:
        return _CALL_PREFIX[method] + name
    return f"get_ipython().{method}"


def magic_in(line: str) -> str | None:
    """The magic or shell command a line of a cell uses (`%env`, `%%bash`, `!pip`), if any:
    how an error at that line names it."""
    match = _MAGIC_LINE.match(line.strip())
    return match[1] if match else None


def _parses(source: str) -> bool:
    try:
        parse_python(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _transformed(source: str) -> str | None:
    """IPython's own reading of the cell; None without IPython, or when it gives up."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:
        return None
    try:
        return TransformerManager().transform_cell(source)
    except Exception:  # IPython's tokenizer on a broken cell: the child reports the error
        return None


def _cell_magic_head(line: str) -> str | None:
    """What a `%%time` or `%%timeit` first line becomes: `%%timeit`'s setup code, else a
    comment; None for any other cell magic, which stays as written."""
    name, _, rest = line[2:].partition(" ")
    if name not in TIMING:
        return None
    setup = _OPTIONS[name].sub("", rest, count=1).strip()
    if name == "time" and setup:
        return None  # IPython refuses code after %%time too
    return setup if setup and _parses(setup) else f"# {line}"


def _cell_magic(line: str) -> str | None:
    """`get_ipython().run_cell_magic('time', LINE, BODY)`, the one line IPython makes of a
    `%%time` cell, as its head and body lines again; None for any other line."""
    try:
        tree = parse_python(line.strip())
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    call = (
        tree.body[0].value if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr) else None
    )
    if not _magic_call(call, "run_cell_magic", 3):
        return None
    name, argument, body = (arg.value for arg in call.args)
    head = _cell_magic_head(f"%%{name} {argument}".rstrip())
    return None if head is None else f"{head}\n{python_of_cell(body.removesuffix(chr(10)))}"


def _line_magic(line: str) -> str | None:
    """The Python for one line IPython made a line magic call of; None when it is a magic
    the child cannot run (so the line stays as the learner wrote it)."""
    text = line.lstrip()
    indent = line[: len(line) - len(text)]
    try:
        tree = parse_python(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    calls = [node for node in ast.walk(tree) if _magic_call(node, "run_line_magic", 2)]
    if len(tree.body) != 1 or len(calls) != 1:
        return None
    statement, call = tree.body[0], calls[0]
    name, argument = (arg.value for arg in call.args)
    alone = isinstance(statement, ast.Expr) and statement.value is call
    if name in NO_EFFECT and alone:
        return f"{indent}pass"
    if name not in TIMING or (name == "timeit" and not alone):  # `y = %timeit f()` is None
        return None
    code = _OPTIONS[name].sub("", argument, count=1).strip()
    if not alone:  # `y = %time f()`: the value of f(), without a comment after it
        expression = _expression(code)
        if expression is None:
            return None
        raw = text.encode("utf-8")
        before = raw[: call.col_offset].decode("utf-8")
        after = raw[call.end_col_offset :].decode("utf-8")
        code = f"{before}({expression}){after}"
    return indent + code if code and _parses(code) else None


def _expression(code: str) -> str | None:
    """The expression `code` is, without a comment after it; None when it is not one."""
    try:
        tree = parse_python(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return None
    return ast.get_source_segment(code, tree.body[0].value)


def _magic_call(node: ast.AST | None, method: str, arguments: int) -> bool:
    """`get_ipython().METHOD('name', ...)` with `arguments` strings, as IPython writes a
    magic: `run_line_magic` with the line, `run_cell_magic` with the line and the body."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == method
        and isinstance(node.func.value, ast.Call)
        and isinstance(node.func.value.func, ast.Name)
        and node.func.value.func.id == "get_ipython"
        and len(node.args) == arguments
        and all(isinstance(arg, ast.Constant) and isinstance(arg.value, str) for arg in node.args)
    )
