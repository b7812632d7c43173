"""The limits of the grading wire, shared by the child that writes it and the parent that reads it.

Standard library only and free of imports: the grading child loads this file by its path,
read-only beside `worker_program.py` in the sandbox, so both sides cut and check values at the same
sizes. The parent's reader allows what an honest child writes and refuses the rest.
"""

from __future__ import annotations

MAX_ELEMENTS = 4096  # array entries sent as data; larger arrays are sent as layout only
MAX_LEAVES = 512  # tree leaves sent; larger trees are sent as a size only
MAX_DEPTH = 24  # nesting the child writes; deeper values are sent as "too deep"
PARSED_DEPTH = MAX_DEPTH + 8  # nesting the parent reads (container and leaf levels)
MAX_NODES = 4096  # value nodes in one report
MAX_TEXT = 240  # characters of a name or type the parent reads; an error message: 4 times
MAX_MESSAGE = 4 * MAX_TEXT  # characters of an exception message
MAX_STRING = 2_000  # characters of a string value: a whole JAX error message, for one
MAX_NAME = 120  # characters of a type or module name
OUTPUT_HEAD = 6_000  # captured output kept per cell: its head and its tail
OUTPUT_TAIL = 2_000
MAX_OUTPUT = 12_000  # captured output per cell the parent reads (head, tail and a note)
