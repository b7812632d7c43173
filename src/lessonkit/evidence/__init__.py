"""Evidence of learning: the template every learner gets, and a report filled from their run.

The lesson's `{evidence}` block lists what a learner keeps (each item with a prediction, the
code they ran, what it printed, and their reasoning). `template` lays those items out;
`observe` reads what the learner's run showed from the grader's own run of their file (the
one place learner code runs, sandboxed); `report` fills the observed parts and leaves the
predictions and reasoning to the learner. Predictions are never filled in for them.

Import from the modules: this package imports nothing, so the build can render the template
without loading the grader that `observe` needs.
"""
