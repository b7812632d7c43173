"""Judging: what each task is graded on, the checks, the verdicts and their words."""
