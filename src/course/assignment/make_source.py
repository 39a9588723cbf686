"""`course build` → autograder/source/<lesson>/<lesson>.ipynb, the nbgrader source notebook of each assignment.

The notebook is the student variant of the lesson (reusing the lesson notebook builder) with the exercise
turned into graded cells: read-only check helpers, the autograded answer cell (solution regions with
per-region stubs), one locked test cell per rubric code item, and under each question of the rubric a
read-only prompt and an empty, manually graded answer cell. It is generated, never edited by hand, and only
after the checks prove themselves: the reference solution passes every item, the bare exercise none.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

from course.assignment.spec import AssignmentSpec, assignment_spec
from course.site.plan import BuildPlan
from course.errors import CourseError, Location
from course.fileio import replace_dir_atomically, write_atomic
from course.lesson.model import Lesson

SOURCE_DIR = "source"
RUBRICS_DIR = "rubrics"  # autograder/rubrics/, read by course.grading.rubric
STAMPS = "assignment-sources.stamp"
HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
ANSWER_HINT = "*在下面的单元格中作答（双击进入编辑）。*"


def write_assignment_sources(plan: BuildPlan, parsed: list[Lesson] | None) -> list[Path]:
    """Write the source notebook of every lesson with an assignment; with PARSED None, only the missing or stale."""
    course_root = plan.root / plan.config.autograder_dir
    stems = [p.stem for p in plan.lessons if assignment_spec(p.stem) is not None]
    stamp = source_stamp(plan)
    stamps = plan.cache_dir / STAMPS
    if parsed is None:
        if _read_stamp(stamps) == stamp and all(source_notebook(course_root, s).exists() for s in stems):
            return []
        from course.lesson.parse_qmd import parse_lesson

        parsed = [parse_lesson(p) for p in plan.lessons if p.stem in stems]
    written = [write_assignment_source(lesson, project_root=plan.root, course_root=course_root)
               for lesson in parsed if lesson.stem in stems]
    write_atomic(stamps, stamp)
    return written


def source_notebook(course_root: Path, lesson: str) -> Path:
    """Where nbgrader expects the source notebook: source/<assignment>/<assignment>.ipynb."""
    return Path(course_root) / SOURCE_DIR / lesson / f"{lesson}.ipynb"


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


def write_assignment_source(lesson: Lesson, *, project_root: Path, course_root: Path, rubric=None) -> Path:
    """Generate one lesson's source folder (notebook plus the images it shows), replacing the old one whole."""
    import nbformat

    from course.site.resolve_resources import resolve_resources
    from course.site.select_variant import select_variant
    from course.grading.rubric import load_rubric, rubric_path

    spec = assignment_spec(lesson.stem)
    rubric = rubric or load_rubric(rubric_path(course_root, lesson.stem))
    view, images = resolve_resources(select_variant(lesson, "student"), project_root)
    nb = source_notebook_node(lesson, view, spec, rubric, outputs=_student_outputs(view, project_root))
    target = source_notebook(course_root, lesson.stem)
    with replace_dir_atomically(target.parent) as staging:
        for image in images:
            (staging / image.project_path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(project_root / image.project_path, staging / image.project_path)
        write_atomic(staging / target.name, nbformat.writes(nb))
    return target


def _student_outputs(view: Lesson, project_root: Path) -> dict:
    """The student variant's cell outputs (the build's execution cache has them once the site is built)."""
    from course.site.execute_cells import execute_cells
    from course.config import load_config

    config = load_config(project_root)
    return execute_cells(view, cache_dir=Path(project_root) / config.cache_dir, kernel=config.kernel,
                         timeout=config.cell_timeout)


def source_notebook_node(lesson: Lesson, view: Lesson, spec: AssignmentSpec, rubric, *, outputs: dict | None = None):
    """The lesson notebook of VIEW with the exercise and the questions turned into nbgrader cells.

    OUTPUTS (the student variant's executed cells) supply what display-only cells show; they become markdown,
    so grading runs nothing but the student's work.
    """
    import nbformat

    from course.site.make_notebook import make_notebook
    from course.grading.rubric import question_grade_id
    from course.lesson.model import exercise_pairs

    _check_items(spec, rubric)
    pair = next((p for p in exercise_pairs(lesson) if p.exercise.label == spec.exercise), None)
    if pair is None:
        raise CourseError(f"expected an exercise cell {spec.exercise} with a solution sol-{spec.exercise[3:]}",
                          Location(lesson.path))
    prove(lesson, pair, spec, rubric)
    nb = make_notebook(view, outputs or {}, freeze_hidden_code=True)
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.metadata.get("course", {}).get("label") == spec.exercise:
            cells += exercise_cells(lesson, pair, spec, rubric)
        elif cell.cell_type == "markdown":
            cells += question_cells(cell.source, rubric.questions)
        else:
            cells.append(cell)
    ids = [cell.metadata.get("nbgrader", {}).get("grade_id") for cell in cells]
    expected = {spec.exercise: spec.exercise, **{question_grade_id(q.id): f"### {q.id}" for q in rubric.questions}}
    missing = [shown for grade_id, shown in expected.items() if ids.count(grade_id) != 1]
    if missing:
        raise CourseError(f"expected the student variant to show the exercise cell and one heading per rubric "
                          f"question exactly once; not found once: {', '.join(missing)}", Location(lesson.path))
    for i, cell in enumerate(cells):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        cell.id = grade_id or f"{lesson.stem}-{i:03d}"
    nb.cells = cells
    nbformat.validate(nb)
    return nb


def prove(lesson: Lesson, pair, spec: AssignmentSpec, rubric) -> None:
    """The reference solution must pass every code item and the exercise as released fail every one."""
    from course.grading.recheck import recheck_code

    for cell, should_pass in ((pair.solution, True), (pair.exercise, False)):
        verdicts = recheck_code([cell.source], rubric, spec=spec, unsafe=True)
        wrong = [f"{item}: {v.reason}" for item, v in verdicts.items() if v.passed != should_pass]
        if wrong:
            expected = "pass every check" if should_pass else "fail every check while its blanks are empty"
            raise CourseError(f"expected the {cell.role} to {expected}; it does not: {'; '.join(wrong)}",
                              Location(lesson.path, cell.line, cell.label))


def _check_items(spec: AssignmentSpec, rubric) -> None:
    """The rubric's code items and the assignment's checks must name the same items."""
    ids = [c.id for c in rubric.code_items]
    if sorted(ids) != sorted(spec.items):
        raise CourseError(f"code_items: expected the ids {', '.join(spec.items)} (the checks of {spec.lesson}), "
                          f"got {', '.join(ids)}", Location(rubric.path))


def nbgrader_cell(kind: str, source: str, grade_id: str, *, grade=False, solution=False, locked=False, points=None):
    """A cell with nbgrader's metadata, as nbgrader's own cell toolbar writes it."""
    import nbformat

    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3, "solution": solution,
            "task": False}
    if grade:
        meta["points"] = points
    make = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
    return make(source, metadata={"nbgrader": meta})


def exercise_cells(lesson: Lesson, pair, spec: AssignmentSpec, rubric) -> list:
    """Check helpers (read-only), the answer cell, then one locked test cell per code item."""
    from course.assignment.answer_cell import answer_cell
    from course.assignment.test_cells import HELPERS_ID, HELPERS_SOURCE, test_cell_source
    from course.grading.rubric import code_grade_id

    answer = answer_cell(lesson, pair)
    cell = nbgrader_cell("code", answer.source, spec.exercise, solution=True)
    cell.metadata["course"] = {"stubs": list(answer.stubs)}
    items = rubric.code_items
    tests = [nbgrader_cell("code", test_cell_source(item, spec.items[item.id], n, len(items)), code_grade_id(item.id),
                           grade=True, locked=True, points=item.points)
             for n, item in enumerate(items, start=1)]
    return [nbgrader_cell("code", HELPERS_SOURCE, HELPERS_ID, locked=True), cell, *tests]


def question_cells(text: str, questions) -> list:
    """Split markdown at each question's heading: a read-only prompt, then an empty graded answer cell."""
    import nbformat

    from course.grading.rubric import question_grade_id

    by_title = {q.id: q for q in questions}
    headings = _headings(text)
    cells, start = [], 0
    for n, (pos, level, title) in enumerate(headings):
        if title not in by_title:
            continue
        end = next((p for p, lv, _ in headings[n + 1:] if lv <= level), len(text))
        q = by_title[title]
        if text[start:pos].strip():
            cells.append(nbformat.v4.new_markdown_cell(text[start:pos].strip()))
        prompt = f"{text[pos:end].strip()}\n\n{ANSWER_HINT}"
        cells.append(nbgrader_cell("markdown", prompt, f"question-{q.id}", locked=True))
        cells.append(nbgrader_cell("markdown", "", question_grade_id(q.id), grade=True, solution=True,
                                   points=q.points))
        start = end
    if text[start:].strip():
        cells.append(nbformat.v4.new_markdown_cell(text[start:].strip()))
    return cells


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
