"""pandoc, from the pypandoc-binary wheel: the course's markdown-to-HTML engine (no Quarto binary needed)."""

from __future__ import annotations

import subprocess
from functools import cache
from pathlib import Path

from course.errors import CourseError, ToolMissing

# The default markdown reader mangles ```{python} fences. implicit_figures: an image with alt text alone in its
# paragraph is a figure whose alt text is its visible caption, as Quarto renders `![图 6-1：…](…)`.
READER = "commonmark_x+implicit_figures"


@cache
def pandoc_path() -> Path:
    """The pandoc binary shipped in the pypandoc-binary wheel."""
    try:
        import pypandoc

        path = Path(pypandoc.get_pandoc_path())
    except (ImportError, OSError) as exc:
        raise ToolMissing(
            f"pandoc not found ({exc}); install it with: pip install pypandoc-binary==1.17 "
            "(or run `make`, which installs everything)"
        ) from None
    return path


@cache
def pandoc_version() -> str:
    """The version of that pandoc (e.g. 3.6.3), which a site's build stamp records."""
    proc = subprocess.run([str(pandoc_path()), "--version"], capture_output=True, text=True, timeout=60)
    first = proc.stdout.splitlines()[0] if proc.returncode == 0 and proc.stdout else ""
    return first.split()[-1] if first else "unknown"


def run_pandoc(source: str, args: list[str], *, what: str) -> str:
    """Run pandoc on SOURCE with ARGS; a failure names WHAT was being converted."""
    proc = subprocess.run(
        [str(pandoc_path()), "-f", READER, *args], input=source.encode("utf-8"), capture_output=True, timeout=120
    )
    if proc.returncode != 0:
        raise CourseError(f"pandoc failed on {what}: {proc.stderr.decode('utf-8', 'replace').strip()}")
    return proc.stdout.decode("utf-8")
