"""The whole nbgrader cycle on the demo class in autograder/demo/, so a newcomer sees every step.

    python -m course.assignment.demo_cycle            # release → submissions → grade → feedback → export
    python -m course.assignment.demo_cycle --write-submissions   # rebuild demo/<student>/lesson05.ipynb

Each step prints the command an instructor would type in autograder/. Demo students' folders in
submitted/ are replaced; other students' submissions are left alone.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from course.errors import CourseError, Location

ASSIGNMENT = "lesson05"
DEMO_DIR = "demo"
STUDENTS_FILE = "students.yml"
GRADERS_FILE = "graders.yml"


def load_students(course_root: Path) -> dict:
    """The demo class definition (demo/students.yml): student id → fills, prepend, answers."""
    from course.grading.rubric import load_yaml

    doc = load_yaml(Path(course_root) / DEMO_DIR / STUDENTS_FILE)
    if not isinstance(doc.data, dict) or not all(isinstance(v, dict) and "fills" in v for v in doc.data.values()):
        raise doc.error((), "expected student id → {fills: [five blanks], prepend: code, answers: {Q1: text}}")
    return doc.data


def write_submissions(course_root: Path) -> list[Path]:
    """Write demo/<student>/lesson05.ipynb from the current release and demo/students.yml."""
    import nbformat

    from course.assignment.spec import assignment_spec
    from course.assignment.submissions import submission
    from course.fileio import write_atomic

    release = Path(course_root) / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    if not release.exists():
        raise CourseError(f"not released yet: run `nbgrader generate_assignment {ASSIGNMENT}` first", Location(release))
    nb = nbformat.read(release, as_version=4)
    written = []
    for student, spec in load_students(course_root).items():
        text = nbformat.writes(submission(nb, assignment_spec(ASSIGNMENT).exercise, spec["fills"],
                                          prepend=spec.get("prepend", ""), answers=spec.get("answers")))
        written.append(write_atomic(Path(course_root) / DEMO_DIR / student / f"{ASSIGNMENT}.ipynb", text + "\n"))
    return written


def collect(course_root: Path) -> list[str]:
    """Copy each demo student's notebook to submitted/<student>/lesson05/, as `nbgrader collect` would."""
    students = []
    for notebook in sorted((Path(course_root) / DEMO_DIR).glob(f"*/{ASSIGNMENT}.ipynb")):
        target = Path(course_root) / "submitted" / notebook.parent.name / ASSIGNMENT
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        shutil.copyfile(notebook, target / notebook.name)
        students.append(notebook.parent.name)
    return students


def grade_by_hand(project_root: Path, course_root: Path) -> list[str]:
    """Enter the demo graders' Q1–Q3 points (as formgrader does) and their vetoes (as `course report --veto`)."""
    from course.grading.gradebook import gradebook
    from course.grading.report import record_veto
    from course.grading.rubric import load_rubric, load_yaml, question_grade_id, rubric_path
    from course.grading.vetoes import load_vetoes, veto_path

    course_root = Path(course_root)
    doc = load_yaml(course_root / DEMO_DIR / GRADERS_FILE)
    done = []
    with gradebook(course_root / "gradebook.db") as gb:
        for student, scores in doc.data["manual_scores"].items():
            for question, points in scores.items():
                grade = gb.find_grade(question_grade_id(question), ASSIGNMENT, ASSIGNMENT, student)
                grade.manual_score, grade.needs_manual_grade = points, False  # what formgrader's save does
            done.append(f"{student}: {', '.join(f'{q}={p}' for q, p in scores.items())}")
        gb.db.commit()
        students = {s.id for s in gb.students}
    rubric = load_rubric(rubric_path(course_root, ASSIGNMENT))
    recorded = {r.key() for r in load_vetoes(veto_path(course_root, ASSIGNMENT), rubric, students)}
    for veto in doc.data["vetoes"]:
        if (veto["student"], veto["question"], veto["veto"]) not in recorded:
            record_veto(project_root, ASSIGNMENT, **veto)
        done.append(f"veto {veto['veto']} on {veto['student']} {veto['question']}")
    return done


def step(title: str, command: str) -> None:
    """Announce one step of the cycle."""
    print(f"\n== {title}\n$ {command}", flush=True)


def stock(course_root: Path, *args: str) -> str:
    """Run a stock nbgrader command; return its last log line."""
    from course.assignment.grade_run import run_nbgrader

    proc = run_nbgrader(course_root, *args)
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    return lines[-1] if lines else ""


def run_cycle(project_root: Path, *, unsafe: bool = False) -> Path:
    """Build the source if needed, then release, collect the demo class, grade, give feedback, export grades."""
    from course.assignment.grade_run import grade_assignment, release
    from course.assignment.make_source import write_assignment_sources
    from course.site.plan import make_plan
    from course.commands.grade import summary
    from course.figures.registry import ensure_figures
    from course.grading.report import make_report

    plan = make_plan(project_root)
    course_root = plan.root / plan.config.autograder_dir
    ensure_figures(plan.root)  # the lesson's images, drawn by `course build` too
    write_assignment_sources(plan, None)
    step("release: the source notebook becomes the student version", f"nbgrader generate_assignment {ASSIGNMENT} --force")
    print(f"   {release(course_root, ASSIGNMENT).relative_to(plan.root)}")
    step("submissions: the demo class hands in", f"cp demo/<student>/{ASSIGNMENT}.ipynb submitted/<student>/{ASSIGNMENT}/")
    print("   " + ", ".join(collect(course_root)))
    step("autograde, then re-check every submission outside the student's kernel", f"course grade {ASSIGNMENT}")
    print(summary(grade_assignment(course_root, ASSIGNMENT, unsafe=unsafe)))
    step("feedback: per test passed or not, hidden tests left out", f"nbgrader generate_feedback {ASSIGNMENT} --force")
    print(f"   {stock(course_root, 'generate_feedback', ASSIGNMENT, '--force')}")
    step("export: one row per student and assignment", "nbgrader export")
    print(f"   {stock(course_root, 'export')}")
    step("graders: Q1–Q3 points in formgrader, vetoes recorded", f"nbgrader formgrader; course report {ASSIGNMENT} --veto …")
    for line in grade_by_hand(plan.root, course_root):
        print(f"   {line}")
    step("report: PASS / FAIL / INCOMPLETE with the reasons", f"course report {ASSIGNMENT}")
    result = make_report(plan.root, ASSIGNMENT)
    for student in result.students:
        print(f"   {student.submission.student}: {student.result}")
    print(f"   {result.csv.relative_to(plan.root)}, {result.html.relative_to(plan.root)}")
    return course_root


def main(argv: list[str] | None = None) -> int:
    """Run the demo cycle, or rewrite the demo notebooks."""
    parser = argparse.ArgumentParser(prog="python -m course.assignment.demo_cycle", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="project root (default: current folder)")
    parser.add_argument("--write-submissions", action="store_true",
                        help="rewrite autograder/demo/<student>/lesson05.ipynb from demo/students.yml and the release")
    parser.add_argument("--unsafe", action="store_true", help="re-check without the bubblewrap sandbox")
    args = parser.parse_args(argv)
    try:
        if args.write_submissions:
            from course.site.plan import make_plan

            plan = make_plan(args.root)
            for path in write_submissions(plan.root / plan.config.autograder_dir):
                print(f"wrote {path.relative_to(plan.root)}")
        else:
            run_cycle(args.root, unsafe=args.unsafe)
    except CourseError as exc:
        print(f"demo cycle: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
