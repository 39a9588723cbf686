"""A test changes nothing outside its own temporary folders: the modes of `/`, `/root`, `/tmp` and the project's
folder and its parents are recorded when a test session starts, and the session fails at its end if any changed
(a test that opened /root to other accounts once passed on every machine it had already changed). Nor does a run
leave anything in the machine's temporary folders (the temporary folder, and /dev/shm where `course grade` keeps
its scratch gradebooks unless TMPDIR is set): what this user owns there when the run ends and did not when it
started fails the run, named (pytest's own pytest-of-USER left out), as a torchrun that left /tmp/torchelastic_*
behind, or a batch killed on purpose that left its gradebook copies in /dev/shm, once did. A test that kills a
process or starts one that keeps its files gives it a TMPDIR of its own (own_temporary_folder).
"""

from __future__ import annotations

import getpass
import os
import stat
import tempfile
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


def temporary_folders() -> list[Path]:
    """Where processes leave what they mean to remove: the temporary folder, and where `course grade` keeps its
    scratch gradebooks when that is another (/dev/shm, unless TMPDIR is set)."""
    from course.workflows.grade_batch import scratch_folder

    scratch = scratch_folder()
    return [Path(tempfile.gettempdir()), *([Path(scratch)] if scratch else [])]


def owned_entries(folders: Iterable[Path]) -> set[Path]:
    """The entries of FOLDERS this user owns, pytest's own temporary folders (pytest-of-USER) left out."""
    mine, pytests = os.geteuid(), f"pytest-of-{getpass.getuser()}"
    owned = set()
    for entry in (entry for folder in folders for entry in folder.iterdir() if entry.name != pytests):
        try:
            if entry.lstat().st_uid == mine:
                owned.add(entry)
        except FileNotFoundError:  # removed between the listing and the look (another program's, mid-cleanup)
            continue
    return owned


def own_temporary_folder(folder: Path) -> dict[str, str]:
    """This environment with TMPDIR set to FOLDER/tmp (made): for a process a test kills, or one that leaves
    files in its temporary folder, so that what it leaves stays in the test's own."""
    (folder / "tmp").mkdir(exist_ok=True)
    return {**os.environ, "TMPDIR": str(folder / "tmp")}


@pytest.fixture(scope="session", autouse=True)
def torch_cache_kept_in_the_tests_folder(tmp_path_factory):
    """torch makes its compile cache, TMPDIR/torchinductor_USER, when torch._dynamo is first imported (as the lab's
    dispatch modes import it); for the tests (and the processes they start) a folder of theirs, unless one is set."""
    if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(tmp_path_factory.mktemp("torchinductor"))


TEMPORARY = pytest.StashKey[set]()


def pytest_sessionstart(session):
    """Record what this user has in the temporary folders when the run starts (once per run: in the process that
    runs the others, or the only one)."""
    if not hasattr(session.config, "workerinput"):
        session.config.stash[TEMPORARY] = owned_entries(temporary_folders())


def asked_for(config, entry: Path) -> bool:
    """Whether the run's command line or PYTEST_ADDOPTS names ENTRY or a path in it (`--junitxml=/tmp/run.xml`):
    what the user asked pytest to write is not left behind."""
    asked = [*map(str, config.invocation_params.args), os.environ.get("PYTEST_ADDOPTS", "")]
    return any(str(entry) in argument for argument in asked)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    """Fail the run, naming each, when it left something in the temporary folders that was not there before."""
    before = session.config.stash.get(TEMPORARY, None)
    if before is None:
        return
    left = [
        entry for entry in sorted(owned_entries(temporary_folders()) - before) if not asked_for(session.config, entry)
    ]
    if left:
        writer = session.config.get_terminal_writer()
        writer.line()
        writer.line("the tests left files in the machine's temporary folders: " + ", ".join(map(str, left)), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
