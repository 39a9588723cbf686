"""What students read, in the course's language: gettext catalogs beside this module (locale/LANG/LC_MESSAGES/
course.po, compiled to course.mo by `make` with Babel's `pybabel compile`, or in memory where that .mo is missing
or older), chosen by `[tool.course] language`.
The messages are written in English in the code (the msgids); `en` shows them as written."""

from __future__ import annotations

import gettext
from functools import cache
from pathlib import Path

from course.errors import CourseError, Location

DOMAIN = "course"
LOCALE_DIR = Path(__file__).parent / "locale"


@cache
def translation(language: str) -> gettext.NullTranslations:
    """The catalog of LANGUAGE; an error naming the catalog when it is missing or older than its .po."""
    if language in ("", "en"):
        return gettext.NullTranslations()
    po = LOCALE_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.po"
    mo = po.with_suffix(".mo")
    if not po.is_file():
        have = sorted(p.name for p in LOCALE_DIR.iterdir() if p.is_dir()) if LOCALE_DIR.is_dir() else []
        raise CourseError(
            f"no message catalog for language {language!r}; expected one of en, {', '.join(have)}",
            Location("[tool.course] language"),
        )
    if mo.is_file() and mo.stat().st_mtime >= po.stat().st_mtime:
        with mo.open("rb") as f:
            return gettext.GNUTranslations(f)
    return _compiled_now(po)  # a copy of the project without `make`'s .mo, or a .po edited since


def _compiled_now(po: Path) -> gettext.GNUTranslations:
    """The catalog PO compiled in memory with Babel, as `make` compiles it to its .mo."""
    import io

    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with po.open("rb") as f:
        catalog = read_po(f)
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    buffer.seek(0)
    return gettext.GNUTranslations(buffer)


def translator(root: Path | None):
    """The gettext function for the course at ROOT (its `[tool.course] language`; the default one without a project)."""
    from course.config import CourseConfig, load_config

    return translation((load_config(root) if root is not None else CourseConfig()).language).gettext
