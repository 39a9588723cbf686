"""Which version of an assignment a grade came from, and every version students were given.

A version is the digest of everything students are given and grading compares a submission with: every cell of
the nbgrader source notebook (autograder/source/<a>/<a>.ipynb: the lesson's prose the assignment carries, what
students fill, the read-only cells, the visible and hidden checks, the points) and the checks `course build` keeps
beside it (autograder/checks/<a>.yml: what the re-check runs and the known wrong answers it names). A reworded
sentence is a new version too, so it is released again and reaches the students.

Every release made through the course's nbgrader config is kept, by version, in
autograder/release-history/<a>/<version>/ (the released notebook as students received it) with an index of the
versions in the order they were released. A student who fetched an earlier release is then compared with that
release, not the newest, so re-releasing flags nobody.
"""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
import time
from pathlib import Path

from course.fileio import write_atomic

HISTORY_DIR = "release-history"
INDEX = "versions.json"
VERSION_CHARS = 16  # hex digits of the digest that name a version


def _source(course_root: Path, assignment: str) -> Path:
    """source/<assignment>/<assignment>.ipynb, the notebook nbgrader releases and grades against."""
    return Path(course_root) / "source" / assignment / f"{assignment}.ipynb"


def assignment_version(course_root: Path, assignment: str) -> str | None:
    """The digest of every cell of the source notebook (type, text, nbgrader's metadata) and of the course root's
    checks (None unbuilt)."""
    source = _source(course_root, assignment)
    if not source.is_file():
        return None
    cells = json.loads(source.read_text("utf-8")).get("cells", [])
    shown = [(c.get("cell_type"), _text(c), c.get("metadata", {}).get("nbgrader")) for c in cells]
    h = hashlib.sha256(json.dumps(shown, sort_keys=True, ensure_ascii=False).encode())
    checks = Path(course_root) / "checks" / f"{assignment}.yml"
    h.update(b"\0checks\0" + (checks.read_bytes() if checks.is_file() else b""))
    return h.hexdigest()[:VERSION_CHARS]


def submission_digest(folder: Path) -> str:
    """Hash of every file a student submitted (names and bytes): what a grade was given for."""
    h = hashlib.sha256()
    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
        h.update(str(path.relative_to(folder)).encode() + b"\0")
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def history_dir(course_root: Path, assignment: str) -> Path:
    """release-history/<assignment>/: one folder per released version, and the index."""
    return Path(course_root) / HISTORY_DIR / assignment


def released_versions(course_root: Path, assignment: str) -> list[str]:
    """The versions released so far, oldest first ([] when none was recorded)."""
    try:
        data = json.loads((history_dir(course_root, assignment) / INDEX).read_text("utf-8"))
    except (OSError, ValueError):
        return []
    return [v for v in data.get("versions", []) if isinstance(v, str)] if isinstance(data, dict) else []


def released_version(course_root: Path, assignment: str) -> str | None:
    """The version release/<assignment>/ holds now, as the last release recorded it."""
    versions = released_versions(course_root, assignment)
    return versions[-1] if versions else None


def archive_release(course_root: Path, assignment: str) -> str | None:
    """Keep release/<assignment>/ as released version VERSION (the current one); return it (None: nothing released)."""
    version = assignment_version(course_root, assignment)
    release = Path(course_root) / "release" / assignment
    if version is None or not (release / f"{assignment}.ipynb").is_file():
        return None
    target = history_dir(course_root, assignment) / version
    shutil.rmtree(target, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(release, target, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    versions = [v for v in released_versions(course_root, assignment) if v != version] + [version]
    write_atomic(
        history_dir(course_root, assignment) / INDEX,
        json.dumps(
            {
                "versions": versions,
                "released_at": {**_times(course_root, assignment), version: time.strftime("%Y-%m-%dT%H:%M:%S%z")},
            },
            indent=1,
        ),
    )
    return version


def _times(course_root: Path, assignment: str) -> dict:
    """When each recorded version was released."""
    try:
        return dict(json.loads((history_dir(course_root, assignment) / INDEX).read_text("utf-8"))["released_at"])
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def released_texts(course_root: Path, assignment: str) -> list[dict[str, str]]:
    """Per released version, newest first: each read-only cell's text as students received it (grade id → text)."""
    texts = []
    for version in reversed(released_versions(course_root, assignment)):
        path = history_dir(course_root, assignment) / version / f"{assignment}.ipynb"
        try:
            stat = path.stat()
        except OSError:
            continue
        texts.append(_locked_texts(str(path), stat.st_mtime_ns, stat.st_size))
    return texts


@functools.lru_cache(maxsize=64)
def _locked_texts(path: str, mtime_ns: int, size: int) -> dict[str, str]:
    """The read-only cells of one archived release (read once per process while the file is unchanged)."""
    cells = json.loads(Path(path).read_text("utf-8")).get("cells", [])
    return {
        meta["grade_id"]: _text(c).strip()
        for c in cells
        if (meta := c.get("metadata", {}).get("nbgrader") or {}).get("locked") and meta.get("grade_id")
    }


def _text(cell) -> str:
    """A cell's source as one string (nbformat allows a list of lines on disk)."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source
