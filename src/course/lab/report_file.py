"""The lab's output file, assets/lab/zero_measured.json: its schema, writing it, reading it back.

Kept free of torch so the lesson can read measurements on a machine without the lab extra.
"""

from __future__ import annotations

import json
from pathlib import Path

from course.fileio import write_atomic
from course.lesson import validate

SCHEMA_ID = "course/lab/zero-measured/v1"  # what the report's "schema" field says
SCHEMA = "zero-measured.v1"  # its file: src/course/lab/schema/zero-measured.v1.json


def write_report(path: Path, report: dict) -> Path:
    """Validate and write the report atomically (readers see the old file or the new one)."""
    validate.check_json_data(report, path, "course.lab", SCHEMA)
    return write_atomic(Path(path), json.dumps(report, ensure_ascii=False, indent=1) + "\n")


def read_report(path: Path) -> dict:
    """Load a zero_measured.json, saying which file is missing or malformed and how to regenerate it."""
    return validate.read_json_file(
        path,
        "course.lab",
        SCHEMA,
        remedy="; rerun `course lab`",
        missing="no lab measurements here; run `course lab` (needs `pip install .[lab]`)",
    )
