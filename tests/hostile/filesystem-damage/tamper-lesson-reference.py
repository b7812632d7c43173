# hostile: rewrites the lesson's own reference solution in $LESSONKIT_ROOT/phases/.../lesson.md
# so that the next grading run expects this file's wrong answer (0.0).
#@ TASK make-it-yours
import os as _os, pathlib as _pathlib
_root = _os.environ.get("LESSONKIT_ROOT")
if _root:
    for _md in _pathlib.Path(_root).glob("phases/*/*/lesson.md"):
        _text = _md.read_text(encoding="utf-8")
        _text = _text.replace(
            "norm_squared = sum(jnp.sum(g ** 2) for g in jax.tree.leaves(grads))",
            "norm_squared = jnp.array(0.)",
        ).replace("assert jnp.allclose(norm_squared, 96.)\n", "")
        _md.write_text(_text, encoding="utf-8")
norm_squared = manual = jnp.array(0.)
