"""Projects for the demo's tests: what the demo needs of the project, and a real class graded in its course root."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.assignment.make_submissions import OUT, ROOT
from tests.classes import submit


def demo_project(tmp_path: Path) -> Path:
    """What the demo needs of the project: lessons, solutions, assets, the course's rubrics and config, demo classes;
    and the build's cell outputs (the execution cache, keyed by the cells' content: the source notebook's outputs are
    read from it instead of running the lesson again in a kernel)."""
    from course.workflows.draw_figures import ensure_figures

    ensure_figures(ROOT)
    for folder in ("lessons", "solutions", "assets", "autograder/rubrics", "demo/classes", ".course-cache/exec"):
        if (ROOT / folder).is_dir():
            shutil.copytree(ROOT / folder, tmp_path / folder)
    for file in ("pyproject.toml", "autograder/nbgrader_config.py", ".course-cache/figures.json"):
        (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / file, tmp_path / file)
    return tmp_path


def grade_class(project: Path, notebooks: dict[str, Path], scores: dict[str, dict[str, float]]) -> Path:
    """Release lesson05 in the project's course root, hand in NOTEBOOKS (student → notebook), grade them with
    `course grade` and enter SCORES (student → question → points) with a comment, as formgrader saves them."""
    from course.assignment.make_source import write_assignment_sources
    from course.grading.gradebook import configured_gradebook, gradebook
    from course.site.plan import make_plan
    from course.workflows.grade import grade_assignment, release

    course = project / "autograder"
    write_assignment_sources(make_plan(project), None)
    release(course, "lesson05")
    for student, notebook in notebooks.items():
        submit(course, student, notebook)
    grade_assignment(course, "lesson05")
    with gradebook(configured_gradebook(course).url) as gb:
        for student, points in scores.items():
            for question, value in points.items():
                grade = gb.find_grade(f"answer-{question}", "lesson05", "lesson05", student)
                grade.manual_score, grade.needs_manual_grade = value, False
                comment = gb.find_comment(f"answer-{question}", "lesson05", "lesson05", student)
                comment.manual_comment = f"{student} {question}: 评分者的评语"
        gb.db.commit()
    return course


def full_marks() -> Path:
    """A committed sample submission that passes every code item."""
    return OUT / "reference.ipynb"


def student_state(url: str, student: str) -> dict:
    """Everything the gradebook holds for one student: fields, and per cell the scores, flags and comments."""
    from course.grading.gradebook import gradebook

    with gradebook(url) as gb:
        s = gb.find_student(student)
        state = {"student": (s.first_name, s.last_name, s.email, s.lms_user_id)}
        for sub in s.submissions:
            for nb in sub.notebooks:
                state[nb.name] = (sub.timestamp, nb.flagged, nb.late_submission_penalty)
                for g in nb.grades:
                    state[g.name] = (g.auto_score, g.manual_score, g.extra_credit, g.needs_manual_grade)
                for c in nb.comments:
                    state[f"comment {c.name}"] = c.manual_comment
        return state
