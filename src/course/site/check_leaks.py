"""Fail a student site that shows a solution: any line of a lesson's reference solution that its exercise lacks.

Run on the pages whichever renderer made them (Quarto runs every cell, solutions included, before the course's
filter drops them, so its pages are checked as they are written, not as the lesson says they should be), and on
the scripts and styles a lesson's pages load (course.site.lesson_scripts), as the browser receives them.
"""

from __future__ import annotations

import html
import re

from course.lesson.model import Lesson, exercise_pairs

MIN_LINE = 8  # shorter lines (`return x`) are too common to tell a solution from the exercise around it


def solution_lines(lesson: Lesson) -> list[str]:
    """The code lines of each solution that its exercise does not have, comments removed."""
    lines = []
    for pair in exercise_pairs(lesson):
        for line in pair.solution.source.splitlines():
            code = line.split("#")[0].strip()
            if len(code) >= MIN_LINE and code not in pair.exercise.source:
                lines.append(code)
    return lines


def visible_text(page: str) -> str:
    """A page's text without its tags (highlighted code is cut into spans), entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def solution_leaks(lesson: Lesson, page: str) -> list[str]:
    """The lines of LESSON's solutions that PAGE (HTML) shows."""
    text = visible_text(page)
    return [line for line in solution_lines(lesson) if line in text]


def script_leaks(lesson: Lesson, script: str) -> list[str]:
    """The lines of LESSON's solutions that a page script or style sheet (its text as shipped) holds."""
    return [line for line in solution_lines(lesson) if line in script]
