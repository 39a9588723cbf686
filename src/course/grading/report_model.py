"""What a lesson's report is made of: each submission's rubric items as nbgrader stores them, the decision for each
student, the hints beside it, and the files one lesson's report reads and writes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from course.config import load_config
from course.grading.gradebook import GradebookAt, configured_gradebook
from course.grading.late_total import Late
from course.grading.rubric import rubric_path
from course.grading.vetoes import VetoRecord, veto_path
from course.hints.find import VetoHint

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
        return sorted(
            {h.veto_id for h in self.text.get(student, ())}
            | {h.veto_id for h in self.code.get(student, ()) if h.veto_id}
        )


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


def course_paths(
    course_root: Path, assignment: str, out_dir: Path | None = None, *, autograder: Path | None = None
) -> CoursePaths:
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
