"""The grading child's program, one job per module, standard library only.

The parent imports the shared pieces as `lessonkit.grading_child.wire`, `.transforms` and `.names`
(and the lesson layer reads `.names`); the child runs `main.py`, which loads this folder
by path as the package `lessonkit_child`, since its sandbox binds only this folder. So no
module here imports from lessonkit: only from the standard library and from each other,
relatively.
"""
