"""`course build` → autograder/source/<lesson>/<lesson>.ipynb, the nbgrader source notebook of each assignment.

Every lesson with checks (lessons/lessonNN/checks.yml) gets one: the student variant of the lesson (reusing
the lesson notebook builder) with each graded exercise turned into graded cells: read-only check helpers
(once, before the first exercise), the autograded answer cell (solution regions with per-region stubs), one
locked test cell per rubric code item of that exercise, and under each question of the rubric a read-only
prompt and an empty, manually graded answer cell. It is generated, never edited by hand, and only after the
checks prove themselves: the reference solutions pass every item, the bare exercises none, and no known wrong
answer matches a solution. All lessons' notebooks are made before any is written, so bad input leaves
autograder/source/ as it was.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from course.errors import CourseError, Location
from course.fileio import replace_dir_atomically, write_atomic
from course.grading.checks import AssignmentSpec
from course.lesson.model import Lesson
from course.lesson.notebook_names import assignment_notebook
from course.lesson.variants import STUDENT
from course.site.plan import BuildPlan

SOURCE_DIR = "source"
RUBRICS_DIR = "rubrics"  # autograder/rubrics/, read by course.grading.rubric
STAMPS = "assignment-sources.stamp"
HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
ANSWER_HINT = "*在下面的单元格中作答（双击进入编辑）。*"


def write_assignment_sources(plan: BuildPlan, parsed: list[Lesson] | None) -> list[Path]:
    """Write the source notebook of every lesson with checks; with PARSED None, only the missing or stale."""
    from course.lesson.discover import discover_lessons

    course_root = plan.root / plan.config.autograder_dir
    graded = graded_lessons(plan.root / plan.config.lessons_dir, course_root)
    stamp = source_stamp(plan)
    stamps = plan.cache_dir / STAMPS
    if parsed is None:
        from course.grading.load_checks import course_checks_path

        made = [p for s in graded for p in (source_notebook(course_root, s), course_checks_path(course_root, s))]
        if _read_stamp(stamps) == stamp and all(p.exists() for p in made):
            return []
        from course.lesson.parse_qmd import parse_lesson

        parsed = [
            parse_lesson(f.qmd) for f in discover_lessons(plan.root / plan.config.lessons_dir) if f.stem in graded
        ]
    made = [
        make_assignment_source(lesson, project_root=plan.root, course_root=course_root)
        for lesson in parsed
        if lesson.stem in graded
    ]
    written = [write_source(course_root, source) for source in made]
    write_atomic(stamps, stamp)
    return written


def graded_lessons(lessons_dir: Path, course_root: Path) -> list[str]:
    """Lessons with checks; each must have a rubric, and a rubric needs its lesson's checks."""
    from course.grading.rubric import rubric_path
    from course.lesson.discover import discover_lessons

    graded = [f.stem for f in discover_lessons(lessons_dir) if f.checks is not None]
    for stem in graded:
        if not rubric_path(course_root, stem).is_file():
            raise CourseError(
                f"{stem} has checks but no rubric: expected autograder/rubrics/{stem}.yml with its "
                f"code items, questions and pass line",
                Location(f"{stem}/checks.yml"),
            )
    rubrics = Path(course_root) / RUBRICS_DIR
    for rubric in sorted(rubrics.glob("lesson*.yml")) if rubrics.is_dir() else ():
        if rubric.stem not in graded:
            raise CourseError(
                f"a rubric without checks: expected {Path(lessons_dir).name}/{rubric.stem}/checks.yml "
                f"with the checks of its code items (and {rubric.stem}.qmd)",
                Location(f"rubrics/{rubric.name}"),
            )
    return graded


def source_notebook(course_root: Path, lesson: str) -> Path:
    """Where nbgrader expects the source notebook: source/<assignment>/<assignment>.ipynb."""
    return Path(course_root) / SOURCE_DIR / lesson / f"{lesson}.ipynb"


def released_notebook(course_root: Path, lesson: str) -> Path:
    """Where nbgrader's generate_assignment puts the student's copy: release/<assignment>/<assignment>.ipynb."""
    return Path(course_root) / "release" / lesson / f"{lesson}.ipynb"


def source_stamp(plan: BuildPlan) -> str:
    """Hash of what the source notebooks derive from: the build inputs, the course package and the rubrics."""
    from course.site.fingerprint import source_fingerprint

    h = hashlib.sha256(source_fingerprint(plan, ["assignment"]).encode())
    rubrics = plan.root / plan.config.autograder_dir / RUBRICS_DIR
    for path in sorted(rubrics.rglob("*")) if rubrics.is_dir() else ():
        if path.is_file():
            h.update(f"{path.relative_to(rubrics)}\0".encode() + path.read_bytes())
    return h.hexdigest()


def _read_stamp(path: Path) -> str | None:
    """The stamp of the last written sources (kept in the build cache, not in anything students get)."""
    try:
        return path.read_text("utf-8")
    except OSError:
        return None


@dataclass(frozen=True)
class AssignmentSource:
    """One lesson's generated source folder, not yet on disk."""

    lesson: str
    notebook: str  # nbformat JSON
    images: tuple[str, ...]  # project-relative paths the notebook shows
    project_root: Path
    checks: str  # the checks.yml the notebook was made with, kept in the course root for grading


def write_assignment_source(lesson: Lesson, *, project_root: Path, course_root: Path, rubric=None) -> Path:
    """Generate one lesson's source folder (notebook plus the images it shows), replacing the old one whole."""
    made = make_assignment_source(lesson, project_root=project_root, course_root=course_root, rubric=rubric)
    return write_source(course_root, made)


def make_assignment_source(
    lesson: Lesson, *, project_root: Path, course_root: Path, rubric=None, spec: AssignmentSpec | None = None
) -> AssignmentSource:
    """The source notebook of one lesson, its checks validated and proved against the solution."""
    import nbformat

    from course.grading.load_checks import checks_path, load_checks
    from course.grading.rubric import load_rubric, rubric_path
    from course.site.resolve_resources import resolve_resources
    from course.site.select_variant import select_variant

    spec = spec or load_checks(checks_path(project_root, lesson.stem))
    checks_text = Path(spec.source.path).read_text("utf-8")
    rubric = rubric or load_rubric(rubric_path(course_root, lesson.stem))
    view, images = resolve_resources(select_variant(lesson, STUDENT), project_root)
    nb = source_notebook_node(lesson, view, spec, rubric, outputs=lambda: _student_outputs(view, project_root))
    return AssignmentSource(
        lesson.stem, nbformat.writes(nb), tuple(str(i.project_path) for i in images), Path(project_root), checks_text
    )


def write_source(course_root: Path, made: AssignmentSource) -> Path:
    """Put one generated source folder in place atomically, and beside it (never in it: nbgrader releases the
    source folder) the checks `course grade` compares with, so the course root alone can grade."""
    from course.grading.load_checks import course_checks_path

    write_atomic(course_checks_path(course_root, made.lesson), made.checks)
    target = source_notebook(course_root, made.lesson)
    with replace_dir_atomically(target.parent) as staging:
        for image in made.images:
            (staging / image).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(made.project_root / image, staging / image)
        write_atomic(staging / target.name, made.notebook)
    return target


def _student_outputs(view: Lesson, project_root: Path) -> dict:
    """The student variant's cell outputs (the build's execution cache has them once the site is built)."""
    from course.config import load_config
    from course.site.execute_cells import execute_cells

    config = load_config(project_root)
    return execute_cells(
        view, cache_dir=Path(project_root) / config.cache_dir, kernel=config.kernel, timeout=config.cell_timeout
    )


def source_notebook_node(
    lesson: Lesson, view: Lesson, spec: AssignmentSpec, rubric, *, outputs: dict | Callable[[], dict] | None = None
):
    """The lesson notebook of VIEW with the exercises and the questions turned into nbgrader cells.

    OUTPUTS (the student variant's executed cells, or what executes them: called once the checks are proved, so
    bad checks stop the build before a kernel starts) supply what display-only cells show; they become markdown,
    so grading runs nothing but the student's work.
    """
    import nbformat

    from course.grading.load_checks import check_against_lesson, check_against_rubric
    from course.grading.rubric import check_questions, question_grade_id
    from course.site.make_notebook import make_notebook
    from course.site.unlink_self import unlink_self

    check_questions(lesson, rubric)
    check_against_rubric(spec, rubric)
    pairs = check_against_lesson(spec, lesson)
    prove(lesson, pairs, spec, rubric)
    nb = make_notebook(view, (outputs() if callable(outputs) else outputs) or {}, freeze_hidden_code=True)
    unlink_self(nb, assignment_notebook(lesson.stem))  # the release is that very file
    cells, helpers = [intro_cell(lesson, rubric)], True
    for cell in nb.cells:
        label = cell.metadata.get("course", {}).get("label") if cell.cell_type == "code" else None
        if label in pairs:
            cells += exercise_cells(lesson, pairs[label], spec, rubric, helpers=helpers)
            helpers = False
        elif cell.cell_type == "markdown":
            cells += question_cells(cell.source, rubric.questions)
        else:
            cells.append(cell)
    ids = [cell.metadata.get("nbgrader", {}).get("grade_id") for cell in cells]
    expected = {
        **{label: label for label in pairs},
        **{question_grade_id(q.id): f"### {q.id}" for q in rubric.questions},
    }
    missing = [shown for grade_id, shown in expected.items() if ids.count(grade_id) != 1]
    if missing:
        raise CourseError(
            f"expected the student variant to show each graded exercise cell and one heading per "
            f"rubric question exactly once; not found once: {', '.join(missing)} (a question's heading "
            f"is its rubric id, alone or followed by a title: `### Q1` or `### Q1：…`)",
            Location(lesson.path),
        )
    check_questions_ask(rubric, cells, lesson.path)
    for i, cell in enumerate(cells):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        cell.id = grade_id or f"{lesson.stem}-{i:03d}"
    nb.cells = cells
    nbformat.validate(nb)
    return nb


def prove(lesson: Lesson, pairs: dict, spec: AssignmentSpec, rubric) -> None:
    """The reference solutions must pass every code item and the exercises as released fail every one.

    The solutions must also show none of the known wrong answers: a misconception that a right answer
    matches would blame students for being right.
    """
    from course.grading.recheck import recheck_code, run_calls

    for role, should_pass in (("solution", True), ("exercise", False)):
        verdicts = recheck_code([getattr(p, role).source for p in pairs.values()], rubric, spec=spec, unsafe=True)
        wrong = [item for item, v in verdicts.items() if v.passed != should_pass]
        if wrong:
            cell = getattr(pairs[spec.items[wrong[0]].exercise], role)
            expected = "pass every check" if should_pass else "fail every check while its blanks are empty"
            reasons = "; ".join(f"{item}: {verdicts[item].reason}" for item in wrong)
            raise CourseError(
                f"expected the {cell.role} to {expected}; it does not: {reasons}",
                Location(lesson.path, cell.line, cell.label),
            )
    calls = [c for m in spec.misconceptions for check in m.checks for c in check.calls]
    results = run_calls([p.solution.source for p in pairs.values()], list(dict.fromkeys(calls)), unsafe=True)
    for n, wrong in enumerate(spec.misconceptions):
        if not isinstance(results, str) and wrong.holds(results):
            raise spec.source.error(
                ("misconceptions", n, "when"),
                f"the reference solution matches this known wrong "
                f"answer ({wrong.id}); expected checks only a wrong answer satisfies",
            )


def nbgrader_cell(kind: str, source: str, grade_id: str, *, grade=False, solution=False, locked=False, points=None):
    """A cell with nbgrader's metadata, as nbgrader's own cell toolbar writes it."""
    import nbformat

    meta = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": 3,
        "solution": solution,
        "task": False,
    }
    if grade:
        meta["points"] = points
    make = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
    return make(source, metadata={"nbgrader": meta})


def intro_cell(lesson: Lesson, rubric):
    """The notebook's first cell: the lesson's title and what to do, so a student who opens it knows where to start."""
    import nbformat

    from course.assignment.intro import intro_markdown

    return nbformat.v4.new_markdown_cell(intro_markdown(lesson, rubric))


def exercise_cells(lesson: Lesson, pair, spec: AssignmentSpec, rubric, *, helpers: bool = True) -> list:
    """The answer cell, the check helpers (read-only, its source collapsed, with the first exercise, just before the
    first test cell that uses them), then one locked test cell per code item."""
    from course.assignment.answer_cell import answer_cell
    from course.assignment.test_cells import HELPERS_ID, HELPERS_SOURCE, test_cell_source
    from course.grading.rubric import code_grade_id

    answer = answer_cell(lesson, pair)
    label = pair.exercise.label
    cell = nbgrader_cell("code", answer.source, label, solution=True)
    cell.metadata["course"] = {"stubs": list(answer.stubs)}
    items = rubric.code_items
    tests = [
        nbgrader_cell(
            "code",
            test_cell_source(item, spec.items[item.id].checks, n, len(items)),
            code_grade_id(item.id),
            grade=True,
            locked=True,
            points=item.points,
        )
        for n, item in enumerate(items, start=1)
        if spec.items[item.id].exercise == label
    ]
    shared = [nbgrader_cell("code", HELPERS_SOURCE, HELPERS_ID, locked=True)] if helpers else []
    for helper in shared:  # JupyterLab and JupyterLite show the cell with its source hidden (a click shows it)
        helper.metadata["jupyter"] = {"source_hidden": True}
    return [cell, *shared, *tests]


def question_cells(text: str, questions) -> list:
    """Split markdown at each question's heading: a read-only prompt, then an empty graded answer cell."""
    import nbformat

    from course.grading.rubric import question_grade_id

    headings = _headings(text)
    cells, start = [], 0
    for n, (pos, level, title) in enumerate(headings):
        q = next((q for q in questions if question_heading(q.id).match(title)), None)
        if q is None:
            continue
        end = next((p for p, lv, _ in headings[n + 1 :] if lv <= level), len(text))
        if text[start:pos].strip():
            cells.append(nbformat.v4.new_markdown_cell(text[start:pos].strip()))
        prompt = f"{text[pos:end].strip()}\n\n{ANSWER_HINT}"
        cells.append(nbgrader_cell("markdown", prompt, f"question-{q.id}", locked=True))
        cells.append(nbgrader_cell("markdown", "", question_grade_id(q.id), grade=True, solution=True, points=q.points))
        start = end
    if text[start:].strip():
        cells.append(nbformat.v4.new_markdown_cell(text[start:].strip()))
    return cells


def question_prompts(cells) -> dict[str, str]:
    """Question id → the read-only prompt cell students read (what question_cells made)."""
    prompts = {}
    for cell in cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if grade_id.startswith("question-"):
            prompts[grade_id.removeprefix("question-")] = cell.source
    return prompts


def check_questions_ask(rubric, cells, lesson_path: Path) -> None:
    """Every rubric key point is asked for by its question: a question must not grade more than it asks."""
    from course.grading.rubric import unasked_key_points
    from course.lesson.validate import display_path

    prompts = question_prompts(cells)
    problems = [
        (q.asked_by_lines[i], f"{q.id} key point {i + 1} asked_by {q.asked_by[i]!r}")
        for q in rubric.questions
        for i in unasked_key_points(q, prompts.get(q.id, ""))
    ]
    if problems:
        raise CourseError(
            f"expected each key point's asked_by words in its question as {Path(lesson_path).name} prints "
            f"it (a full answer needs every key point, so the question must ask for it); not found: "
            f"{'; '.join(p for _, p in problems)}. Reword the question, or the key point and its "
            f"asked_by",
            Location(display_path(rubric.path), problems[0][0]),
        )


def question_heading(qid: str) -> re.Pattern:
    """A heading for question QID: the id alone or followed by its title (`Q1`, `Q1：为什么…`; never `Q10`)."""
    return re.compile(rf"{re.escape(qid)}(?![A-Za-z0-9_])")


def _headings(text: str) -> list[tuple[int, int, str]]:
    """(offset, level, title) of each markdown heading outside fenced code."""
    found, fence, pos = [], None, 0
    for line in text.splitlines(keepends=True):
        opened = FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)[0] * 3
        elif fence is not None and line.strip().startswith(fence):
            fence = None
        elif fence is None and (m := HEADING.match(line.rstrip("\n"))):
            found.append((pos, len(m.group(1)), m.group(2)))
        pos += len(line)
    return found
