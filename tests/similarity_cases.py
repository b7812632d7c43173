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


# A class of 16, written by hand: three honest students who each wrote the natural short
# answer to every task (their own names, spacing and comments), six with longer answers of
# their own, one copy of each of those six (byte for byte, or under one disguise, or under
# all of them), and one blank file. Each copy is of a different original, so what a copied
# pair shares no third student wrote.

NATURAL = {
    "nat-1": {
        "make-it-yours": "norm_squared = sum(jnp.sum(g ** 2) for g in jax.tree.leaves(grads))\n"
        'manual = jnp.sum(grads["weight"] ** 2) + grads["bias"] ** 2',
        "nested-model": 'nested = {"layer": params, "scale": jnp.array(1.)}\n'
        "def nested_loss(p):\n"
        '    pred = p["scale"] * (jnp.dot(p["layer"]["weight"], x) + p["layer"]["bias"])\n'
        "    return (pred - 3.) ** 2\n"
        "g = jax.grad(nested_loss)(nested)\n"
        "same_structure = jax.tree.structure(g) == jax.tree.structure(nested)\n"
        'inner = jnp.dot(params["weight"], x) + params["bias"]\n'
        'scale_by_hand = 2 * (nested["scale"] * inner - 3.) * inner',
        "repair": 'partial = {key: leaf for key, leaf in grads.items() if key != "bias"}\n'
        "try:\n    jax.tree.map(lambda p, g: p - 0.05 * g, params, partial)\n"
        "except ValueError as error:\n    mismatch = str(error)\n"
        '    print("Expected tree mismatch")\n'
        'else:\n    raise AssertionError("Expected a missing-key failure")\n'
        "fixed = jax.tree.map(lambda p, g: p - 0.05 * g, params, grads)",
    },
    "nat-2": {
        "make-it-yours": "# every leaf squared, summed\n"
        "norm_squared = sum( jnp.sum(leaf**2) for leaf in jax.tree.leaves(grads) )\n"
        "manual = jnp.sum(grads['weight']**2) + grads['bias']**2  # by name",
        "nested-model": "nested = {'layer': params, 'scale': jnp.array(1.0)}\n"
        "def nested_loss(p):\n"
        "    pred = p['scale'] * (jnp.dot(p['layer']['weight'], x) + p['layer']['bias'])\n"
        "    return (pred - 3.) ** 2\n"
        "g = jax.grad(nested_loss)(nested)\n"
        "same_structure = jax.tree.structure(g) == jax.tree.structure(nested)\n"
        "# d/ds of (s*z - 3)^2 is 2(s*z - 3)z\n"
        "z = jnp.dot(params['weight'], x) + params['bias']\n"
        "scale_by_hand = 2*(nested['scale']*z - 3.0)*z",
        "repair": "partial = {k: v for k, v in grads.items() if k != 'bias'}\n"
        "try:\n    jax.tree.map(lambda p, g: p - 0.05 * g, params, partial)\n"
        "except ValueError as error:\n    mismatch = str(error)\n"
        '    print("Expected tree mismatch")\n'
        'else:\n    raise AssertionError("Expected a missing-key failure")\n'
        "fixed = jax.tree.map(lambda a, b: a - 0.05*b, params, grads)  # lr 0.05",
    },
    "nat-3": {
        "make-it-yours": "norm_squared = sum(jnp.sum(t ** 2)\n"
        "                   for t in jax.tree.leaves(grads))\n"
        "# weight part plus bias part\n"
        'manual = jnp.sum(grads["weight"] ** 2) + grads["bias"] ** 2',
        "nested-model": 'nested = {"layer": params,\n          "scale": jnp.array(1.)}\n'
        "def nested_loss(p):\n"
        '    pred = p["scale"] * (jnp.dot(p["layer"]["weight"], x) + p["layer"]["bias"])\n'
        "    return (pred - 3.) ** 2\n"
        "g = jax.grad(nested_loss)(nested)\n"
        "same_structure = (jax.tree.structure(g) == jax.tree.structure(nested))\n"
        'lin = jnp.dot(params["weight"], x) + params["bias"]\n'
        'scale_by_hand = 2 * (nested["scale"] * lin - 3.) * lin  # chain rule',
        "repair": "# drop the bias\n"
        'partial = {name: val for name, val in grads.items() if name != "bias"}\n'
        "try:\n    jax.tree.map(lambda p, g: p - 0.05 * g, params, partial)\n"
        "except ValueError as error:\n    mismatch = str(error)\n"
        '    print("Expected tree mismatch")\n'
        'else:\n    raise AssertionError("Expected a missing-key failure")\n'
        "fixed = jax.tree.map(lambda p, d: p - 0.05 * d, params, grads)",
    },
}
"""The natural short answers, each written on its own: the same code once names, spacing
and comments are normalised."""

_TRY = (
    "try:\n    jax.tree.map(lambda p, g: p - 0.05 * g, params, partial)\n"
    "except ValueError as error:\n    mismatch = {mismatch}\n"
    '    print("Expected tree mismatch")\n'
    'else:\n    raise AssertionError("Expected a missing-key failure")'
)

LONG = {
    "long-1": {task: answer_code(task, 1) for task in ANSWERS},
    "long-2": {task: answer_code(task, 2) for task in ANSWERS},
    "long-3": {task: answer_code(task, 3) for task in ANSWERS},
    "long-4": {
        "make-it-yours": "squares = []\n"
        "for leaf in jax.tree.leaves(grads):\n"
        "    squares.append(jnp.sum(leaf * leaf))\n"
        "norm_squared = sum(squares)\n"
        "parts = []\n"
        'for key in ("weight", "bias"):\n'
        "    parts.append(jnp.sum(grads[key] ** 2))\n"
        "manual = parts[0] + parts[1]",
        "nested-model": "nested = {}\n"
        'nested["layer"] = {"weight": params["weight"], "bias": params["bias"]}\n'
        'nested["scale"] = jnp.array(1.0)\n'
        "def nested_loss(p):\n"
        '    linear = jnp.dot(p["layer"]["weight"], x) + p["layer"]["bias"]\n'
        '    pred = linear * p["scale"]\n'
        "    return (pred - 3.) ** 2\n"
        "g = jax.jit(jax.grad(nested_loss))(nested)\n"
        "same_structure = jax.tree.structure(g) == jax.tree.structure(nested)\n"
        "total = 0.0\n"
        'for w_i, x_i in zip(params["weight"], x):\n'
        "    total = total + w_i * x_i\n"
        'out = total + params["bias"]\n'
        "scale_by_hand = 2 * (out - 3) * out",
        "repair": "partial = {}\n"
        "for key in grads:\n"
        '    if key != "bias":\n'
        "        partial[key] = grads[key]\n"
        + _TRY.replace("{mismatch}", "error.args[0]")
        + "\nfixed = {}\n"
        "for key in params:\n"
        "    fixed[key] = params[key] - 0.05 * grads[key]",
    },
    "long-5": {
        "make-it-yours": 'w = grads["weight"]\n'
        'b = grads["bias"]\n'
        "w_part = jnp.vdot(w, w)\n"
        "b_part = b * b\n"
        "manual = w_part + b_part\n"
        "leaves = jax.tree_util.tree_leaves(grads)\n"
        "norm_squared = jnp.sum(jnp.stack([jnp.sum(jnp.square(l)) for l in leaves]))",
        "nested-model": "scale0 = jnp.array(1.0, dtype=jnp.float32)\n"
        'layer_params = {"weight": params["weight"], "bias": params["bias"]}\n'
        'nested = {"scale": scale0, "layer": layer_params}\n'
        "def nested_loss(p):\n"
        '    layer = p["layer"]\n'
        '    pred = p["scale"] * (jnp.sum(layer["weight"] * x) + layer["bias"])\n'
        "    return (pred - 3.) ** 2\n"
        "grad_fn = jax.grad(nested_loss)\n"
        "g = grad_fn(nested)\n"
        "g_def = jax.tree_util.tree_structure(g)\n"
        "n_def = jax.tree_util.tree_structure(nested)\n"
        "same_structure = g_def == n_def\n"
        'wx = jnp.sum(params["weight"] * x)\n'
        'lin = wx + params["bias"]\n'
        "scale_by_hand = 2.0 * (1.0 * lin - 3.0) * lin",
        "repair": 'keep = ["weight"]\n'
        "partial = {name: grads[name] for name in keep}\n"
        + _TRY.replace("{mismatch}", 'str(error).replace("\\n", " ")')
        + "\nstep = 0.05\n"
        'new_w = params["weight"] - step * grads["weight"]\n'
        'new_b = params["bias"] - step * grads["bias"]\n'
        'fixed = {"weight": new_w, "bias": new_b}',
    },
    "long-6": {
        "make-it-yours": "def sq_norm(t):\n"
        "    return jnp.sum(jnp.abs(t) ** 2)\n"
        "norm_squared = 0.0\n"
        "for leaf in jax.tree.leaves(grads):\n"
        "    norm_squared = norm_squared + sq_norm(leaf)\n"
        'weight_sq = sq_norm(grads["weight"])\n'
        'bias_sq = sq_norm(grads["bias"])\n'
        "manual = weight_sq + bias_sq",
        "nested-model": "def make_nested(layer_params, s):\n"
        '    return {"layer": layer_params, "scale": s}\n'
        "nested = make_nested(dict(params), jnp.float32(1.0))\n"
        "def nested_loss(p):\n"
        '    pred = p["scale"] * jnp.inner(p["layer"]["weight"], x) + p["scale"] * '
        'p["layer"]["bias"]\n'
        "    return (pred - 3.) ** 2\n"
        "g = jax.grad(nested_loss, argnums=0)(nested)\n"
        "paths_g = [path for path, _ in jax.tree_util.tree_flatten_with_path(g)[0]]\n"
        "paths_n = [path for path, _ in jax.tree_util.tree_flatten_with_path(nested)[0]]\n"
        "same_structure = paths_g == paths_n\n"
        "acts = []\n"
        'for w_i, x_i in zip(params["weight"], x):\n'
        "    acts.append(w_i * x_i)\n"
        'h = sum(acts) + params["bias"]\n'
        "scale_by_hand = 2 * h * (h - 3)",
        "repair": "def without(tree, name):\n"
        "    return {k: v for k, v in tree.items() if k != name}\n"
        'partial = without(grads, "bias")\n'
        + _TRY.replace("{mismatch}", "f'{error!s}'")
        + "\ndef sgd(p, g):\n"
        "    return p - 0.05 * g\n"
        "fixed = jax.tree_util.tree_map(sgd, params, grads)",
    },
}
"""Six honest students' longer answers, each their own."""

COPIES = {
    "copy-bytes": ("long-1", "byte for byte", dict(LONG["long-1"])),
    "copy-dead": (
        "long-2",
        "dead statements inserted",
        {
            "make-it-yours": "import jax.flatten_util\n"
            "unused = 0\n"
            "flat, _ = jax.flatten_util.ravel_pytree(grads)\n"
            "n_leaves = len(jax.tree.leaves(grads))\n"
            "norm_squared = jnp.vdot(flat, flat)\n"
            "pass\n"
            'w = grads["weight"]\n'
            "debug = w.shape\n"
            'b = grads["bias"]\n'
            "b = b\n"
            "manual = (w ** 2).sum() + b ** 2\n"
            "tmp = manual * 1.0",
            "nested-model": 'nested = {"scale": jnp.ones(()), "layer": {"bias": params["bias"], '
            '"weight": params["weight"]}}\n'
            "check = nested\n"
            "def nested_loss(p):\n"
            '    w, b, s = p["layer"]["weight"], p["layer"]["bias"], p["scale"]\n'
            "    unused_inner = w + 0\n"
            "    pred = s * (jnp.sum(w * x) + b)\n"
            "    return (pred - 3.) ** 2\n"
            "loss_grad = jax.grad(nested_loss)\n"
            "extra = 1\n"
            "g = loss_grad(nested)\n"
            "g_copy = g\n"
            "same_structure = jax.tree.structure(nested) == jax.tree.structure(g)\n"
            "0\n"
            'z = jnp.sum(params["weight"] * x) + params["bias"]\n'
            "spare = z * 2\n"
            "scale_by_hand = 2 * (z - 3) * z",
            "repair": 'partial = {"weight": grads["weight"]}\n'
            "count = len(partial)\n" + _TRY.replace("{mismatch}", MISMATCH[2]) + "\nlr = 0.05\n"
            "lr2 = lr\n"
            "fixed = jax.tree_util.tree_map(lambda value, grad: value - lr * grad, params, grads)\n"
            "done = True",
        },
    ),
    "copy-helper": (
        "long-3",
        "helpers extracted and inlined",
        {
            "make-it-yours": "def squared(leaf):\n"
            "    return jnp.square(leaf).sum()\n"
            "total = 0.0\n"
            "for leaf in jax.tree_util.tree_leaves(grads):\n"
            "    total = total + squared(leaf)\n"
            "norm_squared = total\n"
            'manual = squared(grads["weight"]) + jnp.square(grads["bias"])',
            "nested-model": "layer = {k: v for k, v in params.items()}\n"
            'nested = {"layer": layer, "scale": jnp.asarray(1.0)}\n'
            "def nested_loss(p):\n"
            '    pred = p["scale"] * jnp.vdot(p["layer"]["weight"], x) + p["scale"] * '
            'p["layer"]["bias"]\n'
            "    return (pred - 3.) ** 2\n"
            "_, g = jax.value_and_grad(nested_loss)(nested)\n"
            "def structure(tree):\n"
            "    return jax.tree_util.tree_structure(tree)\n"
            "tree_g = structure(g)\n"
            "tree_n = structure(nested)\n"
            "same_structure = tree_g == tree_n\n"
            "def affine(w, b):\n"
            "    return jnp.vdot(w, x) + b\n"
            'y = affine(params["weight"], params["bias"])\n'
            "scale_by_hand = 2 * y * (y - 3)",
            "repair": 'partial = {k: grads[k] for k in ("weight",)}\n'
            + _TRY.replace("{mismatch}", MISMATCH[3])
            + "\ndef step(name):\n"
            "    return params[name] - 0.05 * grads[name]\n"
            'fixed = dict(weight=step("weight"), bias=step("bias"))',
        },
    ),
    "copy-loop": (
        "long-4",
        "loops written as comprehensions",
        {
            "make-it-yours": "squares = [jnp.sum(leaf * leaf) for leaf in jax.tree.leaves(grads)]\n"
            "norm_squared = sum(squares)\n"
            'parts = [jnp.sum(grads[key] ** 2) for key in ("weight", "bias")]\n'
            "manual = parts[0] + parts[1]",
            "nested-model": "nested = {}\n"
            'nested["layer"] = {"weight": params["weight"], "bias": params["bias"]}\n'
            'nested["scale"] = jnp.array(1.0)\n'
            "def nested_loss(p):\n"
            '    linear = jnp.dot(p["layer"]["weight"], x) + p["layer"]["bias"]\n'
            '    pred = linear * p["scale"]\n'
            "    return (pred - 3.) ** 2\n"
            "g = jax.jit(jax.grad(nested_loss))(nested)\n"
            "same_structure = jax.tree.structure(g) == jax.tree.structure(nested)\n"
            'total = sum(w_i * x_i for w_i, x_i in zip(params["weight"], x))\n'
            'out = total + params["bias"]\n'
            "scale_by_hand = 2 * (out - 3) * out",
            "repair": 'partial = {key: grads[key] for key in grads if key != "bias"}\n'
            + _TRY.replace("{mismatch}", "error.args[0]")
            + "\nfixed = {key: params[key] - 0.05 * grads[key] for key in params}",
        },
    ),
    "copy-reorder": (
        "long-5",
        "independent statements reordered",
        {
            "make-it-yours": 'b = grads["bias"]\n'
            "leaves = jax.tree_util.tree_leaves(grads)\n"
            'w = grads["weight"]\n'
            "b_part = b * b\n"
            "w_part = jnp.vdot(w, w)\n"
            "norm_squared = jnp.sum(jnp.stack([jnp.sum(jnp.square(l)) for l in leaves]))\n"
            "manual = w_part + b_part",
            "nested-model": 'layer_params = {"weight": params["weight"], "bias": params["bias"]}\n'
            "scale0 = jnp.array(1.0, dtype=jnp.float32)\n"
            'wx = jnp.sum(params["weight"] * x)\n'
            'nested = {"scale": scale0, "layer": layer_params}\n'
            "def nested_loss(p):\n"
            '    layer = p["layer"]\n'
            '    pred = p["scale"] * (jnp.sum(layer["weight"] * x) + layer["bias"])\n'
            "    return (pred - 3.) ** 2\n"
            "grad_fn = jax.grad(nested_loss)\n"
            "n_def = jax.tree_util.tree_structure(nested)\n"
            "g = grad_fn(nested)\n"
            'lin = wx + params["bias"]\n'
            "g_def = jax.tree_util.tree_structure(g)\n"
            "same_structure = g_def == n_def\n"
            "scale_by_hand = 2.0 * (1.0 * lin - 3.0) * lin",
            "repair": 'keep = ["weight"]\n'
            "partial = {name: grads[name] for name in keep}\n"
            + _TRY.replace("{mismatch}", 'str(error).replace("\\n", " ")')
            + "\nstep = 0.05\n"
            'new_b = params["bias"] - step * grads["bias"]\n'
            'new_w = params["weight"] - step * grads["weight"]\n'
            'fixed = {"weight": new_w, "bias": new_b}',
        },
    ),
    "copy-all": (
        "long-6",
        "every disguise together, renamed, recommented and reformatted",
        {
            "make-it-yours": "# add up every leaf squared\n"
            "norm_squared = sum(jnp.sum(jnp.abs(a) ** 2) for a in jax.tree.leaves(grads))\n"
            "count_leaves = len(jax.tree.leaves(grads))\n"
            "b2 = jnp.sum(jnp.abs(grads['bias'])**2)  # bias\n"
            "w2 = jnp.sum(jnp.abs(grads['weight'])**2)\n"
            "ok = True\n"
            "manual = w2 + b2",
            "nested-model": "def nested_loss(p):\n"
            "    pred = p['scale'] * jnp.inner(p['layer']['weight'], x) + p['scale'] * "
            "p['layer']['bias']\n"
            "    return (pred - 3.) ** 2\n"
            "nested = {'layer': dict(params), 'scale': jnp.float32(1.0)}\n"
            "g = jax.grad(nested_loss, argnums=0)(nested)\n"
            "dbg = 0\n"
            "def key_paths(tree):\n"
            "    return [kp for kp, _ in jax.tree_util.tree_flatten_with_path(tree)[0]]\n"
            "pn = key_paths(nested)\n"
            "pg = key_paths(g)\n"
            "same_structure = pg == pn\n"
            "acts = [wi * xi for wi, xi in zip(params['weight'], x)]\n"
            "h = sum(acts) + params['bias']\n"
            "h_old = h\n"
            "scale_by_hand = 2 * h * (h - 3)",
            "repair": "partial = {kk: vv for kk, vv in grads.items() if kk != 'bias'}\n"
            "n = 0\n"
            + _TRY.replace("{mismatch}", "f'{error!s}'")
            + "\nfixed = jax.tree_util.tree_map(lambda q, d: q - 0.05 * d, params, grads)",
        },
    ),
}
"""Each copy: whose file it copies, how it is disguised, and its code per task."""


def the_class() -> dict[str, str]:
    """Student -> practice file, for the class of 16 above."""
    files = {s: practice_file(codes) for s, codes in {**NATURAL, **LONG}.items()}
    files |= {s: practice_file(codes) for s, (_, _, codes) in COPIES.items()}
    files["blank"] = blank_file()
    return files


def copied_pairs() -> set[tuple[str, str]]:
    """The real copies, each pair with its names in order."""
    return {tuple(sorted((copy, original))) for copy, (original, _, _) in COPIES.items()}
