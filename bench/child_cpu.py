"""Host CPU of one forked grading child, natively and inside gVisor (runsc), side by side.

A batch's CPU under gVisor is mostly its forked grading children's (issue 51 item 1): each
starts JAX's CPU backend and loads its cached programs, and gVisor charges for every
thread, memory operation and file open. This measures that child alone, as the grading
starter makes it, without the parent, the reference or the sandbox:

1. once, natively: `lessonkit check state-02 solved.py` (every task solved) with a compile
   cache of its own, recording the requests its learner child was sent (the reference child
   fills the cache, as in a batch);
2. for each place (native, runsc) and each code tree (`--tree LABEL=SRC`, default this
   checkout's `src`): a starter-like process (`replay`) imports JAX, NumPy and the
   requests' preloaded modules, then forks `--children` children one after another, each
   serving the recorded requests with that tree's grading child program (`runner.serve`),
   reports to /dev/null. The same process with no child is the baseline.

Per child = (CPU with N children - CPU with none) / N, counted from the host for every
process of the command, orphans included (`host_cpu.py`: inside gVisor a process reads
gVisor's own accounting). `--step exit` forks children that only exit, `--step backend`
children that start JAX's backend and exit: the price of each step of a child. Rounds
alternate trees and places, so machine load hits all alike; each figure is the median.

Run from the repository root (root, for `runsc do`):
    python bench/child_cpu.py [--children 6] [--rounds 3] [--tree before=../main/src]
        [--step grade|backend|exit] [--places native,runsc] [--env LABEL=KEY=VALUE]
e.g. `--env no-cache=CHILD_CPU_NO_CACHE=1` adds a row whose children compile every program,
as an unsandboxed learner child did before it read the compile cache (load 6 on 2 cores:
native 1.12 vs 2.50, runsc 1.90 vs 4.94 host CPU-s per child). A whole batch, before and
after a change: `batch_cpu.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from host_cpu import adopt_orphans, host_cpu, reap_orphans  # noqa: E402

from lessonkit.run.process import child_environment  # noqa: E402


def record(work: Path) -> Path:
    """The solved file's learner requests, a JSON lines file."""
    from check_latency import solved_files
    from grading_cost import RECORD  # records the learner child's requests

    solved, _ = solved_files(work)
    cache = work / "cache"
    recording = work / "requests.json"
    env = {**os.environ, "LESSONKIT_COMPILE_CACHE": str(cache)}
    argv = [sys.executable, "-c", RECORD, str(recording), "check", "state-02", solved.name]
    subprocess.run(argv, cwd=work, env=env, check=True, capture_output=True)
    reap_orphans()  # the check's starter and forks outlive it
    requests = work / "requests.jsonl"
    requests.write_text("".join(json.loads(recording.read_text())["requests"]))
    return requests


def replay(requests: Path, child_folder: Path, children: int, step: str, home: Path) -> None:
    """Import as the starter does, fork one child that fills a compile cache of this run's
    own (as the reference child does: a cache written elsewhere may not match this place's
    processor), then fork `children` grading children one by one."""
    import importlib.util

    os.environ["JAX_COMPILATION_CACHE_DIR"] = tempfile.mkdtemp(dir=home)
    spec = importlib.util.spec_from_file_location("child_main", child_folder / "main.py")
    start = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(start)
    start.load_child_package()
    import jax
    import jax.numpy as jnp
    import numpy  # noqa: F401
    from lessonkit_child import runner

    for line in requests.read_text().splitlines():
        for name in json.loads(line).get("preload", ()):
            __import__(name)
    for number in range(-1, children):
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                if number < 0:
                    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
                    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
                elif os.environ.get(NO_CACHE):
                    jax.config.update("jax_compilation_cache_dir", None)
                if step == "backend" and number >= 0:
                    jnp.zeros(()).block_until_ready()
                elif step == "grade" or number < 0:
                    os.dup2(os.open(requests, os.O_RDONLY), 0)
                    os.dup2(os.open(os.devnull, os.O_WRONLY), 3)
                    os.chdir(home)
                    runner.serve(3)
            except BaseException:
                code = 70
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        if status:
            sys.exit(f"a child ended with status {status}")


NO_CACHE = "CHILD_CPU_NO_CACHE"
"""Set (`--env no-cache=CHILD_CPU_NO_CACHE=1`): the children compile without the cache, as an
unsandboxed learner child did before `Isolation.cache` went to every child."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--children", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--step", choices=("grade", "backend", "exit"), default="grade")
    parser.add_argument("--places", default="native,runsc")
    parser.add_argument(
        "--tree", action="append", default=[], help="LABEL=SRC: a code tree's src folder"
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        help="LABEL=KEY=VALUE: a row of the first tree "
        "with one more environment variable (repeat a LABEL for more)",
    )
    parser.add_argument("--replay", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.replay:
        requests, folder, children, step, home = args.replay
        replay(Path(requests), Path(folder), int(children), step, Path(home))
        return
    trees = dict(t.split("=", 1) for t in args.tree) or {"this": str(REPO / "src")}
    settings: dict[str, dict[str, str]] = {label: {} for label in trees}
    first = next(iter(trees.values()))
    for row in args.env:
        label, key, value = row.split("=", 2)
        trees.setdefault(label, first)
        settings.setdefault(label, {})[key] = value
    places = args.places.split(",")
    adopt_orphans()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        os.chmod(work, 0o755)
        requests = record(work)
        home = work / "home"
        home.mkdir()
        base = child_environment("allow-list", scratch=str(home))  # as a grading child's
        per_child: dict[tuple[str, str], list[float]] = {}
        load = os.getloadavg()[0]
        for _ in range(args.rounds):
            for place in places:
                for label, src in trees.items():
                    child_folder = Path(src).resolve() / "lessonkit" / "grading_child"
                    costs = []
                    for count in (0, args.children):
                        argv = [sys.executable, "-I", __file__, "--replay", str(requests)]
                        argv += [str(child_folder), str(count), args.step, str(home)]
                        if place == "runsc":
                            argv = ["runsc", "--network=none", "do", *argv]
                        costs.append(host_cpu(argv, {**base, **settings[label]})[0])
                    per_child.setdefault((place, label), []).append(
                        (costs[1] - costs[0]) / args.children
                    )
        lines = len(requests.read_text().splitlines())
        print(f"host CPU-s per forked grading child ({args.step}: {lines} request(s) of a solved")
        print(f"state-02 file), median of {args.rounds}, {args.children} children a round;")
        print(f"load {load:.1f} at start, {os.getloadavg()[0]:.1f} at end")
        print(f"{'tree':<12}" + "".join(f"{p:>12}" for p in places) + "     ratio")
        for label in trees:
            row = [statistics.median(per_child[(p, label)]) for p in places]
            ratio = f"{row[-1] / row[0]:10.1f}x" if len(row) > 1 and row[0] > 0 else ""
            print(f"{label:<12}" + "".join(f"{v:12.3f}" for v in row) + ratio)


if __name__ == "__main__":
    main()
