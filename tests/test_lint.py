"""The whole tree stays linted: ruff (the rules and width in pyproject.toml's [tool.ruff]) finds nothing and would
reformat nothing, and ESLint (eslint.config.mjs) finds nothing in the scripts the sites load. `make format` applies
ruff's own fixes; what it cannot fix is fixed by hand."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUFF = Path(sys.executable).with_name("ruff")
ESLINT = ROOT / "node_modules" / ".bin" / "eslint"
# what ESLint reads: the sites' scripts, the node scripts the build runs and each lesson's own page scripts
SCRIPTS = ("src/course/site", "src/course/tools", "lessons")
LINTERS = {
    "ruff check": [str(RUFF), "check", "--no-cache", "--output-format", "concise", "."],
    "ruff format": [str(RUFF), "format", "--no-cache", "--check", "--diff", "."],
    "eslint": [str(ESLINT), "--max-warnings", "0", *SCRIPTS],
}


@pytest.mark.parametrize("linter", LINTERS)
def test_the_tree_is_clean(linter):
    """The linter exits 0 on the tree; otherwise the test shows what it found, file and line."""
    command = LINTERS[linter]
    installed_by = "pyproject.toml's test extra" if linter.startswith("ruff") else "package.json's devDependencies"
    assert Path(command[0]).is_file(), f"{command[0]} is missing: `make setup` installs it ({installed_by})"
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"{linter} found problems (`make format` fixes ruff's own):\n{run.stdout}{run.stderr}"
