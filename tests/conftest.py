"""Shared fixtures: the project root and one build of the real course per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def project_root() -> Path:
    """The repository being tested."""
    return ROOT


@pytest.fixture(scope="session")
def built_site(project_root: Path) -> Path:
    """_site/ after `course build` of the real lessons (a no-op when already up to date)."""
    from course.build.pipeline import build_course

    build_course(project_root)
    return project_root / "_site"
