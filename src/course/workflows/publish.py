"""`course publish`: commit each built variant to its own branch (student, answer) without touching main.

Uses a throwaway index and git plumbing (add → write-tree → commit-tree → update-ref), so the checkout,
the real index and HEAD are never changed. Each branch holds the site at its root, ready for any static host.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from course.errors import CourseError
from course.site.plan import make_plan
from course.tools.git import run_git


@dataclass(frozen=True)
class Published:
    """One branch after publishing: its commit and whether anything changed."""

    branch: str
    commit: str
    changed: bool


def publish_variants(
    root: Path, *, variants: tuple[str, ...] | None = None, message: str | None = None
) -> list[Published]:
    """Commit _site/<variant>/ to branch <variant> for each variant; unchanged sites make no new commit."""
    plan = make_plan(root)
    repo = Path(run_git(plan.root, "rev-parse", "--show-toplevel"))
    source = run_git(repo, "rev-parse", "--short", "HEAD", check=False) or "no commit"
    chosen = variants or plan.config.variants
    for variant in chosen:  # check every site before any branch moves
        if not (plan.site_dir(variant) / "index.html").is_file():
            raise CourseError(f"{plan.config.site_dir}/{variant}/index.html not found: run `course build` first")
    return [
        _commit_dir(repo, plan.site_dir(v), v, message or f"Publish the {v} site built from {source}") for v in chosen
    ]


def _commit_dir(repo: Path, site: Path, branch: str, message: str) -> Published:
    """Commit the files of SITE as the whole tree of BRANCH."""
    ref = f"refs/heads/{branch}"
    parent = run_git(repo, "rev-parse", "-q", "--verify", ref, check=False)
    with tempfile.TemporaryDirectory(prefix="course-publish-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index"), "GIT_WORK_TREE": str(site)}
        run_git(repo, "add", "--all", "--force", ".", env=env)
        (Path(tmp) / "nojekyll").write_text("")
        blob = run_git(repo, "hash-object", "-w", str(Path(tmp) / "nojekyll"))
        run_git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},.nojekyll", env=env)
        tree = run_git(repo, "write-tree", env=env)
    if parent and run_git(repo, "rev-parse", f"{parent}^{{tree}}") == tree:
        return Published(branch, parent, changed=False)
    commit = run_git(
        repo,
        "commit-tree",
        tree,
        *(["-p", parent] if parent else []),
        "-m",
        message,
        env={
            "GIT_AUTHOR_NAME": "course publish",
            "GIT_AUTHOR_EMAIL": "course@localhost",
            "GIT_COMMITTER_NAME": "course publish",
            "GIT_COMMITTER_EMAIL": "course@localhost",
        },
    )
    run_git(repo, "update-ref", ref, commit, *([parent] if parent else []))
    return Published(branch, commit, changed=True)
