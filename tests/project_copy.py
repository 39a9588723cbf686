"""A copy of this project to change in a test (lessons added, edited) without touching the working tree; and the
project with a lesson added and built, made once per test run and copied for each test that needs it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.once_per_run import once_per_run

ROOT = Path(__file__).resolve().parents[1]
# Generated files copied along so the copy's build re-executes and redraws only what the test's changes bring.
GENERATED = [".course-cache", "assets/figs", "assets/lab", "assets/zero3_comm_flow.svg"]
ADDED = "lesson09"  # the lesson add_lesson adds
ADDED_SENTENCE = "回顾第 5 课：冗余定义：ZeRO 消除的是每张卡上重复保存的模型状态。"  # one of lesson 5's answers


def copy_project(dst: Path) -> Path:
    """The working tree as git sees it (tracked and new files, nothing ignored), plus the generated caches."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        )
        .stdout.decode("utf-8")
        .split("\0")
    )
    for relative in filter(None, listed):
        if (ROOT / relative).is_file():
            (dst / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / relative, dst / relative)
    for relative in GENERATED:
        if (ROOT / relative).is_dir():
            shutil.copytree(ROOT / relative, dst / relative)
        elif (ROOT / relative).is_file():
            shutil.copy2(ROOT / relative, dst / relative)
    os.symlink(ROOT / "node_modules", dst / "node_modules")
    return dst


def add_lesson(project: Path) -> None:
    """A scaffolded lesson whose text states, as its own, a sentence that is an answer in lesson 5."""
    from course.lesson.scaffold import scaffold_lesson

    scaffold_lesson(project, ADDED, "第 9 课：测试添加的一课")
    qmd = project / "lessons" / f"{ADDED}.qmd"
    text = qmd.read_text("utf-8").replace("![`scale`", "![图 9-1：`scale`")
    qmd.write_text(text.replace("（在这里写本课要讲清楚的内容。）", ADDED_SENTENCE), "utf-8")


def with_added_lesson(tmp_path_factory) -> Path:
    """The project with add_lesson's lesson and both variants built: made once per run and shared by every
    pytest-xdist worker (tests/once_per_run.py). Never change it: take a copy with copy_built. Ask for the
    `built_site` fixture first, so that its caches are the real project's and only the added lesson is executed and
    drawn."""
    from course.workflows.build_site import build_course

    def make(folder: Path) -> None:
        copy_project(folder / "project")
        add_lesson(folder / "project")
        build_course(folder / "project")

    return once_per_run(tmp_path_factory, "with-added-lesson", make) / "project"


def copy_built(built: Path, dst: Path) -> Path:
    """A copy of a built project to change: its sites hard-linked (a build replaces a site's files, never writes
    through them), everything else copied (an edited lesson, the build's caches and locks stay the copy's own)."""

    def link_or_copy(src: str, target: str) -> str:
        if Path(src).relative_to(built).parts[0] != "_site":
            return shutil.copy2(src, target)
        os.link(src, target)
        return target

    shutil.copytree(built, dst, symlinks=True, copy_function=link_or_copy)
    return dst
