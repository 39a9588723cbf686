"""`course check lesson05.ipynb`: a student's own check before submitting — visible checks only, per item.

The student's code runs in a separate Python process (not sandboxed: it is their own machine and code) and
the visible checks of each rubric code item are compared here, exactly as `course grade` will, minus the
hidden checks, which only grading runs.
"""

from __future__ import annotations

import json
from pathlib import Path

from course.errors import CourseError, Location
from course.grading.recheck import ItemVerdict, recheck_submission


def notebook_lesson(path: Path) -> str:
    """Which lesson a notebook belongs to: its course metadata, else its file name."""
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except FileNotFoundError:
        raise CourseError("file not found", Location(path)) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CourseError(f"not a readable notebook ({exc})", Location(path)) from None
    course = data.get("metadata", {}).get("course", {}) if isinstance(data, dict) else {}
    return course.get("lesson") if isinstance(course, dict) and course.get("lesson") else Path(path).stem


def check_notebook(path: Path, *, course_root: Path) -> list[tuple[str, ItemVerdict]]:
    """(item title, verdict on its visible checks) for every rubric code item of the notebook's lesson."""
    from course.grading.load_checks import checks_path, course_checks_path
    from course.grading.rubric import load_rubric, rubric_path

    lesson = notebook_lesson(path)
    places = (course_checks_path(course_root, lesson), checks_path(Path(course_root).resolve().parent, lesson))
    if not any(p.is_file() for p in places):
        raise CourseError(f"no graded exercise for {lesson}; expected a lesson notebook such as lessonNN.ipynb of a "
                          f"lesson with checks", Location(path))
    rubric = load_rubric(rubric_path(course_root, lesson))
    verdicts = recheck_submission(Path(path), rubric, hidden=False, unsafe=True)
    return [(item.title, verdicts[item.id]) for item in rubric.code_items]
