"""`course check lesson05.ipynb`: a student's own check before submitting — what grading would take otherwise than
the student expects (a wrong file name, not the assignment notebook, locked cells changed or deleted, questions left
empty), each with its fix, then the visible checks, per item.

The student's code runs in the same bubblewrap sandbox as grading (a notebook that reads the course's files or
patches the checker gets no further here than at grading), in a separate process, and the visible checks of each
rubric code item are compared here, exactly as `course grade` will, minus the hidden checks, which only grading
runs. Without bubblewrap it refuses and says what to do; it runs unsandboxed only when asked (--unsafe). The
rubrics and checks come from the course's nbgrader folder, found from any folder: the one named, else an
`autograder/` in the current folder or one above it (or the course root itself), else the checkout the course
package is installed from.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from course.assignment.preflight import Problem
from course.errors import CourseError, Location, NoProject, ToolMissing
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


def find_course_root(lesson: str, given: Path | None, notebook: Path) -> Path:
    """The nbgrader course root to check against: GIVEN, else the nearest one holding LESSON's rubric (else any
    course root) from the current folder or the notebook's up, then the checkout this package is installed from."""
    from course.config import load_config
    from course.grading.rubric import rubric_path

    if given is not None:
        if not (Path(given) / "rubrics").is_dir():
            raise CourseError(
                f"expected the course's nbgrader folder (the course repository's autograder/, with "
                f"{rubric_path(Path('.'), lesson)}); {given} is not one",
                Location(given),
            )
        return given
    starts = [Path.cwd().resolve(), Path(notebook).resolve().parent]
    checkout = Path(__file__).resolve().parents[3]  # src/course/workflows/ → the course repository (editable install)
    roots = [
        root
        for folder in [*(p for start in starts for p in (start, *start.parents)), checkout]
        for root in (folder, folder / load_config(folder).autograder_dir)
    ]
    found = next((r for r in roots if rubric_path(r, lesson).is_file()), None) or next(
        (r for r in roots if (r / "rubrics").is_dir()), None
    )
    if found is None:
        raise CourseError(
            f"course check needs the course's nbgrader folder (the course repository's autograder/, "
            f"with {rubric_path(Path('.'), lesson)}); none found here, in any folder above, or beside "
            "the installed course package. Run it inside the course repository, or pass --autograder "
            "PATH/TO/autograder",
            Location(notebook),
        )
    return found


def require_sandbox(notebook: Path, _=str) -> None:
    """Refuse, saying what to do (in the course's language, through _), where bubblewrap cannot run the student's
    code here."""
    import shutil
    import sys

    from course.tools.bubblewrap import find_bwrap, probe_bwrap

    if shutil.which("bwrap") is None:
        detail = _("bubblewrap (bwrap) is not installed")
    else:
        try:
            probe_bwrap(find_bwrap(), sys.executable)
            return
        except ToolMissing as exc:
            detail = _("bubblewrap cannot build a sandbox here ({why})").format(why=exc.message.split("; ")[0])
    raise ToolMissing(
        _(
            "{detail}. course check runs your notebook's code in a sandbox, as grading does. Install "
            "bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`), or check in your own Jupyter "
            "kernel with `nbgrader validate {name}`, or run `course check --unsafe {name}` to run your "
            "code without a sandbox on purpose"
        ).format(detail=detail, name=Path(notebook).name),
        Location(notebook),
    )


@dataclass(frozen=True)
class CheckResult:
    """What `course check` found: the course it checked against, what grading would score lower than the student
    expects (each with its fix), and the visible checks of each code item (none when grading could not grade it)."""

    course_root: Path
    lesson: str
    problems: tuple[Problem, ...]
    items: tuple[tuple[str, ItemVerdict], ...]
    gradable: bool
    project: Path | None = None  # the course project around the course root, whose language the student reads

    @property
    def ok(self) -> bool:
        """Whether grading would give what the student sees: a gradable file, every visible check passing."""
        return self.gradable and not self.problems and all(v.passed for _, v in self.items)


def check_notebook(path: Path, *, course_root: Path | None = None, unsafe: bool = False) -> CheckResult:
    """Check PATH as grading would take it: the file name, the notebook, its locked and answer cells, then the
    visible checks of every rubric code item.

    COURSE_ROOT defaults to the one find_course_root finds; UNSAFE runs the code without the sandbox.
    """
    from course.config import project_of
    from course.grading.load_checks import checks_path, course_checks_path
    from course.grading.rubric import load_rubric, rubric_path
    from course.messages import translator

    lesson = notebook_lesson(path)
    course_root = find_course_root(lesson, course_root, path)
    try:
        project = project_of(course_root)
    except NoProject:  # a course root standing alone: its own copies of the checks, the default language
        project = None
    _ = translator(project)  # the course's language, from its project's settings

    def graded(candidate: str) -> bool:
        return course_checks_path(course_root, candidate).is_file() or (
            project is not None and checks_path(project, candidate).is_file()
        )

    named = re.fullmatch(r"(lesson\d+)\.ipynb", Path(path).name)  # handed in as that lesson's, whatever it holds
    if not graded(lesson) and named and graded(named[1]):
        lesson = named[1]
    if not graded(lesson):
        raise CourseError(
            _(
                "no graded exercise for {lesson}; expected a lesson notebook such as lessonNN.ipynb of "
                "a lesson with checks"
            ).format(lesson=lesson),
            Location(path),
        )
    rubric = load_rubric(rubric_path(course_root, lesson))
    problems, gradable = handed_in_problems(Path(path), lesson, course_root, rubric, _)
    if not gradable:
        return CheckResult(Path(course_root), lesson, problems, (), False, project)
    if not unsafe:
        require_sandbox(path, _)
    verdicts = recheck_submission(Path(path), rubric, hidden=False, unsafe=unsafe)
    return CheckResult(
        Path(course_root),
        lesson,
        problems,
        tuple((item.title, verdicts[item.id]) for item in rubric.code_items),
        True,
        project,
    )


def handed_in_problems(path: Path, lesson: str, course_root: Path, rubric, _=str) -> tuple[tuple[Problem, ...], bool]:
    """What grading would do with PATH that the student does not expect (harmless repairs left out), and whether
    it could grade the file at all: the checks grading's preflight makes, plus the file's name and empty answers
    (these in the course's language, through _)."""
    import nbformat

    from course.assignment.make_source import released_notebook, source_notebook
    from course.assignment.preflight import preflight_file
    from course.assignment.versions import released_texts
    from course.grading.cells import match_cells, nbgrader_meta
    from course.grading.rubric import question_grade_id
    from course.lesson.notebook_names import assignment_notebook

    name = assignment_notebook(lesson)
    problems = []
    other = re.fullmatch(r"(lesson\d+)\.ipynb", path.name)
    if other and other[1] != lesson:
        problems.append(
            Problem(
                Location(path.name),
                _(
                    "this is {lesson}'s notebook, named as {other}'s: handed in for {other} it is not graded (scored 0)"
                ).format(lesson=lesson, other=other[1]),
                _("hand in {other}'s own assignment as {file}, and this one as {name}").format(
                    other=other[1], file=path.name, name=name
                ),
            )
        )
    elif path.name != name:
        problems.append(
            Problem(
                Location(path.name),
                _(
                    "grading takes only {name}: this file would not be graded (scored 0 until it is "
                    "handed in under that name)"
                ).format(name=name),
                _("hand it in named {name} (rename it, or save it as {name})").format(name=name),
            )
        )
    given = next(
        (p for p in (source_notebook(course_root, lesson), released_notebook(course_root, lesson)) if p.is_file()), None
    )
    source_cells = nbformat.read(given, as_version=4).cells if given else []
    released = released_texts(course_root, lesson) if given else []
    checked = preflight_file(path, lesson, source_cells, where=Location(path.name), released=released)
    problems += [p for p in checked.problems if not p.harmless]
    if checked.notebook is None:
        return tuple(problems), False
    cells = nbformat.read(path, as_version=4).cells
    match = match_cells(cells, source_cells, released)
    blank = {nbgrader_meta(c).get("grade_id"): c.source.strip() for c in source_cells}
    for question in rubric.questions:
        grade_id = question_grade_id(question.id)
        if grade_id in match.index and cells[match.index[grade_id]].source.strip() in ("", blank.get(grade_id)):
            problems.append(
                Problem(
                    Location(path.name, cell=grade_id),
                    _("{question} is not answered: an empty answer scores 0").format(question=question.id),
                    _("write your answer in the cell under ### {question}").format(question=question.id),
                )
            )
    return tuple(problems), True
