"""A reworded sentence of the lesson's prose, which the assignment notebook carries, is a new version: `course grade`
releases it again, into release/ and nbgrader's exchange, and says so; a student fetching afresh gets the new text."""

from __future__ import annotations

import json
import shutil

import pytest

from course.workflows.grade import run_nbgrader
from tests.assignment.make_submissions import OUT
from tests.classes import course_with_class, submit

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

OLD, NEW = "完成后你需要能够", "学完本课后你需要能够"


def reword(notebook) -> None:
    """What `course build` writes after the sentence is reworded in the lesson: the same cells, one sentence new."""
    data = json.loads(notebook.read_text("utf-8"))
    hits = [c for c in data["cells"] if OLD in "".join(c["source"]) and c["cell_type"] == "markdown"]
    assert len(hits) == 1 and not hits[0]["metadata"].get("nbgrader", {}).get("grade")
    hits[0]["source"] = "".join(hits[0]["source"]).replace(OLD, NEW)
    notebook.write_text(json.dumps(data, ensure_ascii=False, indent=1), "utf-8")


def text(notebook) -> str:
    """A notebook's cells' text."""
    return "".join("".join(c["source"]) for c in json.loads(notebook.read_text("utf-8"))["cells"])


def test_a_reworded_sentence_reaches_release_and_the_exchange(released, tmp_path):
    from course.assignment.versions import assignment_version
    from course.workflows.grade import grade_assignment

    root = shutil.copytree(released, tmp_path / "autograder")

    def nbgrader(*args):
        return run_nbgrader(root, *args, check=False)

    assert nbgrader("release_assignment", "lesson05").returncode == 0
    submit(root, "2026001", OUT / "reference.ipynb")
    first = grade_assignment(root, "lesson05")
    assert first.stats.released is None and first.stats.students == 1
    before = assignment_version(root, "lesson05")
    reword(root / "source" / "lesson05" / "lesson05.ipynb")
    assert assignment_version(root, "lesson05") != before  # prose is part of what students see
    run = grade_assignment(root, "lesson05")
    outbound = root / "exchange" / "llm-scale-course" / "outbound" / "lesson05"
    assert run.stats.released.startswith(
        f"released lesson05 again: the source notebook (its text included) or checks changed since version {before}"
    )
    assert (
        "the exchange has it too (`nbgrader release_assignment lesson05 --force`, "
        f"{outbound}): a student who fetched the old one moves their lesson05/ folder aside"
    ) in run.stats.released
    assert NEW in text(root / "release" / "lesson05" / "lesson05.ipynb")
    assert NEW in text(outbound / "lesson05.ipynb") and OLD not in text(outbound / "lesson05.ipynb")
    fetched = nbgrader("fetch_assignment", "lesson05", "--student=2026002", f"--Exchange.assignment_dir={tmp_path}")
    assert fetched.returncode == 0 and NEW in text(tmp_path / "lesson05" / "lesson05.ipynb")
    assert run.stats.reasons and run.student("2026001").version == assignment_version(root, "lesson05")


def test_without_an_exchange_the_re_release_says_where_students_get_it(released, tmp_path):
    from course.workflows.grade import grade_assignment

    root = course_with_class(released, tmp_path, {"2026001": OUT / "reference.ipynb"})
    reword(root / "source" / "lesson05" / "lesson05.ipynb")
    run = grade_assignment(root, "lesson05")
    assert run.stats.released.endswith("students get it from release/lesson05/ (the student site after `course build`)")
    assert NEW in text(root / "release" / "lesson05" / "lesson05.ipynb") and not (root / "exchange").exists()
