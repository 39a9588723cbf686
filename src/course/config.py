"""Course configuration: every key declared once, typed, with its default and description beside it.

Values come from `[tool.course]` in the project's pyproject.toml; the loaded object is frozen.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

from course.errors import CourseError, Location, NoProject


def setting(default: Any, description: str) -> Any:
    """Declare one configuration key with its default and what it means."""
    return field(default=default, metadata={"description": description})


class Table(Mapping):
    """A TOML table setting (key = value pairs), frozen like the rest of the config."""

    def __init__(self, items: Mapping | None = None):
        self._items = dict(items or {})

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._items.items(), key=repr)))

    def __repr__(self) -> str:
        return f"Table({self._items!r})"


@dataclass(frozen=True)
class CourseConfig:
    """The course's settings; derived paths live in the build plan, not here."""

    lessons_dir: str = setting("lessons", "Folder of lesson sources lessonNN.qmd.")
    site_dir: str = setting("_site", "Where `course build` writes the student and answer sites.")
    autograder_dir: str = setting("autograder", "The nbgrader course root.")
    demo_dir: str = setting(
        "demo",
        "The demo course: an nbgrader course root of its own (its nbgrader_config.py, gradebook, reports) "
        "with each lesson's demo class in classes/<lesson>/; `make` and `course demo` grade there, never in "
        "autograder_dir.",
    )
    cache_dir: str = setting(".course-cache", "Execution and figure cache, keyed by content.")
    assets_dir: str = setting("assets", "Images and generated figures referenced by lessons.")
    kernel: str = setting("python3", "Jupyter kernel that executes lesson cells.")
    cell_timeout: int = setting(300, "Seconds one lesson cell may run during the build.")
    variants: tuple[str, ...] = setting(
        ("student", "answer"),
        "Variants built from each lesson, each a name course.lesson.variants declares (what "
        "it shows and offers; checked when the build plan is made); `course preview` serves the first.",
    )
    course_title: str = setting("大模型规模化训练", "Course title on the site index.")
    renderer: str = setting(
        "auto",
        "What renders the pages at `course build`: `quarto`, `pandoc`, or `auto` (Quarto when a Quarto "
        ">= 1.7 is found, else pandoc); `course build --renderer` overrides it.",
    )
    quarto: str = setting(
        "",
        "The Quarto binary `course build` renders with (a path, or a name on PATH); empty: `quarto` on PATH. "
        "The environment variable QUARTO, when set, wins.",
    )
    build_inputs: tuple[str, ...] = setting(
        ("lessons", "solutions", "assets", "autograder/rubrics", "package.json", "pyproject.toml"),
        "Project files and folders a build reads whatever renders the pages (each renderer adds its own: the "
        "filter, or Quarto's project files); with the course package they decide whether a rebuild has work.",
    )
    generated_assets: tuple[str, ...] = setting(
        ("assets/figs", "assets/lab"),
        "Build outputs that live under assets/ (not committed; not build inputs): the folders lessons' "
        "figures.py draw into, plus any single file a lesson draws elsewhere.",
    )
    semester_weights: Table = setting(
        Table(),
        "Weight of each lesson in the semester total (`course report` without a lesson), e.g. "
        "{lesson05 = 2}; a lesson not listed weighs 1, so by default every lesson counts the same.",
    )
    semester_pass_rule: str = setting(
        "total-and-every-lesson",
        "Who passes the semester: `total` (weighted total >= semester_pass_percent), "
        "`every-lesson` (every counted lesson PASS), or `total-and-every-lesson` (both).",
    )
    semester_pass_percent: float = setting(
        60.0, "The weighted total, in percent of full marks, that the pass rule's `total` part asks for."
    )
    semester_missing: str = setting(
        "zero",
        "How a lesson a student has no graded submission for counts, once the lesson is graded for "
        "anyone: `zero` (0 points and not a PASS) or `excluded` (left out of that student's total and pass rule).",
    )
    due_dates: Table = setting(
        Table(),
        "When each lesson is due, a TOML date-time with its UTC offset, e.g. "
        "{lesson05 = 2026-12-01T23:59:00+08:00}: written as the nbgrader assignment's duedate (release, "
        "autograde, `course grade`), so stock nbgrader sees it; a lesson not listed keeps the gradebook's.",
    )
    canvas_identity: Table = setting(
        Table({"ID": "lms_user_id", "SIS Login ID": "id"}),
        "Which nbgrader Student field (id, first_name, last_name, email, lms_user_id) fills each of Canvas's "
        "identity columns (ID, SIS User ID, SIS Login ID) in reports/canvas.csv; columns not listed stay empty.",
    )
    canvas_assignment_ids: Table = setting(
        Table(),
        "Canvas assignment id of each lesson, e.g. {lesson05 = 1234}: the column is then `lesson05 "
        "(1234)` and updates that assignment; without one Canvas matches the title or creates the assignment.",
    )
    moodle_id_column: str = setting(
        "username",
        "reports/moodle.csv's identifier column, named after the Moodle user field to map it to "
        "(username, idnumber, email or id).",
    )
    moodle_id_field: str = setting(
        "id", "The nbgrader Student field (id, first_name, last_name, email, lms_user_id) that fills it."
    )
    language: str = setting(
        "en",
        "The language students read the course's messages in (`course check`): a gettext catalog of "
        "src/course/locale/ (e.g. `zh_CN`), or `en` for the messages as written; instructors' commands stay English.",
    )

    @classmethod
    def describe(cls) -> dict[str, tuple[Any, str]]:
        """Each key with its default and description (for docs and `--help`)."""
        return {f.name: (f.default, f.metadata["description"]) for f in fields(cls) if f.default is not MISSING}


def load_config(root: Path) -> CourseConfig:
    """Read [tool.course] from ROOT/pyproject.toml; unknown keys and wrong types are errors."""
    path = root / "pyproject.toml"
    try:
        data = tomllib.loads(path.read_text("utf-8")).get("tool", {}).get("course", {})
    except FileNotFoundError:
        return CourseConfig()
    except tomllib.TOMLDecodeError as exc:
        raise CourseError(f"not valid TOML: {exc}", Location(path)) from None
    known = {f.name: f for f in fields(CourseConfig)}
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            raise CourseError(f"[tool.course] unknown key {key!r}; expected one of {', '.join(known)}", Location(path))
        expected = type(known[key].default)
        if expected is tuple and isinstance(value, list):
            value = tuple(value)
        elif expected is Table and isinstance(value, dict):
            value = Table(value)
        elif expected is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, expected):
            kind = "a table" if expected is Table else expected.__name__
            raise CourseError(
                f"[tool.course] {key} must be {kind}, got {value!r}", Location(path, setting_line(path, key))
            )
        values[key] = value
    return CourseConfig(**values)


def setting_line(path: Path, key: str, entry: str | None = None) -> int | None:
    """The line of pyproject.toml that sets [tool.course] KEY (or ENTRY of that table), for located errors."""
    try:
        lines = Path(path).read_text("utf-8").splitlines()
    except OSError:
        return None
    table, found = None, None
    for number, line in enumerate(lines, 1):
        header = re.match(r"\s*\[([^\[\]]+)\]\s*(#.*)?$", line)
        if header:
            table = header[1].replace(" ", "")
            continue
        name = re.match(r'\s*"?([^"=]+?)"?\s*=', line)
        if not name:
            continue
        if table == "tool.course" and name[1] == key:
            found = found or number
            if entry is None or re.search(rf'\b"?{re.escape(entry)}"?\s*=', line[line.index("=") + 1 :]):
                return number
        if table == f"tool.course.{key}" and (entry is None or name[1] == entry):
            return number
    return found


def setting_error(root: Path, key: str, message: str, entry: str | None = None) -> CourseError:
    """A bad [tool.course] value, located at its line of ROOT/pyproject.toml (the file alone if unset)."""
    path = Path(root) / "pyproject.toml"
    return CourseError(
        f"[tool.course] {key}{f'.{entry}' if entry else ''}: {message}", Location(path, setting_line(path, key, entry))
    )


def find_course(start: Path) -> Path | None:
    """The course repository START is in, as git finds its repository: the nearest folder, START or above, whose
    pyproject.toml declares [tool.course] (None when there is none)."""
    start = Path(start).resolve()
    for folder in (start, *start.parents):
        try:
            data = tomllib.loads((folder / "pyproject.toml").read_text("utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        if isinstance(data.get("tool"), dict) and "course" in data["tool"]:
            return folder
    return None


def project_of(course_root: Path) -> Path:
    """The course project an nbgrader course root belongs to (its lessons, its [tool.course] settings): the nearest
    folder above the course root whose pyproject.toml declares [tool.course], else the folder holding the course root
    if it holds the lessons (a project taking every default, as load_config reads one without pyproject.toml);
    NoProject when the course root stands alone."""
    root = Path(course_root).resolve()
    project = find_course(root.parent)
    if project is None and (root.parent / CourseConfig().lessons_dir).is_dir():
        project = root.parent
    if project is None:
        raise NoProject(
            f"no course project around this nbgrader course root: expected a pyproject.toml with "
            f"[tool.course] in {root.parent} or a folder above it, or the lessons beside the course root "
            f"({CourseConfig().lessons_dir}/)",
            Location(str(root)),
        )
    return project
