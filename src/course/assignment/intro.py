"""The assignment notebook's first cell: the lesson's title and what a student does with the notebook, in order."""

from __future__ import annotations

from course.grading.rubric import format_points
from course.lesson.model import Lesson
from course.lesson.notebook_names import assignment_notebook

INTRO = """# {title} · 作业

这是本课要提交的 notebook。按顺序做：

1. **代码填空**：把下面代码单元里的 `______` 换成你的代码并运行它，再依次运行其后的测试单元（通过的测试打印 ✓）。
   测试用的评分辅助单元已折叠，只读，无须打开。
2. **问答题**：在 {questions} 每道题下面的单元格里写回答（双击进入编辑）。
3. **检查与提交**：保存（在浏览器中运行时用 File → Download 下载 `{notebook}`），再提交。在课程的 JupyterHub 上或装有本课程工具的电脑上，
   提交前可以先用 `course check {notebook}` 检查（可选）。

代码 {code} 分、问答 {answers} 分，满分 {total} 分，{pass_line} 分及格。题目、测试和评分辅助单元是只读的，请勿修改或删除。"""  # noqa: E501


def intro_markdown(lesson: Lesson, rubric) -> str:
    """The first cell's markdown for LESSON, its points from RUBRIC."""
    return INTRO.format(
        title=lesson.title,
        questions="、".join(q.id for q in rubric.questions),
        notebook=assignment_notebook(lesson.stem),
        code=format_points(sum(c.points for c in rubric.code_items)),
        answers=format_points(sum(q.points for q in rubric.questions)),
        total=format_points(rubric.total),
        pass_line=format_points(rubric.pass_line),
    )
