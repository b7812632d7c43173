"""An instructor's course: the roster, the gradebook of every graded attempt, the exports.

`roster` reads the class list and says whose file a submission is; `gradebook` keeps every
attempt of every lesson in one SQLite file and picks the one that counts; `exports` writes
what a learning-management system imports. Nothing here grades: `grade/` does.
"""
