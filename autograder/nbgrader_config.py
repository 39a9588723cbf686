# nbgrader configuration of the course: this folder (autograder/) is the nbgrader course root.
# Run nbgrader commands from here, e.g. `nbgrader generate_assignment lesson05`. The settings themselves
# live in the course package (course.nbgrader_hooks.config), installed with `pip install -e .`. They are
# defaults: a key that a system, hub (JUPYTER_CONFIG_PATH) or user nbgrader_config.py sets keeps that value
# (e.g. a hub's course_id, Exchange.root or CourseDirectory.db_url); nbgrader's default db_url is gradebook.db here.
from pathlib import Path

from course.nbgrader_hooks.config import configure

configure(get_config(), Path(__file__).resolve().parent)  # noqa: F821 (nbgrader provides get_config)

# Stock `nbgrader autograde` grades as `course grade` does: one run per course at a time (the batch lock),
# damaged submissions scored 0 with their reason, students' code run in the grading sandbox and the code items
# re-checked out of process, problems flagged and written to reports/<assignment>-grade.json. The sandbox's settings
# (course.nbgrader_hooks.sandbox_execute.GradingSandbox) go here for both commands, e.g.:
#   c = get_config()
#   c.GradingSandbox.memory_bytes = 4 * 2**30   # per submission
#   c.GradingSandbox.cell_timeout_s = 60
#   c.GradingSandbox.recheck_call_timeout_s = 5  # per call in the re-check (default 2 s), for slow functions
#   c.GradingSandbox.unsafe = True             # only where bubblewrap cannot be had, for code you trust
#   c.AutogradeSavings.enabled = False         # nbgrader's set-up per student as shipped (same grades, slower)
