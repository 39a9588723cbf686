"""What students read, in the course's language: gettext catalogs beside this module (locale/LANG/LC_MESSAGES/
course.po, compiled to course.mo by `make` with Babel's `pybabel compile`), chosen by `[tool.course] language`.
The messages are written in English in the code (the msgids); `en` shows them as written."""

from __future__ import annotations

import gettext
from functools import lru_cache
from pathlib import Path

from course.errors import CourseError, Location

DOMAIN = "course"
LOCALE_DIR = Path(__file__).parent / "locale"
COMPILE = "pybabel compile -D course -d src/course/locale (`make` runs it)"


@lru_cache(maxsize=None)
def translation(language: str) -> gettext.NullTranslations:
    """The catalog of LANGUAGE; an error naming the catalog when it is missing or older than its .po."""
    if language in ("", "en"):
        return gettext.NullTranslations()
    po = LOCALE_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.po"
    mo = po.with_suffix(".mo")
    if not po.is_file():
        have = sorted(p.name for p in LOCALE_DIR.iterdir() if p.is_dir()) if LOCALE_DIR.is_dir() else []
        raise CourseError(f"no message catalog for language {language!r}; expected one of en, {', '.join(have)}",
                          Location("[tool.course] language"))
    if not mo.is_file() or mo.stat().st_mtime < po.stat().st_mtime:
        raise CourseError(f"the catalog is not compiled or older than its .po: run {COMPILE}", Location(po))
    with mo.open("rb") as f:
        return gettext.GNUTranslations(f)


def translator(root: Path):
    """The gettext function for the course at ROOT (its `[tool.course] language`)."""
    from course.config import load_config

    return translation(load_config(root).language).gettext
