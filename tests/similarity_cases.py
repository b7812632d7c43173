"""Practice files for the similarity tests and bench: the state-02 exercise with four
independent right answers to its core tasks, and disguised copies of them.

Each answer is a list of top-level statements; `SWAPS` names, per answer, the adjacent
statements that do not depend on each other, so a disguise may reorder them. A disguise
renames the learner's own names, rewrites the comments, reformats (spacing, quotes,
`3.` as `3.0`), and joins or splits lines, as a student hiding a copy would.
"""

from __future__ import annotations

import builtins
import io
import keyword
import random
import re
import tokenize
from pathlib import Path

from lessonkit.course.gradebook import Graded, attempt_of
from lessonkit.grade.judging.report import Scoring
from lessonkit.grade.judging.results import PASSED, GradeReport, TaskResult

REPO = Path(__file__).resolve().parents[1]
EXERCISE = REPO / "phases/03-state/02-pytrees-and-structured-parameters/exercises/state-02.py"
LESSON = "state-02"

ANSWERS: dict[str, list[list[str]]] = {
    "make-it-yours": [
        [
            "norm_squared = sum(jnp.sum(g ** 2) for g in jax.tree.leaves(grads))",
            'manual = jnp.sum(grads["weight"] ** 2) + grads["bias"] ** 2',
        ],
        [
            "squares = jax.tree.map(lambda leaf: jnp.sum(leaf * leaf), grads)",
            "norm_squared = jax.tree.reduce(lambda a, b: a + b, squares)",
            'manual = jnp.dot(grads["weight"], grads["weight"]) + grads["bias"] * grads["bias"]',
        ],
        [
            "import jax.flatten_util",
            "flat, _ = jax.flatten_util.ravel_pytree(grads)",
            "norm_squared = jnp.vdot(flat, flat)",
            'w = grads["weight"]',
            'b = grads["bias"]',
            "manual = (w ** 2).sum() + b ** 2",
        ],
        [
            "total = 0.0",
            "for leaf in jax.tree_util.tree_leaves(grads):\n"
            "    total = total + jnp.square(leaf).sum()",
            "norm_squared = total",
            'manual = jnp.square(grads["weight"]).sum() + jnp.square(grads["bias"])',
        ],
    ],
    "nested-model": [
        [
            'nested = {"layer": params, "scale": jnp.array(1.)}',
            "def nested_loss(p):\n"
            '    pred = p["scale"] * (jnp.dot(p["layer"]["weight"], x) + p["layer"]["bias"])\n'
            "    return (pred - 3.) ** 2",
            "g = jax.grad(nested_loss)(nested)",
            "same_structure = jax.tree.structure(g) == jax.tree.structure(nested)",
            'inner = jnp.dot(params["weight"], x) + params["bias"]',
            'scale_by_hand = 2 * (nested["scale"] * inner - 3.) * inner',
        ],
        [
            "nested = dict(layer=dict(weight=params['weight'], bias=params['bias']), "
            "scale=jnp.array(1.0))",
            "def nested_loss(p):\n"
            '    layer = p["layer"]\n'
            '    pred = p["scale"] * (layer["weight"] @ x + layer["bias"])\n'
            "    return (pred - 3.) ** 2",
            "g = jax.grad(nested_loss)(nested)",
            "same_structure = jax.tree_util.tree_structure(g) == "
            "jax.tree_util.tree_structure(nested)",
            'linear = params["weight"] @ x + params["bias"]',
            "residual = linear - 3.0",
            "scale_by_hand = 2.0 * residual * linear",
        ],
        [
            'nested = {"scale": jnp.ones(()), "layer": {"bias": params["bias"], '
            '"weight": params["weight"]}}',
            "def nested_loss(p):\n"
            '    w, b, s = p["layer"]["weight"], p["layer"]["bias"], p["scale"]\n'
            "    pred = s * (jnp.sum(w * x) + b)\n"
            "    return (pred - 3.) ** 2",
            "loss_grad = jax.grad(nested_loss)",
            "g = loss_grad(nested)",
            "same_structure = jax.tree.structure(nested) == jax.tree.structure(g)",
            'z = jnp.sum(params["weight"] * x) + params["bias"]',
            "scale_by_hand = 2 * (z - 3) * z",
        ],
        [
            "layer = {k: v for k, v in params.items()}",
            'nested = {"layer": layer, "scale": jnp.asarray(1.0)}',
            "def nested_loss(p):\n"
            '    pred = p["scale"] * jnp.vdot(p["layer"]["weight"], x) + p["scale"] * '
            'p["layer"]["bias"]\n'
            "    return (pred - 3.) ** 2",
            "_, g = jax.value_and_grad(nested_loss)(nested)",
            "tree_g = jax.tree_util.tree_structure(g)",
            "tree_n = jax.tree_util.tree_structure(nested)",
            "same_structure = tree_g == tree_n",
            'y = jnp.vdot(params["weight"], x) + params["bias"]',
            "scale_by_hand = 2 * y * (y - 3)",
        ],
    ],
    "repair": [
        [
            'partial = {key: leaf for key, leaf in grads.items() if key != "bias"}',
            TRY := "try:\n    jax.tree.map(lambda p, g: p - 0.05 * g, params, partial)\n"
            "except ValueError as error:\n    mismatch = {mismatch}\n"
            '    print("Expected tree mismatch")\n'
            'else:\n    raise AssertionError("Expected a missing-key failure")',
            "fixed = jax.tree.map(lambda p, g: p - 0.05 * g, params, grads)",
        ],
        [
            "partial = dict(grads)",
            'del partial["bias"]',
            TRY,
            "fixed = {name: params[name] - 0.05 * grads[name] for name in params}",
        ],
        [
            'partial = {"weight": grads["weight"]}',
            TRY,
            "lr = 0.05",
            "fixed = jax.tree_util.tree_map(lambda value, grad: value - lr * grad, params, grads)",
        ],
        [
            'partial = {k: grads[k] for k in ("weight",)}',
            TRY,
            'fixed = dict(weight=params["weight"] - 0.05 * grads["weight"], '
            'bias=params["bias"] - 0.05 * grads["bias"])',
        ],
    ],
}
MISMATCH = [
    "str(error)",
    'f"{error}"',
    "error.args[0] if error.args else str(error)",
    "str(error).strip()",
]

SWAPS: dict[str, list[list[int]]] = {
    "make-it-yours": [[0], [1], [3], [2]],
    "nested-model": [[0, 3], [0, 3], [0, 4], [4, 6]],
    "repair": [[], [], [1], []],
}
"""Per task, per answer: statement i and i + 1 are independent, so may be swapped."""

GIVEN = frozenset(
    {"jnp", "jax", "params", "grads", "x", "error", "nested_loss", "optax"}
    | {"weight", "bias", "layer", "scale"}  # keyword arguments naming the keys
)
"""Names the lesson or the task binds: a copier keeps them, or the grader would not find them."""
REQUIRED = re.compile(
    r"^(norm_squared|manual|nested|pred|g|same_structure|scale_by_hand|partial|mismatch|fixed)$"
)


def answer_code(task: str, index: int, order: list[int] | None = None) -> str:
    statements = ANSWERS[task][index]
    order = order if order is not None else list(range(len(statements)))
    text = "\n".join(statements[i] for i in order)
    return text.replace("{mismatch}", MISMATCH[index])


def practice_file(codes: dict[str, str]) -> str:
    """The exercise file with each named task cell's code replaced by `codes[task]`; the
    other task cells keep their scaffold (a learner who did not do them)."""
    out: list[str] = []
    skipping = False
    for line in EXERCISE.read_text().splitlines():
        match = re.match(r"^# TASK ([a-z0-9-]+) ", line)
        if match and match[1] in codes:
            out.append(line)
            out.append(codes[match[1]])
            skipping = True
            continue
        if skipping and line.startswith("# %%"):
            skipping = False
            out.append("")
        if not skipping:
            out.append(line)
    return "\n".join(out) + "\n"


def _rename(code: str, rng: random.Random) -> str:
    """Every name the learner chose (not given, not required) renamed."""
    names: dict[str, str] = {}
    pieces = []
    previous = ""
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        text = token.string
        if (
            token.type == tokenize.NAME
            and previous != "."
            and not keyword.iskeyword(text)
            and text not in GIVEN
            and not REQUIRED.match(text)
            and text not in dir(builtins)
        ):
            text = names.setdefault(text, f"{rng.choice(['tmp', 'val', 'my'])}_{len(names)}")
        pieces.append((token.type, text))
        previous = token.string
    return tokenize.untokenize(pieces)


def _reformat(code: str, rng: random.Random) -> str:
    code = code.replace("3.)", "3.0)").replace(" ** ", "**")
    if rng.random() < 0.5:
        code = code.replace('"', "'")
    code = re.sub(r"(?m)^(\S[^=\n]*?) = ", r"\1  =  ", code)
    lines = code.split("\n")
    joined: list[str] = []
    for line in lines:  # join two short top-level statements with `;`
        simple = not line.startswith((" ", "try", "except", "else", "for", "def"))
        if (
            joined
            and simple
            and not line.endswith(":")
            and not joined[-1].startswith(" ")
            and not joined[-1].endswith(":")
            and not joined[-1].startswith(("try", "except", "else", "for", "def", "import"))
            and rng.random() < 0.3
        ):
            joined[-1] += "; " + line
        elif simple and "(" in line and len(line) > 40 and rng.random() < 0.5:
            head, tail = line.split("(", 1)
            joined.append(f"{head}(\n        {tail}")  # split inside the brackets
        else:
            joined.append(line)
    return "\n".join(joined)


def _recomment(code: str, rng: random.Random) -> str:
    lines = [re.sub(r"\s+#.*$", "", line) for line in code.split("\n")]
    words = ["compute it", "step", "see the lesson", "TODO check", "done"]
    out = []
    for line in lines:
        if rng.random() < 0.5 and not line.startswith(" "):
            out.append(f"# {rng.choice(words)}")
        out.append(line + (f"  # {rng.choice(words)}" if rng.random() < 0.3 else ""))
    return "\n".join(out)


def disguised(task: str, index: int, rng: random.Random) -> str:
    """An answer as a copier might hand it in: reordered where the order is free, renamed,
    reformatted and recommented."""
    order = list(range(len(ANSWERS[task][index])))
    for i in SWAPS[task][index]:
        if rng.random() < 0.7:
            order[i], order[i + 1] = order[i + 1], order[i]
    code = answer_code(task, index, order)
    return _recomment(_reformat(_rename(code, rng), rng), rng)


def independent_file(index: int) -> str:
    return practice_file({task: answer_code(task, index) for task in ANSWERS})


def disguised_file(index: int, rng: random.Random) -> str:
    return practice_file({task: disguised(task, index, rng) for task in ANSWERS})


def blank_file() -> str:
    return EXERCISE.read_text()


def graded(lesson, student: str, text: str, submitted: float = 0.0) -> Graded:
    """The file as a gradebook keeps it, every task passed (the grade is not compared)."""
    tasks = tuple(TaskResult(t.id, t.title, PASSED, "", None, t.optional) for t in lesson.tasks)
    return attempt_of(
        GradeReport(lesson.meta.id, f"{student}.py", tasks, (), 1.0, 7),
        Scoring.of(lesson),
        student=student,
        lesson_title=lesson.meta.title,
        revision=lesson.meta.revision,
        toolkit="0.1.0",
        file=f"{student}.py",
        data=text.encode(),
        submitted=submitted,
        graded_utc="2026-12-06T00:00:00Z",
        fingerprint="fp-1",
    )
