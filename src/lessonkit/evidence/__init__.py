"""Evidence of learning: the template every learner gets, and a report filled from their run.

`template` lays out the `{evidence}` block's items; `observe` reads what the learner's run
showed from the grader's sandboxed run of their file; `report` fills the observed parts and
leaves predictions and reasoning to the learner. This package imports nothing, so the build
can render the template without loading the grader.
"""
