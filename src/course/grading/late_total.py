"""What lateness costs a lesson: the declared late policy applied to the lesson's whole total, in one place.

nbgrader asks the late-submission plugin at autograde, per notebook, with the score the notebook has then (the code
items only: graders enter the written questions later) and never lets the penalty exceed it; so two students
equally late would pay differently. Here the configured plugin (`c.AssignLatePenalties.plugin_class`: the course's
CourseLatePenalty by default, or nbgrader's own, or a hub's) is asked once the whole total is known, and the
penalty is at most that total. While items still wait for a grader the penalty is provisional: the policy's points
on the best total the lesson allows, never subtracted from a score of the code alone. Every place that shows a
score takes it from here: the lesson and semester reports (and through them the Canvas and Moodle files), which
also write it back as the gradebook's late_submission_penalty; the course's `nbgrader export` plugin; the feedback.
"""

from __future__ import annotations

import datetime
import logging
import math
from dataclasses import dataclass

from course.grading.rubric import format_points

QUIET = logging.getLogger("course.late_total")  # the plugin's own per-student log lines belong to autograde runs
QUIET.addHandler(logging.NullHandler())
QUIET.propagate = False


@dataclass(frozen=True)
class Late:
    """A late submission: by how much, against which due date, and what the policy takes off its whole total."""

    seconds: float
    penalty: float  # the policy on the lesson's whole total, at most that total (provisional: on its best total)
    due: datetime.datetime  # the student's own due date (UTC): the lesson's, moved by any extension
    submitted: datetime.datetime
    extension: datetime.timedelta | None
    provisional: bool = False  # items still wait for a grader: the total, and so the penalty, is not final

    def reason(self, policy: str) -> str:
        """The penalty explained, as the reports, exports and feedback show it."""
        hours, rest = divmod(round(self.seconds), 3600)
        moved = f"（含延期 {_span(self.extension.total_seconds())}）" if self.extension else ""
        points = (
            f"暂定扣 {format_points(self.penalty)} 分（还有待评分的项目：全部评完、总分确定后从总分中扣除，"
            f"最多扣到 0 分）"
            if self.provisional
            else f"扣 {format_points(self.penalty)} 分"
        )
        return (
            f"迟交 {hours} 小时 {rest // 60} 分（截止 {self.due:%Y-%m-%d %H:%M} UTC{moved}，提交于 "
            f"{self.submitted:%Y-%m-%d %H:%M} UTC）：按迟交规则（{policy}）{points}"
        )

    @property
    def taken(self) -> float:
        """The points taken off the total now: none while provisional."""
        return 0.0 if self.provisional else self.penalty


def _span(seconds: float) -> str:
    """A duration in words: 2 天 3 小时."""
    days, rest = divmod(round(seconds), 86400)
    return (
        " ".join(
            filter(
                None,
                [
                    days and f"{days} 天",
                    rest // 3600 and f"{rest // 3600} 小时",
                    rest % 3600 // 60 and f"{rest % 3600 // 60} 分",
                ],
            )
        )
        or "0 分"
    )


def late_plugin(config):
    """The late-submission plugin an nbgrader config names (nbgrader's own when none), configured as autograde's."""
    from nbgrader.plugins import LateSubmissionPlugin
    from traitlets.utils.importstring import import_item

    plugin = config.get("AssignLatePenalties", {}).get("plugin_class", LateSubmissionPlugin)
    return (import_item(plugin) if isinstance(plugin, str) else plugin)(config=config, log=QUIET)


def lesson_late(submission, plugin) -> Late | None:
    """What lateness costs nbgrader's SUBMISSION (a SubmittedAssignment) under PLUGIN; None when it is not late."""
    seconds = submission.total_seconds_late
    if not seconds or seconds <= 0:
        return None
    provisional = bool(submission.needs_manual_grade)
    total = submission.max_score if provisional else submission.score
    points = plugin.late_submission_penalty(submission.student.id, total, seconds) or 0.0
    return Late(
        seconds,
        min(max(points, 0.0), total),
        submission.duedate,
        submission.timestamp,
        submission.extension,
        provisional,
    )


def notebook_shares(late: Late | None, scores: dict[str, float]) -> dict[str, float]:
    """Notebook → its part of the penalty, as nbgrader keeps it (per notebook, never above its score): the
    notebooks in name order, each taking what is left up to its score."""
    left, shares = (late.penalty if late else 0.0), {}
    for name in sorted(scores):
        shares[name] = min(left, max(scores[name], 0.0))
        left -= shares[name]
    return shares


@dataclass(frozen=True)
class PenaltyChange:
    """A late_submission_penalty `course report` wrote back: the student's, before and after, and why."""

    student: str
    before: float
    after: float
    late: Late | None

    def describe(self, assignment: str) -> str:
        """One line for the command's output."""
        why = (
            "not late"
            if self.late is None
            else f"provisional {format_points(self.late.penalty)}: items wait for a grader"
            if self.late.provisional
            else "the policy on the whole total"
        )
        return (
            f"{assignment} {self.student}: late penalty {format_points(self.before)} → "
            f"{format_points(self.after)} in the gradebook ({why})"
        )


def record_penalties(db_url: str, assignment: str, lates: dict[str, Late | None]) -> tuple[PenaltyChange, ...]:
    """Write each student's penalty back to the gradebook as late_submission_penalty (split over the notebooks);
    what changed."""
    from course.grading.gradebook import gradebook

    changes = []
    with gradebook(db_url) as gb:
        for student, late in sorted(lates.items()):
            notebooks = gb.find_submission(assignment, student).notebooks
            before = sum(nb.late_submission_penalty or 0.0 for nb in notebooks)
            shares = notebook_shares(late, {nb.name: nb.score for nb in notebooks})
            for nb in notebooks:
                if not math.isclose(nb.late_submission_penalty or 0.0, shares[nb.name]):
                    nb.late_submission_penalty = shares[nb.name] or None  # None, as nbgrader writes no penalty
            if not math.isclose(before, sum(shares.values())):
                changes.append(PenaltyChange(student, before, sum(shares.values()), late))
        gb.db.commit()
    return tuple(changes)
