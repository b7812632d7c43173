"""What vouches for a grading: the grader's fingerprint (what graded) and the instructor's
grading key (who signed). The reference store and the batch journals both rest on them, so
they sit below every other subpackage of grade/ but the shared types (`grade.model`).
"""
