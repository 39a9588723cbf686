"""The site's front page: the course's lessons in order, each with its page, its prerequisites, its notebook and
(on a site that offers it: course.lesson.variants) its assignment. A prerequisite is written "第 N 课", which the
page filter links when lesson N exists."""

from __future__ import annotations

from course.lesson.model import Lesson
from course.lesson.notebook_names import notes_notebook
from course.lesson.variants import Variant, get_variant

SUBMIT = (
    "**提交作业**：课程若在 JupyterHub 上运行 nbgrader，在 Assignments 页签中取回作业、完成后点 Submit；"
    "否则把完成的作业 notebook 以下载时的文件名（如 `lesson05.ipynb`，不要改名）交给助教。"
)


def index_markdown(
    lessons: list[Lesson],
    variant: str | Variant,
    assignments: dict[str, str] | None = None,
    browser: dict[str, str] | None = None,
    *,
    folder: str = "",
    page: str = ".html",
    departures: dict[str, str] | None = None,
) -> str:
    """commonmark_x for index.html listing every lesson of this variant (a name or a Variant), which opens with the
    variant's intro; ASSIGNMENTS maps a lesson to its file, offered with how to hand it in where the variant offers
    the assignment, BROWSER to the link that runs its notebook in the browser (course.site.lite_page).

    FOLDER is where the lesson files lie relative to the index ('' on the pandoc site, 'lessons/' under Quarto)
    and PAGE the suffix a link to a lesson's page takes ('.qmd' under Quarto, which turns it into the page).
    DEPARTURES maps a lesson to the link of its page of departures from the original (answer site only)."""
    variant = get_variant(variant)
    assignments = (assignments or {}) if variant.offers_assignment else {}
    browser, departures = browser or {}, departures or {}
    items = "\n".join(
        _entry(
            lesson, assignments.get(lesson.stem), browser.get(lesson.stem), folder, page, departures.get(lesson.stem)
        )
        for lesson in lessons
    )
    submit = f"\n\n{SUBMIT}" if assignments else ""
    return f"{variant.intro}{submit}\n\n## 课程列表\n\n::: {{.lesson-list}}\n\n{items}\n\n:::\n"


def _entry(
    lesson: Lesson, assignment: str | None, browser: str | None, folder: str, page: str, departures: str | None
) -> str:
    """One lesson's list item: its title (a link to its page), then its prerequisites and notebooks on a line."""
    before = "、".join(f"第 {n} 课" for n in lesson.prerequisites) or "无"
    files = (
        [f"[讲义 notebook]({folder}{notes_notebook(lesson.stem)})"]
        + ([f"[作业 notebook]({folder}{assignment})"] if assignment else [])
        + ([browser] if browser else [])
        + ([f"[与原稿的差异]({departures})"] if departures else [])
    )
    return f"- **[{lesson.title}]({folder}{lesson.stem}{page})**\\\n  前置：{before} · {' · '.join(files)}"
