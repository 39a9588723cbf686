"""The lab's output file, assets/lab/zero_measured.json: its schema, writing it, reading it back.

Kept free of torch so the lesson can read measurements on a machine without the lab extra.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from course.errors import CourseError, Location
from course.fileio import write_atomic
from course.lesson import validate

SCHEMA_ID = "course/lab/zero-measured/v1"


def load_schema() -> dict:
    """The JSON schema of the lab's output file."""
    return validate.load_schema("course.lab", "zero-measured.v1")


def write_report(path: Path, report: dict) -> Path:
    """Validate and write the report atomically (readers see the old file or the new one)."""
    jsonschema.validate(report, load_schema())
    return write_atomic(Path(path), json.dumps(report, ensure_ascii=False, indent=1) + "\n")


def read_report(path: Path) -> dict:
    """Load a zero_measured.json, saying which file is missing or malformed and how to regenerate it."""
    path = Path(path)
    if not path.is_file():
        raise CourseError("no lab measurements here; run `course lab` (needs `pip install .[lab]`)", Location(path))
    try:
        report = json.loads(path.read_text("utf-8"))
    except json.JSONDecodeError as exc:
        raise CourseError(f"not valid JSON ({exc.msg}); rerun `course lab`", Location(path, exc.lineno)) from exc
    try:
        jsonschema.validate(report, load_schema())
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "top level"
        message = f"at {where}: {exc.message}; expected a {SCHEMA_ID} report, rerun `course lab`"
        raise CourseError(message, Location(path)) from exc
    return report
