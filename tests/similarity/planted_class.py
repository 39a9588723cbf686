"""A planted class of lesson05 submissions for the similarity tests, made from the lesson's real released notebook.

Honest students (honest_answers.yml: independent wording, some quoting the lesson; three make the same common
mistake) and five planted pairs: a verbatim copy of a whole notebook, helper code copied with variables renamed
and statements reordered, a lightly paraphrased Chinese answer, an answer copied with its sentences reordered,
and one unusual wrong blank shared by two. PLANTED lists the pairs a detector must find.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

from course.assignment.submissions import submission
from tests.assignment.make_submissions import ANSWER, CORRECT, NO_EXTRA

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
RELEASE = ROOT / "tests" / "assignment" / "submissions" / "release.ipynb"  # the released notebook, kept current
HONEST = yaml.safe_load((HERE / "honest_answers.yml").read_text("utf-8"))

HELPER = '''
def gib(n_bytes):
    """bytes to GiB, for the table"""
    return n_bytes / 2**30


def print_stage_table(psi=7_000_000_000, dps=(1, 8, 64)):
    rows = []
    for dp in dps:
        row = [dp]
        for stage in (1, 2, 3):
            row.append(round(gib(zero_memory_per_gpu(psi, dp, stage)), 1))
        rows.append(row)
    header = ["dp", "Z1", "Z2", "Z3"]
    print(header)
    for row in rows:
        print(row)
    return rows
'''

HELPER_RENAMED_REORDERED = """
def show(params=7_000_000_000, sizes=(1, 8, 64)):
    titles = ["dp", "Z1", "Z2", "Z3"]
    table = []
    for n in sizes:
        line = [n]
        for s in (1, 2, 3):
            line.append(round(to_gib(zero_memory_per_gpu(params, n, s)), 1))
        table.append(line)
    print(titles)
    for line in table:
        print(line)
    return table


def to_gib(b):
    return b / 2**30
"""

HONEST_HELPERS = {
    "h1": """
import math
def ratio_to_naive(dp, stage):
    naive = zero_memory_per_gpu(1_000_000, dp, 0)
    return zero_memory_per_gpu(1_000_000, dp, stage) / naive
assert math.isclose(ratio_to_naive(1, 3), 1.0)
""",
    "h2": """
results = {}
for stage_id in range(4):
    results[stage_id] = zero_memory_per_gpu(7_000_000_000, 64, stage_id) / 1e9
print("GB per GPU at dp=64:", results)
""",
    "copy-a": '''
def comm_ratio():
    """ZeRO-3 over ZeRO-1 traffic"""
    return zero_communication_volume(10, 3) / zero_communication_volume(10, 1)
print(f"ZeRO-3 / ZeRO-1 traffic = {comm_ratio():.2f}")
''',
}

COPY_A = {
    "Q1": "激活跟着各卡的输入走，样本不一样激活就不一样，于是不存在能去掉的重复副本。模型状态切完之后剩下的大头是激活，"
    "序列一长更是如此；对付它的是重计算，以及把序列维切开的上下文并行，这两样和 ZeRO 互不干扰。",
    "Q2": "ring all-reduce 的两个阶段分别就是 reduce-scatter 和 all-gather，ZeRO-1 "
    "不过是在两阶段之间让各卡只更新自己那一片优化器状态，所以总量还是 2Ψ。只做 reduce-scatter "
    "的时间约是完整 all-reduce 的一半。ZeRO-2 把梯度也按片保存，显存更少。",
    "Q3": "一是前向时把每层参数收齐，二是反向时再收一次，三是把梯度规约并分散。头两项只依赖参数，"
    "可以在算前一层时提前拉取。卡数上到几百之后，"
    "单卡每层的计算变短而每次集合通信的启动延迟变大，预取就追不上了。",
}
PARA_A_Q2 = (
    "ZeRO-1 把 all-reduce 拆开以后，中间那一刻每张卡正好握着自己负责的梯度分片之和，"
    "可以就地更新对应的优化器状态，然后用 all-gather 把新参数发回所有卡，两段流量相加仍然是参数量的两倍。"
    "所谓快两倍，是指拆出来的前半段只有整体的一半工作量。"
    "ZeRO-2 连完整梯度都不留，只存自己的分片，通信路径不变。"
)
PARA_B_Q2 = (
    "ZeRO-1 把 all-reduce 拆开之后，中间那一时刻每张卡恰好持有自己负责的梯度分片之和，"
    "能够就地更新相应的优化器状态，接着用 all-gather 把新参数发回全部卡，两段流量加起来依旧是参数量的两倍。"
    "所谓快两倍，指的是拆出来的前半段只有整体一半的工作量。"
    "ZeRO-2 连完整梯度也不保留，只存自己的分片，通信路径不变。"
)
Q3_A = (
    "第一段是前向逐层拼回完整参数，第二段是反向计算梯度前再拼一次，第三段是梯度按分片规约。"
    "拼参数不依赖当前层的结果，可以在上一层还在算的时候就发出去，于是被计算遮住。"
    "一旦卡数多到每层计算只剩很短一点时间，发起通信的固定延迟就露出来了。能把模型塞进显存和跑得快是两件事。"
)
Q3_B = (
    "一旦卡数多到每层计算只剩很短一点时间，发起通信的固定延迟就露出来了。第一段是前向逐层拼回完整参数，"
    "第二段是反向计算梯度前再拼一次，第三段是梯度按分片规约。拼参数不依赖当前层的结果，"
    "可以在上一层还在算的时候就发出去，于是被计算遮住。能把模型塞进显存和跑得快是两件事。"
)
UNUSUAL = CORRECT[:1] + ["params_bf16 + (grads_bf16 + opt_fp32) / (dp - 1) + extra"] + CORRECT[2:]

# student → (fills, code put in front of the answer cell, written answers)
STUDENTS = {
    **{s: (NO_EXTRA if s in ("h6", "h7", "h8") else CORRECT, HONEST_HELPERS.get(s, ""), HONEST[s]) for s in HONEST},
    "copy-a": (CORRECT, HONEST_HELPERS["copy-a"], COPY_A),
    "copy-b": (CORRECT, HONEST_HELPERS["copy-a"], COPY_A),
    "helper-a": (CORRECT, HELPER, {}),
    "helper-b": (CORRECT, HELPER_RENAMED_REORDERED, {}),
    "para-a": (CORRECT, "", {"Q2": PARA_A_Q2}),
    "para-b": (CORRECT, "", {"Q2": PARA_B_Q2}),
    "q3-a": (NO_EXTRA, "", {"Q3": Q3_A}),
    "q3-b": (CORRECT, "", {"Q3": Q3_B}),
    "blank-a": (UNUSUAL, "", {}),
    "blank-b": (UNUSUAL, "", {}),
}
PLANTED = {
    ("copy-a", "copy-b"),
    ("helper-a", "helper-b"),
    ("para-a", "para-b"),
    ("q3-a", "q3-b"),
    ("blank-a", "blank-b"),
}


def write_class(project: Path, students: dict = STUDENTS) -> Path:
    """A project folder with lesson05, its rubric and config, the release and every student's submission."""
    (project / "lessons").mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "lessons" / "lesson05.qmd", project / "lessons")
    shutil.copytree(ROOT / "lessons" / "lesson05", project / "lessons" / "lesson05", dirs_exist_ok=True)
    course = project / "autograder"
    shutil.copytree(ROOT / "autograder" / "rubrics", course / "rubrics", dirs_exist_ok=True)
    shutil.copy(ROOT / "autograder" / "nbgrader_config.py", course)
    release = nbformat.read(RELEASE, as_version=4)
    (course / "release" / "lesson05").mkdir(parents=True, exist_ok=True)
    nbformat.write(release, course / "release" / "lesson05" / "lesson05.ipynb")
    for student, (fills, prepend, answers) in students.items():
        folder = course / "submitted" / student / "lesson05"
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(submission(release, ANSWER, fills, prepend=prepend, answers=answers), folder / "lesson05.ipynb")
    return project


FAILS_FORMULAS = {"h6", "h7", "h8", "q3-a", "blank-a", "blank-b"}  # the wrong blanks fail the formulas item


@pytest.fixture
def graded(tmp_path, monkeypatch):
    """The planted class with a SQLite gradebook (nbgrader's default place) holding its scores."""
    from nbgrader.api import Gradebook

    from course.grading.rubric import load_rubric

    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(tmp_path / "no-hub-config"))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    project = write_class(tmp_path / "project")
    points = load_rubric(project / "autograder" / "rubrics" / "lesson05.yml").grade_ids()
    with Gradebook(f"sqlite:///{project / 'autograder' / 'gradebook.db'}") as gb:
        gb.add_assignment("lesson05")
        gb.add_notebook("lesson05", "lesson05")
        for grade_id, max_score in points.items():
            gb.add_grade_cell(
                grade_id,
                "lesson05",
                "lesson05",
                max_score=max_score,
                cell_type="code" if grade_id.startswith("test-") else "markdown",
            )
            if not grade_id.startswith("test-"):
                gb.add_solution_cell(grade_id, "lesson05", "lesson05")
        for student in STUDENTS:
            gb.add_student(student)
            gb.add_submission("lesson05", student)
            for grade_id, max_score in points.items():
                grade = gb.find_grade(grade_id, "lesson05", "lesson05", student)
                failed = grade_id == "test-formulas" and student in FAILS_FORMULAS
                if grade_id.startswith("test-"):
                    grade.auto_score = 0 if failed else max_score
                else:
                    grade.manual_score = max_score
                grade.needs_manual_grade = False
    return project
