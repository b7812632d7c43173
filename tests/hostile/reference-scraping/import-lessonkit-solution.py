# hostile: repair imports the grader's own package inside the learner process, loads the
# lesson with it and runs the reference solution of the task.
#@ TASK repair
from lessonkit.lesson.catalog import find_lesson as _find_lesson
exec(_find_lesson("state-02").task("repair").solution, globals())
