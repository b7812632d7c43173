"""The toolkit's sizes, waits and tolerances besides a child's `Limits`: one named home each.

Standard library only and importing nothing of lessonkit, so every layer may read it, from the
tree-difference engine up to the commands. Each value has the one-line docstring under it
that `docs/settings.md` repeats (a unit test keeps the two equal); the limits of a confined
child are `run/limits.py`'s `Limits`, and what a command chooses is a `GradingSettings`
(`settings.py`).
"""

from __future__ import annotations

# ----------------------------------------------------------------------------- waits

DEFAULT_TIMEOUT_S = 120.0
"""Seconds a lesson script (`lessonkit run`) or a learner's file for `evidence` may run."""
START_WAIT_S = 300.0
"""Seconds the grading starter may take to import JAX (a loaded machine) before it is given up."""
GREETING_WAIT_S = 30.0
"""Seconds a forked grading child and the parent each wait for the other's greeting."""
CONNECT_TIMEOUT_S = 30.0
"""Seconds `check --batch --dask` waits to reach the Dask scheduler."""
FIRST_REPLY_WAIT_S = 420.0
"""Seconds a notebook's first `check()` waits: JAX, the reference and one grading, slowly."""
REPLY_WAIT_S = 120.0
"""Seconds each later `check()` of a notebook waits for the grading server's reply."""
CHILD_EXIT_WAIT_S = 1.0
"""Seconds the parent waits for a grading child's exit once it closed its report channel."""
STOP_WAIT_S = 10.0
"""Seconds a killed child is waited for, to be reaped, before it is left to its parent."""
SCRIPT_POLL_S = 0.1
"""Seconds between two looks at a running whole script: its end, its time, its folder."""
WATCH_POLL_S = 0.1
"""Seconds between two looks at the file `check --watch` grades."""
WATCH_SETTLE_S = 0.03
"""Seconds `check --watch` lets a changed file settle (an editor truncates, then writes)."""
SITE_POLL_S = 0.5
"""Seconds between two looks at the lessons' sources while `lessonkit serve` rebuilds the site."""
GRADEBOOK_BUSY_WAIT_S = 60.0
"""Seconds a gradebook writer waits for another writer's lock before it gives up."""
GRADEBOOK_CHECKPOINT_WAIT_S = 2.0
"""Seconds a gradebook checkpoint waits for another writer (which checkpoints when done)."""
SANDBOX_TRIAL_WAIT_S = 10.0
"""Seconds a trial run of bubblewrap may take before the sandbox is found unusable."""
CGROUP_REMOVE_RETRY_S = 0.02
"""Seconds between two tries to remove a cgroup whose processes are being killed."""
USER_END_RETRY_S = 0.01
"""Seconds between two sweeps for what an ended child's user id still runs."""
CPU_NAME_WAIT_S = 5.0
"""Seconds `sysctl` may take to name a Mac's processor for a run's receipt."""

# ----------------------------------------------------------------------------- input caps

MAX_CODE_CHARACTERS = 2_000_000
"""Characters of code in a practice file: a .py file, or a notebook's code cells."""
MAX_NOTEBOOK_BYTES = 64 * 2**20
"""Bytes of a notebook file, with the outputs Jupyter saved in it."""
MAX_JSON_ITEMS = 1_000_000
"""Commas and brackets in a notebook's JSON (a practice notebook has about 5,000)."""
MAX_LINES = 50_000
"""Lines of a practice file."""
MAX_CELLS = 2_000
"""Cells of a practice file, code and Markdown together."""
MAX_CODE_CELLS = 500
"""Code cells of a practice file (it has tens; each more one runs in every scenario)."""

IMPORT_SEARCH_FOLDERS = 50_000
"""Folders one search of an import folder for people's work opens (a site-packages: 1-30,000)."""
IMPORT_SEARCH_S = 10.0
"""Seconds one search of an import folder for people's work may take (a slow network home)."""

# ----------------------------------------------------------------------------- tolerances

TREE_RTOL = 1e-4
"""How far two leaves' values may differ, relative, for the tree-difference engine."""
TREE_ATOL = 1e-5
"""How far two leaves' values may differ, absolute, for the tree-difference engine."""
NUMBERS_RTOL = 1e-6
"""How far the code's value may lie from the one the lesson declares, relative."""
NUMBERS_ATOL = 1e-6
"""How far the code's value may lie from the one the lesson declares, absolute."""
OUTPUT_RTOL = 1e-6
"""How far a number a run prints may lie from the one its record kept, relative."""
OUTPUT_ATOL = 1e-12
"""The same, absolute: only so that a printed 0.0 and a float32 residue still agree."""
EVIDENCE_RTOL = 1e-5
"""How far a learner's value may lie from a hand value (float32 against decimal), relative."""
EVIDENCE_ATOL = 1e-6
"""How far a learner's value may lie from a hand value, absolute."""
PROSE_RTOL = 1e-9
"""How far a number the prose writes may lie from the one declared beside it, relative."""
PROSE_ATOL = 1e-12
"""How far a number the prose writes may lie from the one declared beside it, absolute."""
STREAM_ULPS = 4
"""How far a leaf's numbers may lie from a scaled run of another's: units in the last place."""
