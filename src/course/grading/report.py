"""`course report`: from graders' marks in nbgrader's gradebook, the rubric and the veto records to a
final, explained grade per student (autograder/reports/lessonNN.csv and .html).

Result rules: a submission grading could not take (mis-named, not the assignment notebook, damaged) → INCOMPLETE
with the reason; any veto → FAIL whatever the points; any item still waiting for a grader → INCOMPLETE;
otherwise the total against the rubric's pass line. Scores are nbgrader's own (Grade.score,
SubmittedAssignment.score), never recomputed; a late submission loses what the late policy takes off the lesson's
whole total (course.grading.late_total), which the report writes back to the gradebook with the declared due date,
so a changed due date, extension or policy counts without regrading. Veto hints come from the answers' sentences
and from the code: the mistakes the re-check diagnosed (reports/<lesson>-grade.json, written by every autograde
run) with their evidence; the same file says what grading found wrong with a submission (a damaged file, edited
cells). Hints are never decisions; a grader confirms one with `course report lesson05 --veto STUDENT ITEM VETO --note …`.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

import jinja2
import nbformat
from markupsafe import Markup
from nbgrader.api import Gradebook, MissingEntry

from course.config import load_config
from course.errors import CourseError, Location
from course.fileio import write_atomic
from course.grading.deadlines import DueDate, apply_due_date
from course.grading.gradebook import GradebookAt, check_gradebook, configured_gradebook, gradebook, nbgrader_config
from course.grading.late_policy import policy_in_words
from course.grading.late_total import Late, late_plugin, lesson_late, record_penalties
from course.grading.rubric import (Rubric, code_grade_id, format_points, load_rubric, question_grade_id, render_text,
                                   rubric_path)
from course.hints.find import VetoHint, find_veto_hints
from course.hints.vocabulary import Vocabulary, lesson_vocabulary
from course.grading.vetoes import VetoRecord, add_veto, load_vetoes, veto_path
from course.lesson.validate import display_path

PASS, FAIL, INCOMPLETE = "PASS", "FAIL", "INCOMPLETE"


@dataclass(frozen=True)
class ItemScore:
    """One rubric item of one submission, as nbgrader stores it."""

    grade_id: str
    item_id: str
    title: str
    max_score: float
    score: float | None  # None while nbgrader says it needs a manual grade
    extra_credit: float | None
    comment: str | None

    @property
    def points(self) -> float | None:
        """The grader's (or autograder's) points without extra credit: what 满分 and the pass line are judged on."""
        return None if self.score is None else self.score - (self.extra_credit or 0)


@dataclass(frozen=True)
class Submission:
    """One student's graded submission: rubric items in rubric order and its total: nbgrader's score less the late
    penalty once the total is final (while items wait for a grader, the penalty is provisional and not taken)."""

    student: str
    code: tuple[ItemScore, ...]
    questions: tuple[ItemScore, ...]
    total: float
    answers: dict[str, str] | None  # question id → answer text, None without an autograded notebook
    late: Late | None = None
    late_policy: str = ""  # the course's late policy in words, for the reasons

    def pending(self) -> tuple[ItemScore, ...]:
        """Items nbgrader still marks as needing a grader."""
        return tuple(i for i in self.code + self.questions if i.score is None)

    @property
    def extra(self) -> float:
        """The extra credit graders gave, over all items (formgrader's extra credit box)."""
        return sum(i.extra_credit or 0 for i in self.code + self.questions)


@dataclass(frozen=True)
class StudentReport:
    """The decision for one student and every reason behind it."""

    submission: Submission
    vetoes: tuple[VetoRecord, ...]
    result: str
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class CodeHint:
    """A mistake the re-check recognised in one code item that is evidence of a veto item (or just a diagnosis)."""

    item: str
    title: str  # the code item's title
    diagnosis: str  # the misconception's id
    name: str
    evidence: str  # which calls, which formula the values match
    veto_id: str | None


@dataclass(frozen=True)
class Hints:
    """Student → veto hints for graders: from their answers' sentences and from their code's diagnoses."""

    text: dict[str, tuple[VetoHint, ...]]
    code: dict[str, tuple[CodeHint, ...]]

    def veto_ids(self, student: str) -> list[str]:
        """The veto ids hinted at for one student, sorted (the CSV's veto_hints column)."""
        return sorted({h.veto_id for h in self.text.get(student, ())}
                      | {h.veto_id for h in self.code.get(student, ()) if h.veto_id})


@dataclass(frozen=True)
class SimilarityInReport:
    """Evidence of copying across the class (course.similarity), as the report shows it: never a decision."""

    section_html: str  # the ranked pairs with their spans side by side
    strongest: dict[str, str]  # student → their strongest pair, as one line for the CSV


@dataclass(frozen=True)
class ReportResult:
    """What `make_report` wrote and decided."""

    csv: Path
    html: Path
    students: tuple[StudentReport, ...]
    changes: tuple[str, ...] = ()  # what it changed in the gradebook: the due date, late penalties


@dataclass(frozen=True)
class CoursePaths:
    """The files one lesson's report reads and writes."""

    rubric: Path
    vetoes: Path
    gradebook: GradebookAt  # wherever nbgrader's configured db_url puts it
    autograded: Path
    out_dir: Path
    grade_report: Path  # written by `course grade`: per student the re-check's verdicts and diagnoses


def course_paths(course_root: Path, assignment: str, out_dir: Path | None = None, *,
                 autograder: Path | None = None) -> CoursePaths:
    """Locate the rubric, veto records, gradebook and report folder under the nbgrader course root (AUTOGRADER:
    another course root than the project's, e.g. the demo course)."""
    autograder = Path(autograder or Path(course_root) / load_config(Path(course_root)).autograder_dir)
    return CoursePaths(
        rubric=rubric_path(autograder, assignment),
        vetoes=veto_path(autograder, assignment),
        gradebook=configured_gradebook(autograder),
        autograded=autograder / "autograded",
        out_dir=Path(out_dir) if out_dir else autograder / "reports",
        grade_report=autograder / "reports" / f"{assignment}-grade.json",
    )


def make_report(course_root: Path, assignment: str, *, out_dir: Path | None = None,
                similarity: SimilarityInReport | None = None, autograder: Path | None = None,
                item_analysis: str = "") -> ReportResult:
    """Read rubric, gradebook and vetoes, decide each student, write CSV and HTML (ITEM_ANALYSIS: the class's
    item analysis section the HTML ends with, course.grading.item_render.lesson_section).

    Every check runs before either file is written, and each file is replaced atomically, so bad input
    leaves earlier reports untouched.
    """
    paths = course_paths(course_root, assignment, out_dir, autograder=autograder)
    due = declared_due_date(paths.gradebook, assignment)
    rubric, students = decide_lesson(paths)
    vocabulary = lesson_vocabulary(Path(course_root) / load_config(Path(course_root)).lessons_dir, rubric.lesson)
    outcomes = read_grade_report(paths.grade_report, rubric)
    hints = Hints(text={s.submission.student: grader_hints(s.submission, vocabulary) for s in students},
                  code=read_code_hints(outcomes, rubric))
    problems = read_grading_problems(outcomes, rubric)
    csv_text = render_csv(rubric, students, hints, problems, similarity)
    html_text = render_html(rubric, students, hints, problems, read_code_errors(outcomes), similarity,
                            item_analysis)
    changes = record_lateness(paths.gradebook.url, assignment, due, students)
    csv_path = write_atomic(paths.out_dir / f"{assignment}.csv", csv_text)
    html_path = write_atomic(paths.out_dir / f"{assignment}.html", html_text)
    return ReportResult(csv_path, html_path, students, changes)


def record_lateness(db_url: str, assignment: str, due: DueDate | None,
                    students: tuple[StudentReport, ...]) -> tuple[str, ...]:
    """Write the lesson's late penalties back to the gradebook; what the report changed there (its due date too)."""
    penalties = record_penalties(db_url, assignment, {s.submission.student: s.submission.late for s in students})
    return (*([due.describe()] if due and due.before != due.due else []), *(c.describe(assignment) for c in penalties))


def declared_due_date(db: GradebookAt, lesson: str) -> DueDate | None:
    """Write the lesson's declared due date to its gradebook, so lateness counts from a date changed since grading
    (the gradebook checked first, never created)."""
    _check_graded(db, lesson)
    return apply_due_date(db.course_root, db.url, lesson)


def decide_lesson(paths: CoursePaths) -> tuple[Rubric, tuple[StudentReport, ...]]:
    """Every submission of one lesson decided by the result rules: what this report and the semester's both show."""
    rubric = load_rubric(paths.rubric)
    submissions = read_gradebook(paths.gradebook, rubric, paths.autograded)
    vetoes = load_vetoes(paths.vetoes, rubric, {s.student for s in submissions})
    outcomes = read_grade_report(paths.grade_report, rubric)
    return rubric, tuple(decide(rubric, s, tuple(v for v in vetoes if v.student == s.student),
                                ungradable=outcomes.get(s.student, {}).get("ungradable") or None)
                         for s in submissions)


def record_veto(course_root: Path, assignment: str, *, student: str, question: str, veto: str,
                note: str, autograder: Path | None = None) -> VetoRecord:
    """Append one grader's veto record after checking it against the rubric and the gradebook."""
    paths = course_paths(course_root, assignment, autograder=autograder)
    rubric = load_rubric(paths.rubric)
    students = {s.student for s in read_gradebook(paths.gradebook, rubric, paths.autograded)}
    return add_veto(paths.vetoes, rubric, students, VetoRecord(student, question, veto, note))


# ---------------------------------------------------------------- reading nbgrader's gradebook


def read_gradebook(db: GradebookAt, rubric: Rubric, autograded: Path) -> tuple[Submission, ...]:
    """Every submission of the rubric's assignment with its rubric items, sorted by student id."""
    _check_graded(db, rubric.lesson)
    with gradebook(db.url) as gb:
        try:
            assignment = gb.find_assignment(rubric.lesson)
        except MissingEntry:
            held = ", ".join(a.name for a in gb.assignments) or "no assignments"
            raise CourseError(f"expected the gradebook of {rubric.lesson}, but it holds {held}",
                              db.location()) from None
        notebook_of = _check_cells(db, rubric, assignment)
        config = nbgrader_config(db.course_root)
        plugin, policy = late_plugin(config), policy_in_words(config)
        submissions = []
        for s in sorted(assignment.submissions, key=lambda s: s.student.id):
            if _handed_in(s):
                late = lesson_late(s, plugin)
                submissions.append(replace(_submission(gb, db, rubric, notebook_of, autograded, s.student.id,
                                                       s.score - (late.taken if late else 0)),
                                           late=late, late_policy=policy))
        return tuple(submissions)


def _check_graded(db: GradebookAt, lesson: str) -> None:
    """Stop unless DB is a readable gradebook, naming how a lesson gets graded."""
    check_gradebook(db, f"nothing is graded there yet: release and grade {lesson} first "
                        f"(`nbgrader generate_assignment {lesson}`, then `course grade {lesson}`), "
                        "or set db_url to the gradebook that holds the grades")


def _handed_in(submission) -> bool:
    """Whether nbgrader graded anything of it: a student given an extension before handing in has a submission
    row (where nbgrader keeps the extension) with no score yet."""
    return any(g.auto_score is not None or g.manual_score is not None or g.needs_manual_grade
               for nb in submission.notebooks for g in nb.grades)


def _check_cells(db: GradebookAt, rubric: Rubric, assignment) -> dict[str, str]:
    """The gradebook's grade cells must be exactly the rubric's, with the same points; grade id → notebook."""
    found = {c.name: (nb.name, c.max_score) for nb in assignment.notebooks for c in nb.grade_cells}
    rubric_file = rubric.path.name
    for grade_id, points in rubric.grade_ids().items():
        if grade_id not in found:
            raise CourseError(f"expected grade cell {grade_id!r} of rubrics/{rubric_file} in {rubric.lesson}; "
                              f"the gradebook has {', '.join(sorted(found)) or 'none'}", db.location())
        if not math.isclose(found[grade_id][1], points):
            raise CourseError(f"grade cell is worth {format_points(found[grade_id][1])} points in the gradebook, "
                              f"but {format_points(points)} in rubrics/{rubric_file}",
                              db.location(cell=grade_id))
    extra = sorted(set(found) - set(rubric.grade_ids()))
    if extra:
        raise CourseError(f"grade cell(s) {', '.join(extra)} are not in rubrics/{rubric_file}; expected only "
                          f"{', '.join(rubric.grade_ids())}", db.location())
    return {grade_id: nb for grade_id, (nb, _) in found.items()}


def _submission(gb: Gradebook, db: GradebookAt, rubric: Rubric, notebook_of: dict[str, str], autograded: Path,
                student: str, total: float) -> Submission:
    """One student's rubric items read from the gradebook (plus answer texts for graders' hints)."""
    def item(grade_id: str, item_id: str, title: str, with_comment: bool) -> ItemScore:
        grade = gb.find_grade(grade_id, notebook_of[grade_id], rubric.lesson, student)
        _check_range(db, student, grade_id, grade)
        comment = _comment(gb, grade_id, notebook_of[grade_id], rubric.lesson, student) if with_comment else None
        return ItemScore(grade_id, item_id, title, grade.max_score,
                         None if grade.needs_manual_grade else grade.score, grade.extra_credit, comment)

    code = tuple(item(code_grade_id(c.id), c.id, c.title, False) for c in rubric.code_items)
    questions = tuple(item(question_grade_id(q.id), q.id, q.title, True) for q in rubric.questions)
    notebooks = {notebook_of[question_grade_id(q.id)] for q in rubric.questions}
    capped = min(total, rubric.total)  # extra credit counts up to full marks (docs/graders.md)
    return Submission(student, code, questions, capped, _answers(autograded, rubric, student, notebooks))


def _check_range(db: GradebookAt, student: str, grade_id: str, grade) -> None:
    """A score outside 0..max means the gradebook and the rubric disagree; stop before deciding anything."""
    for kind, value in (("manual", grade.manual_score), ("auto", grade.auto_score)):
        if value is not None and not 0 <= value <= grade.max_score:
            raise CourseError(f"student {student}: {kind} score {format_points(value)} is outside 0 to "
                              f"{format_points(grade.max_score)}, the cell's maximum", db.location(cell=grade_id))


def _comment(gb: Gradebook, grade_id: str, notebook: str, assignment: str, student: str) -> str | None:
    """The grader's formgrader comment on an answer (answer cells are solution cells, so they have one)."""
    try:
        return gb.find_comment(grade_id, notebook, assignment, student).manual_comment or None
    except MissingEntry:
        return None


def _answers(autograded: Path, rubric: Rubric, student: str, notebooks: set[str]) -> dict[str, str] | None:
    """Question id → the student's answer text from the autograded notebook(s), None if not on disk."""
    wanted = {question_grade_id(q.id): q.id for q in rubric.questions}
    answers: dict[str, str] = {}
    for name in sorted(notebooks):
        path = autograded / student / rubric.lesson / f"{name}.ipynb"
        if not path.is_file():
            return None
        for cell in nbformat.read(path, as_version=4).cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in wanted:
                answers[wanted[grade_id]] = cell.source
    return answers


# ---------------------------------------------------------------- deciding


def decide(rubric: Rubric, submission: Submission, vetoes: tuple[VetoRecord, ...], *,
           ungradable: str | None = None) -> StudentReport:
    """Apply the result rules: a file grading could not take (UNGRADABLE: why) → INCOMPLETE, never a silent 0;
    veto → FAIL; anything ungraded → INCOMPLETE; else total vs pass line."""
    report = _decide(rubric, submission, vetoes, ungradable)
    if submission.late:
        return replace(report, reasons=(*report.reasons, submission.late.reason(submission.late_policy)))
    return report


def _decide(rubric: Rubric, submission: Submission, vetoes: tuple[VetoRecord, ...],
            ungradable: str | None) -> StudentReport:
    """The result rules on the total after any late penalty."""
    waiting = submission.pending()
    total = f"{format_points(submission.total)}/{format_points(rubric.total)}"
    if ungradable:
        return StudentReport(submission, vetoes, INCOMPLETE, (
            f"提交的文件无法评分（{ungradable}），按 0 分记入 gradebook；"
            "学生按原因改正并重新提交、重新评分之前不能判定结果",))
    if vetoes:
        reasons = [f"一票否决：{v.veto}（{v.question}）{rubric.veto(v.veto).text} 评分者记录：{v.note}" for v in vetoes]
        if waiting:
            reasons.append(f"另有 {'、'.join(_name(i) for i in waiting)} 尚未评分，但一票否决已决定结果")
        return StudentReport(submission, vetoes, FAIL, tuple(reasons))
    if waiting:
        return StudentReport(submission, vetoes, INCOMPLETE, tuple(
            f"{_name(i)} 尚未评分（nbgrader 标记为需要人工评分），评完之前不能判定通过" for i in waiting))
    extra = submission.extra
    if extra:  # judged on the points alone: extra credit raises the total, never the result
        points = sum(i.points for i in submission.code + submission.questions) - \
            (submission.late.penalty if submission.late else 0)
        shown = f"得分 {format_points(points)}/{format_points(rubric.total)} + 加分 {format_points(extra)}（总分 {total}）"
        if points >= rubric.pass_line:
            return StudentReport(submission, vetoes, PASS, (
                f"{shown}，不含加分已达通过线 {format_points(rubric.pass_line)}，没有一票否决项",))
        return StudentReport(submission, vetoes, FAIL, (
            f"{shown}，不含加分低于通过线 {format_points(rubric.pass_line)}：加分计入总分，不改变是否通过",))
    if submission.total >= rubric.pass_line:
        return StudentReport(submission, vetoes, PASS, (
            f"总分 {total} ≥ 通过线 {format_points(rubric.pass_line)}，没有一票否决项",))
    return StudentReport(submission, vetoes, FAIL, (
        f"总分 {total} 低于通过线 {format_points(rubric.pass_line)}",))


def _name(item: ItemScore) -> str:
    """How an item is named in explanations: Q2, or 代码「通信量」."""
    return item.item_id if item.grade_id.startswith("answer-") else f"代码「{item.title}」"


# ---------------------------------------------------------------- writing


def read_grade_report(grade_report: Path, rubric: Rubric) -> dict[str, dict]:
    """Student → outcome, as the autograde steps wrote reports/<lesson>-grade.json ({} before any grading run)."""
    try:
        data = json.loads(Path(grade_report).read_text("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise CourseError(f"not readable as the re-check's JSON report ({exc}); rerun `course grade {rubric.lesson}`",
                          Location(display_path(grade_report))) from None
    return {student: outcome for student, outcome in data.items() if isinstance(outcome, dict)} \
        if isinstance(data, dict) else {}


def read_code_hints(outcomes: dict[str, dict], rubric: Rubric) -> dict[str, tuple[CodeHint, ...]]:
    """Student → the diagnoses the re-check wrote for their failed code items."""
    titles = {c.id: c.title for c in rubric.code_items}
    hints = {}
    for student, outcome in outcomes.items():
        verdicts = outcome.get("verdicts", {})
        hints[student] = tuple(CodeHint(item, titles[item], d["id"], d["name"], d["evidence"], d.get("veto"))
                               for item, verdict in verdicts.items() if item in titles and not verdict.get("passed")
                               for d in verdict.get("diagnoses", ()))
    return hints


def read_grading_problems(outcomes: dict[str, dict], rubric: Rubric) -> dict[str, tuple[str, ...]]:
    """Student → why grading flagged the submission: what it found wrong with the file (why a damaged one scored
    0) and every score the re-check corrected, kernel and re-check score side by side, with the re-check's reason."""
    titles = {c.id: c.title for c in rubric.code_items}

    def corrected(change: dict) -> str:
        kernel = change.get("kernel_score")
        before = "学生进程内未得分" if kernel is None else f"学生进程内得 {format_points(kernel)} 分"
        return (f"代码「{titles.get(change.get('item'), change.get('item'))}」：{before}，课程复核改为 "
                f"{format_points(change.get('recheck_score') or 0)} 分（{change.get('reason', '')}）")

    return {student: (*(str(p) for p in outcome.get("problems", ())),
                      *(corrected(c) for c in outcome.get("changes", ()) if isinstance(c, dict)))
            for student, outcome in outcomes.items()}


def read_code_errors(outcomes: dict[str, dict]) -> dict[str, dict[str, tuple[str, ...]]]:
    """Student → code item → the exceptions the student's cells raised while the re-check defined them."""
    from course.grading.recheck import CellError

    return {student: {item: tuple(CellError(**e).describe() for e in verdict.get("errors", ()))
                      for item, verdict in outcome.get("verdicts", {}).items() if not verdict.get("passed")}
            for student, outcome in outcomes.items()}


def render_csv(rubric: Rubric, students: tuple[StudentReport, ...], hints: Hints,
               problems: dict[str, tuple[str, ...]], similarity: SimilarityInReport | None = None) -> str:
    """student, each code item, Q1..Qn, total, veto ids, veto hint ids, result, why grading flagged it, the
    strongest similar pair — one row per submission."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["student", *(c.id for c in rubric.code_items), *(q.id for q in rubric.questions),
                     "total", "vetoes", "veto_hints", "result", "flags", "similar_pair", "late_penalty", "late"])
    for s in students:
        items = s.submission.code + s.submission.questions
        writer.writerow([s.submission.student, *("" if i.score is None else format_points(i.points) for i in items),
                         format_points(s.submission.total), ";".join(sorted({v.veto for v in s.vetoes})),
                         ";".join(hints.veto_ids(s.submission.student)), s.result,
                         " | ".join(problems.get(s.submission.student, ())),
                         similarity.strongest.get(s.submission.student, "") if similarity else "",
                         format_points(s.submission.late.penalty) if s.submission.late else "",
                         s.submission.late.reason(s.submission.late_policy) if s.submission.late else ""])
    return out.getvalue()


def render_html(rubric: Rubric, students: tuple[StudentReport, ...], hints: Hints,
                problems: dict[str, tuple[str, ...]], code_errors: dict[str, dict[str, tuple[str, ...]]],
                similarity: SimilarityInReport | None = None, item_analysis: str = "") -> str:
    """A self-contained page: class summary with histogram and pass rate, then one section per student.

    PROBLEMS (student → why grading flagged the submission) explain a flag, a corrected score, or a damaged file's
    zero; CODE_ERRORS (student → item → errors) say why a code item whose cells raised failed.
    """
    template = resources.files("course.grading").joinpath("templates", "report.html").read_text("utf-8")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["points"] = format_points
    env.filters["rubric"] = lambda text: Markup(render_text(text, "html"))
    graded = [s.submission.total for s in students if not s.submission.pending()]
    counts = {r: sum(s.result == r for s in students) for r in (PASS, FAIL, INCOMPLETE)}
    return env.from_string(template).render(
        rubric=rubric, students=students, counts=counts, graded=len(graded),
        histogram=Markup(histogram_svg(graded, rubric.total, rubric.pass_line)),
        hints={s.submission.student: hints.text.get(s.submission.student, ()) for s in students},
        code_hints={s.submission.student: hints.code.get(s.submission.student, ()) for s in students},
        problems={s.submission.student: problems.get(s.submission.student, ()) for s in students},
        code_errors={s.submission.student: code_errors.get(s.submission.student, {}) for s in students},
        similarity=Markup(similarity.section_html) if similarity else "", item_analysis=Markup(item_analysis),
    )


def grader_hints(submission: Submission, vocabulary: Vocabulary | None) -> tuple[VetoHint, ...]:
    """Sentences in the answers that look like a veto item: hints for the grader, never decisions.

    The vocabulary is the lesson's own (lessons/lessonNN/veto_hints.yml); without one there are none.
    """
    if submission.answers is None:
        return ()
    return tuple(h for qid, text in sorted(submission.answers.items())
                 for h in find_veto_hints(text, vocabulary, question=qid))


def histogram_svg(totals: list[float], total: float, pass_line: float, title_id: str = "hist-title") -> str:
    """Inline SVG bar chart of totals in one-point bins, with the pass line marked (TITLE_ID: unique per page)."""
    bins = [0] * (int(total) + 1)
    for t in totals:
        bins[min(int(math.floor(t)), int(total))] += 1
    bar, gap, height, top, bottom, left = 36, 8, 160, 40, 40, 16
    tallest = max(bins + [1])
    width = left * 2 + len(bins) * (bar + gap)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{top + height + bottom}" '
             f'viewBox="0 0 {width} {top + height + bottom}" role="img" aria-labelledby="{title_id}">'
             f'<title id="{title_id}">总分分布（已完成评分 {len(totals)} 人）</title>']
    for score, count in enumerate(bins):
        x = left + score * (bar + gap)
        h = height * count / tallest
        y = top + height - h
        colour = "#2e7d32" if score >= pass_line else "#9e9e9e"
        parts.append(f'<rect class="bin" data-score="{score}" data-count="{count}" x="{x}" y="{y:.1f}" '
                     f'width="{bar}" height="{h:.1f}" fill="{colour}"/>')
        if count:
            parts.append(f'<text x="{x + bar / 2}" y="{y - 4:.1f}" text-anchor="middle" font-size="12">{count}</text>')
        parts.append(f'<text x="{x + bar / 2}" y="{top + height + 16}" text-anchor="middle" '
                     f'font-size="12">{score}</text>')
    px = left + pass_line * (bar + gap) - gap / 2
    parts.append(f'<line x1="{px}" y1="{top - 24}" x2="{px}" y2="{top + height}" stroke="#c62828" '
                 f'stroke-dasharray="4 3"/><text x="{px + 4}" y="{top - 26}" font-size="12" fill="#c62828">'
                 f'通过线 {format_points(pass_line)}</text>')
    parts.append(f'<text x="{width / 2}" y="{top + height + 34}" text-anchor="middle" font-size="12">'
                 f'总分（满分 {format_points(total)}）</text></svg>')
    return "".join(parts)
