"""The course's nbgrader late-submission plugin: its declared policy (course.grading.late_policy) as traitlets.

The course's nbgrader config makes it `c.AssignLatePenalties.plugin_class` (a default: a hub or user config may
name another), so stock `nbgrader autograde` and `course grade` both ask it for the penalty of each late notebook;
nbgrader stores the answer as late_submission_penalty, capped at the code's score. The course asks the same plugin
again with the lesson's whole total (course.grading.late_total). A course declares its policy in
autograder/nbgrader_config.py:

    c.CourseLatePenalty.points_per_hour = 1     # 1 point per started hour late
    c.CourseLatePenalty.max_points = 5
    c.CourseLatePenalty.grace_minutes = 10
"""

from __future__ import annotations

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Float

from course.grading.late_policy import LatePolicy


def _trait(name: str):
    """The traitlet of one policy field, with the field's default and description."""
    default, description = LatePolicy.settings()[name]
    return Float(default, allow_none=default is None, help=description).tag(config=True)


class CourseLatePenalty(LateSubmissionPlugin):
    """nbgrader's LateSubmissionPlugin with the course's policy: points per started hour late, capped."""

    points_per_hour = _trait("points_per_hour")
    grace_minutes = _trait("grace_minutes")
    max_points = _trait("max_points")

    def policy(self) -> LatePolicy:
        """The configured policy."""
        return LatePolicy(self.points_per_hour, self.grace_minutes, self.max_points)

    def late_submission_penalty(self, student_id: str, score: float, total_seconds_late: float) -> float | None:
        """nbgrader's own 'zero' method when configured; else the course policy's points."""
        if self.penalty_method == "zero":
            return super().late_submission_penalty(student_id, score, total_seconds_late)
        penalty = self.policy().penalty(total_seconds_late)
        self.log.warning("%s: %g point(s) late penalty (%s)", student_id, penalty, self.policy().describe())
        return penalty
