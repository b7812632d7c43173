"""The channel to a grading child: requests, the strict reading of its reports, the run
report, and the reference run's report kept on disk.

Other packages import from here: `reported` is the namespace of the value types a child
reports (`reported.Mapping`, `reported.Array`...), read as data by the evidence report.
"""

from lessonkit.grade.channel import reported
from lessonkit.grade.channel.reported import Value

__all__ = ["Value", "reported"]
