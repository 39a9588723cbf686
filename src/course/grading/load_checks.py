"""lessons/lessonNN/checks.yml → AssignmentSpec, and the checks' agreement with the lesson and its rubric.

Every problem names the file, the line and the key: a check that is not one line in one of the four
forms, a misconception of an unknown item, an item graded on an exercise the lesson lacks or without its
solution, a call of a function the exercise does not define, rubric code items that are not the checks' items.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from course.config import load_config, project_of
from course.errors import CourseError, InvalidYaml, Location, NoProject, SchemaMismatch
from course.fileio import once_per_version
from course.grading.checks import REL_TOL, AssignmentSpec, CheckSyntaxError, Item, Misconception, parse_check
from course.lesson.validate import YamlDocument, display_path, load_yaml, validate_document


def load_checks(path: Path, *, lesson: str | None = None) -> AssignmentSpec:
    """Read and validate one lesson's checks (LESSON defaults to the name of the folder they are in)."""
    try:
        doc = load_yaml(path)
        if not isinstance(doc.data, dict):
            raise doc.error((), "expected a mapping with keys version, lesson, items, misconceptions")
        validate_document(doc, "course.grading", "checks.v1")
    except (InvalidYaml, SchemaMismatch) as exc:
        if isinstance(exc, SchemaMismatch) and not _a_dict_for_text(exc):
            raise
        raise CourseError(
            f"{exc.message}; a check that holds ': ' (a dict) must be quoted: - 'f() == {{\"a\": 1}}'", exc.where
        ) from None
    expected = lesson or Path(path).parent.name
    lesson = doc.data["lesson"]
    if lesson != expected:
        raise doc.error(("lesson",), f"expected {expected!r} (the lesson's name), got {lesson!r}")
    default_tol = doc.data.get("rel_tol", REL_TOL)
    items = {}
    for item_id, entry in doc.data["items"].items():
        tol = entry.get("rel_tol", default_tol)
        checks = [
            _check(doc, ("items", item_id, part, i), text, hidden=part == "hidden", rel_tol=tol)
            for part in ("visible", "hidden")
            for i, text in enumerate(entry.get(part, ()))
        ]
        items[item_id] = Item(item_id, entry["exercise"], tuple(checks))
    wrong = []
    for n, entry in enumerate(doc.data.get("misconceptions", ())):
        if entry["item"] not in items:
            raise doc.error(
                ("misconceptions", n, "item"), f"expected one of the items {', '.join(items)}, got {entry['item']!r}"
            )
        checks = tuple(
            _check(doc, ("misconceptions", n, "when", i), text, rel_tol=default_tol)
            for i, text in enumerate(entry["when"])
        )
        wrong.append(
            Misconception(
                entry["id"],
                entry["item"],
                entry["name"],
                entry["explanation"],
                entry["evidence"],
                checks,
                entry.get("veto"),
                entry.get("section"),
            )
        )
    _unique(doc, [m.id for m in wrong])
    return AssignmentSpec(lesson, items, tuple(wrong), source=doc)


def _a_dict_for_text(exc: SchemaMismatch) -> bool:
    """Whether YAML read a check line as a mapping (its ': ' unquoted) where the schema wants a string."""
    return exc.rule == "type" and exc.expected == "string" and isinstance(exc.found, dict)


def _check(doc: YamlDocument, key: tuple, text: str, **options):
    """One check line, or an error at its line."""
    try:
        return parse_check(text, **options)
    except CheckSyntaxError as exc:
        raise doc.error(key, f"{exc}; in: {text.strip()}") from None


def _unique(doc: YamlDocument, ids: list[str]) -> None:
    """Misconception ids name feedback lines and report hints: each once."""
    seen: dict[str, int] = {}
    for n, wrong_id in enumerate(ids):
        if wrong_id in seen:
            raise doc.error(
                ("misconceptions", n, "id"),
                f"expected a unique id; {wrong_id!r} is already "
                f"used at line {doc.line(('misconceptions', seen[wrong_id]))}",
            )
        seen[wrong_id] = n


def check_against_rubric(spec: AssignmentSpec, rubric) -> None:
    """The rubric's code items are the checks' items; misconception vetoes are the rubric's vetoes."""
    ids = [c.id for c in rubric.code_items]
    if sorted(ids) != sorted(spec.items):
        raise CourseError(
            f"code_items: expected the ids {', '.join(spec.items)} (the items of "
            f"{_where(spec)}), got {', '.join(ids) or 'none'}",
            Location(display_path(rubric.path), _rubric_line(rubric)),
        )
    vetoes = [v.id for v in rubric.vetoes]
    for n, wrong in enumerate(spec.misconceptions):
        if wrong.veto is not None and wrong.veto not in vetoes:
            raise spec.source.error(
                ("misconceptions", n, "veto"),
                f"expected a veto id of "
                f"{display_path(rubric.path)} ({', '.join(vetoes) or 'none'}), got {wrong.veto!r}",
            )


def check_against_lesson(spec: AssignmentSpec, lesson) -> dict:
    """Each item's exercise exists with its solution and defines every function called; label → ExercisePair."""
    from course.lesson.model import exercise_pairs, solution_label

    pairs = {p.exercise.label: p for p in exercise_pairs(lesson)}
    labels = {c.label for c in lesson.cells()}
    defined = {}
    for item in spec.items.values():
        key = ("items", item.id, "exercise")
        if item.exercise not in pairs:
            problem = (
                f"{lesson.path.name} has the exercise but no solution cell {solution_label(item.exercise)}"
                if item.exercise in labels
                else f"{lesson.path.name} has no exercise cell {item.exercise}"
            )
            raise spec.source.error(
                key,
                f"{problem}; expected an exercise labelled {item.exercise} followed by "
                f"its solution {solution_label(item.exercise)}",
            )
        if item.exercise not in defined:
            defined[item.exercise] = _functions(pairs[item.exercise].exercise.source)
        for n, check in enumerate(item.checks):
            part = "hidden" if check.hidden else "visible"
            index = n - sum(not c.hidden for c in item.checks) if check.hidden else n
            _calls_defined(spec, ("items", item.id, part, index), check, item.exercise, defined[item.exercise])
    headings = lesson_headings(lesson)
    for n, wrong in enumerate(spec.misconceptions):
        exercise = spec.items[wrong.item].exercise
        for i, check in enumerate(wrong.checks):
            _calls_defined(spec, ("misconceptions", n, "when", i), check, exercise, defined[exercise])
        if wrong.section is not None and wrong.section not in headings:
            raise spec.source.error(
                ("misconceptions", n, "section"),
                f"expected the text of a heading of {lesson.path.name} (without the #s), got "
                f"{wrong.section!r}; its headings include {', '.join(headings[:4])}",
            )
    return {label: pairs[label] for label in spec.exercises}


HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*(\{[^}]*\})?[ \t]*$", re.M)  # its text, then any {#id …}


def lesson_headings(lesson) -> list[str]:
    """The text of every heading of the lesson's prose, in order."""
    from course.lesson.model import Markdown, walk

    return [m[1] for block in walk(lesson.blocks) if isinstance(block, Markdown) for m in HEADING.finditer(block.text)]


def _calls_defined(spec: AssignmentSpec, key: tuple, check, exercise: str, names: set[str]) -> None:
    """A check may only call functions its exercise defines."""
    for call in check.calls:
        if call.func not in names:
            raise spec.source.error(
                key,
                f"calls {call.func}(), which the exercise {exercise} does not define; "
                f"expected one of {', '.join(sorted(names)) or '(no functions)'}",
            )


def _functions(source: str) -> set[str]:
    """Names of the top-level functions a cell defines (blanks ______ are plain names to Python)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _where(spec: AssignmentSpec) -> str:
    """'lesson05/checks.yml' for messages."""
    return display_path(spec.source.path) if spec.source is not None else f"{spec.lesson}/checks.yml"


def _rubric_line(rubric) -> int | None:
    """The line of the rubric's code_items key, when the file can be read."""
    try:
        text = Path(rubric.path).read_text("utf-8").splitlines()
    except OSError:
        return None
    return next((i + 1 for i, line in enumerate(text) if line.startswith("code_items:")), None)


def checks_path(project_root: Path, lesson: str) -> Path:
    """Where a lesson's checks live: <lessons_dir>/<lesson>/checks.yml."""
    return Path(project_root) / load_config(Path(project_root)).lessons_dir / lesson / "checks.yml"


def course_checks_path(course_root: Path, lesson: str) -> Path:
    """The copy of a lesson's checks that `course build` keeps in the nbgrader course root (checks/<lesson>.yml)."""
    return Path(course_root) / "checks" / f"{lesson}.yml"


def checks_for_course(course_root: Path, lesson: str) -> AssignmentSpec:
    """The checks of a lesson graded in COURSE_ROOT: the copy made with its source notebook, else the lesson's own."""
    copy = course_checks_path(course_root, lesson)
    if copy.is_file():
        return _checks_as_saved(copy, lesson)
    try:
        path = checks_path(project_of(course_root), lesson)
    except NoProject:  # a course root standing alone has only the copies made with its source notebooks
        path = None
    if path is None or not path.is_file():
        raise CourseError(
            f"no checks for {lesson}: expected checks/{lesson}.yml in the course root (written by "
            f"`course build`) or {lesson}/checks.yml in the lessons folder",
            Location(copy),
        )
    return _checks_as_saved(path, None)


@once_per_version
def _checks_as_saved(path: Path, lesson: str | None) -> AssignmentSpec:
    """load_checks, read once per version of the file: every re-check of a batch needs the same checks, and
    parsing and validating them cost about as much as the re-check's own process."""
    return load_checks(path, lesson=lesson)
