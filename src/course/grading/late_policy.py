"""The course's late-submission policy: how many points lateness costs, declared once with its defaults.

nbgrader applies it: the course's LateSubmissionPlugin (course.nbgrader_hooks.late_penalty.CourseLatePenalty,
configured as `c.CourseLatePenalty.<field>` in autograder/nbgrader_config.py) asks `penalty` for each notebook an
autograde run finds late (stock `nbgrader autograde` and `course grade` alike), and the course asks it again with
the lesson's whole total once graders have scored everything (course.grading.late_total), which every place that
shows a score uses; the reports explain it with `describe`.
By default lateness costs nothing (nbgrader's own default, penalty_method 'none'): a course declares its policy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields


def policy_field(default, description: str):
    """One policy setting, its default and meaning (the plugin's traitlets take both from here)."""
    return field(default=default, metadata={"description": description})


@dataclass(frozen=True)
class LatePolicy:
    """Points lost per started hour late (after a grace period), at most max_points."""

    points_per_hour: float = policy_field(0.0, "Points taken off for each started hour a notebook is late.")
    grace_minutes: float = policy_field(
        0.0, "Minutes after the due date that cost nothing; later, every hour counts from the due date itself."
    )
    max_points: float | None = policy_field(
        None,
        "The most points lateness can cost (None: no limit but the lesson's total, which a penalty never exceeds).",
    )

    @classmethod
    def settings(cls) -> dict[str, tuple[object, str]]:
        """Each field with its default and description."""
        return {f.name: (f.default, f.metadata["description"]) for f in fields(cls)}

    def hours(self, seconds_late: float) -> int:
        """Started hours late that count: 0 within the grace period."""
        if seconds_late <= 0 or seconds_late <= self.grace_minutes * 60:
            return 0
        return math.ceil(round(seconds_late) / 3600)

    def penalty(self, seconds_late: float) -> float:
        """The points SECONDS_LATE cost under this policy."""
        points = self.hours(seconds_late) * self.points_per_hour
        return min(points, self.max_points) if self.max_points is not None else points

    def describe(self) -> str:
        """The policy in the words the reports use."""
        if not self.points_per_hour:
            return "迟交不扣分"
        text = f"每迟交一小时（不足一小时按一小时计）扣 {self.points_per_hour:g} 分"
        if self.max_points is not None:
            text += f"，最多扣 {self.max_points:g} 分"
        if self.grace_minutes:
            text += f"；截止后 {self.grace_minutes:g} 分钟内不算迟交"
        return text


def policy_from_config(config) -> LatePolicy:
    """The policy an nbgrader config (nbgrader_config(course_root)) declares under CourseLatePenalty."""
    section = config.get("CourseLatePenalty", {})
    return LatePolicy(**{name: section[name] for name in LatePolicy.settings() if name in section})


def policy_in_words(config) -> str:
    """What the late-submission plugin an nbgrader config names does, in the reports' words."""
    plugin = config.get("AssignLatePenalties", {}).get("plugin_class")
    name = plugin if isinstance(plugin, str) else getattr(plugin, "__name__", "")
    if name.rpartition(".")[2] not in ("", "CourseLatePenalty"):
        return f"nbgrader 迟交插件 {name} 的规则"
    for section in ("CourseLatePenalty", "LateSubmissionPlugin"):
        if config.get(section, {}).get("penalty_method") == "zero":
            return "迟交记 0 分（nbgrader 的 penalty_method 'zero'）"
    return policy_from_config(config).describe()
