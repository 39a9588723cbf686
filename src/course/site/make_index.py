"""The site's front page: the course's lessons, each with its page and notebook."""

from __future__ import annotations

from course.lesson.model import Lesson

INTRO = {
    "student": "本站为**学生版**：含完整讲解、代码填空题与问答题，不含参考答案。下载 notebook 完成练习后提交评分。",
    "answer": "本站为**参考答案版**：含完整代码实现与问答题参考解析，供助教与完成练习后的同学核对。",
}


def index_markdown(lessons: list[Lesson], variant: str) -> str:
    """commonmark_x for index.html listing every lesson of this variant."""
    items = "\n".join(
        f"- [{lesson.title}]({lesson.stem}.html) · [notebook]({lesson.stem}.ipynb)" for lesson in lessons
    )
    return f"{INTRO[variant]}\n\n## 课程列表\n\n::: {{.lesson-list}}\n\n{items}\n\n:::\n"
