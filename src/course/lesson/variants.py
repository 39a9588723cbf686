"""The course's variants as data: every module asks a Variant what its readers see and what its site offers,
instead of comparing variant names.

A lesson is built into each variant named in [tool.course] variants (default: student, answer). What tells the
variants apart is declared here once: whether solution cells are shown, whether the site offers the lesson's
nbgrader assignment (and runs it in the browser instead of the reading notebook), and whether the departures pages
(course.site.departures_page) are published. A variant is also a Quarto profile of its name (_quarto-NAME.yml): the
blocks an author shows to one profile only (`.content-visible when-profile="answer"`) follow the name, as Quarto's
profiles do. The Lua filter (_extensions/course-variant/) reads what a variant shows from the page's metadata:
render_page passes Variant.metadata to pandoc, and each profile's _quarto-NAME.yml sets the same for Quarto.
"""

from __future__ import annotations

from dataclasses import dataclass

from course.errors import CourseError, Location


@dataclass(frozen=True)
class Variant:
    """One way a lesson is shown: to students (no answers, the assignment offered) or with the answers."""

    name: str  # the Quarto profile and the site folder (_site/NAME)
    label: str  # as pages name it
    intro: str  # the front page's first paragraph (commonmark)
    shows_solutions: bool  # solution cells (course_role: solution) are kept
    offers_assignment: bool  # the site offers the released nbgrader assignment, and the browser runs that notebook
    shows_departures: bool  # each lesson's page of departures from its original is published

    def __str__(self) -> str:
        return self.name

    def is_profile(self, profile: str) -> bool:
        """Whether PROFILE (a Quarto profile, as a div's when-profile names one) is this variant's own."""
        return profile == self.name

    def metadata(self) -> dict[str, str | bool]:
        """What the page filter reads of this variant: the profile it emulates under pandoc and what it shows."""
        return {"course-variant": self.name, "course-shows-solutions": self.shows_solutions}


STUDENT = Variant(
    name="student",
    label="学生版",
    intro="本站为**学生版**：含完整讲解、代码填空题与问答题，不含参考答案。每课的讲义 notebook 是整课讲义，"
    "只供阅读和试验，不评分；作业 notebook（如 `lesson05.ipynb`）是要完成并原名提交评分的那一份。",
    shows_solutions=False,
    offers_assignment=True,
    shows_departures=False,
)
ANSWER = Variant(
    name="answer",
    label="参考答案版",
    intro="本站为**参考答案版**：在学生版之外，附代码填空题的参考实现与问答题的评分要点，供助教与完成练习后的同学核对。",
    shows_solutions=True,
    offers_assignment=False,
    shows_departures=True,
)
VARIANTS: dict[str, Variant] = {v.name: v for v in (STUDENT, ANSWER)}


def get_variant(name: str | Variant, where: Location | None = None) -> Variant:
    """The variant called NAME (a Variant is returned as it is); an unknown name is a located error."""
    if isinstance(name, Variant):
        return name
    if name not in VARIANTS:
        raise CourseError(f"unknown variant {name!r}; expected one of {', '.join(VARIANTS)}", where)
    return VARIANTS[name]
