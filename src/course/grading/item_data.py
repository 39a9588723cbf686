"""What item analysis reads: one lesson's graded class as a students × items score matrix, and what went wrong.

Scores come from nbgrader's gradebook wherever its configured db_url puts it, decided exactly as the lesson's
report decides them (course.grading.report_decide.decide_lesson); each check's outcome and each diagnosed misconception
from the re-check's verdicts that every autograde writes (reports/<lesson>-grade.json); the vetoes from the
graders' records; the veto hints from the answers, as the report finds them. A submission that cannot count —
an item still waiting for a grader, a file grading could not take — is left out of the matrix and counted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from course.config import load_config
from course.errors import CourseError
from course.grading.report_decide import decide_lesson
from course.grading.report_evidence import grader_hints, read_grade_report
from course.grading.report_model import CoursePaths, StudentReport, course_paths
from course.grading.rubric import Rubric


class NothingToAnalyse(CourseError):
    """The lesson has no graded submission that item analysis can use."""


LEFT_OUT = {"pending": "尚有评分项未评完", "ungradable": "提交的文件无法评分"}  # why a submission is left out
WHY_LEFT_OUT = {"pending": "waiting for a grader", "ungradable": "that grading could not take"}


@dataclass(frozen=True)
class Mistake:
    """One student's diagnosed misconception or veto hint: which one, the items it cost, and what they wrote."""

    kind: str  # "misconception" (the re-check's diagnosis of code) or "veto-hint" (a sentence of an answer)
    id: str  # the misconception's id, or the veto's id
    name: str
    items: tuple[str, ...]  # the rubric items it cost (a code item; the questions the hint was found in)
    example: str  # what the student's work showed, their id and names removed
    veto: str | None = None
    section: str | None = None  # the heading of the lesson section it points back to, when the lesson names one


@dataclass(frozen=True)
class Check:
    """One check of a code item, named by its line of Python."""

    item: str
    text: str
    hidden: bool


@dataclass(frozen=True)
class ClassScores:
    """One lesson's class as item analysis needs it; row i of every array is students[i]."""

    lesson: str
    rubric: Rubric
    students: tuple[str, ...]  # complete graded submissions (kept for the instructor's own files, never shown)
    items: tuple[tuple[str, str, float], ...]  # the test's items (id, kind code|question, max points), rubric order
    scores: np.ndarray  # students × items
    totals: np.ndarray  # nbgrader's totals (less any late penalty): what the pass line is compared with
    checks: tuple[Check, ...]
    check_outcomes: np.ndarray  # students × checks: 1 held, 0 failed, NaN when the re-check has no outcome
    vetoed: dict[str, np.ndarray]  # veto id → whether each student has it recorded
    mistakes: tuple[tuple[int, Mistake], ...]  # (row, mistake)
    versions: tuple[str, ...]  # the assignment version each row was graded against ("" unknown)
    exercises: dict[str, str]  # code item → the label of the exercise it grades
    handed_in: tuple[float, ...]  # when each row's submission was handed in (POSIX seconds; orders the releases)
    left_out: dict[str, int] = field(default_factory=dict)  # why submissions are not in the matrix → how many


def read_class(course_root: Path, lesson: str, *, autograder: Path | None = None) -> ClassScores:
    """The lesson's graded class from its gradebook, verdicts, veto records and answers."""
    from course.grading.load_checks import checks_for_course
    from course.hints.vocabulary import lesson_vocabulary

    root = Path(course_root)
    paths = course_paths(root, lesson, autograder=autograder)
    rubric, decided = decide_lesson(paths)
    outcomes = read_grade_report(paths.grade_report, rubric)
    left_out = {reason: 0 for reason in LEFT_OUT}
    rows = []
    for report in decided:
        if outcomes.get(report.submission.student, {}).get("ungradable"):
            left_out["ungradable"] += 1
        elif report.submission.pending():
            left_out["pending"] += 1
        else:
            rows.append(report)
    if not rows:
        raise no_graded_submission(lesson, decided, left_out, paths)
    spec = checks_for_course(paths.rubric.parent.parent, lesson)
    checks = tuple(Check(item.id, c.describe(), c.hidden) for item in rubric.code_items for c in spec.checks(item.id))
    vocabulary = lesson_vocabulary(root / load_config(root).lessons_dir, lesson)
    names, handed_in = _people(paths, lesson, [r.submission.student for r in rows])
    sections = {m.id: m.section for m in spec.misconceptions}
    mistakes = tuple(
        (i, m)
        for i, r in enumerate(rows)
        for m in _mistakes(
            r, outcomes.get(r.submission.student, {}), rubric, vocabulary, names[r.submission.student], sections
        )
    )
    return ClassScores(
        lesson,
        rubric,
        tuple(r.submission.student for r in rows),
        tuple((c.id, "code", c.points) for c in rubric.code_items)
        + tuple((q.id, "question", q.points) for q in rubric.questions),
        np.array([[i.score for i in r.submission.code + r.submission.questions] for r in rows], dtype=float),
        np.array([r.submission.total for r in rows], dtype=float),
        checks,
        np.array(
            [[_held(outcomes.get(r.submission.student, {}), c) for c in checks] for r in rows], dtype=float
        ).reshape(len(rows), len(checks)),
        {v.id: np.array([any(x.veto == v.id for x in r.vetoes) for r in rows]) for v in rubric.vetoes},
        mistakes,
        tuple(str(outcomes.get(r.submission.student, {}).get("version") or "") for r in rows),
        {item.id: item.exercise for item in spec.items.values()},
        handed_in,
        {reason: n for reason, n in left_out.items() if n},
    )


def no_graded_submission(
    lesson: str, decided: tuple[StudentReport, ...], left_out: dict[str, int], paths: CoursePaths
) -> NothingToAnalyse:
    """Why there is nothing to analyse yet, and what to do."""
    if not decided:
        return NothingToAnalyse(
            f"no graded submission of {lesson} yet: nothing to analyse; hand in and grade the "
            f"class first (`course grade {lesson}`)",
            paths.gradebook.location(),
        )
    why = ", ".join(f"{n} {WHY_LEFT_OUT[reason]}" for reason, n in left_out.items() if n)
    return NothingToAnalyse(
        f"no graded submission of {lesson} can be analysed yet ({why}): enter the remaining "
        f"scores in formgrader, or have the files grading could not take handed in again",
        paths.gradebook.location(),
    )


def _held(outcome: dict, check: Check) -> float:
    """1 when the re-check found the check held for this student, 0 when it failed, NaN when it has no outcome."""
    held = outcome.get("verdicts", {}).get(check.item, {}).get("checks", {}).get(check.text)
    return float("nan") if held is None else float(bool(held))


def _people(
    paths: CoursePaths, lesson: str, students: list[str]
) -> tuple[dict[str, tuple[str, ...]], tuple[float, ...]]:
    """Student → what identifies them (id, first and last name, LMS id), to remove from examples; and when each
    handed in (nbgrader's submission timestamp)."""
    from course.grading.gradebook import gradebook

    with gradebook(paths.gradebook.url) as gb:
        found = {s.id: (s.id, s.first_name, s.last_name, s.lms_user_id) for s in gb.students}
        stamps = {
            s.student.id: s.timestamp.timestamp() if s.timestamp else 0.0 for s in gb.assignment_submissions(lesson)
        }
    return (
        {s: tuple(part for part in found.get(s, (s,)) if part) for s in students},
        tuple(stamps.get(s, 0.0) for s in students),
    )


def anonymise(text: str, names: tuple[str, ...]) -> str:
    """TEXT with every one of NAMES (a student's id, names, LMS id) replaced by 某同学."""
    for name in sorted(names, key=len, reverse=True):
        text = re.sub(re.escape(name), "某同学", text, flags=re.I)
    return text


def _mistakes(
    report: StudentReport,
    outcome: dict,
    rubric: Rubric,
    vocabulary,
    names: tuple[str, ...],
    sections: dict[str, str | None],
) -> list[Mistake]:
    """One student's diagnosed misconceptions (per failed code item, SECTIONS: misconception id → the heading its
    checks.yml names) and veto hints (per answer sentence)."""
    found = []
    for item, verdict in outcome.get("verdicts", {}).items():
        if verdict.get("passed"):
            continue
        for d in verdict.get("diagnoses", ()):
            found.append(
                Mistake(
                    "misconception",
                    d["id"],
                    d["name"],
                    (item,),
                    anonymise(str(verdict.get("reason", "")), names),
                    d.get("veto"),
                    sections.get(d["id"]),
                )
            )
    hints: dict[str, list] = {}
    for hint in grader_hints(report.submission, vocabulary):
        hints.setdefault(hint.veto_id, []).append(hint)
    for veto_id, same in hints.items():
        veto = rubric.veto(veto_id)
        found.append(
            Mistake(
                "veto-hint",
                veto_id,
                veto.text if veto else veto_id,
                tuple(dict.fromkeys(h.question for h in same if h.question)),
                anonymise(same[0].sentence, names),
                veto_id,
            )
        )
    return found
