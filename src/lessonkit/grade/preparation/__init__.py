"""A lesson made ready to grade, once: its inputs, rubric, probes and requests, the
reference's reports and their checks, and the declared mistakes' runs (`prepared`).

It sits above the channel (it runs the reference in a child) and below judging (which
compares a learner's reports with what it holds).
"""
