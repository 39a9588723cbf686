"""`course report` without a lesson: one gradebook for the semester.

Every student in nbgrader's Student table × every graded lesson the course knows (discovered lessons with
checks.yml), each lesson decided exactly as its own report decides (course.grading.report_decide.decide_lesson: veto →
FAIL, anything ungraded → INCOMPLETE, else the rubric's pass line), totalled under the course's semester policy
(course.grading.semester_policy), written as reports/semester.csv and semester.html, and as the files Canvas and
Moodle import (course.grading.lms_export). The gradebook is reached only through nbgrader's configured db_url;
like a lesson's report, this one writes each lesson's declared due date and late penalties back to it.
Every input is checked before any file is written, and each file is replaced atomically.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import jinja2
from markupsafe import Markup

from course.config import load_config
from course.fileio import write_atomic
from course.grading.deadlines import DueDate
from course.grading.gradebook import GradebookAt, check_gradebook, configured_gradebook, gradebook
from course.grading.lms_export import Person, Row, canvas_csv, load_identity, moodle_csv
from course.grading.report import declared_due_date, record_lateness
from course.grading.report_decide import decide_lesson
from course.grading.report_evidence import read_grade_report, read_grading_problems
from course.grading.report_model import FAIL, INCOMPLETE, PASS, StudentReport, course_paths
from course.grading.report_render import histogram_svg
from course.grading.rubric import Rubric, format_points
from course.grading.semester_policy import Mark, Policy, load_policy, standing
from course.lesson.discover import discover_lessons

MISSING, UNGRADED = "MISSING", "UNGRADED"  # no submission in a counted lesson; a lesson nobody has submitted yet


@dataclass(frozen=True)
class Lesson:
    """One graded lesson of the course: its rubric and decided submissions, or nothing yet."""

    name: str
    rubric: Rubric | None  # None while the gradebook has no such assignment
    students: tuple[StudentReport, ...]
    flags: dict[str, tuple[str, ...]]  # student → vetoes and what grading found wrong
    due: DueDate | None = None  # the declared due date as the report wrote it to the gradebook

    @property
    def counted(self) -> bool:
        """Whether anyone's submission is graded, so the lesson counts in the semester."""
        return bool(self.students)

    def mark(self, student: str) -> Mark:
        """The student's result in this lesson (a Mark with no result when they submitted nothing)."""
        found = next((s for s in self.students if s.submission.student == student), None)
        if found is None:
            return Mark(None, self.rubric.total, None)
        late = found.submission.late
        return Mark(
            found.submission.total,
            self.rubric.total,
            found.result,
            late.reason(found.submission.late_policy) if late else "",
        )


@dataclass(frozen=True)
class SemesterReport:
    """What `make_semester_report` wrote and decided."""

    csv: Path
    html: Path
    canvas: Path
    moodle: Path
    lessons: tuple[Lesson, ...]
    rows: tuple[Row, ...]
    unknown: tuple[str, ...]  # gradebook assignments that are no lesson of this course
    changes: tuple[str, ...] = ()  # what it changed in the gradebook: due dates, late penalties


def make_semester_report(course_root: Path, *, out_dir: Path | None = None) -> SemesterReport:
    """Decide every lesson, total each student under the policy, write the four files."""
    root = Path(course_root)
    config = load_config(root)
    known = [f.stem for f in discover_lessons(root / config.lessons_dir) if f.checks is not None]
    policy = load_policy(root, config, known)
    identity = load_identity(root, config, known)
    where = configured_gradebook(root / config.autograder_dir)
    people, held = read_people(where)
    lessons = tuple(read_lesson(root, name) if name in held else Lesson(name, None, (), {}) for name in known)
    rows = tuple(
        (person, marks, standing(policy, marks))
        for person in people
        for marks in [{lesson.name: lesson.mark(person.id) for lesson in lessons if lesson.counted}]
    )
    points = {lesson.name: lesson.rubric.total for lesson in lessons if lesson.counted}
    unknown = tuple(sorted(set(held) - set(known)))
    from course.grading.item_render import analyse_or_why, semester_section

    items = semester_section(
        [(lesson.name, *analyse_or_why(root, lesson.name)) for lesson in lessons if lesson.counted]
    )
    texts = {
        "semester.csv": render_csv(lessons, rows),
        "semester.html": render_html(lessons, rows, policy, unknown, items),
        "canvas.csv": canvas_csv(identity, points, list(rows), policy.missing, where),
        "moodle.csv": moodle_csv(identity, points, list(rows), policy.missing, where),
    }
    changes = [
        change
        for lesson in lessons
        if lesson.counted
        for change in record_lateness(where.url, lesson.name, lesson.due, lesson.students)
    ]
    out = Path(out_dir) if out_dir else root / config.autograder_dir / "reports"
    paths = [write_atomic(out / name, text) for name, text in texts.items()]
    return SemesterReport(*paths, lessons, rows, unknown, tuple(changes))


def read_people(where: GradebookAt) -> tuple[list[Person], list[str]]:
    """nbgrader's students (sorted by id) and the assignments its gradebook holds."""
    check_gradebook(
        where,
        "nothing is graded there yet: release and grade a lesson first "
        "(`nbgrader generate_assignment lessonNN`, then `course grade lessonNN`), or set db_url "
        "to the gradebook that holds the grades",
    )
    with gradebook(where.url) as gb:
        people = [
            Person(s.id, s.first_name, s.last_name, s.email, s.lms_user_id)
            for s in sorted(gb.students, key=lambda s: s.id)
        ]
        return people, [a.name for a in gb.assignments]


def read_lesson(root: Path, name: str) -> Lesson:
    """One lesson decided as its own report decides it, with each student's flags."""
    paths = course_paths(root, name)
    due = declared_due_date(paths.gradebook, name)
    rubric, students = decide_lesson(paths)
    problems = read_grading_problems(read_grade_report(paths.grade_report, rubric), rubric)
    flags = {
        s.submission.student: (
            *(f"一票否决 {v.veto}（{v.question}）" for v in s.vetoes),
            *problems.get(s.submission.student, ()),
            *([s.submission.late.reason(s.submission.late_policy)] if s.submission.late else []),
        )
        for s in students
    }
    return Lesson(name, rubric, students, flags, due)


def cell(lesson: Lesson, marks: dict[str, Mark]) -> tuple[str, str]:
    """A lesson's score and result as the semester's tables show them."""
    if not lesson.counted:
        return "", UNGRADED
    mark = marks[lesson.name]
    return ("", MISSING) if mark.result is None else (format_points(mark.score), mark.result)


def render_csv(lessons: tuple[Lesson, ...], rows: tuple[Row, ...]) -> str:
    """student, per lesson its score, result and flags, then the weighted total, the result and why."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    columns = [f"{lesson.name}{suffix}" for lesson in lessons for suffix in ("", "_result", "_flags")]
    writer.writerow(["student", *columns, "total_percent", "result", "reasons"])
    for person, marks, semester in rows:
        values = []
        for lesson in lessons:
            values += [*cell(lesson, marks), " | ".join(lesson.flags.get(person.id, ()))]
        writer.writerow(
            [
                person.id,
                *values,
                "" if semester.percent is None else f"{semester.percent:.2f}",
                semester.result,
                " | ".join(semester.reasons),
            ]
        )
    return out.getvalue()


def render_html(
    lessons: tuple[Lesson, ...],
    rows: tuple[Row, ...],
    policy: Policy,
    unknown: tuple[str, ...],
    item_analysis: str = "",
) -> str:
    """A self-contained page: the policy, one table of every student × lesson, one histogram per lesson, and
    ITEM_ANALYSIS (course.grading.item_render.semester_section) at its end."""
    template = resources.files("course.grading").joinpath("templates", "semester.html").read_text("utf-8")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["points"] = format_points
    totals = {
        lesson.name: [s.submission.total for s in lesson.students if not s.submission.pending()]
        for lesson in lessons
        if lesson.counted
    }  # as each lesson's report plots them
    histograms = {
        lesson.name: Markup(
            histogram_svg(
                totals[lesson.name], lesson.rubric.total, lesson.rubric.pass_line, title_id=f"hist-{lesson.name}"
            )
        )
        for lesson in lessons
        if lesson.counted
    }
    counts = {r: sum(semester.result == r for _, _, semester in rows) for r in (PASS, FAIL, INCOMPLETE)}
    return env.from_string(template).render(
        lessons=lessons,
        rows=[
            (person, {lesson.name: cell(lesson, marks) for lesson in lessons}, semester)
            for person, marks, semester in rows
        ],
        policy=policy,
        unknown=unknown,
        histograms=histograms,
        counts=counts,
        weights=policy.weights,
        graded={name: len(t) for name, t in totals.items()},
        item_analysis=Markup(item_analysis),
    )
