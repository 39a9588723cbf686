"""The site's front page: the course's lessons, each with its page, its notebook and (student site) its assignment."""

from __future__ import annotations

from course.lesson.model import Lesson

INTRO = {
    "student": "本站为**学生版**：含完整讲解、代码填空题与问答题，不含参考答案。每课的 notebook 是整课讲义，"
               "可在任意 Python 3 的 Jupyter 或 Colab 中打开；作业 notebook 是要完成并提交评分的那一份。",
    "answer": "本站为**参考答案版**：含完整代码实现与问答题参考解析，供助教与完成练习后的同学核对。",
}
SUBMIT = (
    "**提交作业**：课程若在 JupyterHub 上运行 nbgrader，在 Assignments 页签中取回作业、完成后点 Submit；"
    "否则把完成的作业 notebook 按课程编号命名（如 `lesson05.ipynb`）交给助教。"
)


def index_markdown(lessons: list[Lesson], variant: str, assignments: dict[str, str] | None = None) -> str:
    """commonmark_x for index.html listing every lesson of this variant; ASSIGNMENTS maps a lesson to its file."""
    assignments = assignments or {}
    items = "\n".join(
        f"- [{lesson.title}]({lesson.stem}.html) · [notebook]({lesson.stem}.ipynb)"
        + (f" · [作业 notebook]({assignments[lesson.stem]})" if lesson.stem in assignments else "")
        for lesson in lessons
    )
    submit = f"\n\n{SUBMIT}" if assignments else ""
    return f"{INTRO[variant]}{submit}\n\n## 课程列表\n\n::: {{.lesson-list}}\n\n{items}\n\n:::\n"
