"""The whole nbgrader cycle on a lesson's demo class, in the demo course (demo/), so a newcomer sees every step.

    python -m course.workflows.demo_cycle lesson05            # release → submissions → grade → feedback → export
    python -m course.workflows.demo_cycle lesson05 --write-submissions   # rewrite the demo students' notebooks

(--write-submissions writes each to demo/classes/lesson05/<student>/lesson05.ipynb.)

The demo course is an nbgrader course root of its own (demo/, `demo_dir` in [tool.course]) with its own
gradebook, reports and exports; it takes the course's material (the lesson's source notebook, checks and rubric)
from autograder/ and writes nothing there, so `make` is safe to run on a live course and an instructor's reports
and LMS files hold the real class only. A demo class is classes/<lesson>/students.yml (what each student wrote),
graders.yml (the points and vetoes graders enter) and one notebook per student. Each step prints the command an
instructor would type in their course root.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from course.errors import CourseError, Location, NoGradebook

CLASSES_DIR = "classes"
CONFIG = """\
# nbgrader configuration of the demo course, written by `course demo` (not committed): this folder is an nbgrader
# course root of its own, where `make` and `course demo lessonNN` rehearse the whole cycle on the demo classes in
# classes/<lesson>/. It takes the real course's settings but always keeps its own root, course id, gradebook
# (gradebook.db here), exchange and exports, whatever a hub or user config sets: those name the real class's.
from pathlib import Path

from course.nbgrader_hooks.config import configure_demo

configure_demo(get_config(), Path(__file__).resolve().parent)  # noqa: F821 (nbgrader provides get_config)
"""
STUDENTS_FILE = "students.yml"
GRADERS_FILE = "graders.yml"


def demo_root(project_root: Path) -> Path:
    """The demo course's nbgrader course root (demo_dir in [tool.course])."""
    from course.config import load_config

    return Path(project_root).resolve() / load_config(Path(project_root)).demo_dir


def demo_dir(root: Path, lesson: str) -> Path:
    """demo/classes/<lesson>/: one lesson's demo class in the demo course ROOT."""
    return Path(root) / CLASSES_DIR / lesson


def demo_lessons(root: Path) -> list[str]:
    """Lessons with a demo class in the demo course ROOT."""
    folder = Path(root) / CLASSES_DIR
    return sorted(p.name for p in folder.glob("lesson*") if (p / STUDENTS_FILE).is_file()) if folder.is_dir() else []


def demo_students(root: Path) -> set[str]:
    """Every student id of every demo class in the demo course ROOT."""
    return {student for lesson in demo_lessons(root) for student in load_students(root, lesson)}


def load_students(course_root: Path, lesson: str) -> dict:
    """The demo class definition (classes/<lesson>/students.yml): student id → fills, prepend, answers."""
    from course.lesson.validate import load_yaml

    doc = load_yaml(demo_dir(course_root, lesson) / STUDENTS_FILE)
    if not isinstance(doc.data, dict) or not all(isinstance(v, dict) and "fills" in v for v in doc.data.values()):
        raise doc.error(
            (),
            "expected student id → {fills: [blanks in order] or {exercise label: [blanks]}, "
            "prepend: code, answers: {Q1: text}}",
        )
    return doc.data


def write_submissions(course_root: Path, lesson: str) -> list[Path]:
    """Write classes/<lesson>/<student>/<lesson>.ipynb from the demo course's release and its students.yml.

    Returns the notebooks written: those missing or made from another release (an unchanged one is left alone).
    """
    import nbformat

    from course.assignment.make_source import released_notebook
    from course.assignment.submissions import cell_by_grade_id, fill_blanks, submission
    from course.fileio import write_atomic
    from course.grading.load_checks import checks_for_course

    release = released_notebook(course_root, lesson)
    if not release.exists():
        raise CourseError(f"not released yet: run `nbgrader generate_assignment {lesson}` first", Location(release))
    nb = nbformat.read(release, as_version=4)
    exercises = checks_for_course(course_root, lesson).exercises
    written = []
    for student, spec in load_students(course_root, lesson).items():
        fills = spec["fills"] if isinstance(spec["fills"], dict) else {exercises[0]: spec["fills"]}
        text = submission(nb, exercises[0], None, prepend=spec.get("prepend", ""), answers=spec.get("answers"))
        for label, blanks in fills.items():
            cell = cell_by_grade_id(text, label)
            cell.source = fill_blanks(cell.source, blanks)
        path = demo_dir(course_root, lesson) / student / f"{lesson}.ipynb"
        content = nbformat.writes(text) + "\n"
        if not path.is_file() or path.read_text("utf-8") != content:
            written.append(write_atomic(path, content))
    return written


def collect(course_root: Path, lesson: str) -> list[str]:
    """Copy each demo student's notebook to submitted/<student>/<lesson>/, as `nbgrader collect` would."""
    students = []
    for notebook in sorted(demo_dir(course_root, lesson).glob(f"*/{lesson}.ipynb")):
        target = Path(course_root) / "submitted" / notebook.parent.name / lesson
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        shutil.copyfile(notebook, target / notebook.name)
        students.append(notebook.parent.name)
    return students


def grade_by_hand(project_root: Path, course_root: Path, lesson: str) -> list[str]:
    """Enter the demo graders' question points (as formgrader does) and their vetoes (as `course report --veto`)."""
    from course.grading.gradebook import configured_gradebook, gradebook
    from course.grading.report import record_veto
    from course.grading.rubric import load_rubric, question_grade_id, rubric_path
    from course.grading.vetoes import load_vetoes, veto_path
    from course.lesson.validate import load_yaml

    course_root = Path(course_root)
    doc = load_yaml(demo_dir(course_root, lesson) / GRADERS_FILE)
    done = []
    with gradebook(configured_gradebook(course_root).url) as gb:
        for student, scores in (doc.data.get("manual_scores") or {}).items():
            for question, points in scores.items():
                grade = gb.find_grade(question_grade_id(question), lesson, lesson, student)
                grade.manual_score, grade.needs_manual_grade = points, False  # what formgrader's save does
            done.append(f"{student}: {', '.join(f'{q}={p}' for q, p in scores.items())}")
        gb.db.commit()
        students = {s.id for s in gb.students}
    rubric = load_rubric(rubric_path(course_root, lesson))
    recorded = {r.key() for r in load_vetoes(veto_path(course_root, lesson), rubric, students)}
    for veto in doc.data.get("vetoes") or ():
        if (veto["student"], veto["question"], veto["veto"]) not in recorded:
            record_veto(project_root, lesson, **veto, autograder=course_root)
        done.append(f"veto {veto['veto']} on {veto['student']} {veto['question']}")
    return done


def step(title: str, command: str) -> None:
    """Announce one step of the cycle."""
    print(f"\n== {title}\n$ {command}", flush=True)


def stock(course_root: Path, *args: str) -> str:
    """Run a stock nbgrader command; return its last log line."""
    from course.workflows.grade import run_nbgrader

    proc = run_nbgrader(course_root, *args)
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    return lines[-1] if lines else ""


def take_material(course_root: Path, root: Path, lesson: str) -> None:
    """Copy the lesson's source notebook, checks and rubric from the course root into the demo course ROOT, and
    write the demo course's nbgrader config."""
    from course.assignment.make_source import source_notebook
    from course.fileio import write_atomic
    from course.grading.load_checks import course_checks_path
    from course.grading.rubric import rubric_path

    config = root / "nbgrader_config.py"
    if not config.is_file() or config.read_text("utf-8") != CONFIG:
        write_atomic(config, CONFIG)
    source = source_notebook(course_root, lesson).parent
    shutil.rmtree(source_notebook(root, lesson).parent, ignore_errors=True)
    shutil.copytree(source, source_notebook(root, lesson).parent)
    for path in (course_checks_path, rubric_path):
        path(root, lesson).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path(course_root, lesson), path(root, lesson))


def left_alone(course_root: Path, root: Path) -> str:
    """What the course root holds that the demo (in ROOT) did not touch: its releases, submissions and gradebook;
    and demo students an older `make` graded there, with the command that moves them out."""
    from course.grading.gradebook import check_gradebook, configured_gradebook, gradebook

    released = sorted(p.name for p in (course_root / "release").glob("*") if p.is_dir())
    submitted = list((course_root / "submitted").glob("*/*/*.ipynb"))
    stray = []
    try:
        where = configured_gradebook(course_root)
        check_gradebook(where, "none yet")
        with gradebook(where.url) as gb:
            db = f"gradebook {where.shown} with {len(gb.students)} student(s)"
            demo = demo_students(root)
            stray = sorted(
                s.id
                for s in gb.students
                if s.id in demo and not any((s.first_name, s.last_name, s.email, s.lms_user_id))
            )
    except NoGradebook:
        db = "no gradebook"
    except CourseError as exc:
        db = f"gradebook not read ({exc})"
    said = (
        f"{course_root.name}/ (the course) left alone: release {', '.join(released) or 'none'}, "
        f"{len(submitted)} submitted notebook(s), {db}, veto records and reports untouched"
    )
    if stray:
        said += (
            f"\n{course_root.name}/'s gradebook holds demo students from an older `make` "
            f"({', '.join(stray)}): `course demo --move-out` moves them out, nothing else"
        )
    return said


def run_cycle(project_root: Path, lesson: str, *, unsafe: bool = False) -> Path:
    """Build the source if needed, then in the demo course release, collect the demo class, grade, give feedback,
    export grades, look across the class for copying, report; return the demo course root."""
    from course.assignment.make_source import write_assignment_sources
    from course.grading.report import make_report
    from course.site.plan import make_plan
    from course.workflows.draw_figures import ensure_figures
    from course.workflows.grade import GradeOptions, grade_assignment, release, summary
    from course.workflows.similarity_report import similarity_in_report, write_similarity

    plan = make_plan(project_root)
    course_root = plan.root / plan.config.autograder_dir
    root = demo_root(plan.root)
    if lesson not in demo_lessons(root):
        raise CourseError(
            f"no demo class for {lesson}: expected {CLASSES_DIR}/{lesson}/{STUDENTS_FILE} "
            f"(lessons with one: {', '.join(demo_lessons(root)) or 'none'})",
            Location(root / CLASSES_DIR),
        )
    ensure_figures(plan.root)  # the lessons' images, drawn by `course build` too
    write_assignment_sources(plan, None)
    take_material(course_root, root, lesson)
    here = root.name
    print(f"The demo course {here}/ rehearses the cycle with its own gradebook; {course_root.name}/ is not touched.")
    step(
        "release: the source notebook becomes the student version",
        f"cd {here} && nbgrader generate_assignment {lesson} --force",
    )
    print(f"   {release(root, lesson).relative_to(plan.root)}")
    written = write_submissions(root, lesson)  # a demo notebook from an older release would be stale
    if written:
        step(
            "the demo class writes its notebooks from the release",
            f"python -m course.workflows.demo_cycle {lesson} --write-submissions",
        )
        print("   " + ", ".join(p.parent.name for p in written))
    step(
        "submissions: the demo class hands in",
        f"cp {CLASSES_DIR}/{lesson}/<student>/{lesson}.ipynb submitted/<student>/{lesson}/",
    )
    print("   " + ", ".join(collect(root, lesson)))
    step(
        "autograde, then re-check every submission outside the student's kernel",
        f"course grade {lesson} --autograder {here}",
    )
    print(summary(grade_assignment(root, lesson, GradeOptions(unsafe=unsafe))))
    step(
        "feedback: per test passed or not, hidden tests left out; Q1–Q3 say 待评分 until a grader scores them",
        f"nbgrader generate_feedback {lesson} --force",
    )
    print(f"   {stock(root, 'generate_feedback', lesson, '--force')}")
    step("export: one row per student and assignment", "nbgrader export")
    print(f"   {stock(root, 'export')}")
    # formgrader is a Jupyter server extension, not an nbgrader command: a server started in the course root
    step(
        "graders: question points in formgrader (beside each answer its 要点 and veto hints), vetoes recorded",
        f"cd {here} && jupyter lab  # Nbgrader ▸ Formgrader ▸ Manual Grading; then, in the project root, "
        f"course report {lesson} --autograder {here} --veto …",
    )
    for line in grade_by_hand(plan.root, root, lesson):
        print(f"   {line}")
    step(
        "integrity: pairs of students sharing rare answers or text (evidence for graders, never a decision)",
        f"course similarity {lesson} --autograder {here}",
    )
    found = write_similarity(plan.root, lesson, autograder=root)
    print(f"   {len(found.pairs)} pair(s) among {found.students} submissions; {found.html.relative_to(plan.root)}")
    step("report: PASS / FAIL / INCOMPLETE with the reasons", f"course report {lesson} --autograder {here}")
    result = make_report(plan.root, lesson, similarity=similarity_in_report(found.pairs), autograder=root)
    for student in result.students:
        print(f"   {student.submission.student}: {student.result}")
    print(f"   {result.csv.relative_to(plan.root)}, {result.html.relative_to(plan.root)}")
    print(f"\n{left_alone(course_root, root)}")
    return root


def main(argv: list[str] | None = None) -> int:
    """Run the demo cycle, or rewrite the demo notebooks."""
    parser = argparse.ArgumentParser(prog="python -m course.workflows.demo_cycle", description=__doc__.splitlines()[0])
    parser.add_argument("lesson", help="the lesson whose demo class (demo/classes/<lesson>/) to use, e.g. lesson05")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="project root (default: current folder)")
    parser.add_argument(
        "--write-submissions",
        action="store_true",
        help="rewrite demo/classes/<lesson>/<student>/<lesson>.ipynb from students.yml and the release",
    )
    parser.add_argument("--unsafe", action="store_true", help="re-check without the bubblewrap sandbox")
    args = parser.parse_args(argv)
    try:
        if args.write_submissions:
            from course.site.plan import make_plan

            plan = make_plan(args.root)
            for path in write_submissions(demo_root(plan.root), args.lesson):
                print(f"wrote {path.relative_to(plan.root)}")
        else:
            run_cycle(args.root, args.lesson, unsafe=args.unsafe)
    except CourseError as exc:
        print(f"demo cycle: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
