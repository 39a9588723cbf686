"""The front page (course.site.make_index) opens with its variant's intro and offers the assignment, with how to hand
it in, where the variant offers it: asked of the Variant (course.lesson.variants), not of its name."""

from __future__ import annotations

from dataclasses import replace

from course.lesson.notebook_names import assignment_notebook
from course.lesson.variants import ANSWER, STUDENT
from course.site.make_index import SUBMIT, index_markdown
from tests.lesson_cases import lesson

OFFERED = {"lesson05": assignment_notebook("lesson05")}


def test_the_student_index_offers_the_assignment_and_the_answer_index_does_not():
    lessons = [lesson("lesson05")]
    student, answer = index_markdown(lessons, "student", OFFERED), index_markdown(lessons, ANSWER, OFFERED)
    assert student.startswith(STUDENT.intro) and answer.startswith(ANSWER.intro)
    assert SUBMIT in student and f"[作业 notebook]({OFFERED['lesson05']})" in student
    assert SUBMIT not in answer and "作业 notebook](" not in answer


def test_the_offer_and_the_intro_follow_the_model():
    """The same names with other facts: the page follows the facts."""
    lessons = [lesson("lesson05")]
    withheld = index_markdown(lessons, replace(STUDENT, offers_assignment=False, intro="另一段开场白。"), OFFERED)
    assert withheld.startswith("另一段开场白。") and SUBMIT not in withheld and "作业 notebook](" not in withheld
    assert SUBMIT in index_markdown(lessons, replace(ANSWER, offers_assignment=True), OFFERED)
