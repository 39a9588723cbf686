"""The semester's policy from `[tool.course]` and what it makes of one student's lessons.

The policy: each lesson's weight (default: all 1, so every lesson counts the same), the pass rule (default
`total-and-every-lesson`: the weighted total reaches semester_pass_percent, default 60, and every counted lesson is a
PASS), and how a lesson the student has no graded submission for counts (default `zero`: 0 points and not a PASS;
`excluded`: left out of that student's total and rule). A lesson counts once the gradebook holds a submission of it
from anyone; until then it is shown as not graded yet and counts for no one. The lessons themselves are decided by
their own reports' rules (course.grading.report_decide); this module only combines those results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from course.config import CourseConfig, setting_error
from course.grading.report_model import FAIL, INCOMPLETE, PASS
from course.grading.rubric import format_points

RULES = ("total", "every-lesson", "total-and-every-lesson")
MISSING_RULES = ("zero", "excluded")


@dataclass(frozen=True)
class Policy:
    """The validated semester policy."""

    weights: dict[str, float]  # every graded lesson of the course → its weight
    pass_rule: str
    pass_percent: float
    missing: str

    @property
    def needs_total(self) -> bool:
        """Whether passing asks for the weighted total."""
        return self.pass_rule in ("total", "total-and-every-lesson")

    @property
    def needs_every_lesson(self) -> bool:
        """Whether passing asks for every counted lesson to be a PASS."""
        return self.pass_rule in ("every-lesson", "total-and-every-lesson")

    def describe(self) -> str:
        """The policy in one sentence, as the semester page states it."""
        parts = []
        if self.needs_total:
            parts.append(f"加权总分 ≥ {format_points(self.pass_percent)}%")
        if self.needs_every_lesson:
            parts.append("每一课都通过（PASS）")
        missing = "按 0 分计且算作未通过" if self.missing == "zero" else "不计入该学生的总分和通过规则"
        weights = "、".join(f"{lesson} × {format_points(w)}" for lesson, w in self.weights.items())
        return (
            f"通过条件：{'，且'.join(parts)}。权重：{weights or '无'}。没有提交的课{missing}；"
            "尚无任何人提交的课不计入。"
        )


@dataclass(frozen=True)
class Mark:
    """One student's result in one counted lesson, as the lesson's report decided it (None: no submission)."""

    score: float | None
    max_score: float
    result: str | None
    note: str = ""  # why the points are less than the graders gave (a late penalty), for the LMS's feedback


@dataclass(frozen=True)
class Standing:
    """One student's semester: the weighted total in percent (None when nothing counts) and the decision."""

    percent: float | None
    result: str
    reasons: tuple[str, ...]


def load_policy(root: Path, config: CourseConfig, lessons: list[str]) -> Policy:
    """The semester policy of CONFIG, checked against the course's graded LESSONS; a bad value names its line."""
    for lesson, weight in config.semester_weights.items():
        if lesson not in lessons:
            raise setting_error(
                root,
                "semester_weights",
                f"expected a graded lesson of this course ({', '.join(lessons) or 'none yet'}), got {lesson!r}",
                lesson,
            )
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight) or weight < 0:
            raise setting_error(root, "semester_weights", f"expected a weight >= 0, got {weight!r}", lesson)
    if config.semester_pass_rule not in RULES:
        raise setting_error(
            root, "semester_pass_rule", f"expected one of {', '.join(RULES)}, got {config.semester_pass_rule!r}"
        )
    if not 0 <= config.semester_pass_percent <= 100:
        raise setting_error(
            root, "semester_pass_percent", f"expected a percentage from 0 to 100, got {config.semester_pass_percent!r}"
        )
    if config.semester_missing not in MISSING_RULES:
        raise setting_error(
            root, "semester_missing", f"expected one of {', '.join(MISSING_RULES)}, got {config.semester_missing!r}"
        )
    return Policy(
        {lesson: float(config.semester_weights.get(lesson, 1)) for lesson in lessons},
        config.semester_pass_rule,
        config.semester_pass_percent,
        config.semester_missing,
    )


def standing(policy: Policy, marks: dict[str, Mark]) -> Standing:
    """Combine one student's counted lessons (lesson → mark) into the semester's total and result."""
    counted = {lesson: mark for lesson, mark in marks.items() if mark.result is not None or policy.missing == "zero"}
    weight = sum(policy.weights[lesson] for lesson in counted)
    percent = (
        None
        if weight == 0
        else 100
        * sum(policy.weights[lesson] * (mark.score or 0) / mark.max_score for lesson, mark in counted.items())
        / weight
    )
    missing = [lesson for lesson, mark in counted.items() if mark.result is None]
    failed = [lesson for lesson, mark in counted.items() if mark.result == FAIL]
    pending = [lesson for lesson, mark in counted.items() if mark.result == INCOMPLETE]
    if policy.needs_every_lesson and (failed or missing):
        return Standing(
            percent,
            FAIL,
            (
                *(f"{lesson} 未通过（FAIL）" for lesson in failed),
                *(f"{lesson} 没有提交，按 0 分、未通过计" for lesson in missing),
            ),
        )
    if pending:
        return Standing(
            percent, INCOMPLETE, tuple(f"{lesson} 尚未评完（INCOMPLETE），学期结果待定" for lesson in pending)
        )
    if not counted or (percent is None and policy.needs_total):
        return Standing(None, INCOMPLETE, ("还没有计入学期总评的课（或计入的课权重都是 0）",))
    shown = "加权总分 —" if percent is None else f"加权总分 {percent:.1f}%"
    if policy.needs_total and percent < policy.pass_percent and not math.isclose(percent, policy.pass_percent):
        return Standing(percent, FAIL, (f"{shown} 低于 {format_points(policy.pass_percent)}%",))
    reasons = [f"{shown} ≥ {format_points(policy.pass_percent)}%"] if policy.needs_total else [shown]
    if policy.needs_every_lesson:
        reasons.append(f"计入的 {len(counted)} 课全部通过")
    return Standing(percent, PASS, tuple(reasons))
