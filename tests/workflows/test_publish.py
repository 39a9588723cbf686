"""course publish: each variant's site becomes its branch; the checkout, index and HEAD are never touched."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from course.errors import CourseError
from course.workflows.publish import publish_variants


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path, project_root: Path) -> Path:
    """A git repo with one lesson, a commit on main, and fake built sites."""
    shutil.copy(project_root / "pyproject.toml", tmp_path)
    (tmp_path / "lessons").mkdir()
    (tmp_path / "lessons" / "lesson01.qmd").write_text("---\ntitle: t\nlesson: 1\n---\n", "utf-8")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "start")
    for variant in ("student", "answer"):
        site = tmp_path / "_site" / variant
        (site / "site_libs").mkdir(parents=True)
        (site / "index.html").write_text(f"<p>{variant}</p>", "utf-8")
        (site / "site_libs" / "course.css").write_text("body{}", "utf-8")
    (tmp_path / "untracked.txt").write_text("mine", "utf-8")
    return tmp_path


def test_each_variant_lands_on_its_branch_and_nothing_else_moves(repo):
    head, status = git(repo, "rev-parse", "HEAD"), git(repo, "status", "--porcelain")
    results = publish_variants(repo)
    assert [(r.branch, r.changed) for r in results] == [("student", True), ("answer", True)]
    assert git(repo, "show", "student:index.html") == "<p>student</p>"
    assert git(repo, "show", "answer:index.html") == "<p>answer</p>"
    assert sorted(git(repo, "ls-tree", "-r", "--name-only", "student").split()) == [
        ".nojekyll",
        "index.html",
        "site_libs/course.css",
    ]
    assert git(repo, "rev-parse", "HEAD") == head and git(repo, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert git(repo, "status", "--porcelain") == status


def test_republishing_an_unchanged_site_makes_no_commit_and_a_change_makes_one(repo):
    first = {r.branch: r.commit for r in publish_variants(repo)}
    again = publish_variants(repo)
    assert all(not r.changed for r in again) and {r.branch: r.commit for r in again} == first
    (repo / "_site" / "student" / "index.html").write_text("<p>new</p>", "utf-8")
    [student, answer] = publish_variants(repo)
    assert student.changed and not answer.changed
    assert git(repo, "rev-parse", f"{student.commit}^") == first["student"]


def test_publishing_before_building_says_what_to_do(repo):
    shutil.rmtree(repo / "_site" / "answer")
    with pytest.raises(CourseError, match=r"_site/answer/index.html not found: run `course build` first"):
        publish_variants(repo)
    assert not git(repo, "branch", "--list", "student")  # no branch moved
