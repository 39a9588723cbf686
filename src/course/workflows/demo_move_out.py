"""`course demo --move-out`: take the demo students out of the real course, where an older `make` graded them.

Before the demo had a course of its own, `make` and `course demo` graded the demo classes in autograder/, so a
live course's gradebook, veto records and reports counted zhangsan, lisi, … with the real students. The demo
students are known from the demo classes (demo/classes/<lesson>/students.yml); one imported from a roster (a
name, email or LMS id in the gradebook) is a real student and stays. Their veto lines and files (submitted/,
autograded/, feedback/, the grading state) move to demo/moved-out/, then nbgrader's own remove_student takes
them and their submissions out of the gradebook, which is reached through nbgrader's configured db_url; every
other student, grade, comment and veto stays as it was. The reports are written again by `course report`.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from course.errors import CourseError, Location, NoGradebook
from course.fileio import write_atomic

MOVED_OUT = "moved-out"
STUDENT_FOLDERS = ("submitted", "autograded", "feedback")


@dataclass
class MoveOut:
    """What `move_out` did: the students taken out, those kept as real, and the files moved."""

    moved: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # demo ids that a roster made real students
    files: list[Path] = field(default_factory=list)
    vetoes: int = 0
    gradebook: bool = True  # False: the course has no gradebook yet

    def lines(self, course: str, demo: str) -> list[str]:
        """The summary the command prints."""
        if not self.gradebook:
            out = [f"{course}/ has no gradebook yet: nothing to move out"]
        elif not self.moved:
            out = [f"no demo student in {course}/'s gradebook: nothing to move out"]
        else:
            out = [
                f"moved out of {course}/: {', '.join(self.moved)} (their submissions and grades from the "
                f"gradebook, {self.vetoes} veto record(s), {len(self.files)} folder(s) to {demo}/{MOVED_OUT}/)",
                "every other student, grade, comment and veto is as it was; `course report` writes the "
                "reports again (each lesson, then the semester)",
            ]
        out += [f"kept {s}: a demo id, but the roster gave them a name, email or LMS id" for s in self.kept]
        return out


def move_out(project_root: Path) -> MoveOut:
    """Take the demo students out of the project's course root; see the module's docstring."""
    from course.config import load_config
    from course.grading.gradebook import check_gradebook, configured_gradebook, gradebook
    from course.workflows.demo_cycle import demo_root, demo_students

    project_root = Path(project_root).resolve()
    course_root = project_root / load_config(project_root).autograder_dir
    root = demo_root(project_root)
    ids = demo_students(root)
    where = configured_gradebook(course_root)
    done = MoveOut()
    try:
        check_gradebook(where, "none yet")
    except NoGradebook:  # a server down or a wrong URL is an error, not an empty course
        done.gradebook = False
        return done
    with gradebook(where.url) as gb:
        for student in sorted(ids & {s.id for s in gb.students}):
            s = gb.find_student(student)
            real = any((s.first_name, s.last_name, s.email, s.lms_user_id))
            (done.kept if real else done.moved).append(student)
        if not done.moved:
            return done
        out = root / MOVED_OUT
        for path in sorted((course_root / "vetoes").glob("*.yml")):
            done.vetoes += move_veto_lines(path, set(done.moved), out / "vetoes" / path.name)
        for student in done.moved:
            gb.remove_student(student)  # nbgrader's own: the student's submissions, grades and comments go too
    for student in done.moved:
        for folder in STUDENT_FOLDERS:
            done.files += _move(course_root / folder / student, out / folder / student)
        for state in sorted((course_root / ".course-grade").glob("*/*/*")):
            if student in (state.name, state.stem):
                done.files += _move(state, out / state.relative_to(course_root))
    return done


def move_veto_lines(path: Path, students: set[str], kept_in: Path) -> int:
    """Remove STUDENTS' records from the veto file PATH (comments and every other line kept); the removed lines
    are appended to KEPT_IN. Returns how many records moved."""
    from course.lesson.validate import load_yaml, parse_yaml

    doc = load_yaml(path)
    entries = list((doc.data or {}).get("vetoes") or ()) if isinstance(doc.data, dict) else []
    lines = path.read_text("utf-8").splitlines(keepends=True)
    starts = [doc.line(("vetoes", i)) for i in range(len(entries))]
    gone = [i for i, e in enumerate(entries) if isinstance(e, dict) and e.get("student") in students]
    if not gone:
        return 0
    drop = {starts[i] for i in gone}  # 1-based: each record is one flow-mapping line, as `--veto` writes it
    text = "".join(line for n, line in enumerate(lines, 1) if n not in drop)
    left = parse_yaml(path, text).data.get("vetoes") or []
    if left != [e for i, e in enumerate(entries) if i not in gone]:
        raise CourseError(
            "cannot take the demo students' records out line by line: expected one '  - {…}' "
            "line per record under vetoes:; remove them by hand",
            Location(str(path)),
        )
    removed = "".join(line for n, line in enumerate(lines, 1) if n in drop)
    old = kept_in.read_text("utf-8") if kept_in.is_file() else ""
    write_atomic(kept_in, old + removed)
    write_atomic(path, text)
    return len(gone)


def _move(source: Path, target: Path) -> list[Path]:
    """Move SOURCE to TARGET (replacing an older moved-out copy); the moved path, if there was one."""
    if not source.exists():
        return []
    if target.exists():
        shutil.rmtree(target) if target.is_dir() else target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(source), str(target))
    return [target]
