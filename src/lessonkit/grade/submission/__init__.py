"""The learner's file read: its cells, its magics, which cell is which, and what
in it is marked for review."""
