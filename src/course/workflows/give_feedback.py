"""`course feedback <assignment>`: every student's feedback page made again and released, and who it reached.

Stock `nbgrader generate_feedback --force`, then stock `nbgrader release_feedback`, both through the course's nbgrader
config, whose release goes student by student (course.nbgrader_hooks.feedback_release) and ends with who got the
page through the exchange, who handed in files (their page to hand back) and who got none and why. A page nbgrader
could not make for one student does not keep the others' from being released; the summary says it failed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from course.errors import CourseError, Location


@dataclass(frozen=True)
class FeedbackRun:
    """The summary lines of the release, and whether everyone got feedback one way or the other."""

    lines: list[str]
    complete: bool


def give_feedback(course_root: Path, assignment: str) -> FeedbackRun:
    """Generate every student's feedback page again, release them, return the release's summary."""
    from course.workflows.grade import run_nbgrader

    root = Path(course_root)
    if not any((root / "autograded").glob(f"*/{assignment}")):
        raise CourseError(f"nothing graded yet: run `course grade {assignment}` first", Location(root / "autograded"))
    from course.workflows.grade import nbgrader_failure

    made = run_nbgrader(root, "generate_feedback", assignment, "--force", check=False)  # the others still go out
    proc = run_nbgrader(root, "release_feedback", assignment, check=False)
    marker = f"feedback on {assignment}: "
    lines = [line[line.index(marker) :] for line in (proc.stdout + proc.stderr).splitlines() if marker in line]
    if not lines:
        raise nbgrader_failure(root, "release_feedback", proc.stdout + proc.stderr)
    if made.returncode:
        lines.append(
            f"{marker}{nbgrader_failure(root, 'generate_feedback', made.stdout + made.stderr).message} "
            "(its pages may be missing or from the last run)"
        )
    return FeedbackRun(lines, proc.returncode == 0 and made.returncode == 0)
