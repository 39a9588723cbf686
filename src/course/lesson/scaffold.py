"""`course new lessonNN --title …`: the files of a new lesson that builds, releases and grades out of the box.

Like `quarto create` or `nbgrader quickstart`: an exercise with a blank and its reference solution, its checks
(a visible and a hidden case, one known wrong answer), a figure drawn from the solution (figures.py declaring it,
the drawing code beside it), one question, a rubric with a veto item, and a demo class of one student. Every file is
new: an existing one stops the command before anything is written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from course.errors import CourseError, Location

NAME = re.compile(r"^lesson(\d{2})$")

LESSON = """\
---
title: {title}
lesson: {number}
prerequisites: []  # the numbers of the lessons to take first, e.g. [4]: the course index lists them
jupyter: python3
---

## 本课目标

（在这里写本课要讲清楚的内容。）

![`scale` 把每个元素乘以 `factor`（本图由 `lessons/{stem}/figures.py` 从参考答案画出）](../assets/figs/{stem}-scale.png)

## 代码填空题

补全 `scale`：返回把每个元素乘以 `factor` 后的新列表。

```{{python}}
#| label: ex-scale
#| course_role: exercise
#| eval: false
def scale(values: list, factor: float) -> list:
    \"\"\"返回每个元素乘以 factor 后的新列表（不修改原列表）。\"\"\"
    return [______ for v in values]
```

## 问答题

### Q1

为什么 `scale` 返回新列表，而不是在原列表上修改？

## 检查与通过标准

```{{python}}
#| label: grading-standard
#| echo: false
#| output: asis
#| depends: [../autograder/rubrics/{stem}.yml]
# 本节由评分细则 autograder/rubrics/{stem}.yml 生成，课程页面与 nbgrader 分值同出一源。
from pathlib import Path
from course.grading.rubric import load_rubric, standard_markdown
print(standard_markdown(load_rubric(Path("../autograder/rubrics/{stem}.yml"))))
```

::: {{.content-visible when-profile="answer"}}
## 参考答案（仅 answer 分支）

```{{python}}
#| label: solution-scale
#| course_role: solution
{{{{< include ../solutions/{stem}.py >}}}}
```
:::
"""

SOLUTION = """\
def scale(values: list, factor: float) -> list:
    \"\"\"返回每个元素乘以 factor 后的新列表（不修改原列表）。\"\"\"
    return [v * factor for v in values]
"""

FIGURES = """\
\"\"\"{stem}'s figures drawn from code, read by `course build` (course.workflows.draw_figures).

Each FigureSpec names the image, the function that draws it and the files it is made from: the build redraws it
only when one of them, or this file, changed. The drawing code lives beside this file and is imported relatively
inside the draw function, so declaring the figures stays cheap.
\"\"\"

from pathlib import Path

from course.figures.declare import FigureSpec, load_solution, package_file

HERE = Path(__file__).parent
SOLUTION = "solutions/{stem}.py"


def draw_scale(out_path: Path, project_root: Path) -> Path:
    \"\"\"The chart from this project's reference solution, so page and solution never disagree.\"\"\"
    from .scale_chart import draw_scale_chart

    return draw_scale_chart(out_path, load_solution(project_root, SOLUTION).scale)


FIGURES = (
    FigureSpec(
        "assets/figs/{stem}-scale.png",
        draw_scale,
        (SOLUTION, HERE / "scale_chart.py", package_file("course.figures.render")),
    ),
)
"""

CHART = """\
\"\"\"{stem}'s chart: scale's output beside its input, computed by the reference solution figures.py passes in.\"\"\"

from pathlib import Path

import matplotlib

from course.figures.render import agg_figure, find_cjk_font, render_png
from course.fileio import write_atomic

VALUES = [1, 2, 3, 4]
FACTOR = 2


def draw_scale_chart(out_path: Path, scale) -> Path:
    \"\"\"Bars of VALUES and of scale(VALUES, FACTOR) with Chinese labels, written as PNG bytes that repeat.\"\"\"
    with matplotlib.rc_context({{"font.family": [find_cjk_font()]}}):
        fig = agg_figure(figsize=(5, 3), dpi=120, layout="constrained")
        ax = fig.add_subplot()
        xs = range(len(VALUES))
        ax.bar([x - 0.2 for x in xs], VALUES, width=0.4, label="输入")
        ax.bar([x + 0.2 for x in xs], scale(VALUES, FACTOR), width=0.4, label=f"scale(输入, {{FACTOR}})")
        ax.set_xticks(xs, [f"第 {{x + 1}} 个" for x in xs])
        ax.set_title(f"scale：每个元素乘以 factor = {{FACTOR}}")
        ax.legend(frameon=False)
    return write_atomic(Path(out_path), render_png(fig))
"""

CHECKS = """\
# Checks of {stem}'s exercise, read by `course build`, `course grade` and `course check`: one line of Python
# per check. Visible checks are shown to students; hidden ones run only when grading.
version: 1
lesson: {stem}
items:
  scale:
    exercise: ex-scale
    visible:
      - scale([1, 2, 3], 2) == [2, 4, 6]
    hidden:
      - scale([0.5, -1], 3) == [1.5, -3]
      - scale([], 7) == []
misconceptions:
  - id: adds-factor
    item: scale
    name: 加上了 factor 而不是乘以 factor
    explanation: 缩放是乘法：每个元素乘以 factor，不是加上 factor。
    evidence: scale([1, 2, 3], 2) 返回 [3, 4, 5]（v + factor）
    when:
      - scale([1, 2, 3], 2) == [3, 4, 5]
"""

RUBRIC = """\
# {title} — the grading standard: the lesson's 检查与通过标准 section, the nbgrader cells' points and
# `course report {stem}` all derive from this file.
version: 1
lesson: {stem}
total: 3
pass_line: 2

code_items:
  - id: scale
    title: 缩放
    points: 1
    description: scale 返回每个元素乘以 factor 后的新列表。

questions:
  - id: Q1
    title: 为什么返回新列表
    points: 2
    key_points:
      # asked_by: the words of the question (under ### Q1 in the lesson) that ask for this point.
      - asked_by: 为什么 `scale` 返回新列表
        point: 调用者的原列表不被改动，函数没有副作用。
    partial_credit: 2 分：说清副作用及其后果；1 分：只说“不修改原列表”；0 分：其他。

vetoes:
  - id: mutates-input
    text: 认为在原列表上修改与返回新列表没有区别。
    questions: [Q1]
"""

STUDENTS = """\
# The demo class of {stem}: what each student wrote into the released notebook.
#   fills: the blanks in order; answers: the written answers (a missing one stays empty).
# `python -m course.workflows.demo_cycle {stem} --write-submissions` turns this into <student>/{stem}.ipynb;
# `course demo {stem}` does so for any student without a notebook.
demo:
  fills:
    - v * factor
  answers:
    Q1: 返回新列表不改动调用者的原列表，函数没有副作用，调用者之后还能用原来的数据。
"""

GRADERS = """\
# What the demo's graders enter once `course grade` has run: question points (formgrader) and veto records.
manual_scores:
  demo: {{Q1: 2}}
vetoes: []
"""


def scaffold_lesson(project_root: Path, name: str, title: str) -> list[Path]:
    """Write a new lesson's files (project-relative paths returned); refuse a bad name or any existing file."""
    from course.config import load_config
    from course.fileio import write_atomic

    match = NAME.match(name)
    if not match or match[1] == "00":
        raise CourseError(f"expected a lesson name lessonNN with two digits, e.g. lesson06; got {name!r}")
    if not title.strip():
        raise CourseError("expected a non-empty --title, e.g. --title '第 6 课：张量并行'")
    root = Path(project_root)
    config = load_config(root)
    lessons = root / config.lessons_dir
    autograder = root / config.autograder_dir
    values = {"stem": name, "number": int(match[1]), "title": json.dumps(title.strip(), ensure_ascii=False)}
    files = {
        lessons / f"{name}.qmd": LESSON,
        lessons / name / "checks.yml": CHECKS,
        lessons / name / "figures.py": FIGURES,
        lessons / name / "scale_chart.py": CHART,
        root / "solutions" / f"{name}.py": SOLUTION,
        autograder / "rubrics" / f"{name}.yml": RUBRIC,
        root / config.demo_dir / "classes" / name / "students.yml": STUDENTS,
        root / config.demo_dir / "classes" / name / "graders.yml": GRADERS,
    }
    existing = [path for path in files if path.exists()]
    if existing:
        raise CourseError(
            f"{name} already exists: expected none of its files, found "
            f"{', '.join(str(p.relative_to(root)) for p in existing)}",
            Location(existing[0]),
        )
    return [write_atomic(path, text.format(**values)).relative_to(root) for path, text in files.items()]
