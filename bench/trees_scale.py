"""How `lessonkit.trees.compare` scales, against its floor and against chex.

Run with ``.venv/bin/python bench/trees_scale.py`` (``--quick`` skips 1M leaves,
``--sizes 1000,50000`` picks sizes). Trees are three levels of nested dicts
holding NumPy float32 arrays of shape (2,), so building them stays cheap.

For each size it times, best of a few repeats:

* equal trees (built separately): ``compare`` against the floor of two
  ``jax.tree.flatten`` calls, and against chex's
  ``assert_trees_all_equal_shapes_and_dtypes``;
* differing trees (one deep key missing, one deep leaf reshaped): ``compare``
  against the floor of two ``jax.tree_util.tree_flatten_with_path`` calls,
  the least a tool that names paths has to do.

Targets: equal ≤3x floor, differing ≤1.5x floor, ≥10x faster than chex, and
100k→1M time growing ≤11x.
"""

from __future__ import annotations

import argparse
import gc
import math
import time
from collections.abc import Callable

import chex
import jax
import numpy as np

from lessonkit.trees import compare

TARGET_EQUAL = 3.0
TARGET_DIFFER = 1.5
TARGET_CHEX = 10.0
TARGET_SCALING = 11.0


def build(n: int) -> dict:
    """``n`` leaves in three levels of dicts, about ``n ** (1/3)`` keys per level."""
    fan = max(1, math.ceil(n ** (1 / 3)))
    tree: dict = {}
    for i in range(n):
        outer = tree.setdefault(f"block{i // (fan * fan)}", {})
        inner = outer.setdefault(f"layer{(i // fan) % fan}", {})
        inner[f"w{i % fan}"] = np.zeros(2, np.float32)
    return tree


def corrupt(tree: dict) -> dict:
    """Delete the deepest last key and reshape the first leaf: two deep differences."""
    last_block = tree[list(tree)[-1]]
    last_layer = last_block[list(last_block)[-1]]
    del last_layer[list(last_layer)[-1]]
    first_block = tree[next(iter(tree))]
    first_layer = first_block[next(iter(first_block))]
    first_layer[next(iter(first_layer))] = np.zeros(3, np.float32)
    return tree


def best_of(
    fns: dict[str, Callable[[], object]], repeats: int, min_batch_s: float = 0.05
) -> dict[str, float]:
    """Seconds per call for each function: the fastest of ``repeats`` batches.

    Batches of the functions alternate, so a burst of load from elsewhere on
    the machine hits a function and its floor alike; each batch runs at least
    ``min_batch_s`` so that sub-millisecond calls are timed in bulk.
    """
    numbers = {}
    for name, fn in fns.items():
        start = time.perf_counter()
        fn()
        numbers[name] = max(1, int(min_batch_s / max(time.perf_counter() - start, 1e-9)))
    best = dict.fromkeys(fns, math.inf)
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            for _ in range(numbers[name]):
                fn()
            best[name] = min(best[name], (time.perf_counter() - start) / numbers[name])
    return best


def two_flattens(a: object, b: object) -> None:
    jax.tree.flatten(a)
    jax.tree.flatten(b)


def two_flattens_with_path(a: object, b: object) -> None:
    jax.tree_util.tree_flatten_with_path(a)
    jax.tree_util.tree_flatten_with_path(b)


def measure(n: int, chex_max: int) -> dict[str, float]:
    repeats = 5 if n >= 500_000 else 7
    a, b = build(n), build(n)
    assert compare(a, b).ok
    row = best_of(
        {"equal": lambda: compare(a, b), "equal_floor": lambda: two_flattens(a, b)}, repeats
    )
    row["chex"] = math.nan
    if n <= chex_max:
        check = chex.assert_trees_all_equal_shapes_and_dtypes
        chex_repeats = 1 if n >= 500_000 else 3
        row.update(best_of({"chex": lambda: check(a, b)}, chex_repeats, min_batch_s=0))
    c = corrupt(build(n))
    report = compare(a, c)
    assert [d.kind for d in report.differences] == ["missing", "shape"], report
    differ = {"differ": lambda: compare(a, c), "differ_floor": lambda: two_flattens_with_path(a, c)}
    row.update(best_of(differ, repeats))
    return row


def fmt_time(seconds: float) -> str:
    if math.isnan(seconds):
        return "skipped"
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def verdict(value: float, target: float, smaller_is_better: bool = True) -> str:
    if math.isnan(value):
        return "  "
    ok = value <= target if smaller_is_better else value >= target
    return "ok" if ok else "MISS"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000,1000000", help="comma-separated")
    parser.add_argument("--quick", action="store_true", help="skip sizes above 100k")
    parser.add_argument("--chex-max", type=int, default=1_000_000, help="largest size for chex")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.quick:
        sizes = [n for n in sizes if n <= 100_000]

    print(
        f"jax {jax.__version__}, chex {chex.__version__}; "
        "best of 7 batches (5 from 500k leaves; chex 3 runs, 1 from 500k)"
    )
    head = (
        f"{'leaves':>9} | {'equal':>9} {'2×flatten':>10} {'ratio':>6} (≤{TARGET_EQUAL:g}x) "
        f"| {'chex':>9} {'speedup':>8} (≥{TARGET_CHEX:g}x) "
        f"| {'differing':>9} {'2×fwp':>9} {'ratio':>6} (≤{TARGET_DIFFER:g}x)"
    )
    print(head)
    print("-" * len(head))
    rows = {}
    for n in sizes:
        r = rows[n] = measure(n, args.chex_max)
        gc.collect()
        eq_ratio = r["equal"] / r["equal_floor"]
        speedup = r["chex"] / r["equal"]
        diff_ratio = r["differ"] / r["differ_floor"]
        print(
            f"{n:>9,} | {fmt_time(r['equal']):>9} {fmt_time(r['equal_floor']):>10} "
            f"{eq_ratio:>5.2f}x {verdict(eq_ratio, TARGET_EQUAL):>6} "
            f"| {fmt_time(r['chex']):>9} "
            f"{'' if math.isnan(speedup) else f'{speedup:.0f}x':>8} "
            f"{verdict(speedup, TARGET_CHEX, smaller_is_better=False):>6} "
            f"| {fmt_time(r['differ']):>9} {fmt_time(r['differ_floor']):>9} "
            f"{diff_ratio:>5.2f}x {verdict(diff_ratio, TARGET_DIFFER):>6}",
            flush=True,
        )
    if 100_000 in rows and 1_000_000 in rows:
        small, big = rows[100_000], rows[1_000_000]
        for label, key in (("equal", "equal"), ("differing", "differ")):
            growth = big[key] / small[key]
            floor_key = f"{key}_floor"
            floor_growth = big[floor_key] / small[floor_key]
            print(
                f"100k→1M scaling, {label}: {growth:.1f}x "
                f"(target ≤{TARGET_SCALING:g}, {verdict(growth, TARGET_SCALING)}; "
                f"floor grows {floor_growth:.1f}x)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
