"""Layout differences of trees, worded by `lessonkit.trees` so every tool speaks alike.

The verdict never depends on this module: `values.differences` decides in the parent
without JAX. Only when a tree's layout is wrong is JAX imported (once per process), the two
reported layouts are rebuilt as trees of `ShapeDtypeStruct`s, and `trees.compare` words
the first difference. If that is not possible, the grader's own wording is used.
"""

from __future__ import annotations

from typing import Any

from lessonkit.grade.values import Difference, Value, layout


def _rebuild(value: Value, jax: Any) -> Any:
    kind = value["t"]
    if kind == "dict":
        return {key: _rebuild(child, jax) for key, child in value["items"]}
    if kind == "seq":
        items = [_rebuild(child, jax) for child in value["items"]]
        return items if value["type"] == "list" else tuple(items)
    if kind == "array":
        return jax.ShapeDtypeStruct(tuple(value["shape"]), jax.numpy.dtype(value["dtype"]))
    if kind == "number":
        return {"bool": bool, "int": int, "float": float}[value["type"]](value["value"])
    if kind == "str":
        return value["value"]
    if kind == "none":
        return None
    return _Opaque(value.get("type", "object"))


class _Opaque:
    """Stands in for a value the child could only name by type."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


def _sentence(name: str, kind: str, path: str, expected: str, got: str) -> str:
    at = "" if path in ("", "(root)") else f" at `{path}`"
    if kind == "missing":
        return f"`{name}` is missing `{path}` (expected {expected})"
    if kind == "extra":
        return f"`{name}` has `{path}`, which the expected tree does not have ({got})"
    return f"`{name}`{at} is {got}; expected {expected}"


def _own_words(name: str, first: Difference) -> str:
    expected = layout(first.expected) if first.expected else "nothing"
    got = layout(first.got) if first.got else "nothing"
    return _sentence(name, first.kind, first.path, expected, got)


def explain_layout(name: str, expected: Value, got: Value, found: tuple[Difference, ...]) -> str:
    """One sentence for the first structural difference, and how many others there are."""
    structural = [d for d in found if d.kind != "value"]
    first = structural[0]
    sentence = _own_words(name, first)
    try:
        import jax
        import jax.numpy

        from lessonkit import trees

        report = trees.compare(
            _rebuild(expected, jax), _rebuild(got, jax), names=("expected", name)
        )
        paths = {d.path or "(root)" for d in structural}
        worded = [d for d in report.differences if d.path in paths]
        if worded:
            d = worded[0]
            sentence = _sentence(name, d.kind, d.path, d.expected, d.got)
    except Exception:  # wording only: the grader's own sentence stands
        pass
    more = len(structural) - 1
    if more:
        sentence += f" ({more} more layout difference{'s' if more > 1 else ''})"
    return sentence + "."
