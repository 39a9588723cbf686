"""A test changes nothing outside its own temporary folders: the modes of `/`, `/root`, `/tmp` and the project's
folder and its parents are recorded when a test session starts, and the session fails at its end if any changed
(a test that opened /root to other accounts once passed on every machine it had already changed)."""

from __future__ import annotations

import stat
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def folder_modes(folders: Iterable[Path]) -> dict[Path, int]:
    """The permission bits of each of FOLDERS that exists."""
    return {folder: stat.S_IMODE(folder.stat().st_mode) for folder in folders if folder.exists()}


def changed_modes(before: dict[Path, int], after: dict[Path, int]) -> list[str]:
    """Each folder whose mode differs between BEFORE and AFTER, as `FOLDER: OLD → NEW` (octal)."""
    return [
        f"{folder}: {mode:o} → {after[folder]:o}" if folder in after else f"{folder}: {mode:o} → gone"
        for folder, mode in before.items()
        if after.get(folder) != mode
    ]


@pytest.fixture(scope="session")
def watched_folders() -> list[Path]:
    """The machine's folders no test may change: /, /root, /tmp and the project with its parents."""
    return sorted({Path("/"), Path("/root"), Path("/tmp"), ROOT, *ROOT.parents})


@pytest.fixture(scope="session", autouse=True)
def machine_left_alone(watched_folders):
    """Fail the session, naming each folder and its modes, when a test changed the mode of a watched folder."""
    before = folder_modes(watched_folders)
    yield
    changed = changed_modes(before, folder_modes(watched_folders))
    if changed:
        pytest.fail(
            "the tests changed the machine outside their temporary folders: " + "; ".join(changed), pytrace=False
        )
