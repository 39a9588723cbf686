"""Quarto (1.7 or later), the renderer `course build --renderer quarto` and plain `quarto render` use: where it is,
its version, and a clear error that says how to get it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from course.errors import CourseError, ToolMissing

MIN_VERSION = (1, 7)
ENV = "QUARTO"  # the Quarto binary; wins over [tool.course] quarto
HOW_TO_GET = (
    "install Quarto 1.7 or later from https://quarto.org/docs/get-started/ and put it on PATH, or name "
    "its binary in the QUARTO environment variable or in [tool.course] quarto (in this project's CI "
    "and tests: Q=$(../shared/tools/quarto/setup.sh) gives one)"
)


# What Quarto writes beside a source SOURCE.qmd while it renders it, and removes once done: the executed notebook
# (SOURCE.quarto_ipynb, or SOURCE.quarto_ipynb_N beside an older one), the page before it moves into the output
# folder (SOURCE.html) and the page's figures and execution results (SOURCE_files/).
RENDER_INTERMEDIATE = re.compile(r"(?P<source>.+?)(?:\.quarto_ipynb(?:_\d+)?|\.html|_files)")


def render_intermediate(path: Path) -> bool:
    """Whether PATH is, or lies in, what Quarto writes beside a source while rendering it: never an input of a build
    (a `course preview` beside a `quarto render` must not rebuild on it, nor a fingerprint count it)."""
    for part in (path, *path.parents):
        found = RENDER_INTERMEDIATE.fullmatch(part.name)
        if found and part.with_name(f"{found['source']}.qmd").is_file():
            return True
    return False


@dataclass(frozen=True)
class Quarto:
    """One usable Quarto: its binary and its version."""

    path: Path
    version: str


def find_quarto(setting: str = "") -> Quarto:
    """The Quarto to render with: $QUARTO, else SETTING ([tool.course] quarto), else `quarto` on PATH; a
    ToolMissing naming what was looked for when none is there or it is older than 1.7."""
    wanted = os.environ.get(ENV) or setting or "quarto"
    found = shutil.which(wanted)
    if not found:
        source = f"${ENV}" if os.environ.get(ENV) else ("[tool.course] quarto" if setting else "PATH")
        raise ToolMissing(f"Quarto not found ({wanted!r} from {source}); {HOW_TO_GET}")
    version = quarto_version(Path(found))
    if _numbers(version) < MIN_VERSION:
        raise ToolMissing(f"Quarto {version} at {found} is older than {'.'.join(map(str, MIN_VERSION))}; {HOW_TO_GET}")
    return Quarto(Path(found), version)


def quarto_available(setting: str = "") -> Quarto | None:
    """A usable Quarto, or None (for choosing the renderer when none was asked for)."""
    try:
        return find_quarto(setting)
    except ToolMissing:
        return None


def quarto_version(path: Path) -> str:
    """What `quarto --version` prints, e.g. 1.7.34."""
    try:
        proc = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=120)
    except OSError as exc:
        raise ToolMissing(f"Quarto at {path} does not run ({exc}); {HOW_TO_GET}") from None
    if proc.returncode != 0 or not re.match(r"\d+\.\d+", proc.stdout.strip()):
        raise ToolMissing(f"Quarto at {path} gave no version ({proc.stderr.strip()[-300:]}); {HOW_TO_GET}")
    return proc.stdout.strip()


def run_quarto(quarto: Quarto, args: list[str], *, cwd: Path, env: dict[str, str], what: str) -> str:
    """Run Quarto with ARGS in CWD; a failure names WHAT was rendered and ends with Quarto's own message."""
    proc = subprocess.run(
        [str(quarto.path), *args], cwd=cwd, env={**os.environ, **env}, capture_output=True, timeout=1800
    )
    output = (proc.stdout + proc.stderr).decode("utf-8", "replace")
    if proc.returncode != 0:
        raise CourseError(f"quarto {quarto.version} failed rendering {what}:\n{output.strip()[-4000:]}")
    return output


def _numbers(version: str) -> tuple[int, ...]:
    """1.7.34 -> (1, 7, 34), for comparing versions."""
    return tuple(int(n) for n in re.findall(r"\d+", version)[:3])
