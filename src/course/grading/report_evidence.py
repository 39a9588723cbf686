"""The evidence graders see beside each decision, never a decision itself: what `course grade` wrote per student in
reports/<lesson>-grade.json (the re-check's diagnoses, what grading found wrong with a file, the exceptions a code
item's cells raised) and the sentences in the answers that look like a veto item."""

from __future__ import annotations

import json
from pathlib import Path

from course.errors import CourseError, Location
from course.grading.report_model import CodeHint, Submission
from course.grading.rubric import Rubric, format_points
from course.hints.find import VetoHint, find_veto_hints
from course.hints.vocabulary import Vocabulary
from course.lesson.validate import display_path


def read_grade_report(grade_report: Path, rubric: Rubric) -> dict[str, dict]:
    """Student → outcome, as the autograde steps wrote reports/<lesson>-grade.json ({} before any grading run)."""
    try:
        data = json.loads(Path(grade_report).read_text("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise CourseError(
            f"not readable as the re-check's JSON report ({exc}); rerun `course grade {rubric.lesson}`",
            Location(display_path(grade_report)),
        ) from None
    return (
        {student: outcome for student, outcome in data.items() if isinstance(outcome, dict)}
        if isinstance(data, dict)
        else {}
    )


def read_code_hints(outcomes: dict[str, dict], rubric: Rubric) -> dict[str, tuple[CodeHint, ...]]:
    """Student → the diagnoses the re-check wrote for their failed code items."""
    titles = {c.id: c.title for c in rubric.code_items}
    hints = {}
    for student, outcome in outcomes.items():
        verdicts = outcome.get("verdicts", {})
        hints[student] = tuple(
            CodeHint(item, titles[item], d["id"], d["name"], d["evidence"], d.get("veto"))
            for item, verdict in verdicts.items()
            if item in titles and not verdict.get("passed")
            for d in verdict.get("diagnoses", ())
        )
    return hints


def read_grading_problems(outcomes: dict[str, dict], rubric: Rubric) -> dict[str, tuple[str, ...]]:
    """Student → why grading flagged the submission: what it found wrong with the file (why a damaged one scored
    0) and every score the re-check corrected, kernel and re-check score side by side, with the re-check's reason."""
    titles = {c.id: c.title for c in rubric.code_items}

    def corrected(change: dict) -> str:
        kernel = change.get("kernel_score")
        before = "学生进程内未得分" if kernel is None else f"学生进程内得 {format_points(kernel)} 分"
        return (
            f"代码「{titles.get(change.get('item'), change.get('item'))}」：{before}，课程复核改为 "
            f"{format_points(change.get('recheck_score') or 0)} 分（{change.get('reason', '')}）"
        )

    return {
        student: (
            *(str(p) for p in outcome.get("problems", ())),
            *(corrected(c) for c in outcome.get("changes", ()) if isinstance(c, dict)),
        )
        for student, outcome in outcomes.items()
    }


def read_code_errors(outcomes: dict[str, dict]) -> dict[str, dict[str, tuple[str, ...]]]:
    """Student → code item → the exceptions the student's cells raised while the re-check defined them."""
    from course.grading.recheck import CellError

    return {
        student: {
            item: tuple(CellError(**e).describe() for e in verdict.get("errors", ()))
            for item, verdict in outcome.get("verdicts", {}).items()
            if not verdict.get("passed")
        }
        for student, outcome in outcomes.items()
    }


def grader_hints(submission: Submission, vocabulary: Vocabulary | None) -> tuple[VetoHint, ...]:
    """Sentences in the answers that look like a veto item: hints for the grader, never decisions.

    The vocabulary is the lesson's own (lessons/lessonNN/veto_hints.yml); without one there are none.
    """
    if submission.answers is None:
        return ()
    return tuple(
        h for qid, text in sorted(submission.answers.items()) for h in find_veto_hints(text, vocabulary, question=qid)
    )
